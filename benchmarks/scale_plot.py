"""Draw the scale benchmark's curves: one PNG per part and case, n on a log axis.

    uv run --group bench python benchmarks/scale_plot.py RESULTS.jsonl [...] --out DIR

Reads the JSON lines that ``scale_bench.py`` (or one part) wrote and draws, for every
(part, case), one line per implementation, backend and label (before/after a fix), with
the target as a dashed line where the case has one. Also writes ``DIR/index.md``: a table
of every case's points and the images, for a results page to link. matplotlib is a
``bench`` dependency group of the workspace, never a dependency of a package.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

Point = dict[str, Any]


def read_points(paths: list[Path]) -> list[Point]:
    """Every JSON line of every file; a later file's point replaces an earlier one's."""
    latest: dict[tuple[Any, ...], Point] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            if line.strip():
                point = json.loads(line)
                latest[(*_identity(point), point.get("n"))] = point
    return list(latest.values())


def _identity(point: Point) -> tuple[Any, ...]:
    keys = ("impl", "backend", "label")
    return (point["part"], point["case"], *(point.get(key) for key in keys))


def series_name(point: Point) -> str:
    words = [point.get("impl") or "", point.get("backend") or "", point.get("label") or ""]
    return " ".join(w for w in words if w)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def draw(points: list[Point], out: Path) -> list[tuple[str, str, Path]]:
    """One PNG per (part, case); returns (part, case, file) for each."""
    # The bench group's, not the test environment's: imported only when drawing.
    import matplotlib  # pyright: ignore[reportMissingImports]

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pyright: ignore[reportMissingImports]

    cases: dict[tuple[str, str], list[Point]] = defaultdict(list)
    for point in points:
        cases[(point["part"], point["case"])].append(point)
    out.mkdir(parents=True, exist_ok=True)
    drawn: list[tuple[str, str, Path]] = []
    for (part, case), group in sorted(cases.items()):
        figure, axes = plt.subplots(figsize=(6.4, 4.0))
        lines: dict[str, list[Point]] = defaultdict(list)
        for point in group:
            lines[series_name(point)].append(point)
        colours: dict[tuple[Any, Any], str] = {}
        for name, line in sorted(lines.items()):
            line.sort(key=lambda p: p["n"])
            kind = (line[0].get("impl"), line[0].get("backend"))  # one colour, before and after
            colour = colours.setdefault(kind, f"C{len(colours) % 10}")
            style = "--" if line[0].get("label") == "before" else "-"
            sizes, values = [p["n"] for p in line], [p["value"] for p in line]
            axes.plot(sizes, values, style, color=colour, marker="o", label=name)
        values = [p["value"] for p in group]
        if min(values) > 0 and max(values) / min(values) > 30:
            axes.set_yscale("log")  # a bend of 100x and a flat line on one picture
        targets = {p["target"] for p in group if p.get("target") is not None}
        for target in sorted(targets):
            label = f"target {target:g}"
            axes.axhline(target, color="grey", linestyle=":", linewidth=1, label=label)
        axes.set_xscale("log")
        axes.set_xlabel("n")
        axes.set_ylabel(group[0].get("unit") or "")
        axes.set_title(f"{part}: {case}", fontsize=10)
        axes.grid(True, which="both", alpha=0.3)
        axes.legend(fontsize=7)
        figure.tight_layout()
        path = out / f"{slug(part)}-{slug(case)}.png"
        figure.savefig(path, dpi=80)
        plt.close(figure)
        drawn.append((part, case, path))
    return drawn


def table(points: list[Point]) -> str:
    """Markdown tables, one per part: a row per case and series, a column per n."""
    parts: dict[str, list[Point]] = defaultdict(list)
    for point in points:
        parts[point["part"]].append(point)
    return "\n\n".join(_part_table(part, group) for part, group in sorted(parts.items()))


def _part_table(part: str, points: list[Point]) -> str:
    sizes = sorted({p["n"] for p in points})
    rows: dict[tuple[str, str, str], dict[Any, Any]] = defaultdict(dict)
    for p in points:
        rows[(p["case"], series_name(p), p.get("unit") or "")][p["n"]] = p["value"]
    head = f"| {part}: case | series | unit | " + " | ".join(f"n={n:,}" for n in sizes) + " |"
    rule = "|" + "---|" * (3 + len(sizes))
    body = [
        f"| {case} | {series} | {unit} | " + " | ".join(_cell(values.get(n)) for n in sizes) + " |"
        for (case, series, unit), values in sorted(rows.items())
    ]
    return "\n".join([head, rule, *body])


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if value == 0:
        return "0"  # not "-0" from a difference of two CPU readings
    return f"{value:,.3g}" if isinstance(value, float) else str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path, help="JSON lines files")
    parser.add_argument("--out", type=Path, required=True, help="folder for the PNGs and index.md")
    args = parser.parse_args(argv)
    points = read_points(args.results)
    drawn = draw(points, args.out)
    images = "\n".join(f"- {part}, {case}: ![{case}]({path.name})" for part, case, path in drawn)
    (args.out / "index.md").write_text(f"# Scale curves\n\n{table(points)}\n\n{images}\n")
    print(f"{len(drawn)} plots in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
