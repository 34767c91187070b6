// A tiny Markdown renderer that builds DOM nodes (never HTML strings), so agent text
// cannot inject markup: headings, paragraphs, lists, block quotes, fenced code,
// inline code, bold, italic and links (http, https and mailto only).

const SAFE_LINK = /^(https?:|mailto:)/i;

/** Render `source` into a DocumentFragment. */
export function renderMarkdown(source) {
  const out = document.createDocumentFragment();
  const lines = String(source).replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^\s*$/.test(line)) {
      i++;
      continue;
    }
    const fence = line.match(/^\s*(```|~~~)\s*([\w+-]*)/);
    if (fence) {
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence[1])) body.push(lines[i++]);
      i++;
      const pre = el("pre");
      const code = el("code", body.join("\n"));
      if (fence[2]) code.dataset.lang = fence[2];
      pre.append(code);
      out.append(pre);
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    if (heading) {
      // Agent headings sit inside the page's own sections: start them at h3.
      const level = Math.min(6, heading[1].length + 2);
      out.append(inline(el(`h${level}`), heading[2].replace(/\s#+\s*$/, "")));
      i++;
      continue;
    }
    if (/^\s*>/.test(line)) {
      const body = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) body.push(lines[i++].replace(/^\s*>\s?/, ""));
      const quote = el("blockquote");
      quote.append(renderMarkdown(body.join("\n")));
      out.append(quote);
      continue;
    }
    const item = listItem(line);
    if (item) {
      const list = el(item.ordered ? "ol" : "ul");
      while (i < lines.length) {
        const next = listItem(lines[i]);
        if (!next || next.ordered !== item.ordered) break;
        let text = next.text;
        i++;
        while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !listItem(lines[i])) {
          text += ` ${lines[i++].trim()}`;
        }
        list.append(inline(el("li"), text));
      }
      out.append(list);
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      out.append(el("hr"));
      i++;
      continue;
    }
    const para = [];
    while (
      i < lines.length && !/^\s*$/.test(lines[i]) && !listItem(lines[i]) &&
      !/^(#{1,6})\s|^\s*(```|~~~|>)/.test(lines[i])
    ) {
      para.push(lines[i++].trim());
    }
    out.append(inline(el("p"), para.join("\n")));
  }
  return out;
}

function listItem(line) {
  const m = line.match(/^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/);
  return m ? { ordered: /\d/.test(m[1]), text: m[2] } : null;
}

function el(tag, text) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  return node;
}

const INLINE = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([\s\S]+?)\*\*|__([\s\S]+?)__|\*([^*\s][^*]*?)\*|_([^_\s][^_]*?)_|\[([^\]]+)\]\(([^)\s]+)\)|\n/;

/** Append `text` with inline markup to `node`; returns `node`. */
function inline(node, text) {
  let rest = text;
  while (rest) {
    const m = rest.match(INLINE);
    if (!m) {
      node.append(rest);
      break;
    }
    if (m.index) node.append(rest.slice(0, m.index));
    if (m[1]) node.append(el("code", m[2]));
    else if (m[3] || m[4]) node.append(inline(el("strong"), m[3] || m[4]));
    else if (m[5] || m[6]) node.append(inline(el("em"), m[5] || m[6]));
    else if (m[7]) node.append(link(m[7], m[8]));
    else node.append(el("br"));
    rest = rest.slice(m.index + m[0].length);
  }
  return node;
}

function link(text, href) {
  if (!SAFE_LINK.test(href)) return document.createTextNode(`${text} (${href})`);
  const a = inline(el("a"), text);
  a.href = href;
  a.rel = "noopener noreferrer";
  a.target = "_blank";
  return a;
}
