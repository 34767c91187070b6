"""What a user writes to serve an MCP server over A2A: ``a2a serve served_mcp.py:server``."""

from __future__ import annotations

import sys
from pathlib import Path

from a2a_mcp import MCPServer

server = MCPServer.stdio(
    sys.executable, str(Path(__file__).with_name("tools_mcp_server.py")), name="Travel tools"
)
