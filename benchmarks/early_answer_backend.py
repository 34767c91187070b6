"""What does the early-answer network backend cost a call, next to httpx's default one?

``A2AClient`` builds its own httpx client on ``EarlyAnswerBackend``
(``a2a_core.client.transports.answer_early``: plain sockets driven by the
event loop, so a server's 413 survives a cut upload). This times the same
POSTs through two httpx clients that differ only in that backend, alternating
call by call against the benchmark server of ``client_overhead.py`` (its own
process), and prints wall and CPU time per call for a small body (a typical
A2A send) and a 1 MiB one.

    uv run python benchmarks/early_answer_backend.py [--calls 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import time

from client_overhead import ANSWER, free_port, serve, wait_listening

SMALL = (
    b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'
    b'{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hello"}]}}}'
)
LARGE = SMALL[:-4] + b"x" * (1024 * 1024) + SMALL[-4:]


async def measure(url: str, body: bytes, calls: int, rounds: int) -> dict[str, list[float]]:
    import httpx
    from a2a_core.client.transports import answer_early

    headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    out: dict[str, list[float]] = {
        "default wall": [],
        "early wall": [],
        "default cpu": [],
        "early cpu": [],
    }
    async with httpx.AsyncClient() as default, answer_early(httpx.AsyncClient()) as early:
        clients = {"default": default, "early": early}
        for _ in range(50):
            for http in clients.values():
                assert (await http.post(url, content=body, headers=headers)).status_code == 200
        per_round = max(1, calls // rounds)
        for _ in range(rounds):
            spent = {name: [0.0, 0.0] for name in clients}
            for _ in range(per_round):
                for name, http in clients.items():
                    w, c = time.perf_counter(), time.process_time()
                    response = await http.post(url, content=body, headers=headers)
                    spent[name][0] += time.perf_counter() - w
                    spent[name][1] += time.process_time() - c
                    assert response.status_code == 200
            for name, (wall, cpu) in spent.items():
                out[f"{name} wall"].append(wall / per_round * 1e6)
                out[f"{name} cpu"].append(cpu / per_round * 1e6)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    assert ANSWER
    port = free_port()
    server = multiprocessing.Process(target=serve, args=(port, "send"), daemon=True)
    server.start()
    try:
        wait_listening(port)
        url = f"http://127.0.0.1:{port}/"
        for label, body, calls in (
            ("small body", SMALL, args.calls),
            ("1 MiB body", LARGE, max(50, args.calls // 20)),
        ):
            found = asyncio.run(measure(url, body, calls, args.rounds))
            print(f"{label} ({len(body)} bytes), {calls} calls per client, median of rounds:")
            for key in ("default wall", "early wall", "default cpu", "early cpu"):
                rounds = ", ".join(f"{v:.0f}" for v in found[key])
                median = statistics.median(found[key])
                print(f"  {key:13} {median:9.1f} us/call   rounds: {rounds}")
            ratio = statistics.median(found["early cpu"]) / statistics.median(found["default cpu"])
            print(f"  CPU early/default: {ratio:.2f}")
    finally:
        server.terminate()
        server.join(5)


if __name__ == "__main__":
    main()
