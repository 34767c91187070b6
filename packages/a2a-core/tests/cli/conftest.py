"""Make the CLI tests' helpers and the client tests' ``servers`` module importable."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).parent
for folder in (_HERE, _HERE.parent / "client"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
