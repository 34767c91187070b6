"""a2a_mcp: A2A agents as MCP tools, and MCP tools behind A2A agents.

- ``AgentBridge``: serve A2A agents to any MCP host (``a2a mcp URL``): one
  typed tool per skill, streamed updates as progress, questions as elicitation.
- ``AgentTarget``: one agent and how to call it (headers, OAuth2, passthrough).
- ``MCPServer``: an MCP server (a command, or a Streamable HTTP URL) to serve as an A2A
  agent: ``serve(MCPServer.stdio("python", "server.py"))`` or ``a2a serve file.py:server``.
"""

from __future__ import annotations

from a2a_core.exports import publish as _publish

from .agents import AgentTarget
from .bridge import AgentBridge
from .server_agent import MCPServer

__all__ = ["AgentBridge", "AgentTarget", "MCPServer"]

__version__ = "0.1.0"
"""The installed version of a2a-adapters-mcp."""

_publish(__name__, [AgentBridge, AgentTarget, MCPServer])
