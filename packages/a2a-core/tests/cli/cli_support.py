"""Run ``a2a`` in process (``cli``), or ``a2a serve`` as a real subprocess (``ServeProcess``)."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import pytest
from a2a_core.cli import main

HERE = Path(__file__).parent
AGENTS_FILE = HERE / "cli_agents.py"
_SCRIPT = Path(sys.executable).parent / ("a2a.exe" if os.name == "nt" else "a2a")
_SERVING = re.compile(r"^Serving .* at (https?://\S+)$")


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``a2a ARGV`` in this process: (exit status, stdout, stderr)."""
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse: --help, usage errors
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def a2a_command() -> list[str]:
    """The installed console script (falls back to ``python -m a2a_core.cli``)."""
    if _SCRIPT.exists():
        return [str(_SCRIPT)]
    return [sys.executable, "-m", "a2a_core.cli"]


def subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    env["A2A_PLUGINS"] = "a2a-test-plugin"  # only the test plugin: fast, deterministic startup
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("A2A_BEARER_TOKEN", None)
    return env


class ServeProcess:
    """``a2a serve ARGS`` in a subprocess; always stopped (SIGINT, then kill) by ``stop``."""

    def __init__(self, args: Sequence[str], *, cwd: Path | None = None) -> None:
        self.args = list(args)
        self.cwd = cwd
        self.lines: queue.Queue[str] = queue.Queue()
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self.proc: subprocess.Popen[str] | None = None
        self.url: str | None = None
        self._pumps: list[threading.Thread] = []

    def start(self, timeout: float = 40.0) -> str:
        """Start it and wait for the card line; the base URL it serves at."""
        self.proc = subprocess.Popen(
            [*a2a_command(), "serve", *self.args],
            cwd=self.cwd,
            env=subprocess_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        for stream, is_stdout in ((self.proc.stdout, True), (self.proc.stderr, False)):
            pump = threading.Thread(target=self._pump, args=(stream, is_stdout), daemon=True)
            pump.start()
            self._pumps.append(pump)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                if self.proc.poll() is not None and self.lines.empty():
                    time.sleep(0.2)  # let the pumps finish
                    raise RuntimeError(
                        f"a2a serve exited with {self.proc.returncode}: {''.join(self.stderr)}"
                    ) from None
                continue
            found = _SERVING.match(line.strip())
            if found:
                self.url = found.group(1)
            if line.startswith("Agent card: ") and self.url is not None:
                return self.url
        self.stop()
        raise RuntimeError(f"a2a serve did not start in {timeout} s: {''.join(self.stderr)}")

    def _pump(self, stream: IO[str], is_stdout: bool) -> None:
        for line in stream:
            (self.stdout if is_stdout else self.stderr).append(line)
            if is_stdout:
                self.lines.put(line)

    def stop(self, sig: int = signal.SIGINT, timeout: float = 20.0) -> int:
        """Send ``sig``, wait for the exit; kill after ``timeout``. The exit status."""
        proc = self.proc
        if proc is None:
            return -1
        if proc.poll() is None:
            proc.send_signal(sig)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        for pump in self._pumps:
            pump.join(timeout=5)  # both pipes reach EOF once the process is gone
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        return proc.returncode

    def output(self) -> str:
        return "".join(self.stdout)

    def wait_output(self, text: str, timeout: float = 20.0) -> str:
        """The output once it contains ``text`` (the startup lines come one by one)."""
        deadline = time.monotonic() + timeout
        while text not in self.output():
            if time.monotonic() > deadline or (
                self.proc is not None and self.proc.poll() is not None
            ):
                raise AssertionError(f"{text!r} not in the output: {self.output()!r}")
            time.sleep(0.02)
        return self.output()

    def errors(self) -> str:
        return "".join(self.stderr)

    def __enter__(self) -> ServeProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
