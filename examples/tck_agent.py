"""The agent the A2A conformance kit (a2a-tck) expects, built on a2a_core's public API.

The kit selects behaviours by the prefix of the message id it sends
(``tck-complete-task-<suffix>`` and so on); see ``TckAgent.execute``.
Messages without a known prefix leave the task WORKING ("fire and forget"),
so that the kit can continue, list and cancel them.

    python examples/tck_agent.py --host 127.0.0.1 --port 9999

Options: ``--default-mode echo`` answers unknown messages with an echo instead,
``--http-status-mapping 1.0.0`` uses the HTTP error statuses the kit snapshot
expects, ``--streaming-timeout`` must match the kit's TCK_STREAMING_TIMEOUT, and
``--versions 1.0`` serves a pure 1.0 card (the 1.0 kit's schema refuses the
0.3 fields of the default hybrid card), and ``--grpc-port PORT`` adds the gRPC
binding (listed in the card as ``localhost:PORT``; the kit then runs its gRPC
tests too).
"""

from __future__ import annotations

import argparse
import asyncio

from a2a_core import AgentCardBuilder, Part
from a2a_core.compose.serve import interfaces_for, public_base_url, public_grpc_address, serve
from a2a_core.server import AgentExecutor, RequestContext, TaskUpdater


class TckAgent(AgentExecutor):
    """Maps the kit's message-id prefixes to task behaviours."""

    # Unknown messages leave the task WORKING ("fire and forget"), as the kit expects.
    leaves_task_open = True

    def __init__(self, streaming_timeout: float = 2.0, default_mode: str = "working") -> None:
        self.streaming_timeout = streaming_timeout
        self.default_mode = default_mode

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        mid = context.message.message_id
        if mid.startswith("tck-message-response"):
            await updater.reply("Direct message response")
        elif mid.startswith("tck-reject-task"):
            raise RuntimeError("rejected")
        elif mid.startswith("test-resubscribe-message-id"):
            await self._long_running(updater)
        elif mid.startswith("tck-complete-task"):
            await updater.complete("Hello from TCK")
        elif mid.startswith("tck-input-required"):
            await updater.require_input("Need more input")
        elif mid.startswith("tck-artifact-text"):
            await self._artifact(updater, Part(text="Generated text content"))
        elif mid.startswith("tck-artifact-file-url"):
            url = "https://example.com/output.txt"
            await self._artifact(
                updater, Part(url=url, media_type="text/plain", filename="output.txt")
            )
        elif mid.startswith("tck-artifact-file"):
            await self._artifact(
                updater, Part(raw=b"tck", media_type="text/plain", filename="output.txt")
            )
        elif mid.startswith("tck-artifact-data"):
            await self._artifact(updater, Part(data={"key": "value", "count": 42}))
        elif mid.startswith("tck-stream-artifact-chunked"):
            await updater.start_work()
            await updater.add_artifact("chunk-1 ", artifact_id="chunked", last_chunk=False)
            await updater.add_artifact(
                "chunk-2", artifact_id="chunked", append=True, last_chunk=True
            )
            await updater.complete()
        elif mid.startswith("tck-stream-artifact-file"):
            part = Part(raw=b"tck", media_type="text/plain", filename="output.txt")
            await self._artifact(updater, part, working=True)
        elif mid.startswith("tck-stream-artifact-text"):
            await self._artifact(updater, Part(text="Streamed text content"), working=True)
        elif mid.startswith("tck-stream-ordering-001"):
            await self._artifact(updater, Part(text="Ordered output"), working=True)
        elif mid.startswith("tck-stream-001"):
            await self._artifact(updater, Part(text="Stream hello from TCK"), working=True)
        elif mid.startswith("tck-stream-002"):
            await updater.complete()
        elif mid.startswith("tck-stream-003"):
            await self._artifact(updater, Part(text="Stream task lifecycle"), working=True)
        elif self.default_mode == "echo":
            await updater.start_work()
            await updater.add_artifact(f"Echo: {context.text}", name="response")
            await updater.complete(f"Echo: {context.text}")
        else:
            await updater.start_work()  # fire and forget: stays WORKING

    async def _artifact(self, updater: TaskUpdater, part: Part, working: bool = False) -> None:
        if working:
            await updater.start_work()
        await updater.add_artifact(part)
        await updater.complete()

    async def _long_running(self, updater: TaskUpdater) -> None:
        """Stay non-terminal for longer than the kit's re-subscribe wait, with progress."""
        await updater.start_work()
        loop = asyncio.get_running_loop()
        end = loop.time() + 2 * self.streaming_timeout + 0.5
        while loop.time() < end:
            await asyncio.sleep(0.5)
            await updater.start_work("still working")
        await updater.complete("resubscribe task done")


def build_card(
    push: bool, base_url: str, versions: list[str], grpc_address: str | None = None
) -> AgentCardBuilder:
    """The card: JSON-RPC and HTTP+JSON at ``base_url`` in ``versions``; gRPC (if given)."""
    builder = (
        AgentCardBuilder(
            "TCK agent", description="Conformance-kit agent for a2a_core", version="1.0.0"
        )
        .provider("a2a-adapters", "https://example.com")
        .skill("tck", "TCK behaviours", "Behaviours selected by message id prefix", tags=["tck"])
        .streaming()
    )
    for interface in interfaces_for(base_url, grpc_address=grpc_address):
        if interface.protocol_version in versions:
            builder.interface(
                interface.url,
                binding=interface.protocol_binding,
                version=interface.protocol_version,
            )
    if push:
        builder.push_notifications()
    return builder


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9999)
    parser.add_argument("--default-mode", choices=["working", "echo"], default="working")
    parser.add_argument("--streaming-timeout", type=float, default=2.0)
    parser.add_argument("--http-status-mapping", choices=["1.0.1", "1.0.0"], default="1.0.0")
    parser.add_argument("--no-push", action="store_true", help="do not offer push notifications")
    parser.add_argument(
        "--versions",
        default="1.0,0.3",
        help="protocol versions the card advertises (the 1.0 kit wants a pure 1.0 card: 1.0)",
    )
    parser.add_argument(
        "--grpc-port",
        type=int,
        default=None,
        help="also serve the gRPC binding on this port (needs a2a-adapters-core[grpc])",
    )
    args = parser.parse_args()

    base_url = public_base_url(args.host, args.port)
    versions = [v.strip() for v in args.versions.split(",") if v.strip()]
    grpc_address = (
        public_grpc_address(args.host, args.grpc_port) if args.grpc_port is not None else None
    )
    serve(
        TckAgent(args.streaming_timeout, args.default_mode),
        card=build_card(not args.no_push, base_url, versions, grpc_address),
        host=args.host,
        port=args.port,
        # The kit connects through 127.0.0.1 but flags private addresses in a public card:
        # a configured public URL wins over the origin the kit used.
        public_url=base_url,
        push=not args.no_push,
        allow_private_push_targets=True,
        http_status_mapping=args.http_status_mapping,
        grpc_port=args.grpc_port,
    )


if __name__ == "__main__":
    main()
