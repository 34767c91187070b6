"""The ``a2a`` command: serve an agent, and talk to any A2A agent from a shell.

    a2a serve agent.py:agent                  # serve an agent object
    a2a card http://localhost:8000            # who is it, what can it do
    a2a send http://localhost:8000 "hello"    # ask it something
    a2a send http://localhost:8000 "write a poem" --stream

Built on the standard library's argparse; each command group is one module
(``serve``, ``card``, ``send``, ``tasks``) and ``render`` holds the human
output. ``main(argv)`` returns the exit status (see ``ExitCode``).
"""

from __future__ import annotations

from ..exports import publish as _publish
from .common import ExitCode
from .main import build_parser, main

__all__ = ["ExitCode", "build_parser", "main"]

_publish(__name__, [value for name, value in globals().items() if name in __all__])
