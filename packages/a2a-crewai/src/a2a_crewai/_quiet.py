"""Import CrewAI without the ImportWarning its own import raises.

``import crewai`` warns once ("Cannot set an attribute on 'crewai.rag' for
child module 'embeddings'"), harmless, but an error wherever warnings are
errors (pytest's ``-W error``). The modules of this package that need
CrewAI import it through here first.
"""

from __future__ import annotations

import sys
import warnings

__all__ = ["import_crewai"]


def import_crewai() -> None:
    """Import CrewAI once, with its import-time ImportWarning silenced."""
    if "crewai" in sys.modules:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ImportWarning)
        import crewai  # noqa: F401
