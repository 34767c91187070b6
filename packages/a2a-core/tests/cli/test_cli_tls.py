"""``a2a serve --tls-cert/--tls-key/--tls-client-ca`` (a real subprocess on 127.0.0.1) and
the client commands' ``--cacert/--cert/--key``: the caller is the client certificate's CN,
callers without a certificate or with one from another CA are refused (exit 4), and two
callers do not see each other's tasks (exit 3: task not found)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from a2a_core.testing.pki import IssuedCert, TestCA
from cli_support import AGENTS_FILE, ServeProcess, cli
from servers import free_port  # pyright: ignore[reportMissingImports]

pytestmark = pytest.mark.timeout(90)

TASK = re.compile(r"\(task (\S+),")


class PKI:
    def __init__(self, folder: Path) -> None:
        self.ca = TestCA(folder / "ca", "CLI CA")
        self.server = self.ca.server_cert()
        self.alice = self.ca.client_cert("alice")
        self.bob = self.ca.client_cert("bob")
        self.impostor = TestCA(folder / "other", "Other CA").client_cert("alice")

    def as_(self, who: IssuedCert | None) -> list[str]:
        trust = ["--cacert", str(self.ca.cert_path)]
        if who is None:
            return trust
        return [*trust, "--cert", str(who.cert), "--key", str(who.key)]


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> PKI:
    return PKI(tmp_path_factory.mktemp("cli-pki"))


@pytest.fixture(scope="module")
def agent(pki: PKI) -> Iterator[str]:
    port = free_port()
    url = f"https://127.0.0.1:{port}"
    tls = ["--tls-cert", str(pki.server.cert), "--tls-key", str(pki.server.key)]
    args = [f"{AGENTS_FILE}:ScriptedAgent", "--port", str(port), "--public-url", url, *tls]
    mutual = ["--tls-client-ca", str(pki.ca.cert_path), "--grpc-port", "0"]
    with ServeProcess([*args, *mutual]) as process:
        assert process.start() == url
        assert "mutual TLS (caller: certificate CN)" in process.wait_output("Press Ctrl-C")
        yield url


def test_a_caller_with_a_certificate_is_served(
    capsys: pytest.CaptureFixture[str], agent: str, pki: PKI
) -> None:
    code, out, err = cli(capsys, "send", agent, "hello", *pki.as_(pki.alice))
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == "Echo: hello"
    code, out, err = cli(capsys, "send", agent, "hello", "--binding", "grpc", *pki.as_(pki.bob))
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == "Echo: hello"
    code, out, _ = cli(capsys, "card", agent, *pki.as_(pki.bob))
    assert code == 0
    assert "Security:" in out
    assert "  GRPC       1.0   grpcs://127.0.0.1:" in out
    assert "mutual TLS" in out.lower() or "mtls" in out.lower()


@pytest.mark.parametrize("who", ["no certificate", "another CA's", "no CA bundle"])
def test_callers_the_server_cannot_trust_are_refused(
    capsys: pytest.CaptureFixture[str], agent: str, pki: PKI, who: str
) -> None:
    options = {
        "no certificate": pki.as_(None),
        "another CA's": pki.as_(pki.impostor),
        # the server's certificate is not trusted without the CA bundle
        "no CA bundle": ["--cert", str(pki.alice.cert), "--key", str(pki.alice.key)],
    }[who]
    code, out, err = cli(capsys, "send", agent, "hello", *options)
    assert code == 4, err
    assert out == ""
    assert err.startswith(("a2a: error: could not connect to ", "a2a: error: cannot reach"))


def test_two_callers_do_not_see_each_others_tasks(
    capsys: pytest.CaptureFixture[str], agent: str, pki: PKI
) -> None:
    code, out, _ = cli(capsys, "send", agent, "ask", *pki.as_(pki.alice))
    assert code == 0
    found = TASK.search(out)
    assert found is not None, out
    task_id = found.group(1)
    code, _, err = cli(capsys, "get", agent, task_id, *pki.as_(pki.bob))
    assert code == 3
    assert "TaskNotFoundError" in err
    code, out, _ = cli(capsys, "get", agent, task_id, *pki.as_(pki.alice))
    assert code == 0
    assert task_id in out


def test_tls_files_that_do_not_exist_are_usage_errors(
    capsys: pytest.CaptureFixture[str], pki: PKI, tmp_path: Path
) -> None:
    missing = str(tmp_path / "missing.pem")
    code, _, err = cli(capsys, "send", "https://127.0.0.1:9", "hi", "--cacert", missing)
    assert code == 2
    assert "--cacert: no such file" in err
    code, _, err = cli(capsys, "send", "https://127.0.0.1:9", "hi", "--key", missing)
    assert (code, "--key goes with --cert" in err) == (2, True)
    target = f"{AGENTS_FILE}:ScriptedAgent"
    code, _, err = cli(
        capsys, "serve", target, "--tls-cert", str(pki.server.cert), "--tls-client-ca", missing
    )
    assert code == 2
    assert "TLS CA file not found" in err
