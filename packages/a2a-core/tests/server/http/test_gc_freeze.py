"""``freeze_gc``: the app's startup exempts the objects of that moment from the collector.

Each case runs in a fresh interpreter: ``gc.freeze()`` is process-wide, and the
first startup of a process is the one that freezes.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

_PROGRAM = textwrap.dedent(
    """
    import gc
    base = gc.get_freeze_count()  # the interpreter's own (375 on CPython 3.12.1, 0 on 3.11)
    import asyncio, sys
    from a2a_core import configure_service
    from a2a_core.server import RequestContext
    from a2a_core.server.asgi import create_app
    from a2a_core.types import Message


    async def agent(context: RequestContext) -> Message:
        return Message.agent("hi")


    async def start_and_stop(**options):
        app = create_app(configure_service(agent), **options)
        async with app.lifespan():
            return gc.get_freeze_count()


    async def main():
        options = eval(sys.argv[1])
        first = await start_and_stop(**options)
        leftover = [[] for _ in range(1000)]  # objects made after the first startup
        second = await start_and_stop(**options)
        print(first - base, second - base, len(leftover))


    asyncio.run(main())
    """
)


def _freeze_counts(options: str) -> tuple[int, int]:
    """What the first and a second startup left frozen, beyond what the interpreter froze."""
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM, options],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    first, second, _ = done.stdout.split()
    return int(first), int(second)


def test_startup_freezes_the_objects_of_that_moment_once_per_process() -> None:
    first, second = _freeze_counts("{}")
    assert first > 10_000  # modules, classes, validators: everything loaded by then
    # A later app in the same process freezes nothing more (the 1,000 lists made in between
    # stay collectable); frozen objects that were freed since leave the count.
    assert second <= first


@pytest.mark.parametrize("options", ["{'freeze_gc': False}"])
def test_freeze_gc_false_leaves_the_collector_alone(options: str) -> None:
    assert _freeze_counts(options) == (0, 0)
