// Rendering: the agent card, message and artifact parts, JSON. Everything is built with
// DOM calls and textContent, so nothing the agent sends is ever parsed as HTML.
import { renderMarkdown } from "./markdown.js";

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) if (child !== undefined && child !== null) node.append(child);
  return node;
}

export function json(value) {
  return el("pre", { class: "json", text: JSON.stringify(value, null, 2) });
}

/** The agent card, as a set of sections; `onExample(example, skill)` fills the composer. */
export function renderCard(card, { onExample }) {
  const body = document.createDocumentFragment();
  body.append(el("p", { text: card.description || "" }));
  const facts = el("dl", { class: "facts" });
  fact(facts, "Version", card.version);
  if (card.provider) fact(facts, "Provider", card.provider.organization || card.provider.url);
  fact(facts, "Input modes", (card.defaultInputModes || []).join(", "));
  fact(facts, "Output modes", (card.defaultOutputModes || []).join(", "));
  body.append(facts);

  const skills = card.skills || [];
  body.append(el("h3", { text: `Skills (${skills.length})` }));
  const list = el("ul", { class: "skills" });
  for (const skill of skills) {
    const item = el("li", { class: "skill" });
    item.append(el("strong", { text: skill.name || skill.id }), " ", el("code", { text: skill.id }));
    if (skill.description) item.append(el("p", { text: skill.description }));
    const modes = el("dl", { class: "facts" });
    if (skill.inputModes?.length) fact(modes, "Input", skill.inputModes.join(", "));
    if (skill.outputModes?.length) fact(modes, "Output", skill.outputModes.join(", "));
    if (skill.tags?.length) fact(modes, "Tags", skill.tags.join(", "));
    if (modes.childElementCount) item.append(modes);
    if (skill.examples?.length) {
      const examples = el("div", { class: "examples" });
      examples.append(el("span", { class: "muted small", text: "Examples: " }));
      for (const example of skill.examples) {
        examples.append(el("button", {
          type: "button", class: "chip", text: example,
          "aria-label": `Use example: ${example}`, onclick: () => onExample(example, skill),
        }));
      }
      item.append(examples);
    }
    list.append(item);
  }
  body.append(list);

  body.append(el("h3", { text: "Capabilities" }));
  const caps = el("ul", { class: "inline-list" });
  for (const [key, value] of Object.entries(card.capabilities || {})) {
    if (typeof value === "boolean") caps.append(el("li", { class: value ? "yes" : "no", text: `${key}: ${value ? "yes" : "no"}` }));
    else if (Array.isArray(value)) caps.append(el("li", { text: `${key}: ${value.length}` }));
  }
  body.append(caps);

  body.append(el("h3", { text: "Interfaces" }));
  const ifaces = el("ul", { class: "interfaces" });
  for (const iface of interfacesOf(card)) {
    ifaces.append(el("li", {}, el("code", { text: iface.url }), ` ${iface.protocolBinding} ${iface.protocolVersion}`));
  }
  body.append(ifaces);

  const schemes = Object.entries(card.securitySchemes || {});
  if (schemes.length) {
    body.append(el("h3", { text: "Security" }));
    const sec = el("ul", { class: "security" });
    for (const [name, scheme] of schemes) sec.append(el("li", {}, el("code", { text: name }), ` ${describeScheme(scheme)}`));
    body.append(sec);
  }
  body.append(el("details", {}, el("summary", { text: "Raw card (JSON)" }), json(card)));
  return body;
}

function fact(dl, name, value) {
  if (!value) return;
  dl.append(el("dt", { text: name }), el("dd", { text: String(value) }));
}

/** The card's interfaces as 1.0 entries, from a 1.0 card or a 0.3 one. */
export function interfacesOf(card) {
  if (Array.isArray(card.supportedInterfaces) && card.supportedInterfaces.length) {
    return card.supportedInterfaces.map((i) => ({ ...i, protocolVersion: shortVersion(i.protocolVersion) }));
  }
  const version = shortVersion(card.protocolVersion || "0.3");
  const out = [];
  if (card.url) out.push({ url: card.url, protocolBinding: card.preferredTransport || "JSONRPC", protocolVersion: version });
  for (const extra of card.additionalInterfaces || []) {
    out.push({ url: extra.url, protocolBinding: extra.transport, protocolVersion: version });
  }
  return out;
}

function shortVersion(version) {
  const [major, minor] = String(version || "").split(".");
  return `${major || "0"}.${minor || "0"}`;
}

/** What credential a scheme asks for: {kind: "bearer"} or {kind: "header"|"query", name}. */
export function credentialOf(scheme) {
  const http = scheme.httpAuthSecurityScheme || (scheme.type === "http" ? scheme : null);
  if (http && /^bearer$/i.test(http.scheme || "")) return { kind: "bearer" };
  const key = scheme.apiKeySecurityScheme || (scheme.type === "apiKey" ? scheme : null);
  if (key) {
    const where = (key.location || key.in || "header").toLowerCase();
    return { kind: where === "query" ? "query" : where === "cookie" ? "cookie" : "header", name: key.name };
  }
  if (scheme.oauth2SecurityScheme || scheme.openIdConnectSecurityScheme || ["oauth2", "openIdConnect"].includes(scheme.type)) {
    return { kind: "bearer" }; // an access token obtained elsewhere
  }
  return null;
}

function describeScheme(scheme) {
  const cred = credentialOf(scheme);
  if (!cred) return "(a scheme this page cannot fill in)";
  if (cred.kind === "bearer") return "bearer token (Authorization header)";
  return `API key in ${cred.kind} ${cred.name || ""}`.trim();
}

/** The parts of a message or artifact. */
export function renderParts(parts) {
  const box = el("div", { class: "parts" });
  for (const part of parts || []) box.append(renderPart(part));
  return box;
}

export function renderPart(part) {
  if (part.text !== undefined) {
    const type = (part.mediaType || "text/markdown").toLowerCase();
    if (type === "text/plain" || type.startsWith("application/")) return el("pre", { class: "text", text: part.text });
    const div = el("div", { class: "markdown" });
    div.append(renderMarkdown(part.text));
    return div;
  }
  if (part.data !== undefined) {
    return el("figure", { class: "data" }, el("figcaption", { class: "muted small", text: "data" }), json(part.data));
  }
  return renderFile(part);
}

function renderFile(part) {
  const name = part.filename || "file";
  const type = part.mediaType || "application/octet-stream";
  const fig = el("figure", { class: "file" });
  let href;
  if (part.raw !== undefined) {
    try {
      const bytes = Uint8Array.from(atob(part.raw), (c) => c.charCodeAt(0));
      href = URL.createObjectURL(new Blob([bytes], { type }));
    } catch {
      return el("p", { class: "error", text: `${name}: the file's bytes are not valid base64` });
    }
    if (/^image\/(png|jpeg|gif|webp|avif|bmp)$/i.test(type)) fig.append(el("img", { src: href, alt: name }));
  } else if (part.url && /^https?:/i.test(part.url)) {
    href = part.url;
  }
  const caption = el("figcaption", {}, `${name} (${type}) `);
  if (href) caption.append(el("a", { href, download: name, rel: "noopener noreferrer", text: "Download" }));
  fig.append(caption);
  return fig;
}

/** A short line for a task in the list. */
export function stateLabel(state) {
  return String(state || "").replace(/^TASK_STATE_/, "").toLowerCase().replace(/_/g, "-");
}

export function textOf(message) {
  return (message?.parts || []).map((p) => p.text ?? (p.data !== undefined ? JSON.stringify(p.data) : p.filename || "")).join(" ").trim();
}
