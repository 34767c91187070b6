"""``a2a serve`` cluster options: lease timings and idempotent sends, checked and applied."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from a2a_core import A2AClient
from a2a_core.adapters import open_task_store
from a2a_core.cli.main import build_parser
from a2a_core.cli.serve import _manager_config  # pyright: ignore[reportPrivateUsage]
from a2a_core.server.manager import ManagerConfig
from a2a_core.stores.cluster import TaskLeases
from a2a_core.types import Message, Part, Role, TaskState
from cli_support import AGENTS_FILE, ServeProcess, cli

TARGET = f"{AGENTS_FILE}:ScriptedAgent"


def _config(*options: str) -> ManagerConfig:
    args = build_parser().parse_args(["serve", TARGET, *options])
    return _manager_config(args)


def test_defaults_are_the_managers_and_renewals_follow_the_lease() -> None:
    default = _config()
    assert (default.lease_seconds, default.lease_renew_seconds) == (30.0, 10.0)
    assert (default.orphan_sweep_seconds, default.send_retention_seconds) == (10.0, 0.0)
    short = _config("--lease-seconds", "3")  # not the default 10 s renewal: above the lease
    assert (short.lease_seconds, short.lease_renew_seconds, short.orphan_sweep_seconds) == (
        3.0,
        1.0,
        1.0,
    )
    given = _config(
        "--lease-seconds",
        "1.5",
        "--lease-renew-seconds",
        "0.25",
        "--orphan-sweep-seconds",
        "0.5",
        "--send-retention-seconds",
        "3600",
    )
    assert (given.lease_seconds, given.lease_renew_seconds) == (1.5, 0.25)
    assert (given.orphan_sweep_seconds, given.send_retention_seconds) == (0.5, 3600.0)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--lease-seconds", "0"], "argument --lease-seconds: must be above 0 seconds, not '0'"),
        (["--lease-seconds", "-5"], "argument --lease-seconds: must be above 0 seconds"),
        (["--lease-renew-seconds", "soon"], "not a number of seconds: 'soon'"),
        (["--orphan-sweep-seconds", "nan"], "not a finite number of seconds: 'nan'"),
        (["--orphan-sweep-seconds", "inf"], "not a finite number of seconds: 'inf'"),
        (["--send-retention-seconds", "-1"], "must be 0 (off) or more seconds, not '-1'"),
        (
            ["--lease-seconds", "5", "--lease-renew-seconds", "5"],
            "--lease-renew-seconds (5) must be below --lease-seconds (5)",
        ),
    ],
)
def test_bad_cluster_options_exit_2_with_the_reason(
    capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    code, out, err = cli(capsys, "serve", TARGET, "--port", "0", *options)
    assert (code, out) == (2, "")
    assert message in err


async def test_a_served_process_takes_short_leases_and_remembers_sends(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tasks.db'}"
    args = [
        TARGET,
        "--port",
        "0",
        "--store",
        url,
        "--lease-seconds",
        "1.5",
        "--lease-renew-seconds",
        "0.3",
        "--send-retention-seconds",
        "60",
    ]
    store = open_task_store(url)
    assert isinstance(store, TaskLeases)
    try:
        with ServeProcess(args, cwd=tmp_path) as proc:
            served = await asyncio.to_thread(proc.start, 60.0)
            async with await A2AClient.connect(served) as client:
                sent = await client.send("slow", blocking=False)
                assert sent.task is not None
                lease = None
                for _ in range(200):
                    lease = await store.lease_of(sent.task.id)
                    if lease is not None:
                        break
                    await asyncio.sleep(0.02)
                assert lease is not None
                # Held for 1.5 s from its last renewal, not the default 30 s.
                assert lease.expires_at - time.time() <= 1.5
                message = Message(message_id="once", role=Role.USER, parts=[Part(text="hello")])
                first = await client.send(message)
                again = await client.send(message)
                assert first.task is not None
                assert again.task is not None
                assert again.task.id == first.task.id
                assert again.state is TaskState.COMPLETED
                await client.cancel(sent.task.id)
    finally:
        await store.aclose()
