"""a2a_core: the Agent2Agent protocol (1.0, with 0.3 compatibility)."""

__version__ = "0.1.0"
