"""A one-shot ``a2a send`` without the model layer: plain JSON over httpx's blocking client.

From a cold start, ``a2a send URL TEXT`` used to cost about twice a bare
``httpx.post`` doing the same request: building the pydantic models and
starting asyncio were the difference. The common case needs neither. This
path fetches the card, picks the interface as ``A2AClient.connect`` does
(``choose_interface``), sends the same JSON-RPC ``SendMessage`` and reads the
answer with ``json``.

It only answers what the client path would answer identically:

- it runs for a send that is not ``--stream`` nor ``--save-dir``, over JSON-RPC 1.0, with stdout
  not a terminal (there the client path draws its progress spinner),
  telemetry off (``a2a_core.telemetry``: the client path traces calls) and
  parts of at most ``MAX_BODY_BYTES`` (a larger upload goes through the client's
  ``EarlyAnswerBackend``, which stops at a server's early 413; httpx's blocking
  client would wait, unread, until the write timed out);
- before sending, anything it cannot vouch for (no card where it looked, a
  0.3-only card, security schemes or signatures, a shape or size outside what
  is checked here, any HTTP or network trouble) hands over to the client path,
  which starts again from the card and reports whatever is wrong;
- after sending, an answer it cannot vouch for (an error, an unusual shape,
  ``--json`` output) is decoded by the client's own code from the bytes already
  received (``decode_answer``), so nothing is ever sent twice.

"Vouch for" is deliberately narrow: a document passes only if it holds known
fields with the JSON types the models accept, so the models would accept it
and mean the same thing (tests/cli/test_quick.py renders both ways and compares).
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn, cast
from urllib.parse import urljoin

from ..client._cardlocation import DEFAULT_CARD_LIMITS, CardLimits, card_urls
from ..types._enums import Role, TaskState
from ..types._ids import new_id
from ..types._time import parse_timestamp
from ..wire._limits import DEFAULT_LIMITS
from .common import BINDINGS, _headers, _timeouts, check_url, session_of  # pyright: ignore[reportPrivateUsage]
from .parts import part_dicts
from .render import Console, Renderer, json_line

if TYPE_CHECKING:
    import httpx

__all__ = ["run"]

_FAILED_STATES = frozenset({"TASK_STATE_FAILED", "TASK_STATE_REJECTED", "TASK_STATE_CANCELED"})
_CARD_TIMEOUT = 10.0  # CardResolver's default, which A2AClient.connect uses
_CONNECT_TIMEOUT = 10.0  # HttpSettings.connect_timeout
_REQUEST_ID = 1  # a fresh transport's first id
MAX_BODY_BYTES = 16 * 1024
"""Parts larger than this (as JSON) go through the client path. A body this small fits
in a socket's default send buffer (Linux ``tcp_wmem``: 16 KiB), so its write never waits
on a server that answered early and stopped reading."""

# A lone surrogate escape: the models' JSON parser refuses it, ``json`` does not.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abAB]")


class _Outside(Exception):
    """The document is not one this reader vouches for: the client's code decides."""


# --- entry point --------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int | None:
    """Send as ``a2a send`` does; the exit status, or None to use the client path instead.

    None is returned only before anything was sent.
    """
    if args.stream or args.binding not in (None, "jsonrpc"):
        return None
    if getattr(args, "save_dir", None):  # saving the answer's files needs the client
        return None
    if args.protocol_version not in (None, "1.0"):
        return None
    from .. import telemetry

    if telemetry.active is not None:  # the client path traces the call
        return None
    console = Console()
    if console.progress_enabled:
        return None
    # The same checks, in the same order, as the client path (usage errors first).
    parts = part_dicts(args)
    if _too_large(parts):
        return None
    url = check_url(args.url)
    timeout, _ = _timeouts(args)
    headers = _headers(args)

    import httpx

    with httpx.Client(headers=headers) as http:
        found = _fetch_card(http, url, DEFAULT_CARD_LIMITS)
        if found is None:
            return None
        card_url, interfaces = found
        endpoint = _endpoint(interfaces, card_url, args)
        if endpoint is None:
            return None
        target, tenant = endpoint
        message: dict[str, Any] = {"messageId": new_id()}
        if args.context_id is not None:
            message["contextId"] = args.context_id
        if args.task_id:
            message["taskId"] = args.task_id
        message["role"] = Role.USER.value
        message["parts"] = parts
        params: dict[str, Any] = {}
        if tenant:
            params["tenant"] = tenant
        params["message"] = message
        if args.no_wait:
            params["configuration"] = {"returnImmediately": True}
        envelope = {"jsonrpc": "2.0", "id": _REQUEST_ID, "method": "SendMessage", "params": params}
        status, body = _post(http, target, envelope, timeout)
    return _answer(args, console, status, body)


def _too_large(parts: list[dict[str, Any]]) -> bool:
    """Whether the parts exceed ``MAX_BODY_BYTES`` as JSON (cheap for the usual small send)."""
    rough = sum(len(p.get("text", "")) + len(p.get("raw", "")) for p in parts)
    if rough > MAX_BODY_BYTES:
        return True
    return len(json.dumps(parts, ensure_ascii=False).encode()) > MAX_BODY_BYTES


# --- the card -----------------------------------------------------------------------------


def _fetch_card(
    http: httpx.Client, agent_url: str, limits: CardLimits
) -> tuple[str, list[dict[str, Any]]] | None:
    """(card URL, its interfaces) as ``CardResolver.resolve`` finds them, or None."""
    import httpx

    for url in card_urls(agent_url):
        request = http.build_request(
            "GET", url, headers={"Accept": "application/json"}, timeout=httpx.Timeout(_CARD_TIMEOUT)
        )
        try:
            response = http.send(request, stream=True, follow_redirects=True)
        except httpx.HTTPError:
            return None
        try:
            if response.status_code in (404, 410):
                continue
            if not 200 <= response.status_code < 300:
                return None
            body = _read_card(response, limits.max_bytes)
        except httpx.HTTPError:
            return None
        finally:
            response.close()
        if body is None:
            return None
        try:
            return url, _card_interfaces(_parse(body), limits)
        except _Outside:
            return None
    return None


def _read_card(response: httpx.Response, limit: int) -> bytes | None:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _endpoint(
    interfaces: list[dict[str, Any]], card_url: str, args: argparse.Namespace
) -> tuple[str, str | None] | None:
    """(URL, tenant) of the interface ``A2AClient.connect`` picks, if it is JSON-RPC 1.0."""
    from ..client.interfaces import choose_interface

    binding: str | None = args.binding
    version: str | None = args.protocol_version
    choice = choose_interface(
        [(i["protocolBinding"], i["protocolVersion"]) for i in interfaces],
        preferred_versions=(version,) if version else ("1.0", "0.3"),
        preferred_bindings=(BINDINGS[binding],) if binding else None,
    )
    if choice is None:
        return None
    index, chosen_version, chosen_binding, relative_urls = choice
    if (chosen_binding, chosen_version) != ("JSONRPC", "1.0"):
        return None
    interface = interfaces[index]
    url: str = interface["url"]
    return (urljoin(card_url, url) if relative_urls else url), interface.get("tenant") or None


# --- the call -----------------------------------------------------------------------------


def _post(
    http: httpx.Client, url: str, envelope: dict[str, Any], timeout: float | None
) -> tuple[int, bytes]:
    """Send like ``JsonRpcTransport.call`` (same headers, timeouts and failures)."""
    import httpx

    from ..client.errors import A2AConnectionError, A2ATimeoutError

    request = http.build_request(
        "POST",
        url,
        content=json.dumps(envelope, ensure_ascii=False, separators=(",", ":")).encode(),
        headers={"Content-Type": "application/json", "A2A-Version": "1.0"},
        timeout=httpx.Timeout(
            timeout, connect=_CONNECT_TIMEOUT if timeout is None else min(_CONNECT_TIMEOUT, timeout)
        ),
    )
    try:
        response = http.send(request, stream=True)
    except httpx.TimeoutException as exc:
        raise A2ATimeoutError(f"The agent at {request.url} did not answer in time") from exc
    except httpx.HTTPError as exc:
        raise A2AConnectionError(
            f"Could not reach the agent at {request.url}: {type(exc).__name__}"
        ) from exc
    return response.status_code, _read_answer(response, DEFAULT_LIMITS.max_bytes)


def _read_answer(response: httpx.Response, limit: int) -> bytes:
    """The whole body within ``limit`` (as ``read_bounded``, on the blocking client)."""
    import httpx

    from ..client.errors import A2AConnectionError, A2ATimeoutError
    from ..errors import InvalidAgentResponseError

    try:
        declared = response.headers.get("content-length", "")
        size = int(declared) if declared.isdigit() else None
        if size is not None and size > limit:
            raise InvalidAgentResponseError(
                f"The agent's response of {size} bytes exceeds the limit of {limit} bytes"
            )
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if size is not None and encoding == "identity":
            return response.read()
        chunks: list[bytes] = []
        total = 0
        for chunk in response.iter_bytes():
            total += len(chunk)
            if total > limit:
                raise InvalidAgentResponseError(
                    f"The agent's response exceeds the limit of {limit} bytes"
                )
            chunks.append(chunk)
        return b"".join(chunks)
    except httpx.TimeoutException as exc:
        raise A2ATimeoutError("The agent did not finish its answer in time") from exc
    except httpx.HTTPError as exc:
        raise A2AConnectionError(
            f"The connection broke while reading the answer: {type(exc).__name__}"
        ) from exc
    finally:
        response.close()


def _answer(args: argparse.Namespace, console: Console, status: int, body: bytes) -> int:
    """Show the answer as the client path would; the exit status."""
    if not args.no_wait and _unfinished(status, body):
        return _answer_followed(args, console, status, body)
    view: _Task | _Message | None = None
    if 200 <= status < 300 and not args.json:
        try:
            view = _read_result(body)
        except _Outside:
            view = None
    if view is None:
        return _answer_with_models(args, console, status, body)
    session_of(args).task_id = view.id if isinstance(view, _Task) else view.task_id
    renderer = Renderer(console, args.url, quiet=args.quiet)
    if isinstance(view, _Task):
        renderer.task(cast(Any, view))
        return 1 if view.status.state.value in _FAILED_STATES else 0
    renderer.message(cast(Any, view))
    return 0


def _answer_with_models(
    args: argparse.Namespace, console: Console, status: int, body: bytes
) -> int:
    """The client's own decoding and output, from the bytes received."""
    from ..client.transports.jsonrpc import decode_answer
    from ..types import Task
    from ..wire import Operation, V10Codec
    from .common import exit_code_for

    codec = V10Codec()
    result = decode_answer(codec, Operation.SEND_MESSAGE, status, body, _REQUEST_ID, DEFAULT_LIMITS)
    session_of(args).task_id = result.id if isinstance(result, Task) else result.task_id
    if args.json:
        console.line(json_line(codec.encode_result(Operation.SEND_MESSAGE, result)))
    else:
        Renderer(console, args.url, quiet=args.quiet).result(result)
    return exit_code_for(result)


def _unfinished(status: int, body: bytes) -> bool:
    """Whether the answer is a task still submitted or working (``send.unfinished``)."""
    if not 200 <= status < 300:
        return False
    try:
        state = json.loads(body)["result"]["task"]["status"]["state"]
    except (ValueError, KeyError, TypeError):
        return False
    return state in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")


def _answer_followed(args: argparse.Namespace, console: Console, status: int, body: bytes) -> int:
    """An unfinished task: followed with the client until it ends, then shown as the client
    path shows it."""
    import asyncio

    from ..client.transports.jsonrpc import decode_answer
    from ..wire import Operation, V10Codec
    from .common import connect, exit_code_for
    from .follow import follow_unfinished

    codec = V10Codec()
    task = decode_answer(codec, Operation.SEND_MESSAGE, status, body, _REQUEST_ID, DEFAULT_LIMITS)
    session_of(args).task_id = task.id

    async def follow() -> Any:
        async with connect(args) as client:
            return await follow_unfinished(client, task, console)

    result = asyncio.run(follow())
    if args.json:
        console.line(json_line(codec.encode_result(Operation.SEND_MESSAGE, result)))
    else:
        Renderer(console, args.url, quiet=args.quiet).result(result)
    return exit_code_for(result)


# --- reading JSON without models ----------------------------------------------------------


def _outside(*_: object) -> NoReturn:
    raise _Outside


def _finite(text: str) -> float:
    """A JSON number with a fraction or exponent; one that overflows is refused by the client."""
    value = float(text)
    if math.isinf(value):
        raise _Outside
    return value


def _parse(body: bytes) -> Any:
    """JSON as the client's parser reads it; _Outside where the two could differ."""
    if _SURROGATE_ESCAPE.search(body):
        raise _Outside
    try:
        return json.loads(body.decode("utf-8"), parse_constant=_outside, parse_float=_finite)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError
        raise _Outside from None


def _walk(value: Any) -> Iterator[tuple[Any, int]]:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        yield node, depth
        if isinstance(node, dict):
            items = cast(dict[str, Any], node)
            stack.extend((key, depth) for key in items)
            stack.extend((child, depth + 1) for child in items.values())
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in cast(list[Any], node))


def _within(value: Any, limits: CardLimits) -> None:
    """The bounds ``CardResolver`` applies (depth, strings, containers)."""
    for node, depth in _walk(value):
        if isinstance(node, str):
            too_big = len(node) > limits.max_string_length
        elif isinstance(node, dict | list):
            size = len(cast(Any, node))
            too_big = depth > limits.max_depth or size > limits.max_array_length
        else:
            too_big = False
        if too_big:
            raise _Outside


def _obj(value: Any) -> dict[str, Any]:
    """An object whose keys the models would read the same (no snake_case spellings)."""
    if type(value) is not dict:
        raise _Outside
    obj = cast(dict[str, Any], value)
    for key in obj:
        if "_" in key:  # maybe a field's Python name, which the models also accept
            raise _Outside
    return obj


def _str(obj: dict[str, Any], key: str) -> str:
    value = obj.get(key)
    if type(value) is not str:
        raise _Outside
    return value


def _opt_str(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is not None and type(value) is not str:
        raise _Outside
    return value


def _opt(obj: dict[str, Any], key: str, kind: type) -> None:
    value = obj.get(key)
    if value is not None and type(value) is not kind:
        raise _Outside


def _strings(obj: dict[str, Any], key: str) -> None:
    if key not in obj:
        return
    value = obj[key]
    if type(value) is not list or any(type(v) is not str for v in cast(list[Any], value)):
        raise _Outside


def _list(obj: dict[str, Any], key: str, *, required: bool = False) -> list[Any]:
    if key not in obj and not required:
        return []
    value = obj.get(key)
    if type(value) is not list:
        raise _Outside
    return cast(list[Any], value)


def _absent_or_empty(obj: dict[str, Any], key: str, empty: type) -> None:
    if key in obj and obj[key] != empty():
        raise _Outside


def _each(items: list[Any], check: Callable[[dict[str, Any]], object]) -> None:
    for item in items:
        check(_obj(item))


def _card_interfaces(value: Any, limits: CardLimits) -> list[dict[str, Any]]:
    """The interfaces of a 1.0 card every field of which the card model accepts."""
    _within(value, limits)
    card = _obj(value)
    if "supportedInterfaces" not in card:
        raise _Outside  # a 0.3 card: the client's converter reads it
    for key in ("name", "description", "version"):
        _str(card, key)
    interfaces = _list(card, "supportedInterfaces")
    for interface in interfaces:
        iface = _obj(interface)
        for key in ("url", "protocolBinding", "protocolVersion"):
            _str(iface, key)
        _opt_str(iface, "tenant")
    provider = card.get("provider")
    if provider is not None:
        _str(_obj(provider), "url")
        _str(_obj(provider), "organization")
    _opt_str(card, "documentationUrl")
    _opt_str(card, "iconUrl")
    if "capabilities" in card:
        capabilities = _obj(card["capabilities"])
        for key in ("streaming", "pushNotifications", "extendedAgentCard"):
            _opt(capabilities, key, bool)
        _each(_list(capabilities, "extensions"), _check_extension)
    for key in ("defaultInputModes", "defaultOutputModes"):
        _strings(card, key)
    skills = _list(card, "skills")
    _each(skills, _check_skill)
    _absent_or_empty(card, "securitySchemes", dict)
    _absent_or_empty(card, "securityRequirements", list)
    _absent_or_empty(card, "signatures", list)
    if len(skills) > limits.max_skills or len(interfaces) > limits.max_interfaces:
        raise _Outside
    return cast(list[dict[str, Any]], interfaces)


def _check_extension(extension: dict[str, Any]) -> None:
    _str(extension, "uri")
    _opt_str(extension, "description")
    if "required" in extension and type(extension["required"]) is not bool:
        raise _Outside
    _opt(extension, "params", dict)


def _check_skill(skill: dict[str, Any]) -> None:
    for key in ("id", "name", "description"):
        _str(skill, key)
    for key in ("tags", "examples", "inputModes", "outputModes"):
        _strings(skill, key)
    _absent_or_empty(skill, "securityRequirements", list)


# --- the answer, as light objects the renderer reads ------------------------------------------


class _Part:
    __slots__ = ("data", "filename", "media_type", "raw", "text", "url")

    def __init__(self, obj: dict[str, Any]) -> None:
        if obj.get("raw") is not None:
            raise _Outside  # base64: the model decodes it
        self.raw: bytes | None = None
        self.text = _opt_str(obj, "text")
        self.url = _opt_str(obj, "url")
        self.data: Any = obj.get("data")
        _opt(obj, "metadata", dict)
        self.filename = _opt_str(obj, "filename")
        self.media_type = _opt_str(obj, "mediaType")
        present = (self.text is not None) + (self.url is not None) + (self.data is not None)
        if present != 1:
            raise _Outside


def _parts(obj: dict[str, Any]) -> list[_Part]:
    parts = [_Part(_obj(item)) for item in _list(obj, "parts", required=True)]
    if not parts:
        raise _Outside
    return parts


def _meta(obj: dict[str, Any]) -> None:
    _opt(obj, "metadata", dict)
    _strings(obj, "extensions")


class _Message:
    __slots__ = ("context_id", "message_id", "metadata", "parts", "role", "task_id")

    def __init__(self, obj: dict[str, Any]) -> None:
        self.message_id = _str(obj, "messageId")
        self.context_id = _opt_str(obj, "contextId")
        self.task_id = _opt_str(obj, "taskId")
        role = _str(obj, "role")
        if role not in _ROLES:
            raise _Outside
        self.role = Role(role)
        self.parts = _parts(obj)
        _meta(obj)
        self.metadata: dict[str, Any] | None = obj.get("metadata")  # what it repeats, say
        _strings(obj, "referenceTaskIds")

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if p.text is not None)


class _Artifact:
    __slots__ = ("artifact_id", "description", "name", "parts")

    def __init__(self, obj: dict[str, Any]) -> None:
        self.artifact_id = _str(obj, "artifactId")
        self.name = _opt_str(obj, "name")
        self.description = _opt_str(obj, "description")
        self.parts = _parts(obj)
        _meta(obj)


class _Status:
    __slots__ = ("message", "state")

    def __init__(self, obj: dict[str, Any]) -> None:
        state = _str(obj, "state")
        if state not in _STATES:
            raise _Outside
        self.state = TaskState(state)
        message = obj.get("message")
        self.message = _Message(_obj(message)) if message is not None else None
        timestamp = obj.get("timestamp")
        if timestamp is not None:
            if type(timestamp) is not str:
                raise _Outside
            try:
                parse_timestamp(timestamp)
            except ValueError:
                raise _Outside from None


class _Task:
    __slots__ = ("artifacts", "context_id", "history", "id", "status")

    def __init__(self, obj: dict[str, Any]) -> None:
        self.id = _str(obj, "id")
        self.context_id = _str(obj, "contextId") if "contextId" in obj else ""
        self.status = _Status(_obj(obj.get("status")))
        self.artifacts = [_Artifact(_obj(item)) for item in _list(obj, "artifacts")]
        self.history = [_Message(_obj(item)) for item in _list(obj, "history")]
        _opt(obj, "metadata", dict)


_STATES = frozenset(state.value for state in TaskState)
_ROLES = frozenset(role.value for role in Role)


def _read_result(body: bytes) -> _Task | _Message:
    """The result of a successful 1.0 ``SendMessage`` answer; _Outside for anything else."""
    if body.count(b"{") + body.count(b"[") > DEFAULT_LIMITS.max_depth:
        raise _Outside  # the client checks depth and counts on this path: let it
    envelope = _obj(_parse(body))
    if envelope.get("jsonrpc") != "2.0" or envelope.get("error") is not None:
        raise _Outside
    answered = envelope.get("id")
    if type(answered) is not int or answered != _REQUEST_ID:
        raise _Outside
    result = _obj(envelope.get("result"))
    task, message = result.get("task"), result.get("message")
    if (task is None) == (message is None):
        raise _Outside
    if task is not None:
        return _Task(_obj(task))
    return _Message(_obj(message))
