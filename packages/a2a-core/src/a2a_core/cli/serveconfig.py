"""``a2a serve``'s settings from a config file and the environment, under the flags.

Every option ``a2a serve`` takes on its command line can also come from

- a TOML file: ``--config a2a.toml`` (or ``$A2A_CONFIG``), else the
  ``[tool.a2a]`` table of ``pyproject.toml`` in the current directory. Keys
  are the flags' names (``port``, ``store``, ``oidc-issuer``; ``_`` works as
  ``-``), plus ``targets`` (a list, as on the command line) and one
  ``[agents.NAME]`` table per agent (``target``, and what is that agent's
  own: ``name``, ``description``, ``agent-version``, ``skill``, ``option``,
  ``adapter``);
- environment variables ``A2A_<FLAG>`` (``A2A_PORT``, ``A2A_STORE``,
  ``A2A_OIDC_ISSUER``; ``A2A_TARGETS``; lists separated by commas). The
  serving side's bearer tokens are ``A2A_SERVE_BEARER_TOKEN``:
  ``A2A_BEARER_TOKEN`` is the token the client commands send.

Flags win over the environment, which wins over the file. Values go through
the flags' own checks; anything unknown or invalid is one line naming the
file, the line and the key (``a2a.toml:7: unknown key 'prot' (did you mean
'port'?)``).
"""

from __future__ import annotations

import argparse
import os
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from .parsing import accumulates, options_of, prints_help
from .usage import UsageError

__all__ = ["CONFIG_ENV", "AgentSpec", "Layered", "env_name", "load_settings", "track_explicit"]

CONFIG_ENV = "A2A_CONFIG"
"""Names the config file when ``--config`` does not."""
TARGETS_ENV = "A2A_TARGETS"
_RENAMED_ENV = {"bearer_token": "A2A_SERVE_BEARER_TOKEN"}
_NOT_SETTINGS = frozenset({"help", "config", "debug", "targets", "run"})
AGENT_KEYS = ("target", "name", "description", "agent_version", "skill", "option", "adapter")
"""What an ``[agents.NAME]`` table may say (besides ``target``: that agent's own settings)."""
_PATH_KEYS = frozenset(
    {
        "tls_cert",
        "tls_key",
        "tls_client_ca",
        "sign_card_key",
        "remote_cacert",
        "remote_cert",
        "remote_key",
    }
)
"""Settings naming files: relative to the config file's folder."""
_EXPLICIT = "explicit_options"


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """One agent to serve: the path name it is served below, its TARGET, and its own
    settings (flag dests: ``name``, ``skill``, ``option``...)."""

    name: str
    target: str
    settings: Mapping[str, Any] = field(default_factory=dict[str, Any])
    named: bool = False
    """Whether the path was given (``PATH=TARGET``, ``[agents.NAME]``): then even a lone
    agent is served below it."""


@dataclass(frozen=True, slots=True)
class Layered:
    """What the file and the environment gave: the agents (None: none named there)."""

    agents: list[AgentSpec] | None
    source: str | None
    """The config file read (None: none)."""


def env_name(dest: str) -> str:
    """The environment variable of a setting (``oidc_issuer`` -> ``A2A_OIDC_ISSUER``)."""
    return _RENAMED_ENV.get(dest, "A2A_" + dest.upper())


# -- which flags were given -------------------------------------------------------------
_TRACKING: dict[type, type] = {}


def track_explicit(parser: argparse.ArgumentParser) -> None:
    """Make ``parser`` (a ``CommandLineParser``) record the dests given on the command
    line (``explicit(args)``): only those win over the environment and the file."""
    for action in options_of(parser):
        if prints_help(action):
            continue
        action.__class__ = _tracking(type(action))


def _tracking(base: type) -> type:
    found = _TRACKING.get(base)
    if found is None:

        def __call__(
            self: argparse.Action,
            parser: argparse.ArgumentParser,
            namespace: argparse.Namespace,
            values: Any,
            option_string: str | None = None,
        ) -> None:
            given: set[str] | None = getattr(namespace, _EXPLICIT, None)
            if given is None:
                given = set()
                setattr(namespace, _EXPLICIT, given)
            if option_string is not None or values:
                given.add(self.dest)
            base.__call__(self, parser, namespace, values, option_string)

        found = _TRACKING[base] = type(base.__name__, (base,), {"__call__": __call__})
    return found


def explicit(args: argparse.Namespace) -> set[str]:
    """The dests given on the command line."""
    return cast("set[str]", getattr(args, _EXPLICIT, None) or set())


# -- loading ----------------------------------------------------------------------------
class _Source:
    """A config file's table, with what finds a key's line for messages."""

    def __init__(self, path: Path, table: Mapping[str, Any], prefix: tuple[str, ...]) -> None:
        self.path = path
        self.table = table
        self.prefix = prefix
        self.lines = path.read_text(encoding="utf-8").splitlines()

    def where(self, key: str | None, section: tuple[str, ...] = ()) -> str:
        """``file:line`` of ``key`` in ``section`` (below the prefix), of the section's
        header when ``key`` is None, or just the file when not found."""
        wanted = ".".join((*self.prefix, *section))
        current = ""
        pattern = re.compile(rf"""^\s*["']?{re.escape(key or "")}["']?\s*=""")
        fallback: int | None = None
        for number, line in enumerate(self.lines, 1):
            header = re.match(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$", line)
            if header:
                current = ".".join(p.strip().strip("\"'") for p in header.group(1).split("."))
                if key is None and current == wanted:
                    return f"{self.path}:{number}"
                continue
            if key is not None and pattern.match(line):
                if current == wanted:
                    return f"{self.path}:{number}"
                fallback = fallback or number
        return f"{self.path}:{fallback}" if fallback else str(self.path)

    def error(self, key: str | None, message: str, section: tuple[str, ...] = ()) -> UsageError:
        return UsageError(f"{self.where(key, section)}: {message}")


def _open(path: Path, prefix: tuple[str, ...]) -> _Source | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(
            f"cannot read the config file {str(path)!r}: {exc.strerror or exc}"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML: {exc}") from None
    table: Any = data
    for part in prefix:
        table = cast("dict[str, Any]", table).get(part) if isinstance(table, dict) else None
        if table is None:
            return None
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [{'.'.join(prefix)}] must be a table")
    return _Source(path, cast("dict[str, Any]", table), prefix)


def _find_source(config: str | None) -> _Source | None:
    if config:
        path = Path(config)
        prefix: tuple[str, ...] = ("tool", "a2a") if path.name == "pyproject.toml" else ()
        source = _open(path, prefix)
        if source is None:
            raise UsageError(f"{path}: no [tool.a2a] table")
        return source
    pyproject = Path("pyproject.toml")
    if pyproject.is_file():
        return _open(pyproject, ("tool", "a2a"))
    return None


def _key(raw: str) -> str:
    return raw.strip().replace("-", "_")


def load_settings(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Layered:
    """Fill ``args`` from the environment and the config file where no flag was given;
    the agents the file or ``A2A_TARGETS`` name (None: none)."""
    actions = {
        a.dest: a for a in options_of(parser) if a.option_strings and a.dest not in _NOT_SETTINGS
    }
    given = explicit(args)
    config: str | None = getattr(args, "config", None) or os.environ.get(CONFIG_ENV) or None
    source = _find_source(config)
    from_file: dict[str, Any] = {}
    agents: list[AgentSpec] | None = None
    if source is not None:
        from_file, agents = _read_file(source, actions)
    for dest, action in actions.items():
        if dest in given:
            continue
        raw = os.environ.get(env_name(dest))
        if raw is not None and raw != "":
            setattr(args, dest, _from_env(env_name(dest), raw, action))
        elif dest in from_file:
            setattr(args, dest, from_file[dest])
    targets = os.environ.get(TARGETS_ENV)
    if targets and targets.strip():
        agents = [_spec(t) for t in re.split(r"[,\s]+", targets.strip()) if t]
    return Layered(agents, str(source.path) if source is not None else None)


def _read_file(
    source: _Source, actions: Mapping[str, argparse.Action]
) -> tuple[dict[str, Any], list[AgentSpec] | None]:
    values: dict[str, Any] = {}
    agents: list[AgentSpec] | None = None
    base = source.path.parent
    valid = sorted({*(k.replace("_", "-") for k in actions), "targets", "agents"})
    for raw_key, value in source.table.items():
        key = _key(raw_key)
        if key == "targets":
            items: Any = [value] if isinstance(value, str) else value
            names = cast("list[Any]", items) if isinstance(items, list) else None
            if names is None or not all(isinstance(t, str) for t in names):
                raise source.error(raw_key, "'targets' must be a list of TARGETs")
            agents = (agents or []) + [_spec(t, base) for t in names]
        elif key == "agents":
            agents = (agents or []) + _read_agents(source, raw_key, value, actions)
        elif key in actions:
            values[key] = _convert(source, raw_key, value, actions[key], base)
        else:
            raise source.error(raw_key, _unknown(raw_key, valid))
    return values, agents


def _read_agents(
    source: _Source,
    raw_key: str,
    value: Any,
    actions: Mapping[str, argparse.Action],
) -> list[AgentSpec]:
    if not isinstance(value, dict):
        raise source.error(raw_key, "'agents' must hold one [agents.NAME] table per agent")
    specs: list[AgentSpec] = []
    valid = [k.replace("_", "-") for k in AGENT_KEYS] + ["options"]
    for name, table in cast("dict[str, Any]", value).items():
        section = (raw_key, name)
        if not isinstance(table, dict):
            raise source.error(name, f"agents.{name} must be a table with a 'target'")
        settings: dict[str, Any] = {}
        target: str | None = None
        for raw, item in cast("dict[str, Any]", table).items():
            key = _key(raw)
            if key == "options":
                key = "option"
            if key == "target":
                if not isinstance(item, str) or not item.strip():
                    raise source.error(raw, "'target' must be a TARGET string", section)
                target = _relative_target(item.strip(), source.path.parent)
            elif key == "option" and isinstance(item, dict):
                settings["option"] = [(_key(k), v) for k, v in cast("dict[str, Any]", item).items()]
            elif key in AGENT_KEYS:
                settings[key] = _convert(source, raw, item, actions[key], None, section)
            else:
                raise source.error(raw, _unknown(raw, valid), section)
        if target is None:
            raise source.error(None, f"[agents.{name}] needs a 'target'", section)
        specs.append(AgentSpec(name, target, settings, named=True))
    return specs


def _unknown(key: str, valid: Sequence[str]) -> str:
    import difflib

    close = difflib.get_close_matches(key.replace("_", "-"), list(valid), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown key {key!r}{hint}"


def _convert(
    source: _Source,
    raw_key: str,
    value: Any,
    action: argparse.Action,
    base: Path | None,
    section: tuple[str, ...] = (),
) -> Any:
    """A file value through the flag's own type and choices."""

    def fail(message: str) -> UsageError:
        return source.error(raw_key, f"{raw_key}: {message}", section)

    if action.nargs == 0:  # store_true
        if not isinstance(value, bool):
            raise fail("must be true or false")
        return value
    if accumulates(action):
        items = cast("list[Any]", value) if isinstance(value, list) else [value]
        return [_one(fail, item, action, base) for item in items]
    return _one(fail, value, action, base)


def _one(
    fail: Callable[[str], UsageError], value: Any, action: argparse.Action, base: Path | None
) -> Any:
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int | float | str):
        text = str(value)
    else:
        raise fail(f"must be a string or a number, not a {type(value).__name__}")
    if base is not None and action.dest in _PATH_KEYS and text and not Path(text).is_absolute():
        text = str(base / text)
    return _typed(fail, text, action)


def _typed(fail: Callable[[str], UsageError], text: str, action: argparse.Action) -> Any:
    converted: Any = text
    kind = action.type
    if callable(kind):
        try:
            converted = kind(text)
        except (argparse.ArgumentTypeError, ValueError, TypeError) as exc:
            raise fail(str(exc) or f"invalid value {text!r}") from None
    if action.choices is not None and converted not in action.choices:
        choices = ", ".join(map(str, action.choices))
        raise fail(f"{text!r} is not one of {choices}")
    return converted


def _from_env(name: str, raw: str, action: argparse.Action) -> Any:
    def fail(message: str) -> UsageError:
        return UsageError(f"${name}: {message}")

    if action.nargs == 0:
        lowered = raw.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise fail(f"must be true or false, not {raw!r}")
    if accumulates(action):
        parts = raw.splitlines() if "\n" in raw else raw.split(",")
        return [_typed(fail, p.strip(), action) for p in parts if p.strip()]
    return _typed(fail, raw, action)


def _relative_target(target: str, base: Path | None) -> str:
    where, sep, attribute = target.rpartition(":")
    if base is None or not sep or target.startswith(("http://", "https://")):
        return target
    if where.endswith(".py") and not Path(where).is_absolute():
        return f"{base / where}:{attribute}"
    return target


def _spec(text: str, base: Path | None = None) -> AgentSpec:
    """``"PATH=TARGET"`` or ``"TARGET"`` (its path: the attribute's name)."""
    name, sep, target = text.partition("=")
    named = bool(sep) and ":" not in name
    if not named:
        name, target = default_name(text), text
    return AgentSpec(name.strip().strip("/"), _relative_target(target.strip(), base), named=named)


def default_name(target: str) -> str:
    """The path an agent is served below by default: its attribute's name
    (``chains.py:summarize`` -> ``summarize``; a URL: its host)."""
    if target.startswith(("http://", "https://")):
        from urllib.parse import urlsplit

        return (urlsplit(target).hostname or "remote").replace(".", "-")
    return target.rpartition(":")[2].rpartition(".")[2] or "agent"


def agents_from_args(targets: Sequence[str]) -> list[AgentSpec]:
    """The positional TARGETs as agents (``PATH=TARGET`` or ``TARGET``)."""
    return [_spec(t) for t in targets]
