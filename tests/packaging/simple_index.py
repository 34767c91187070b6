"""A PEP 503 simple index of a folder of wheels and sdists, served on 127.0.0.1.

What PyPI will serve once the packages are published, at a loopback address:
``/simple/`` lists the projects, ``/simple/<name>/`` links each of its files
with its sha256 and ``data-requires-python``, ``/files/<file>`` serves it. The
server records the paths it was asked for, so a test can tell what an
installer took from it.
"""

from __future__ import annotations

import hashlib
import html
import re
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.parser import HeaderParser
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def normalize(name: str) -> str:
    """PEP 503's normalized project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def core_metadata(path: Path) -> dict[str, str]:
    """Name and Requires-Python of a wheel or sdist, from its own metadata."""
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as archive:
            (meta,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
            text = archive.read(meta).decode()
    else:
        with tarfile.open(path) as archive:
            (info,) = [
                m
                for m in archive.getmembers()
                if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO")
            ]
            handle = archive.extractfile(info)
            assert handle is not None
            text = handle.read().decode()
    headers = HeaderParser().parsestr(text)
    return {"name": str(headers["Name"]), "requires_python": str(headers["Requires-Python"] or "")}


def write_index(dist: Path, root: Path) -> list[str]:
    """Lay out ``root`` as a simple index of every wheel and sdist in ``dist``; the projects."""
    files = root / "files"
    files.mkdir(parents=True)
    projects: dict[str, list[str]] = {}
    for path in sorted(dist.iterdir()):
        if not path.name.endswith((".whl", ".tar.gz")):
            continue
        (files / path.name).write_bytes(path.read_bytes())
        meta = core_metadata(path)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        requires = html.escape(meta["requires_python"], quote=True)
        link = (
            f'<a href="../../files/{path.name}#sha256={digest}" '
            f'data-requires-python="{requires}">{path.name}</a><br>'
        )
        projects.setdefault(normalize(meta["name"]), []).append(link)
    page = "<!DOCTYPE html><html><head><title>{t}</title></head><body>{b}</body></html>\n"
    simple = root / "simple"
    simple.mkdir()
    listing = "".join(f'<a href="{name}/">{name}</a><br>' for name in sorted(projects))
    (simple / "index.html").write_text(page.format(t="Simple index", b=listing))
    for name, links in projects.items():
        (simple / name).mkdir()
        (simple / name / "index.html").write_text(page.format(t=name, b="".join(links)))
    return sorted(projects)


@dataclass
class Index:
    """A served simple index: its URL, its projects and the paths requested so far."""

    url: str
    projects: list[str]
    requested: list[str] = field(default_factory=list)


class _Handler(SimpleHTTPRequestHandler):
    index: Index

    def do_GET(self) -> None:
        self.index.requested.append(self.path)
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the requests are recorded in ``index.requested``."""


@contextmanager
def serve_index(dist: Path, root: Path) -> Iterator[Index]:
    """Serve ``dist`` as a simple index on an ephemeral loopback port while the block runs."""
    projects = write_index(dist, root)
    index = Index(url="", projects=projects)
    handler = type("Handler", (_Handler,), {"index": index})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(root)))
    index.url = f"http://127.0.0.1:{server.server_address[1]}/simple/"
    thread = threading.Thread(target=server.serve_forever, name="simple-index", daemon=True)
    thread.start()
    try:
        yield index
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
