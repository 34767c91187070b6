"""What both conformance suites share: opt-outs with reasons, capability gates, time bounds.

A suite is a plain pytest class (no plugin needed). Subclassing it runs
every ``test_*`` method it defines against the subclass's factory. A test is
left out only for a stated reason:

- ``opt_out = {"test_cancel": "why"}`` on the subclass, the ``opt_out``
  class decorator, or the ``a2a_opt_out`` marker (register it with the
  ``a2a_core.testing.pytest_plugin`` plugin); an empty reason is an error;
- a capability flag set to False (``supports_cancel = False``) skips the
  tests that need it, and the skip message names the flag.

Overriding a suite test is refused when the subclass is defined: opt out of
it (with the reason) and add your own test under another name.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, ClassVar, TypeVar, cast

import pytest

__all__ = ["OPT_OUT_MARKER", "ConformanceSuite", "opt_out"]

OPT_OUT_MARKER = "a2a_opt_out"
"""``@pytest.mark.a2a_opt_out("test_name", ..., reason="why")`` on a suite subclass."""

_C = TypeVar("_C", bound=type["ConformanceSuite"])


class ConformanceSuite:
    """Base of the conformance suites (not collected: its name does not start with Test)."""

    opt_out: ClassVar[Mapping[str, str]] = {}
    """Suite tests this subclass leaves out, each with the reason why."""

    timeout: ClassVar[float] = 10.0
    """Seconds each test may take (waits inside a test are bounded by it too)."""

    suite_class: ClassVar[type[ConformanceSuite] | None] = None
    """The suite this class belongs to (AdapterConformance, TaskStoreConformance)."""
    suite_tests: ClassVar[frozenset[str]] = frozenset()
    """The suite's own tests (what opt-outs may name)."""
    capability_gates: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    """Test name -> the capability flags it needs (a False flag skips it)."""
    capability_docs: ClassVar[Mapping[str, str]] = {}
    """Flag -> what it being False means (shown in the skip message)."""

    request: pytest.FixtureRequest
    """The running test's request (set before every test)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("_a2a_suite_root", False):
            cls.suite_class = cls
            cls.suite_tests = frozenset(n for n in cls.__dict__ if n.startswith("test_"))
            return
        if cls.suite_class is None:
            return
        _refuse_overrides(cls)
        _check_flags(cls)
        if "opt_out" in cls.__dict__:
            opt_outs = cast(object, cls.__dict__["opt_out"])
            if not isinstance(opt_outs, Mapping):
                raise TypeError(
                    f"{cls.__qualname__}.opt_out must be a dict of test name -> reason, "
                    f"not {type(opt_outs).__name__}"
                )
            merged: dict[str, str] = {}
            for base in reversed(cls.__mro__[1:]):
                merged.update(cast(Mapping[str, str], base.__dict__.get("opt_out", {})))
            merged.update(_checked_opt_outs(cls, cast(Mapping[object, object], opt_outs)))
            cls.opt_out = merged

    # -- the gate every suite test passes through ------------------------------------
    @pytest.fixture(autouse=True)
    def _a2a_conformance_gate(self, request: pytest.FixtureRequest) -> None:
        """Skips opted-out tests and tests whose capability flag is off, saying why."""
        self.request = request
        name = request.function.__name__
        cls = type(self)
        if name not in cls.suite_tests:
            return  # the subclass's own tests run as they are
        marked = _marker_opt_outs(cls, request)
        reason = marked.get(name) or cls.opt_out.get(name)
        if reason:
            pytest.skip(f"opted out by {cls.__qualname__}: {reason}")
        for flag in cls.capability_gates.get(name, ()):
            if not getattr(cls, flag):
                meaning = cls.capability_docs.get(flag, "")
                pytest.skip(
                    f"capability off: {cls.__qualname__}.{flag} = False"
                    + (f" ({meaning})" if meaning else "")
                )

    @asynccontextmanager
    async def _deadline(self, what: str) -> AsyncGenerator[None]:
        """Bound a test by ``timeout``; running out is a failure that says what was waited for."""
        try:
            async with asyncio.timeout(self.timeout):
                yield
        except TimeoutError:
            pytest.fail(
                f"{what} did not finish within {self.timeout} s "
                f"(raise {type(self).__qualname__}.timeout if the framework is slow)",
                pytrace=True,
            )


def opt_out(test: str, *, reason: str) -> Callable[[_C], _C]:
    """Class decorator: leave ``test`` out of this conformance subclass, saying why.

    @opt_out("test_cancel", reason="the framework cannot interrupt a running chain")
    class TestMyAdapter(AdapterConformance): ...
    """

    def apply(cls: _C) -> _C:
        if cls.suite_class is None or cls is cls.suite_class:
            raise TypeError("opt_out() decorates a subclass of a conformance suite")
        checked = _checked_opt_outs(cls, {test: reason})
        cls.opt_out = {**cls.opt_out, **checked}
        return cls

    return apply


# -- checks -------------------------------------------------------------------------------


def _checked_opt_outs(
    cls: type[ConformanceSuite], opt_outs: Mapping[object, object]
) -> dict[str, str]:
    out: dict[str, str] = {}
    for test, reason in opt_outs.items():
        if not isinstance(test, str) or test not in cls.suite_tests:
            raise TypeError(
                f"{cls.__qualname__}: cannot opt out of {test!r}: not a test of "
                f"{_root_name(cls)} (its tests: {', '.join(sorted(cls.suite_tests))})"
            )
        if not isinstance(reason, str) or not reason.strip():
            raise TypeError(
                f"{cls.__qualname__}: opting out of {test!r} needs a reason "
                "(say why this implementation cannot pass it)"
            )
        out[test] = reason.strip()
    return out


def _marker_opt_outs(cls: type[ConformanceSuite], request: pytest.FixtureRequest) -> dict[str, str]:
    out: dict[str, str] = {}
    for mark in request.node.iter_markers(OPT_OUT_MARKER):
        reason = mark.kwargs.get("reason")
        extra = set(mark.kwargs) - {"reason"}
        if extra or not mark.args:
            pytest.fail(
                f"{cls.__qualname__}: use @pytest.mark.{OPT_OUT_MARKER}"
                '("test_name", ..., reason="why")',
                pytrace=False,
            )
        try:
            out.update(_checked_opt_outs(cls, dict.fromkeys(mark.args, reason)))
        except TypeError as exc:
            pytest.fail(str(exc), pytrace=False)
    return out


def _refuse_overrides(cls: type[ConformanceSuite]) -> None:
    overridden = sorted(n for n in cls.suite_tests if n in cls.__dict__)
    if overridden:
        raise TypeError(
            f"{cls.__qualname__} overrides {', '.join(overridden)} of {_root_name(cls)}: "
            "suite tests are not overridden. Opt out with a reason "
            '(opt_out = {"test_name": "why"}) and add your own test under another name.'
        )


def _check_flags(cls: type[ConformanceSuite]) -> None:
    flags = {flag for flags in cls.capability_gates.values() for flag in flags}
    for flag in sorted(flags):
        value = cast(object, getattr(cls, flag))
        if not isinstance(value, bool):
            raise TypeError(
                f"{cls.__qualname__}.{flag} must be True or False, not {type(value).__name__}"
            )


def _root_name(cls: type[ConformanceSuite]) -> str:
    root = cls.suite_class
    return root.__qualname__ if root is not None else "the suite"
