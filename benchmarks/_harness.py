"""Shared plumbing of the benchmark scripts: where things are, starting servers, loadgen.

Every server listens on 127.0.0.1, is started here and stopped by its PID.
The load generator, the SDK echo agent and the ceiling servers are the shared
bench tools (``shared/tools/bench`` beside the repository, or ``A2A_BENCH_TOOLS``);
they are invoked from there, never copied.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SERVER_CPU = os.environ.get("SERVER_CPU", "0")
CLIENT_CPU = os.environ.get("CLIENT_CPU", "1")


def default_python() -> str:
    venv = REPO / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def tools_dir() -> Path:
    """The shared bench tools (loadgen.py, sdk_echo_server.py, ceiling_server.py, bodies/)."""
    env = os.environ.get("A2A_BENCH_TOOLS")
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared" / "tools" / "bench", REPO / "tools" / "bench"]
    for path in candidates:
        if (path / "loadgen.py").exists():
            return path
    raise SystemExit("bench tools not found: set A2A_BENCH_TOOLS to the folder with loadgen.py")


def has_taskset() -> bool:
    return subprocess.run(["which", "taskset"], capture_output=True).returncode == 0


def pinned(cpu: str, argv: Sequence[str]) -> list[str]:
    return ["taskset", "-c", cpu, *argv] if has_taskset() else list(argv)


def fast_io(python: str, env: Mapping[str, str]) -> bool:
    """Whether ``python`` can use uvloop and httptools (then both servers use them)."""
    probe = subprocess.run(
        [python, "-c", "import uvloop, httptools"], env=dict(env), capture_output=True
    )
    return probe.returncode == 0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


# One blocking task-mode SendMessage after another, calling an ASGI app directly (no HTTP
# server): argv = app spec, "factory"|"plain", sys.path entry. Prints CPU and wall µs/request.
INPROC_CODE = r"""
import asyncio, json, os, sys, time, uuid
sys.path[:0] = sys.argv[3:]
mod_name, _, attr = sys.argv[1].partition(":")
factory = sys.argv[2] == "factory"
import importlib
obj = getattr(importlib.import_module(mod_name), attr)
app = obj() if factory else obj
body_tpl = open(os.path.join(os.environ["BENCH_BODIES"], "send_v1.json"), "rb").read().strip()
N = int(os.environ.get("INPROC_N", "2000"))

async def one(app):
    body = body_tpl.replace(b"%UUID%", uuid.uuid4().hex.encode())
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": "/", "raw_path": b"/", "root_path": "", "query_string": b"",
             "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
                         (b"a2a-version", b"1.0"), (b"content-length", str(len(body)).encode())],
             "client": ("127.0.0.1", 5), "server": ("127.0.0.1", 80), "state": {}}
    sent = []
    done = False
    async def receive():
        nonlocal done
        if not done:
            done = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)
    async def send(msg):
        sent.append(msg)
    await app(scope, receive, send)
    assert sent[0]["status"] == 200 and b'"error"' not in sent[-1].get("body", b""), sent

async def main():
    for _ in range(200):
        await one(app)
    prof_path = os.environ.get("INPROC_PROFILE")
    if prof_path:
        import cProfile
        prof = cProfile.Profile()
        prof.enable()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(N):
        await one(app)
    t1, c1 = time.perf_counter(), time.process_time()
    if prof_path:
        prof.disable()
        prof.dump_stats(prof_path)
    print(json.dumps({"us_cpu": (c1 - c0) / N * 1e6, "us_wall": (t1 - t0) / N * 1e6}))

asyncio.run(main())
"""

# uvicorn whose cProfile is switched on by SIGUSR1 and dumped (to argv[1]) by SIGUSR2,
# so start-up and warm-up stay out of the profile.
PROFILED_UVICORN = r"""
import cProfile, signal, sys
import uvicorn

path = sys.argv[1]
prof = cProfile.Profile()

def start(*_):
    prof.enable()

def dump(*_):
    prof.disable()
    prof.dump_stats(path)

signal.signal(signal.SIGUSR1, start)
signal.signal(signal.SIGUSR2, dump)
sys.argv = ["uvicorn", *sys.argv[2:]]
uvicorn.main()
"""


@dataclass(frozen=True)
class Impl:
    """One server implementation: a uvicorn app spec and the folder it is imported from."""

    name: str
    app: str
    cwd: Path
    factory: bool = True
    env: Mapping[str, str] = field(default_factory=dict[str, str])


def implementations(tools: Path) -> dict[str, Impl]:
    return {
        "ours": Impl("ours", "benchmarks.echo_app:create_app", REPO),
        "sdk": Impl("sdk", "sdk_echo_server:create_app", tools),
        "ceil": Impl("ceil", "ceiling_server:raw_app", tools, factory=False),
    }


@dataclass
class Settings:
    python: str
    tools: Path
    fast: bool
    base_env: dict[str, str]
    log_dir: Path

    @classmethod
    def detect(cls, python: str | None, log_dir: Path) -> Settings:
        py = python or default_python()
        env = dict(os.environ)
        env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
        log_dir.mkdir(parents=True, exist_ok=True)
        return cls(py, tools_dir(), fast_io(py, env), env, log_dir)

    @property
    def io_args(self) -> list[str]:
        if self.fast:
            return ["--loop", "uvloop", "--http", "httptools"]
        return ["--loop", "asyncio", "--http", "h11"]

    @property
    def io_label(self) -> str:
        return (
            "uvloop + httptools" if self.fast else "asyncio + h11 (uvloop/httptools not installed)"
        )


class Server:
    """A uvicorn process pinned to SERVER_CPU; use as a context manager."""

    def __init__(
        self,
        settings: Settings,
        impl: Impl,
        env: Mapping[str, str],
        *,
        profile_to: Path | None = None,
    ) -> None:
        self.settings = settings
        self.impl = impl
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        full_env = {**settings.base_env, **impl.env, **env, "ECHO_PORT": str(self.port)}
        if profile_to is None:
            argv = [settings.python, "-m", "uvicorn", impl.app]
        else:
            argv = [settings.python, "-c", PROFILED_UVICORN, str(profile_to), impl.app]
        if impl.factory:
            argv.append("--factory")
        argv += ["--host", "127.0.0.1", "--port", str(self.port), "--workers", "1"]
        argv += ["--no-access-log", "--log-level", "warning", *settings.io_args]
        tag = "_".join([impl.name, *(f"{k}-{v}" for k, v in sorted(env.items()))])
        self.log_path = settings.log_dir / f"server_{tag}.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            pinned(SERVER_CPU, argv),
            cwd=impl.cwd,
            env=full_env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self.pid = self.proc.pid
        self._wait_ready()

    def _wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            with socket.socket() as sock:
                sock.settimeout(0.2)
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(
            f"{self.impl.name} server did not start:\n{self.log_path.read_text()[-2000:]}"
        )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def loadgen(
    settings: Settings,
    server: Server,
    body: str,
    *,
    connections: int,
    duration: float,
    warmup: float,
    sse: bool = False,
    max_requests: int = 0,
    path: str = "",
) -> dict[str, Any]:
    """One loadgen run (pinned to CLIENT_CPU) against ``server``; its JSON result."""
    tools = settings.tools
    argv = [settings.python, str(tools / "loadgen.py"), server.url + path.lstrip("/")]
    argv += [str(tools / "bodies" / body), "-H", "A2A-Version: 1.0", "--unique"]
    argv += ["-c", str(connections), "-d", str(duration), "--warmup", str(warmup)]
    argv += ["--pid", str(server.pid), "--json"]
    if sse:
        argv.append("--sse")
    if max_requests:
        argv += ["-n", str(max_requests)]
    done = subprocess.run(
        pinned(CLIENT_CPU, argv),
        env=settings.base_env,
        capture_output=True,
        text=True,
        timeout=duration + warmup + 150,
    )
    if done.returncode != 0:
        raise RuntimeError(f"loadgen failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def rpc(server: Server, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One JSON-RPC 1.0 call (stdlib only), e.g. ListTasks to count stored tasks."""
    import urllib.request

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    req = urllib.request.Request(
        server.url,
        data=body,
        headers={"Content-Type": "application/json", "A2A-Version": "1.0"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def median(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def p99(values: Sequence[float]) -> float:
    """The 99th percentile: the nearest rank of the sorted values (at least one)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def git_state() -> str:
    def run(*args: str) -> str:
        out = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
        return out.stdout.strip()

    head = run("rev-parse", "--short", "HEAD")
    dirty = run("status", "--porcelain", "--untracked-files=no", "--", "packages/a2a-core/src")
    return f"{head}{' + uncommitted changes in packages/a2a-core/src' if dirty else ''}"


# A fixed pure-Python loop, timed on the server's core: how fast this box runs Python
# today. Ratios to the raw-ASGI ceiling (mostly C and the kernel) move with it.
_PY_REFERENCE = (
    "import time\n"
    "def loop(n):\n"
    "    s = 0\n"
    "    for i in range(n): s += i * i\n"
    "    return s\n"
    "times = []\n"
    "for _ in range(5):\n"
    "    t = time.process_time(); loop(1_000_000); times.append(time.process_time() - t)\n"
    "print(sorted(times)[2] * 1e3)"
)


def machine(python: str) -> str:
    """The CPU model, its clock and cache, and the pure-Python reference loop's time."""
    model, mhz, cache = "unknown CPU", "", ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            key, value = key.strip(), value.strip()
            if key == "model name" and model == "unknown CPU":
                model = value
            elif key == "cpu MHz" and not mhz:
                mhz = f", {float(value):,.0f} MHz"
            elif key == "cache size" and not cache:
                cache = f", {value} cache per core"
    done = subprocess.run(
        pinned(SERVER_CPU, [python, "-c", _PY_REFERENCE]), capture_output=True, text=True
    )
    loop = f"{float(done.stdout):.0f} ms" if done.returncode == 0 else "not measured"
    return (
        f"{model} ({os.cpu_count()} cores{mhz}{cache}); a pure-Python loop of 1,000,000 "
        f"squares: {loop} (`_harness.machine`)"
    )


def package_versions(python: str, names: Sequence[str]) -> dict[str, str]:
    code = (
        "import importlib.metadata as m, json, sys\n"
        "out = {}\n"
        "for n in sys.argv[1:]:\n"
        "    try: out[n] = m.version(n)\n"
        "    except m.PackageNotFoundError: out[n] = '-'\n"
        "print(json.dumps(out))"
    )
    done = subprocess.run([python, "-c", code, *names], capture_output=True, text=True)
    return json.loads(done.stdout) if done.returncode == 0 else {}


@contextlib.contextmanager
def timer(label: str) -> Iterator[None]:
    t0 = time.monotonic()
    yield
    print(f"# {label}: {time.monotonic() - t0:.0f}s", file=sys.stderr, flush=True)


def fmt(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"
