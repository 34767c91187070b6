"""Three agents in one service: a function, a LangChain chain and a CrewAI crew.

Serve all three from one process, each below its own path (``/shout``,
``/helper``, ``/planner``) with its own card and playground, one task store
for all, and an AI Catalog listing them at ``/.well-known/ai-catalog.json``::

    a2a serve examples/many_agents.py:shout examples/many_agents.py:helper \\
              examples/many_agents.py:planner
    a2a serve --config examples/a2a.toml         # the same, with a shared store and OIDC
    python examples/many_agents.py --port 8000   # the same, from Python: serve({...})

then find them and talk to one::

    a2a card http://localhost:8000               # the three, from the catalog
    a2a send http://localhost:8000/planner "Lisbon"

Offline: the chain and the crew use stand-in models (see ``langchain_agent.py`` and
``crewai_crew.py``, beside this file, for a real one).
"""

from __future__ import annotations

import argparse

from a2a_core.server import RequestContext
from crewai_crew import crew as planner  # CrewAI kept offline by that module
from langchain_agent import build_chain

__all__ = ["helper", "planner", "shout"]


async def shout(context: RequestContext) -> str:
    """Says what it is told, louder."""
    return context.text.upper()


helper = build_chain()
"""A LangChain chain that answers questions."""


def main() -> None:
    from a2a_core import serve

    parser = argparse.ArgumentParser(description="Serve three agents in one process.")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on")
    args = parser.parse_args()
    serve({"shout": shout, "helper": helper, "planner": planner}, port=args.port)


if __name__ == "__main__":
    main()
