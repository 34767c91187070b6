"""The bounds applied to everything decoded from the network (no pydantic here)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_LIMITS", "DecodeLimits"]


@dataclass(frozen=True, slots=True)
class DecodeLimits:
    """Bounds applied to everything decoded from the network."""

    max_bytes: int = 10 * 1024 * 1024
    max_depth: int = 32
    max_parts: int = 1024
    max_history: int = 1024

    def __post_init__(self) -> None:
        for name in ("max_bytes", "max_depth", "max_parts", "max_history"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0")


DEFAULT_LIMITS = DecodeLimits()
"""The bounds applied when none are given: body size, nesting depth, string and list lengths."""
