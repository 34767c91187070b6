// The A2A client of the playground: one call per operation, for A2A 1.0 and 0.3, over
// JSON-RPC or HTTP+JSON. Requests are built in the 1.0 shape and converted down for 0.3;
// answers are converted up, so the page only ever sees 1.0 objects. Every call is
// recorded as an "exchange" (the request and the raw answer) for the debugging log.

const METHODS = {
  "1.0": {
    send: "SendMessage", stream: "SendStreamingMessage", get: "GetTask",
    cancel: "CancelTask", list: "ListTasks", subscribe: "SubscribeToTask",
  },
  "0.3": {
    send: "message/send", stream: "message/stream", get: "tasks/get",
    cancel: "tasks/cancel", subscribe: "tasks/resubscribe",
  },
};

const STATES_03 = {
  submitted: "SUBMITTED", working: "WORKING", "input-required": "INPUT_REQUIRED",
  "auth-required": "AUTH_REQUIRED", completed: "COMPLETED", canceled: "CANCELED",
  failed: "FAILED", rejected: "REJECTED", unknown: "UNSPECIFIED",
};

export const TERMINAL = new Set([
  "TASK_STATE_COMPLETED", "TASK_STATE_CANCELED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED",
]);

export class A2AError extends Error {
  constructor(message, detail) {
    super(message);
    this.detail = detail;
  }
}

/** Which operations a version/binding pair can do (0.3 has no ListTasks). */
export function supports(version, op) {
  return Boolean(METHODS[version][op]);
}

export function newId() {
  return crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random();
}

/** One endpoint of the agent: version, binding, URL, and the credential headers. */
export class Connection {
  constructor({ version, binding, url, headers = {}, query = {} }) {
    this.version = version;
    this.binding = binding;
    this.url = url.replace(/\/+$/, "");
    this.headers = headers;
    this.query = query;
    this.rpcId = 0;
  }

  /**
   * Run one operation. `params` is in the 1.0 shape. Streaming operations call
   * `onEvent(event)` with each 1.0 StreamResponse; the others return the result.
   * `onExchange(exchange)` sees the wire record, updated as the answer arrives.
   */
  async call(op, params, { onEvent, onExchange, signal } = {}) {
    if (!supports(this.version, op)) {
      throw new A2AError(`A2A ${this.version} has no ${op} operation`);
    }
    const request = this.binding === "JSONRPC" ? this.rpcRequest(op, params) : this.restRequest(op, params);
    const exchange = {
      op, version: this.version, binding: this.binding,
      method: request.method, url: request.url, headers: redact(request.headers),
      body: request.body, status: null, responseType: "", response: null, events: [],
    };
    onExchange?.(exchange);
    let response;
    try {
      response = await fetch(request.url, {
        method: request.method, headers: request.headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal, cache: "no-store", credentials: "same-origin",
      });
    } catch (err) {
      exchange.status = "network error";
      exchange.response = String(err);
      onExchange?.(exchange);
      throw new A2AError(signal?.aborted ? "stopped" : `the agent could not be reached: ${err}`);
    }
    exchange.status = response.status;
    exchange.responseType = response.headers.get("content-type") || "";
    if (exchange.responseType.startsWith("text/event-stream")) {
      onExchange?.(exchange);
      let last;
      for await (const data of sseData(response, signal)) {
        let payload;
        try {
          payload = JSON.parse(data);
        } catch {
          throw new A2AError(`an event that is not JSON: ${data.slice(0, 200)}`);
        }
        exchange.events.push(payload);
        onExchange?.(exchange);
        const event = this.unwrap(payload, exchange);
        last = this.toStreamEvent(event);
        onEvent?.(last);
      }
      return last;
    }
    const text = await response.text();
    let body;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    exchange.response = body;
    onExchange?.(exchange);
    if (!response.ok && (this.binding !== "JSONRPC" || typeof body !== "object" || !body)) {
      throw new A2AError(errorText(body, response.status), body);
    }
    const result = this.unwrap(body, exchange);
    if (op === "send") {
      const event = this.toStreamEvent(result);
      onEvent?.(event);
      return event;
    }
    if (op === "list") return { ...result, tasks: (result.tasks || []).map((t) => this.task(t)) };
    return this.task(result);
  }

  // -- requests ------------------------------------------------------------------------
  rpcRequest(op, params) {
    const headers = { "content-type": "application/json", ...this.headers };
    if (this.version === "1.0") headers["a2a-version"] = "1.0";
    const streaming = op === "stream" || op === "subscribe";
    headers.accept = streaming ? "text/event-stream, application/json" : "application/json";
    const body = {
      jsonrpc: "2.0", id: ++this.rpcId, method: METHODS[this.version][op],
      params: this.version === "1.0" ? params : toV03Params(params, op),
    };
    return { method: "POST", url: withQuery(this.url, this.query), headers, body };
  }

  restRequest(op, params) {
    const v03 = this.version === "0.3";
    const base = this.url + (v03 ? "/v1" : "");
    const headers = { ...this.headers };
    if (!v03) headers["a2a-version"] = "1.0";
    const streaming = op === "stream" || op === "subscribe";
    headers.accept = streaming ? "text/event-stream, application/json" : "application/json";
    const task = (id) => `${base}/tasks/${encodeURIComponent(id)}`;
    let method = "POST";
    let url;
    let body;
    const query = { ...this.query };
    if (op === "send" || op === "stream") {
      url = `${base}/message:${op === "send" ? "send" : "stream"}`;
      body = v03
        ? {
          ...params, message: toV03Proto(params.message),
          configuration: { ...params.configuration, blocking: op === "send" },
        }
        : params;
    } else if (op === "get") {
      method = "GET";
      url = task(params.id);
      if (params.historyLength !== undefined) query.historyLength = params.historyLength;
    } else if (op === "cancel") {
      url = `${task(params.id)}:cancel`;
      body = {};
    } else if (op === "subscribe") {
      url = `${task(params.id)}:subscribe`;
    } else if (op === "list") {
      method = "GET";
      url = `${base}/tasks`;
      for (const [key, value] of Object.entries(params)) {
        if (value !== undefined && value !== "") query[key] = value;
      }
    }
    if (body !== undefined) headers["content-type"] = "application/json";
    return { method, url: withQuery(url, query), headers, body };
  }

  // -- answers -------------------------------------------------------------------------
  unwrap(payload, exchange) {
    if (this.binding === "JSONRPC") {
      if (payload && payload.error) throw new A2AError(errorText(payload, exchange.status), payload.error);
      if (!payload || !("result" in payload)) throw new A2AError("not a JSON-RPC response", payload);
      return payload.result;
    }
    if (payload && payload.error) throw new A2AError(errorText(payload, exchange.status), payload.error);
    return payload;
  }

  /** A send result or stream frame as a 1.0 StreamResponse ({task} | {message} | ...). */
  toStreamEvent(value) {
    if (!value || typeof value !== "object") throw new A2AError("an empty answer");
    const kind = value.kind;
    if (kind === "task") return { task: this.task(value) };
    if (kind === "message") return { message: message03(value) };
    if (kind === "status-update") return { statusUpdate: statusEvent03(value) };
    if (kind === "artifact-update") return { artifactUpdate: { ...value, artifact: artifact03(value.artifact) } };
    if (value.task) return { task: this.task(value.task) };
    if (value.message || value.msg) return { message: this.message(value.message || value.msg) };
    if (value.statusUpdate) {
      const update = value.statusUpdate;
      return { statusUpdate: { ...update, status: this.status(update.status) } };
    }
    if (value.artifactUpdate) {
      const update = value.artifactUpdate;
      return { artifactUpdate: { ...update, artifact: this.artifact(update.artifact) } };
    }
    if (value.id && value.status) return { task: this.task(value) };
    throw new A2AError("an answer of unknown shape", value);
  }

  task(value) {
    if (!value || typeof value !== "object") return value;
    if (value.kind === "task") return task03(value);
    if (this.version === "1.0") return value;
    return {
      ...value,
      status: this.status(value.status),
      artifacts: (value.artifacts || []).map((a) => this.artifact(a)),
      history: (value.history || []).map((m) => this.message(m)),
    };
  }

  status(value) {
    if (!value || this.version === "1.0") return value;
    const state = value.state === "TASK_STATE_CANCELLED" ? "TASK_STATE_CANCELED" : value.state;
    const msg = value.message || value.update;
    return { ...value, state, message: msg ? this.message(msg) : undefined };
  }

  message(value) {
    if (!value) return value;
    if (value.kind) return message03(value);
    if (this.version === "1.0" || value.parts) return value;
    return { ...value, parts: (value.content || []).map(protoPart03) };
  }

  artifact(value) {
    if (!value || this.version === "1.0") return value;
    return { ...value, parts: (value.parts || []).map(protoPart03) };
  }
}

// -- 0.3 JSON-RPC shapes ----------------------------------------------------------------
function toV03Params(params, op) {
  if (!params.message) return params;
  const m = params.message;
  return {
    ...params,
    configuration: op === "send" ? { ...params.configuration, blocking: true } : params.configuration,
    message: {
      kind: "message", messageId: m.messageId, role: m.role === "ROLE_AGENT" ? "agent" : "user",
      contextId: m.contextId, taskId: m.taskId, metadata: m.metadata,
      parts: m.parts.map(partTo03),
    },
  };
}

function partTo03(p) {
  if (p.text !== undefined) return { kind: "text", text: p.text };
  if (p.data !== undefined) return { kind: "data", data: p.data };
  const file = { mimeType: p.mediaType, name: p.filename };
  if (p.raw !== undefined) file.bytes = p.raw;
  else file.uri = p.url;
  return { kind: "file", file };
}

function toV03Proto(m) {
  const content = m.parts.map((p) => {
    if (p.text !== undefined) return { text: p.text };
    if (p.data !== undefined) return { data: { data: p.data } };
    const file = { mimeType: p.mediaType, name: p.filename };
    if (p.raw !== undefined) file.fileWithBytes = p.raw;
    else file.fileWithUri = p.url;
    return { file };
  });
  return {
    messageId: m.messageId, role: m.role, contextId: m.contextId, taskId: m.taskId,
    metadata: m.metadata, content,
  };
}

function part03(p) {
  if (p.kind === "text") return { text: p.text, metadata: p.metadata };
  if (p.kind === "data") return { data: p.data, metadata: p.metadata };
  const f = p.file || {};
  return { raw: f.bytes, url: f.uri, mediaType: f.mimeType, filename: f.name, metadata: p.metadata };
}

function protoPart03(p) {
  if (p.text !== undefined) return { text: p.text };
  if (p.data !== undefined) return { data: p.data && "data" in p.data ? p.data.data : p.data };
  const f = p.file || {};
  return { raw: f.fileWithBytes, url: f.fileWithUri, mediaType: f.mimeType, filename: f.name };
}

function message03(m) {
  return {
    ...m, role: m.role === "agent" ? "ROLE_AGENT" : "ROLE_USER",
    parts: (m.parts || []).map(part03),
  };
}

function status03(s) {
  if (!s) return s;
  const state = STATES_03[s.state] ? `TASK_STATE_${STATES_03[s.state]}` : s.state;
  return { ...s, state, message: s.message ? message03(s.message) : undefined };
}

function statusEvent03(e) {
  return { taskId: e.taskId, contextId: e.contextId, status: status03(e.status), final: e.final };
}

function artifact03(a) {
  return a ? { ...a, parts: (a.parts || []).map(part03) } : a;
}

function task03(t) {
  return {
    ...t, status: status03(t.status),
    artifacts: (t.artifacts || []).map(artifact03),
    history: (t.history || []).map(message03),
  };
}

// -- helpers ------------------------------------------------------------------------------
function withQuery(url, query) {
  const entries = Object.entries(query);
  if (!entries.length) return url;
  const params = new URLSearchParams(entries.map(([k, v]) => [k, String(v)]));
  return url + (url.includes("?") ? "&" : "?") + params;
}

function redact(headers) {
  const shown = {};
  for (const [key, value] of Object.entries(headers)) {
    shown[key] = /authorization|key|token|secret/i.test(key) ? "<hidden>" : value;
  }
  return shown;
}

function errorText(body, status) {
  const error = body && typeof body === "object" ? body.error || body : null;
  if (error && typeof error === "object" && error.message) {
    return `${error.message}${error.code !== undefined ? ` (${error.code})` : ""}`;
  }
  if (typeof body === "string" && body) return `HTTP ${status}: ${body.slice(0, 200)}`;
  return `HTTP ${status}`;
}

/** The `data:` payloads of a server-sent event stream, as they arrive. */
export async function* sseData(response, signal) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let lines = [];
  try {
    while (true) {
      if (signal?.aborted) return;
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, cut);
        buffer = buffer.slice(cut + (buffer.startsWith("\r\n", cut) ? 2 : 1));
        if (line === "") {
          if (lines.length) yield lines.join("\n");
          lines = [];
        } else if (line.startsWith("data:")) {
          lines.push(line.slice(line.startsWith("data: ") ? 6 : 5));
        }
      }
    }
    if (lines.length) yield lines.join("\n");
  } finally {
    reader.cancel().catch(() => {});
  }
}
