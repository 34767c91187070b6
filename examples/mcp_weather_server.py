"""A small MCP server, written with the official MCP SDK: the weather tools the
``mcp_langgraph.py`` example's agent uses (run over stdio by that example)."""

from __future__ import annotations

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("Weather", log_level="WARNING")

FORECASTS = {"paris": "sunny, 24 C", "oslo": "snow, -3 C", "lisbon": "clear, 19 C"}


@mcp.tool()
def forecast(city: str) -> str:
    """Tomorrow's forecast for a city."""
    return f"{city}: {FORECASTS.get(city.lower(), 'cloudy, 15 C')}"


if __name__ == "__main__":
    mcp.run()
