"""The picture of one cross-agent trace for docs/observability.md (docs/img/trace.svg).

    uv run --no-sync python tools/trace_picture.py [OUT_FILE]

Runs the main demo's flow (examples/demo.py: a CrewAI crew calls a served
LangChain chain over A2A, on 127.0.0.1, scripted models) with the spans
captured in memory (``a2a_core.testing.otel.InMemoryTelemetry``), as
packages/a2a-crewai/tests/test_traces.py does, and draws the crew's trace as a
waterfall: one row per span, indented by depth, a bar from its start for its
duration. Plain SVG text, no plotting library.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from html import escape
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "img" / "trace.svg"

ROW, LABEL_WIDTH, BAR_WIDTH, INDENT = 22, 380, 560, 14
COLORS = {"CLIENT": "#4c78a8", "SERVER": "#f58518", "INTERNAL": "#54a24b"}


def _demo() -> Any:
    spec = importlib.util.spec_from_file_location("a2a_demo_picture", ROOT / "examples" / "demo.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


async def _run_demo() -> None:
    from a2a_crewai import remote_agent_tool
    from a2a_langchain import running_server
    from crewai.events import crewai_event_bus

    demo = _demo()
    async with running_server(demo.weather_chain(), name="Weather desk") as desk:
        tool = await asyncio.to_thread(remote_agent_tool, desk.url)
        try:
            await asyncio.to_thread(demo.trip_crew(tool).kickoff, inputs={"city": "Lisbon"})
        finally:
            tool.close()
    await asyncio.to_thread(crewai_event_bus.flush, 10)


def capture() -> list[Any]:
    """The spans of the demo's flow (every trace it made)."""
    from a2a_core.testing.otel import InMemoryTelemetry

    with InMemoryTelemetry() as otel:
        asyncio.run(_run_demo())
        return list(otel.spans())


def waterfall(spans: list[Any]) -> str:
    """SVG of the trace rooted at the crew: rows in start order, children under parents."""
    root = next(s for s in spans if s.name.startswith("crewai.crew") and s.parent is None)
    trace_id = root.context.trace_id
    mine = [s for s in spans if s.context.trace_id == trace_id]
    children: dict[int, list[Any]] = {}
    for span in mine:
        if span.parent is not None:
            children.setdefault(span.parent.span_id, []).append(span)
    rows: list[tuple[int, Any]] = []

    def walk(span: Any, depth: int) -> None:
        rows.append((depth, span))
        for child in sorted(children.get(span.context.span_id, []), key=lambda s: s.start_time):
            walk(child, depth + 1)

    walk(root, 0)
    start = root.start_time
    total = max(s.end_time for _, s in rows) - start or 1
    width, height = LABEL_WIDTH + BAR_WIDTH + 90, ROW * (len(rows) + 2)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="8" y="{ROW - 6}" font-weight="bold">One trace: crew → task → tool → '
        f"A2A client → A2A server → chain → model ({total / 1e6:.0f} ms)</text>",
    ]
    for index, (depth, span) in enumerate(rows, start=1):
        y = index * ROW + 4
        x = LABEL_WIDTH + (span.start_time - start) / total * BAR_WIDTH
        bar = max((span.end_time - span.start_time) / total * BAR_WIDTH, 1.5)
        name = span.name if len(span.name) <= 48 else span.name[:47] + "…"
        color = COLORS.get(span.kind.name, "#999999")
        duration = (span.end_time - span.start_time) / 1e6
        out += [
            f'<text x="{8 + depth * INDENT}" y="{y + 13}">{escape(name)}</text>',
            f'<rect x="{x:.1f}" y="{y + 2}" width="{bar:.1f}" height="{ROW - 8}" '
            f'fill="{color}"><title>{escape(span.name)} ({span.kind.name}, '
            f"{duration:.1f} ms)</title></rect>",
            f'<text x="{x + bar + 4:.1f}" y="{y + 13}" fill="#555555">{duration:.1f} ms</text>',
        ]
    legend_y = (len(rows) + 1) * ROW + 14
    for i, (kind, color) in enumerate(COLORS.items()):
        out += [
            f'<rect x="{8 + i * 110}" y="{legend_y - 10}" width="12" height="12" fill="{color}"/>',
            f'<text x="{24 + i * 110}" y="{legend_y}">{kind.lower()}</text>',
        ]
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main() -> None:
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(waterfall(capture()), encoding="utf-8")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
