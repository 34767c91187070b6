// The playground page: reads the agent card, then sends messages and follows tasks.
// a2a.js speaks the protocol, render.js draws; this module holds the state and the wiring.
import { A2AError, Connection, TERMINAL, newId, supports } from "./a2a.js";
import {
  credentialOf, el, interfacesOf, json, renderCard, renderParts, stateLabel, textOf,
} from "./render.js";

const MAX_FILE_BYTES = 5 * 1024 * 1024;
const $ = (id) => document.getElementById(id);

const meta = (name) => document.querySelector(`meta[name="${name}"]`)?.content || "";
const agentBase = new URL(meta("a2a-agent") || "../", location.href);
const remote = meta("a2a-remote"); // set by `a2a playground`: the remote origin behind /proxy
const proxyPrefix = remote ? agentBase.pathname.split("/").slice(0, 2).join("/") : "";

const state = {
  card: null,
  credential: null,
  taskId: null,
  contextId: null,
  taskState: null,
  stream: null, // AbortController of the stream being read
  artifacts: new Map(),
  block: null, // the agent block events are drawn into
};
let exchangeCount = 0;
const exchangeNodes = new WeakMap();

// -- start ---------------------------------------------------------------------------
loadCard();
loadAgents();
$("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  send();
});
$("composer-text").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    send();
  }
});
$("cancel").addEventListener("click", cancelTask);
$("resubscribe").addEventListener("click", resubscribe);
$("new-chat").addEventListener("click", newConversation);
$("refresh-tasks").addEventListener("click", listTasks);
$("clear-log").addEventListener("click", () => $("log").replaceChildren());
$("version").addEventListener("change", onSettings);
$("binding").addEventListener("change", onSettings);
$("auth-secret").addEventListener("input", (event) => {
  sessionStorage.setItem(secretKey(), event.target.value);
});

async function loadCard() {
  // Below the agent's URL first, then at its origin's root (as A2A clients look).
  const root = remote ? new URL(`${proxyPrefix}/`, location.href) : agentBase;
  const places = [agentBase, root].filter((u, i, all) => all.findIndex((o) => o.href === u.href) === i);
  let error = "";
  for (const base of places) {
    const url = new URL(".well-known/agent-card.json", base);
    const headers = { accept: "application/json", ...proxyHeaders() };
    const exchange = { op: "card", method: "GET", url: url.href, headers, status: null, response: null, events: [] };
    logExchange(exchange);
    try {
      const response = await fetch(url, { headers, cache: "no-store" });
      exchange.status = response.status;
      exchange.response = await response.json().catch(() => null);
      logExchange(exchange);
      if (response.ok && exchange.response) {
        showCard(exchange.response);
        return;
      }
      error = `HTTP ${response.status}`;
    } catch (err) {
      error = err.message;
    }
  }
  $("agent-summary").textContent = "";
  notice(`Could not read the agent card (${error}).`);
}

// The other agents of the same service (its AI Catalog): a switch when there are several.
async function loadAgents() {
  const catalog = meta("a2a-catalog");
  if (remote || !catalog) return;
  let entries = [];
  try {
    const response = await fetch(new URL(catalog, location.href), { cache: "no-store" });
    if (!response.ok) return;
    entries = ((await response.json()).entries || []).filter(
      (e) => typeof e.url === "string" && e.url.endsWith("/.well-known/agent-card.json"),
    );
  } catch {
    return;
  }
  if (entries.length < 2) return;
  const mine = new URL(".well-known/agent-card.json", agentBase).href;
  const select = $("agent-select");
  for (const entry of entries) {
    const page = new URL(entry.url.replace(/\.well-known\/agent-card\.json$/, "playground/"));
    if (page.origin !== location.origin) continue;
    const option = el("option", { value: page.href }, String(entry.displayName || entry.identifier));
    option.selected = entry.url === mine;
    select.append(option);
  }
  select.addEventListener("change", () => location.assign(select.value));
  $("agent-switch").hidden = false;
}

function proxyHeaders() {
  return remote ? { "x-a2a-playground": "1" } : {};
}

function showCard(card) {
  state.card = card;
  document.title = `${card.name} - A2A playground`;
  $("agent-name").textContent = card.name || "Unnamed agent";
  $("agent-summary").textContent = `${card.description || ""}`.trim();
  $("card-body").replaceChildren(renderCard(card, { onExample: useExample }));
  const ifaces = interfacesOf(card);
  for (const option of $("version").options) option.disabled = !ifaces.some((i) => i.protocolVersion === option.value);
  const preferred = ["1.0", "0.3"].find((v) => ifaces.some((i) => i.protocolVersion === v));
  if (preferred) $("version").value = preferred;
  $("stream").checked = card.capabilities?.streaming !== false;
  $("stream").disabled = card.capabilities?.streaming === false;
  setupAuth(card);
  onSettings();
  document.body.dataset.ready = "true";
  listTasks();
}

function onSettings() {
  const ifaces = interfacesOf(state.card || {});
  const version = $("version").value;
  for (const option of $("binding").options) {
    option.disabled = !ifaces.some((i) => i.protocolVersion === version && i.protocolBinding === option.value);
  }
  if ($("binding").selectedOptions[0]?.disabled) {
    const first = [...$("binding").options].find((o) => !o.disabled);
    if (first) $("binding").value = first.value;
  }
  $("refresh-tasks").disabled = !supports(version, "list");
  clearNotice();
}

// -- auth -----------------------------------------------------------------------------
function setupAuth(card) {
  const schemes = Object.values(card.securitySchemes || {});
  const credential = schemes.map(credentialOf).find((c) => c && c.kind !== "cookie") || null;
  state.credential = credential;
  if (!credential) return;
  $("auth").hidden = false;
  $("auth-label").textContent = credential.kind === "bearer"
    ? "Bearer token"
    : `API key (${credential.kind} ${credential.name})`;
  $("auth-secret").value = sessionStorage.getItem(secretKey()) || "";
}

function secretKey() {
  return `a2a-playground:${agentBase.href}`;
}

function credentials() {
  const secret = $("auth-secret").value.trim();
  const c = state.credential;
  const headers = proxyHeaders();
  if (!c || !secret) return { headers, query: {} };
  if (c.kind === "bearer") return { headers: { ...headers, authorization: `Bearer ${secret}` }, query: {} };
  if (c.kind === "query") return { headers, query: { [c.name]: secret } };
  return { headers: { ...headers, [c.name]: secret }, query: {} };
}

// -- the connection ---------------------------------------------------------------------
function connection() {
  const version = $("version").value;
  const binding = $("binding").value;
  const iface = interfacesOf(state.card || {}).find((i) => i.protocolVersion === version && i.protocolBinding === binding);
  if (!iface) throw new A2AError(`the card offers no ${binding} interface for A2A ${version}`);
  return new Connection({ version, binding, url: reachable(iface.url), ...credentials() });
}

/** The interface URL as this page can reach it (through the proxy of `a2a playground`). */
function reachable(url) {
  const target = new URL(url, agentBase);
  if (!remote) return target.href;
  if (target.origin !== remote) {
    throw new A2AError(`the card lists ${url}, which is not on ${remote}: the playground proxy forwards only there`);
  }
  return `${location.origin}${proxyPrefix}${target.pathname}${target.search}`;
}

async function run(op, params, handlers = {}) {
  const conn = connection();
  return conn.call(op, params, { ...handlers, onExchange: logExchange });
}

// -- sending ----------------------------------------------------------------------------
async function buildParts() {
  const parts = [];
  const text = $("composer-text").value.trim();
  if (text) parts.push({ text });
  const dataText = $("composer-data").value.trim();
  $("composer-data").removeAttribute("aria-invalid");
  if (dataText) {
    try {
      parts.push({ data: JSON.parse(dataText) });
    } catch (err) {
      $("composer-data").setAttribute("aria-invalid", "true");
      $("data-box").open = true;
      throw new A2AError(`the data part is not valid JSON: ${err.message}`);
    }
  }
  for (const file of $("composer-files").files) {
    if (file.size > MAX_FILE_BYTES) throw new A2AError(`${file.name} is larger than 5 MiB`);
    parts.push({ raw: await base64(file), mediaType: file.type || "application/octet-stream", filename: file.name });
  }
  return parts;
}

async function send() {
  if (!state.card) return;
  clearNotice();
  let parts;
  try {
    parts = await buildParts();
  } catch (err) {
    notice(err.message);
    return;
  }
  if (!parts.length) {
    notice("Write a message, add data or attach a file first.");
    $("composer-text").focus();
    return;
  }
  const continuing = ["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"].includes(state.taskState);
  const message = { messageId: newId(), role: "ROLE_USER", parts };
  if (state.contextId) message.contextId = state.contextId;
  if (continuing && state.taskId) message.taskId = state.taskId;
  else resetTask();
  const streaming = $("stream").checked && !$("stream").disabled;
  const params = { message, configuration: { acceptedOutputModes: state.card.defaultOutputModes || [] } };
  addTurn("user", renderParts(parts));
  $("composer-text").value = "";
  $("composer-files").value = "";
  await follow(streaming ? "stream" : "send", params, streaming ? "Streaming" : "Waiting for the answer");
}

/** Run a send, stream or subscribe call, drawing its events into a new agent block. */
async function follow(op, params, label) {
  state.stream?.abort();
  const controller = new AbortController();
  state.stream = controller;
  state.block = agentBlock(label);
  $("send").disabled = true;
  try {
    await run(op, params, { onEvent, signal: controller.signal });
  } catch (err) {
    if (!controller.signal.aborted) {
      state.block.timeline.append(el("li", { class: "error", text: err.message }));
      notice(err.message);
    }
  } finally {
    if (state.stream === controller) state.stream = null;
    $("send").disabled = false;
    state.block.root.classList.remove("live");
    updateTaskBar();
  }
  if (supports($("version").value, "list")) listTasks();
}

function onEvent(event) {
  const block = state.block;
  if (event.message) {
    const m = event.message;
    if (m.contextId) state.contextId = m.contextId;
    block.messages.append(el("div", { class: "agent-message" }, renderParts(m.parts)));
    return;
  }
  if (event.task) {
    const task = event.task;
    setTask(task);
    step(block, task.status);
    for (const artifact of task.artifacts || []) showArtifact(block, artifact, false);
    return;
  }
  if (event.statusUpdate) {
    const update = event.statusUpdate;
    setTask({ id: update.taskId, contextId: update.contextId, status: update.status });
    step(block, update.status);
    return;
  }
  if (event.artifactUpdate) {
    const update = event.artifactUpdate;
    showArtifact(block, update.artifact, Boolean(update.append));
  }
}

function step(block, status) {
  if (!status) return;
  const label = stateLabel(status.state);
  const asking = status.state === "TASK_STATE_INPUT_REQUIRED" && status.message;
  // A status message that repeats an artifact (the server's copy of the answer) is shown there.
  const repeats = status.message && status.message.metadata && status.message.metadata.a2aRepeatsArtifact;
  const text = asking || repeats ? "" : textOf(status.message);
  const time = status.timestamp ? new Date(status.timestamp).toLocaleTimeString() : "";
  const item = el("li", { class: `step state-${label}` },
    el("span", { class: "state", text: label }),
    text ? el("span", { class: "step-text", text }) : null,
    time ? el("time", { datetime: status.timestamp, class: "muted small", text: time }) : null);
  block.timeline.append(item);
  if (asking) {
    block.messages.append(el("div", { class: "agent-message question" }, renderParts(status.message.parts)));
  }
}

function showArtifact(block, artifact, append) {
  const id = artifact.artifactId || artifact.name || "artifact";
  let entry = state.artifacts.get(id);
  if (!entry || !block.artifacts.contains(entry.node)) {
    entry = { parts: [], node: el("section", { class: "artifact", "data-artifact": id }) };
    state.artifacts.set(id, entry);
    block.artifacts.append(entry.node);
    append = false;
  }
  if (!append) entry.parts = [];
  for (const part of artifact.parts || []) {
    const last = entry.parts[entry.parts.length - 1];
    if (append && last && last.text !== undefined && part.text !== undefined) {
      entry.parts[entry.parts.length - 1] = { ...last, text: last.text + part.text };
    } else {
      entry.parts.push(part);
    }
  }
  entry.node.replaceChildren(
    el("h3", { class: "artifact-name", text: artifact.name || id }),
    renderParts(entry.parts),
  );
}

function setTask(task) {
  if (task.id) state.taskId = task.id;
  if (task.contextId) state.contextId = task.contextId;
  if (task.status?.state) state.taskState = task.status.state;
  updateTaskBar();
}

function resetTask() {
  state.taskId = null;
  state.taskState = null;
  updateTaskBar();
}

function updateTaskBar() {
  const has = Boolean(state.taskId);
  $("task-bar").hidden = !has;
  $("task-id").textContent = state.taskId || "";
  const label = stateLabel(state.taskState);
  $("task-state").textContent = label;
  $("task-state").className = `state state-${label}`;
  const finished = TERMINAL.has(state.taskState);
  $("cancel").disabled = !has || finished;
  $("resubscribe").disabled = !has || finished || !supports($("version").value, "subscribe");
  const asking = state.taskState === "TASK_STATE_INPUT_REQUIRED";
  $("composer").classList.toggle("asking", asking);
  $("composer-label").textContent = asking ? "Your answer (the agent asked for input)" : "Message";
}

// -- task operations ----------------------------------------------------------------
async function cancelTask() {
  if (!state.taskId) return;
  try {
    const task = await run("cancel", { id: state.taskId });
    const shown = state.taskState === task.status?.state; // a stream may have drawn it already
    setTask(task);
    if (!state.stream && !shown) step(state.block || agentBlock("Canceled"), task.status);
  } catch (err) {
    notice(`Cancel failed: ${err.message}`);
  }
}

async function resubscribe() {
  if (!state.taskId) return;
  await follow("subscribe", { id: state.taskId }, "Resubscribed");
}

async function listTasks() {
  const version = $("version").value;
  const list = $("tasks");
  if (!supports(version, "list")) {
    list.replaceChildren(el("li", { class: "muted", text: "A2A 0.3 has no ListTasks: choose 1.0." }));
    return;
  }
  try {
    // The whole history: the question is its first user message, which a crew's or a
    // graph's progress messages push out of any short window of the latest ones.
    const result = await run("list", { pageSize: 20 });
    list.replaceChildren();
    for (const task of result.tasks || []) {
      const first = (task.history || []).find((m) => m.role === "ROLE_USER");
      const label = stateLabel(task.status?.state);
      list.append(el("li", {},
        el("button", {
          type: "button", class: "task-link", "data-task": task.id,
          "aria-label": `Open task ${task.id} (${label})`, onclick: () => openTask(task.id),
        }, el("span", { class: `state state-${label}`, text: label }), " ",
        el("span", { text: textOf(first).slice(0, 60) || task.id.slice(0, 8) }))));
    }
    if (!list.childElementCount) list.append(el("li", { class: "muted", text: "No tasks yet." }));
  } catch (err) {
    list.replaceChildren(el("li", { class: "error", text: `Could not list tasks: ${err.message}` }));
  }
}

async function openTask(id) {
  let task;
  try {
    task = await run("get", { id, historyLength: 100 });
  } catch (err) {
    notice(`Could not open the task: ${err.message}`);
    return;
  }
  state.stream?.abort();
  $("conversation").replaceChildren();
  state.artifacts.clear();
  setTask(task);
  for (const m of task.history || []) {
    if (m.role === "ROLE_USER") addTurn("user", renderParts(m.parts));
    else addTurn("agent", renderParts(m.parts));
  }
  const block = agentBlock(`Task ${task.id}`);
  block.root.classList.remove("live");
  step(block, task.status);
  for (const artifact of task.artifacts || []) showArtifact(block, artifact, false);
  state.block = block;
  $("composer-text").focus();
}

function newConversation() {
  state.stream?.abort();
  state.contextId = null;
  state.artifacts.clear();
  resetTask();
  $("conversation").replaceChildren();
  $("composer-text").focus();
}

// -- page pieces ---------------------------------------------------------------------
function addTurn(who, content) {
  const turn = el("article", { class: `turn ${who}` },
    el("h3", { class: "who", text: who === "user" ? "You" : state.card?.name || "Agent" }), content);
  $("conversation").append(turn);
  turn.scrollIntoView({ block: "nearest" });
  return turn;
}

function agentBlock(label) {
  const timeline = el("ol", { class: "timeline", "aria-label": "Progress" });
  const messages = el("div", { class: "messages" });
  const artifacts = el("div", { class: "artifacts" });
  const root = addTurn("agent", el("div", {}, el("p", { class: "muted small", text: label }), timeline, messages, artifacts));
  root.classList.add("live");
  return { root, timeline, messages, artifacts };
}

function useExample(example) {
  const trimmed = example.trim();
  if (/^[[{]/.test(trimmed)) {
    try {
      $("composer-data").value = JSON.stringify(JSON.parse(trimmed), null, 2);
      $("data-box").open = true;
      $("composer-data").focus();
      return;
    } catch {
      // not JSON after all: a text example
    }
  }
  $("composer-text").value = example;
  $("composer-text").focus();
}

function logExchange(exchange) {
  let node = exchangeNodes.get(exchange);
  if (!node) {
    exchangeCount += 1;
    node = { n: exchangeCount, li: el("li", { class: "exchange" }) };
    exchangeNodes.set(exchange, node);
    $("log").prepend(node.li);
  }
  const where = exchange.version ? ` · A2A ${exchange.version} ${exchange.binding}` : "";
  const status = exchange.status === null ? "…" : exchange.status;
  const details = el("details", {},
    el("summary", {}, `#${node.n} ${exchange.op}${where} → ${status}`),
    el("p", { class: "small" }, el("code", { text: `${exchange.method} ${exchange.url}` })),
    el("h4", { text: "Request headers" }), json(exchange.headers),
  );
  if (exchange.body !== undefined) details.append(el("h4", { text: "Request body" }), json(exchange.body));
  if (exchange.events.length) details.append(el("h4", { text: `Events (${exchange.events.length})` }), json(exchange.events));
  else if (exchange.response !== null) details.append(el("h4", { text: "Response" }), json(exchange.response));
  const open = node.li.firstChild?.open;
  if (open) details.open = true;
  node.li.replaceChildren(details);
}

function notice(text) {
  $("notice").textContent = text;
  $("notice").hidden = false;
}

function clearNotice() {
  $("notice").hidden = true;
  $("notice").textContent = "";
}

function base64(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}
