"""Shared setup for the a2a-langchain tests: helper modules importable, LangSmith off."""

from __future__ import annotations

import os
import sys
from pathlib import Path

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

# Never try to reach LangSmith from a test run.
os.environ["LANGSMITH_TRACING"] = "false"
os.environ["LANGCHAIN_TRACING_V2"] = "false"
