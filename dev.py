#!/usr/bin/env python3
"""Developer commands that work on a fresh machine with only Python 3.11+ and pip.

    python3 dev.py demo      set up what the demo needs, then run it (examples/demo.py: a
                             CrewAI crew calls a LangChain chain over A2A, offline)
    python3 dev.py test      set up, then ruff, pyright and pytest over the whole repo
                             (with CI=true it first installs Debian's chromium, when
                             missing, for the playground's browser tests)
    python3 dev.py lint      set up, then ruff and pyright only
    python3 dev.py docs      set up, then build the documentation site into site/ (strict:
                             a broken link, a missing reference or any warning fails it)
    python3 dev.py docs-serve  set up, then serve the site at http://127.0.0.1:8000, or the
                             next free port when 8000 is taken (live reload; arguments
                             go to ``mkdocs serve``)
    python3 dev.py setup     set up only
    python3 dev.py build     wheels and sdists of every package under packages/ into
                             dist/ (``-o DIR`` for another folder)
    python3 dev.py release-check  build into dist/, then check what would be published:
                             one version source each, the core ranges, changelogs,
                             classifiers, twine check, wheel contents, readme links,
                             sdists that rebuild to the same wheels (tools/release_check.py);
                             ``--tag NAME-vVERSION`` also copies that package's two files
                             to dist/publish/ (what the publish workflow uploads)
    python3 dev.py test-python 3.12  set up .venv-3.12 with that Python, then pytest over
                             the packages and the packaging tests (options go to pytest;
                             paths replace that suite); ``all-others`` runs every tested
                             Python but the one running dev.py, one after the other
    python3 dev.py proto     regenerate the gRPC descriptor module from a2a_core/grpc/a2a.proto
                             (runs protoc from grpcio-tools, fetched by uv for this run only)

"Set up" finds uv (on PATH, importable, or installed into a bootstrap venv
in the user cache) and runs ``uv sync --all-packages --locked``, which makes
``.venv`` match ``uv.lock`` exactly. ``demo`` sets up less: only the two
adapters and what they need (``--package a2a-langchain --package a2a-crewai
--no-default-groups --inexact``: about 150 packages instead of 215, and
nothing it installs is removed by, or removes, a later full set-up).
Arguments after ``test`` go to pytest
(``python3 dev.py test packages/a2a-core -x``), arguments after ``demo`` to the
demo (``python3 dev.py demo Porto``). ``build`` needs only uv, not the
set-up ``.venv``: it runs ``uv build --all-packages --no-sources``, which
builds each package's sdist and then its wheel from that sdist, as an index
would receive them. ``test-python`` finds the interpreter on PATH
(``python3.12``), under pyenv, or lets uv find one. Standard library only.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import os
import re
import shutil
import socket
import subprocess
import sys
import venv
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parent
DEMO = ROOT / "examples" / "demo.py"
BIN = "Scripts" if os.name == "nt" else "bin"
EXE = ".exe" if os.name == "nt" else ""


def say(text: str) -> None:
    print(f"==> {text}", flush=True)


def fail(text: str) -> NoReturn:
    print(f"dev.py: {text}", file=sys.stderr, flush=True)
    raise SystemExit(1)


def bootstrap_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "a2a-adapters-dev" / f"uv-py{sys.version_info[0]}{sys.version_info[1]}"


def find_uv() -> list[str]:
    """The command that runs uv, installing uv first when there is none."""
    running = os.environ.get("UV")  # set by `uv run` for the programs it starts
    if running and _runs([running, "--version"]):
        return [running]
    on_path = shutil.which("uv")
    if on_path:
        return [on_path]
    if _runs([sys.executable, "-m", "uv", "--version"]):
        return [sys.executable, "-m", "uv"]
    boot = bootstrap_dir()
    boot_uv = boot / BIN / f"uv{EXE}"
    if boot_uv.exists() and _runs([str(boot_uv), "--version"]):
        return [str(boot_uv)]
    say(f"uv not found: installing it into a bootstrap venv at {boot}")
    try:
        venv.EnvBuilder(with_pip=True, clear=True).create(boot)
        _run([str(boot / BIN / f"python{EXE}"), "-m", "pip", "install", "-q", "uv"])
        return [str(boot_uv)]
    except (OSError, subprocess.CalledProcessError) as exc:
        say(f"bootstrap venv failed ({exc}); trying pip install --user uv")
    with contextlib.suppress(OSError, subprocess.CalledProcessError):
        _run([sys.executable, "-m", "pip", "install", "-q", "--user", "uv"])
    if _runs([sys.executable, "-m", "uv", "--version"]):
        return [sys.executable, "-m", "uv"]
    fail("could not install uv; install it (https://docs.astral.sh/uv/) and retry")


def _runs(cmd: Sequence[str]) -> bool:
    try:
        return subprocess.run(cmd, capture_output=True, check=False).returncode == 0
    except OSError:
        return False


def _run(cmd: Sequence[str]) -> None:
    subprocess.run(cmd, check=True, cwd=ROOT, env=_env())


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)  # an activated foreign venv would only make uv warn
    return env


DEMO_PACKAGES = ("a2a-langchain", "a2a-crewai")
"""What the demo imports: the two adapters (the core and both frameworks come with them)."""


def setup(packages: Sequence[str] = ()) -> list[str]:
    """Sync .venv with uv.lock; return the command prefix that runs tools in it.

    With ``packages``, only those workspace members and their dependencies, and
    without removing anything already installed: the demo's first run does not
    wait for the whole development toolchain, and a full ``.venv`` stays full.
    """
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py may be run by an older python3
        fail(f"Python 3.11+ is required (this is {sys.version.split()[0]})")
    uv = find_uv()
    if packages:
        chosen = [arg for name in packages for arg in ("--package", name)]
        sync = [*uv, "sync", "--locked", "--no-default-groups", "--inexact", *chosen]
    else:
        sync = [*uv, "sync", "--all-packages", "--locked"]
    if not (ROOT / ".venv").exists():
        sync += ["--python", sys.executable]  # the interpreter running dev.py, no download
    say(" ".join(["uv", *sync[len(uv) :]]))
    if subprocess.run(sync, cwd=ROOT, env=_env(), check=False).returncode != 0:
        fail("uv sync failed")
    return [*uv, "run", "--no-sync"]


TESTED_PYTHONS = ("3.11", "3.12", "3.13")
"""The Python versions CI tests, and so the ones the packages' classifiers list."""


def find_python(version: str) -> str:
    """An interpreter of ``version``: on PATH, under pyenv, or uv's own finding."""
    named = shutil.which(f"python{version}")
    if named and _runs([named, "-c", "pass"]):  # a pyenv shim may name a version not enabled
        return named
    pyenv = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    pattern = os.path.join(pyenv, "versions", f"{version}.*", BIN, f"python{version}{EXE}")
    found = sorted(glob.glob(pattern), key=lambda p: [int(x) for x in _patch_of(p)])
    if found and _runs([found[-1], "-c", "pass"]):
        return found[-1]
    return version  # uv searches its own places (and may download a build)


def _patch_of(path: str) -> list[str]:
    name = Path(path).parents[1].name  # .../versions/3.12.1/bin/python3.12
    return [x for x in name.split(".") if x.isdigit()]


def setup_python(version: str) -> tuple[list[str], dict[str, str]]:
    """Sync .venv-X.Y with uv.lock on Python X.Y; the command prefix and environment for it."""
    uv = find_uv()
    env = {**_env(), "UV_PROJECT_ENVIRONMENT": str(ROOT / f".venv-{version}")}
    sync = [*uv, "sync", "--all-packages", "--locked", "--python", find_python(version)]
    say(f"UV_PROJECT_ENVIRONMENT=.venv-{version} " + " ".join(["uv", *sync[len(uv) :]]))
    if subprocess.run(sync, cwd=ROOT, env=env, check=False).returncode != 0:
        fail(f"uv sync for Python {version} failed")
    return [*uv, "run", "--no-sync"], env


def step(run: list[str], title: str, args: Sequence[str]) -> int:
    say(title)
    return subprocess.run([*run, *args], cwd=ROOT, env=_env(), check=False).returncode


def lint_steps(run: list[str]) -> list[str]:
    """Run the static checks; return the names of the ones that failed."""
    checks = [
        ("ruff check", ["ruff", "check", "."]),
        ("ruff format --check", ["ruff", "format", "--check", "."]),
        # -p: this repository's settings, never a pyrightconfig.json in a parent folder.
        ("pyright", ["pyright", "-p", str(ROOT)]),
    ]
    return [title for title, args in checks if step(run, title, args) != 0]


def cmd_setup(_: Sequence[str]) -> int:
    setup()
    return 0


def cmd_demo(args: Sequence[str]) -> int:
    run = setup(DEMO_PACKAGES)
    return step(run, f"python {DEMO.relative_to(ROOT)}", ["python", str(DEMO), *args])


def cmd_lint(_: Sequence[str]) -> int:
    failed = lint_steps(setup())
    if failed:
        print(f"dev.py: failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def docs_env() -> dict[str, str]:
    """The environment for mkdocs: no upgrade banner, nothing that reaches the network."""
    return {**_env(), "NO_MKDOCS_2_WARNING": "1"}


def cmd_docs(args: Sequence[str]) -> int:
    run = setup()
    say("mkdocs build --strict (into site/)")
    cmd = [*run, "mkdocs", "build", "--strict", *args]
    return subprocess.run(cmd, cwd=ROOT, env=docs_env(), check=False).returncode


DOCS_PORT = 8000
"""docs-serve's first choice, which ``a2a serve`` also defaults to: the next free one follows."""


def port_free(host: str, port: int) -> bool:
    """Whether a server could listen on host:port now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        if os.name != "nt":  # as servers do: a closed connection's TIME_WAIT does not count
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:  # only a taken port; mkdocs reports a bad host itself
            return exc.errno != errno.EADDRINUSE
    return True


def docs_address(args: Sequence[str]) -> list[str]:
    """``--dev-addr`` for ``mkdocs serve``: 8000, else the next free port, said in one line.

    Checked before the set-up and the build, so a taken port costs no wait and no
    traceback. An address the user gave (``-a`` / ``--dev-addr``) is kept, or refused
    in one line when it is taken.
    """
    given = _given_address(args)
    if given is not None:
        host, _, port = given.rpartition(":")
        if port.isdigit() and not port_free(host or "127.0.0.1", int(port)):
            fail(f"{given} is in use: give another with --dev-addr HOST:PORT")
        return []
    host = "127.0.0.1"
    for port in range(DOCS_PORT, DOCS_PORT + 20):
        if port_free(host, port):
            if port != DOCS_PORT:
                say(f"port {DOCS_PORT} is in use (by a2a serve?): serving the docs on {port}")
            return ["--dev-addr", f"{host}:{port}"]
    fail(f"ports {DOCS_PORT}-{DOCS_PORT + 19} are all in use: give one with --dev-addr HOST:PORT")


def _given_address(args: Sequence[str]) -> str | None:
    for i, arg in enumerate(args):
        if arg in ("-a", "--dev-addr"):
            return args[i + 1] if i + 1 < len(args) else ""
        if arg.startswith("--dev-addr="):
            return arg.partition("=")[2]
    return None


def cmd_docs_serve(args: Sequence[str]) -> int:
    address = docs_address(args)
    run = setup()
    say("mkdocs serve (Ctrl-C stops it)")
    cmd = [*run, "mkdocs", "serve", *address, *args]
    return subprocess.run(cmd, cwd=ROOT, env=docs_env(), check=False).returncode


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def ensure_chromium() -> None:
    """In CI, install Debian's chromium for the browser tests when it is missing.

    Quiet and bounded (10 minutes; about 40 s on a Debian 12 runner with a
    fresh package index): ``apt-get install`` as root, or through ``sudo -n``.
    Outside CI nothing is installed: the browser tests skip with the reason.
    """
    if not in_ci() or shutil.which("chromium") or os.environ.get("A2A_CHROMIUM"):
        return
    apt = shutil.which("apt-get")
    if apt is None:
        say("CI: no chromium and no apt-get; the browser tests will fail")
        return
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    sudo = [] if root else ["sudo", "-n"]
    say("CI: installing chromium for the browser tests (apt-get)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (
        [*sudo, apt, "-qq", "update"],
        [*sudo, apt, "-qq", "install", "-y", "--no-install-recommends", "chromium"],
    ):
        try:
            done = subprocess.run(
                command, env=env, stdout=subprocess.DEVNULL, timeout=600, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            say(f"CI: {' '.join(command)} failed: {exc}")
            return
        if done.returncode != 0:
            say(f"CI: {' '.join(command)} exited with {done.returncode}")
            return


def cmd_test(args: Sequence[str]) -> int:
    run = setup()
    ensure_chromium()
    failed = lint_steps(run)
    # pytest runs last so that its summary line closes the output.
    code = step(run, "pytest", ["pytest", *args])
    if code == 5:
        failed.append("pytest (no tests were collected)")
    elif code != 0:
        failed.append("pytest")
    if failed:
        print(f"dev.py: failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


PYTHON_SUITE = ("packages", "tests/packaging", "--ignore=tests/packaging/test_crewai_versions.py")
"""What ``test-python`` runs on the other Pythons: every package's tests and the packaging
tests. Left out: the CrewAI adapter's suite on the lowest and newest crewai, a question of
crewai versions that the whole suite answers on 3.11 (the adapter's own tests run here)."""


def cmd_test_python(args: Sequence[str]) -> int:
    if not args:
        fail("usage: python3 dev.py test-python X.Y|all-others [pytest arguments]")
    version, rest = args[0], list(args[1:])
    if version == "all-others":
        current = f"{sys.version_info[0]}.{sys.version_info[1]}"
        others = [v for v in TESTED_PYTHONS if v != current]
        failed = [v for v in others if cmd_test_python([v, *rest]) != 0]
        if failed:
            print(f"dev.py: failed on Python {', '.join(failed)}", file=sys.stderr)
        return 1 if failed else 0
    run, env = setup_python(version)
    say(f"pytest on Python {version}")
    # Options alone (-x, -k ...) apply to the usual suite; a path replaces it.
    paths = [a for a in rest if not a.startswith("-") and (ROOT / a.split("::")[0]).exists()]
    cmd = [*run, "pytest", *(rest if paths else [*PYTHON_SUITE, *rest])]
    code = subprocess.run(cmd, cwd=ROOT, env=env, check=False).returncode
    if code == 5:
        print(f"dev.py: no tests were collected on Python {version}", file=sys.stderr)
    return 0 if code == 0 else 1


def distributions() -> tuple[str, ...]:
    """The file-name prefixes of the wheels and sdists of every package under packages/."""
    import tomllib

    prefixes = []
    for pyproject in sorted((ROOT / "packages").glob("*/pyproject.toml")):
        name = tomllib.loads(pyproject.read_text()).get("project", {}).get("name")
        if name:
            prefixes.append(re.sub(r"[-_.]+", "_", name).lower() + "-")
    return tuple(prefixes)


def cmd_build(args: Sequence[str]) -> int:
    out = ROOT / "dist"
    if list(args[:1]) in (["-o"], ["--out-dir"]) and len(args) == 2:
        out = Path(args[1]).resolve()
    elif args:
        fail("usage: python3 dev.py build [-o DIR]")
    build_into(out)
    return 0


def build_into(out: Path) -> None:
    """Every package's sdist, and its wheel built from that sdist, into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    prefixes = distributions()
    for old in out.iterdir():  # an older version's files would be installed by mistake
        if old.name.startswith(prefixes) and old.name.endswith((".whl", ".tar.gz")):
            old.unlink()
    uv = find_uv()
    build = ["build", "--all-packages", "--no-sources", "--out-dir", str(out)]
    code = step(uv, "uv " + " ".join(build), build)
    if code != 0:
        fail("uv build failed")
    for built in sorted(out.iterdir()):
        if built.name.startswith(prefixes):
            print(f"    {built}")


def cmd_release_check(args: Sequence[str]) -> int:
    out, tag, rest = ROOT / "dist", [], list(args)
    while rest:
        flag, value = rest[0], rest[1] if len(rest) > 1 else None
        if flag in ("-o", "--out-dir") and value:
            out = Path(value).resolve()
        elif flag == "--tag" and value:
            tag = ["--tag", value]
        else:
            fail("usage: python3 dev.py release-check [-o DIR] [--tag NAME-vVERSION]")
        rest = rest[2:]
    run = setup()
    build_into(out)
    check = ["python", "tools/release_check.py", "--dist", str(out), *tag]
    code = step(run, "release checks", check)
    if code != 0:
        print("dev.py: release-check failed", file=sys.stderr)
    return 0 if code == 0 else 1


PROTO_DIR = ROOT / "packages" / "a2a-core" / "src" / "a2a_core" / "grpc"


def cmd_proto(_: Sequence[str]) -> int:
    """protoc -> a FileDescriptorSet, written as a bytes literal the package loads."""
    import tempfile

    uv = find_uv()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "a2a.pb"
        protoc = [
            *uv,
            "run",
            "--no-project",
            "--with",
            "grpcio-tools>=1.60",
            "python",
            "-m",
            "grpc_tools.protoc",
            f"-I{PROTO_DIR}",
            f"--descriptor_set_out={out}",
            "a2a.proto",
        ]
        say(" ".join(protoc[len(uv) :]))
        if subprocess.run(protoc, cwd=PROTO_DIR, env=_env(), check=False).returncode != 0:
            fail("protoc failed")
        data = out.read_bytes()
    import base64

    text = base64.b64encode(data).decode("ascii")
    body = "\n".join(f'    "{text[i : i + 88]}"' for i in range(0, len(text), 88))
    target = PROTO_DIR / "_descriptor.py"
    target.write_text(
        '"""The compiled a2a.proto: a FileDescriptorSet, base64.\n\n'
        'Generated by ``python3 dev.py proto``; do not edit.\n"""\n\n'
        f"FILE_DESCRIPTOR_SET = (\n{body}\n)\n"
    )
    say(f"wrote {target.relative_to(ROOT)} ({len(data)} bytes)")
    return 0


COMMANDS = {
    "demo": cmd_demo,
    "test": cmd_test,
    "lint": cmd_lint,
    "setup": cmd_setup,
    "build": cmd_build,
    "release-check": cmd_release_check,
    "test-python": cmd_test_python,
    "proto": cmd_proto,
    "docs": cmd_docs,
    "docs-serve": cmd_docs_serve,
}


def main(argv: Sequence[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(__doc__)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
