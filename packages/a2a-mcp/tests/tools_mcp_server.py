"""An MCP server written with the official SDK (FastMCP), as its docs write one.

python tools_mcp_server.py            # stdio
python tools_mcp_server.py http PORT  # Streamable HTTP at http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import sys

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.utilities.types import Image
from pydantic import BaseModel, Field

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)

mcp = FastMCP("Travel tools")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.tool()
def shout(text: str) -> str:
    """Repeat the text in capitals."""
    return text.upper()


@mcp.tool()
async def count(n: int, ctx: Context) -> str:
    """Count to n, reporting progress at each step."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i}")
    return f"counted to {n}"


class Nights(BaseModel):
    nights: int = Field(description="How many nights")


@mcp.tool()
async def book(city: str, ctx: Context) -> str:
    """Book a hotel, asking how many nights."""
    answer = await ctx.elicit(f"How many nights in {city}?", schema=Nights)
    if answer.action != "accept":
        return "Not booked"
    return f"Booked {answer.data.nights} nights in {city}"


@mcp.tool()
def forecast(city: str) -> dict[str, object]:
    """The forecast for a city, as data."""
    return {"city": city, "sky": "sunny", "high": 24}


@mcp.tool()
def dot() -> Image:
    """A one-pixel picture."""
    return Image(data=PNG, format="png")


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        mcp.settings.port = int(sys.argv[2])
        mcp.run("streamable-http")
    else:
        mcp.run()
