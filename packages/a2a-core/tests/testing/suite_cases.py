"""Suite subclasses with known defects and opt-outs, run by ``test_suite_rules.py`` in a
separate pytest (strict asyncio mode, the marker from the plugin, as an adapter package
would run them). Not collected by the core's own run: the name does not start with test_.

Each broken class keeps only the tests its defect concerns (``_only``); the
expected outcome of every test is in ``EXPECTED``.
"""

from __future__ import annotations

import asyncio

import pytest
from a2a_core._builtins.echo import EchoAgent
from a2a_core.adapters import open_task_store
from a2a_core.compose.builder import configure_service
from a2a_core.server import A2AService, AgentExecutor, RequestContext, TaskUpdater
from a2a_core.stores import TaskStore
from a2a_core.testing import (
    AdapterConformance,
    AgentProbe,
    AskingAgent,
    FailingAgent,
    Scenario,
    SlowAgent,
    TaskStoreConformance,
)
from a2a_core.types import AgentCard, AgentSkill

CARD = AgentCard(
    name="Cases",
    description="Suite cases",
    version="1.0.0",
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])],
)


def _only(*tests: str) -> dict[str, str]:
    """Opt out of every adapter-suite test but ``tests``."""
    return {
        name: "not what this case checks"
        for name in AdapterConformance.suite_tests
        if name not in tests
    }


class _GoodAgents(AdapterConformance):
    """The core's working agents; each case below breaks one thing."""

    entry_point_name = "echo"

    def make_agent(self, scenario: Scenario) -> object | None:
        match scenario.name:
            case "echo":
                return EchoAgent()
            case "stream":
                return EchoAgent(chunk_size=4)
            case "ask":
                return AskingAgent()
            case "slow":
                return SlowAgent(scenario.probe)
            case "fail":
                return FailingAgent(scenario.secret)


# -- adapter defects ------------------------------------------------------------------


class LeakingFailure(AgentExecutor):
    def __init__(self, secret: str) -> None:
        self.secret = secret

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        try:
            raise RuntimeError(self.secret)
        except RuntimeError as exc:
            await updater.fail(f"crashed: {exc}")


class TestLeakyFailure(_GoodAgents):
    opt_out = _only("test_failure_becomes_a_failed_task", "test_failure_while_streaming")

    def make_agent(self, scenario: Scenario) -> object | None:
        if scenario.name == "fail":
            return LeakingFailure(scenario.secret)
        return super().make_agent(scenario)


class NoLastChunk(AgentExecutor):
    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        reply = f"echo: {context.text}"
        await updater.start_work()
        for i in range(0, len(reply), 4):
            await updater.add_artifact(reply[i : i + 4], artifact_id="r", append=i > 0)
        await updater.complete()


class TestMissingLastChunk(_GoodAgents):
    opt_out = _only("test_streamed_artifact_chunks", "test_streaming_event_order")

    def make_agent(self, scenario: Scenario) -> object | None:
        if scenario.name == "stream":
            return NoLastChunk()
        return super().make_agent(scenario)


class SharedState(AgentExecutor):
    """Keeps the request's text on the shared agent object: concurrent tasks trample it."""

    def __init__(self) -> None:
        self.text = ""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        self.text = context.text
        await asyncio.sleep(0.02)
        await updater.finish_with(f"echo: {self.text}")


class TestSharedState(_GoodAgents):
    opt_out = _only("test_concurrent_tasks_are_isolated", "test_blocking_send")
    service_options = {"card": CARD}

    def make_agent(self, scenario: Scenario) -> object | None:
        if scenario.name == "echo":
            return SharedState()
        return super().make_agent(scenario)


class NeverAsks(AgentExecutor):
    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.finish_with(f"echo: {context.text}")


class TestNeverAsks(_GoodAgents):
    opt_out = _only("test_multi_turn_continuation")

    def make_agent(self, scenario: Scenario) -> object | None:
        if scenario.name == "ask":
            return NeverAsks()
        return super().make_agent(scenario)


class SilentSlow(AgentExecutor):
    """Starts, but its 'framework' never reports stopping."""

    def __init__(self, probe: AgentProbe) -> None:
        self.probe = probe

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        self.probe.mark_started()
        await asyncio.Event().wait()


class TestCancelNotObserved(_GoodAgents):
    opt_out = _only("test_cancel_reaches_the_agent")
    timeout = 1.0

    def make_agent(self, scenario: Scenario) -> object | None:
        if scenario.name == "slow":
            return SilentSlow(scenario.probe)
        return super().make_agent(scenario)


class TestWrongEntryPoint(_GoodAgents):
    opt_out = _only("test_plugin_is_discovered")
    entry_point_name = "no-such-plugin"


class TestWrongText(_GoodAgents):
    opt_out = _only("test_blocking_send")

    def expected_text(self, scenario: str, sent: str) -> str:
        return f"something else: {sent}"


class TestCardContradictsFlags(_GoodAgents):
    """Claims streaming but serves without it: the card test and streaming tests fail."""

    opt_out = _only("test_agent_card", "test_streaming_event_order")

    def make_service(self, agent: object) -> A2AService:
        return configure_service(agent, plugin_manager=self.plugin_manager(), streaming=False)


class TestMissingScenario(_GoodAgents):
    opt_out = _only("test_cancel_reaches_the_agent")

    def make_agent(self, scenario: Scenario) -> object | None:
        if scenario.name == "slow":
            return None
        return super().make_agent(scenario)


class TestCapabilitiesOff(_GoodAgents):
    """Every flag off: the gated tests are skipped, naming the flag; the rest still pass."""

    supports_streaming = False
    supports_multi_turn = False
    supports_cancel = False
    emits_artifacts = False
    opt_out = {
        "test_concurrent_tasks_are_isolated": "kept short",
        "test_failure_becomes_a_failed_task": "kept short",
    }

    def make_agent(self, scenario: Scenario) -> object | None:
        if scenario.name in ("stream", "ask", "slow"):
            return None
        return super().make_agent(scenario)


# -- store cases ----------------------------------------------------------------------


class _MemoryStores(TaskStoreConformance):
    async def make_store(self) -> TaskStore:
        return open_task_store("memory://")


@pytest.mark.a2a_opt_out("test_delete", "test_aclose_is_idempotent", reason="marker reason")
class TestMarkerOptOut(_MemoryStores):
    pass


@pytest.mark.a2a_opt_out("test_delete")
class TestMarkerWithoutReason(_MemoryStores):
    pass


class SloppyStore(TaskStoreConformance):
    """A store whose save ignores the version (last writer wins)."""

    async def make_store(self) -> TaskStore:
        from a2a_core.stores import MemoryTaskStore, StoredTask
        from a2a_core.types import Task

        class LastWriterWins(MemoryTaskStore):
            async def save(
                self, task: Task, owner: str | None, expected_version: int
            ) -> StoredTask:
                current = await self.get(task.id, owner)
                version = current.version if current is not None else expected_version
                return await super().save(task, owner, version)

        return LastWriterWins()


class TestSloppyStore(SloppyStore):
    opt_out = {
        name: "not what this case checks"
        for name in TaskStoreConformance.suite_tests
        if name not in ("test_stale_version_is_refused", "test_concurrent_saves_exactly_one_wins")
    }


_ADAPTER_TESTS = sorted(AdapterConformance.suite_tests)


def _expect(
    cls: type[AdapterConformance | TaskStoreConformance], **outcomes: str
) -> dict[str, str]:
    """Every suite test of ``cls``: the given outcome, else skipped."""
    out = {f"{cls.__name__}::{name}": "skipped" for name in sorted(cls.suite_tests)}
    out.update({f"{cls.__name__}::{name}": outcome for name, outcome in outcomes.items()})
    return out


EXPECTED: dict[str, str] = {
    **_expect(
        TestLeakyFailure,
        test_failure_becomes_a_failed_task="failed",
        test_failure_while_streaming="failed",
    ),
    **_expect(
        TestMissingLastChunk,
        test_streamed_artifact_chunks="failed",
        test_streaming_event_order="passed",
    ),
    **_expect(
        TestSharedState,
        test_concurrent_tasks_are_isolated="failed",
        test_blocking_send="passed",
    ),
    **_expect(TestNeverAsks, test_multi_turn_continuation="failed"),
    **_expect(TestCancelNotObserved, test_cancel_reaches_the_agent="failed"),
    **_expect(TestWrongEntryPoint, test_plugin_is_discovered="failed"),
    **_expect(TestWrongText, test_blocking_send="failed"),
    **_expect(
        TestCardContradictsFlags, test_agent_card="failed", test_streaming_event_order="failed"
    ),
    **_expect(TestMissingScenario, test_cancel_reaches_the_agent="failed"),
    **_expect(
        TestCapabilitiesOff,
        test_agent_card="passed",
        test_blocking_send="passed",
        test_plugin_is_discovered="passed",
    ),
    **{
        f"TestMarkerOptOut::{name}": "passed"
        for name in TaskStoreConformance.suite_tests
        if name
        not in (
            "test_delete",
            "test_aclose_is_idempotent",
            "test_eviction_spares_active_and_paused_tasks",
        )
    },
    "TestMarkerOptOut::test_delete": "skipped",
    "TestMarkerOptOut::test_aclose_is_idempotent": "skipped",
    "TestMarkerOptOut::test_eviction_spares_active_and_paused_tasks": "skipped",
    **{f"TestMarkerWithoutReason::{name}": "error" for name in TaskStoreConformance.suite_tests},
    **_expect(
        TestSloppyStore,
        test_stale_version_is_refused="failed",
        test_concurrent_saves_exactly_one_wins="failed",
    ),
}

MESSAGES: dict[str, str] = {
    "TestLeakyFailure::test_failure_becomes_a_failed_task": "exception text reached the client",
    "TestMissingLastChunk::test_streamed_artifact_chunks": "lacks lastChunk=true",
    "TestSharedState::test_concurrent_tasks_are_isolated": "expected the answer",
    "TestNeverAsks::test_multi_turn_continuation": "expected INPUT_REQUIRED",
    "TestCancelNotObserved::test_cancel_reaches_the_agent": "the cancel did not reach",
    "TestWrongEntryPoint::test_plugin_is_discovered": "no 'a2a_core' entry point named",
    "TestWrongText::test_blocking_send": "expected the answer 'something else",
    "TestCardContradictsFlags::test_agent_card": "card says streaming=False",
    "TestMissingScenario::test_cancel_reaches_the_agent": "returned None for the 'slow'",
    "TestCapabilitiesOff::test_cancel_reaches_the_agent": (
        "capability off: TestCapabilitiesOff.supports_cancel = False"
    ),
    "TestCapabilitiesOff::test_streamed_artifact_chunks": (
        "capability off: TestCapabilitiesOff.supports_streaming = False"
    ),
    "TestMarkerOptOut::test_delete": "opted out by TestMarkerOptOut: marker reason",
    "TestMarkerOptOut::test_eviction_spares_active_and_paused_tasks": (
        "capability off: TestMarkerOptOut.supports_eviction = False"
    ),
    "TestMarkerWithoutReason::test_delete": "needs a reason",
    "TestSloppyStore::test_concurrent_saves_exactly_one_wins": "racing saves succeeded",
    "TestLeakyFailure::test_blocking_send": "opted out by TestLeakyFailure: not what this case",
}
