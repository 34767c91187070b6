"""MkDocs hooks: the API and CLI reference pages, generated at build time so they cannot drift.

- One page per module in ``a2a_core.exports.PUBLIC_MODULES``; its ``__all__`` decides what
  appears. Each name is documented once, on its home page (the deepest public module that
  exports it, which is also its ``__module__``); other modules that re-export it link there.
- ``reference/cli.md``: every ``a2a`` command and option, read from the argparse parser.

mkdocs.yml names this file under ``hooks:``; tests/test_docs_site.py imports it too.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import re
from collections.abc import Iterator
from types import FunctionType
from typing import Any

REFERENCE = "reference"
CLI_PAGE = f"{REFERENCE}/cli.md"
PACKAGES = ("a2a_core", "a2a_langchain", "a2a_crewai", "a2a_mcp")


def public_modules() -> tuple[str, ...]:
    """The public modules, from the registry the packages themselves use."""
    from a2a_core.exports import PUBLIC_MODULES

    return PUBLIC_MODULES


def exports(module: str) -> list[str]:
    """A public module's ``__all__``."""
    return list(importlib.import_module(module).__all__)


def _is_code(value: object) -> bool:
    return isinstance(value, type | FunctionType)


def home_of(module: str, name: str) -> str:
    """The public module whose page documents ``module.name``.

    A class or function lives where its ``__module__`` says; anything else (constants, type
    aliases, markers) in the deepest public module that exports the same object by that name.
    """
    value = getattr(importlib.import_module(module), name)
    if _is_code(value):
        return str(value.__module__)
    owners = [
        other
        for other in public_modules()
        if name in exports(other) and getattr(importlib.import_module(other), name) is value
    ]
    return max(owners, key=lambda other: other.count("."))


def page_path(module: str) -> str:
    return f"{REFERENCE}/{module}.md"


def summary(module: str) -> str:
    """The first line of a module's docstring."""
    doc = importlib.import_module(module).__doc__ or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def shadows_submodule(module: str, name: str) -> bool:
    """``module.name`` is a function or class imported over a submodule of the same name.

    (``from .main import main``): griffe documents the submodule under that path, so the
    page renders the object from the submodule (``a2a_core.cli.main.main``) instead.
    """
    package = importlib.import_module(module)
    if not hasattr(package, "__path__") or not _is_code(getattr(package, name)):
        return False
    return importlib.util.find_spec(f"{module}.{name}") is not None


def anchor(module: str, name: str) -> str:
    """The HTML id (and cross-reference target) of ``name`` on ``module``'s page."""
    if shadows_submodule(module, name):
        return f"{module}.{name}.{name}"
    return f"{module}.{name}"


def module_page(module: str) -> str:
    """The Markdown of one module's reference page."""
    own: list[str] = []
    shadowed: list[str] = []
    elsewhere: list[tuple[str, str]] = []
    for name in exports(module):
        home = home_of(module, name)
        if home != module:
            elsewhere.append((name, home))
        elif shadows_submodule(module, name):
            shadowed.append(name)
        else:
            own.append(name)
    lines = [
        f"::: {module}",
        "    options:",
        "      heading_level: 1",
        f"      members: [{', '.join(own)}]" if own else "      members: false",
        "",
    ]
    for name in shadowed:
        lines += [
            f"::: {anchor(module, name)}",
            "    options:",
            "      heading_level: 2",
            f'      heading: "{module}.{name}"',
            "",
        ]
    if elsewhere:
        lines += [
            "## Documented elsewhere" if own else "## Names",
            "",
            f"`{module}` also exports these names, each documented in its own module:",
            "",
            "| Name | Documented in |",
            "|---|---|",
        ]
        lines += [
            f"| [`{name}`][{anchor(home, name)}] | [`{home}`]({home}.md) |"
            for name, home in elsewhere
        ]
        lines.append("")
    return "\n".join(lines)


def index_page() -> str:
    """The reference's landing page: every public module, with its one-line summary."""
    lines = [
        "# API reference",
        "",
        "One page per public module, generated from the docstrings. A module's `__all__`",
        "decides what it shows; a name is documented once, in the module that owns it, and",
        "linked from the modules that re-export it. The command line has its own page:",
        "[the `a2a` command](cli.md).",
        "",
        "| Module | Summary |",
        "|---|---|",
    ]
    lines += [f"| [`{m}`]({m}.md) | {summary(m)} |" for m in public_modules()]
    return "\n".join([*lines, ""])


# --- the CLI reference --------------------------------------------------------------------


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's sub-commands by name, in the order ``a2a --help`` lists them."""
    for action in parser._actions:  # pyright: ignore[reportPrivateUsage]
        if isinstance(action, argparse._SubParsersAction):  # pyright: ignore[reportPrivateUsage]
            return dict(action.choices)  # pyright: ignore[reportUnknownArgumentType]
    return {}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _options(parser: argparse.ArgumentParser) -> Iterator[str]:
    actions = [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]  # pyright: ignore[reportPrivateUsage]
    if not actions:
        return
    yield "| Argument | Default | Meaning |"
    yield "|---|---|---|"
    for action in actions:
        if action.option_strings:
            takes_value = action.nargs != 0
            metavar = action.metavar or action.dest.upper()
            shown = ", ".join(
                f"`{flag} {metavar}`" if takes_value else f"`{flag}`"
                for flag in action.option_strings
            )
        else:
            shown = f"`{action.metavar or action.dest}`"
        default = action.default
        if default in (None, False, argparse.SUPPRESS) or (
            isinstance(default, list) and not default
        ):
            default_text = ""
        else:
            default_text = f"`{default}`"
        help_text = (action.help or "") % {"default": default, "prog": parser.prog}
        yield f"| {shown} | {_cell(default_text)} | {_cell(help_text)} |"


def cli_page() -> str:
    """The Markdown of the CLI reference, read from ``a2a_core.cli.build_parser()``."""
    from a2a_core.cli import build_parser

    os.environ["COLUMNS"] = "100"  # argparse wraps usage lines to the terminal width
    parser = build_parser()
    lines = [
        "# The `a2a` command line",
        "",
        "Generated from the command's argparse parser at build time, so it lists exactly the",
        "commands and options `a2a` accepts. The guide is [The a2a command](../cli.md).",
        "",
        "```text",
        parser.format_usage().strip(),
        "```",
        "",
    ]
    for name, sub in subcommands(parser).items():
        lines += [f"## `a2a {name}`", ""]
        if sub.description:
            lines += [sub.description.strip(), ""]
        lines += ["```text", sub.format_usage().strip(), "```", "", *_options(sub), ""]
        if sub.epilog:
            lines += ["```text", sub.epilog.strip(), "```", ""]
    return "\n".join(lines)


# --- docstrings written for reST -----------------------------------------------------------

_LITERAL_MARKER = re.compile(r"(\s?)::</p>(\s*<div class=\"highlight\">)")


def plain_colons(html: str) -> str:
    """A docstring's reST literal-block marker, as Markdown shows it: ``Example:``.

    Docstrings end a paragraph with ``::`` before an indented example (what ``help()`` and
    Sphinx expect); Markdown already makes the indented lines a code block, so only the
    marker is left over. As reST reads it, ``text::`` becomes ``text:`` and ``text ::``
    becomes ``text``.
    """
    return _LITERAL_MARKER.sub(lambda m: ("</p>" if m.group(1) else ":</p>") + m.group(2), html)


# --- MkDocs events --------------------------------------------------------------------------


def reference_nav() -> dict[str, Any]:
    """The "Reference" section appended to the navigation."""
    groups: dict[str, list[Any]] = {package: [] for package in PACKAGES}
    for module in public_modules():
        groups[module.split(".")[0]].append({module: page_path(module)})
    return {
        "Reference": [
            f"{REFERENCE}/index.md",
            {"The a2a command line": CLI_PAGE},
            *({package: pages} for package, pages in groups.items()),
        ]
    }


def generated_pages() -> dict[str, str]:
    """Every generated page: its path under docs/ and its Markdown."""
    pages = {f"{REFERENCE}/index.md": index_page(), CLI_PAGE: cli_page()}
    pages.update({page_path(module): module_page(module) for module in public_modules()})
    return pages


def on_config(config: Any) -> Any:
    """Append the reference section to the navigation written in mkdocs.yml."""
    config["nav"] = [*config["nav"], reference_nav()]
    return config


def on_files(files: Any, config: Any) -> Any:
    """Add the generated pages to the site, as if they were files in docs/."""
    from mkdocs.structure.files import File

    for path, content in generated_pages().items():
        files.append(File.generated(config, path, content=content))
    return files


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """The reference pages without reST's ``::`` (see ``plain_colons``)."""
    if page.file.src_uri.startswith(f"{REFERENCE}/"):
        return plain_colons(html)
    return html


__all__ = ["generated_pages", "on_config", "on_files", "on_page_content", "plain_colons"]
