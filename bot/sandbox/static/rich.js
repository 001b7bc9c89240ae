// Renders Block Kit rich_text as DOM, as Slack does: text elements exactly as typed (no mrkdwn,
// no :emoji: codes, no <tokens>), with their bold / italic / strike / code styles; emoji, user,
// channel, usergroup, broadcast, date and link elements drawn as what they stand for; sections,
// lists, quotes and preformatted text. Only ever creates text nodes, never HTML.

import { appendLines, emojiNode, formatDate, pill } from "./mrkdwn.js";

const STYLE_TAGS = [["code", "code"], ["strike", "s"], ["italic", "i"], ["underline", "u"], ["bold", "b"]];

function styled(node, style) {
  let out = node;
  for (const [key, tag] of STYLE_TAGS) {
    if (!style || !style[key]) continue;
    const wrap = document.createElement(tag);
    wrap.appendChild(out);
    out = wrap;
  }
  return out;
}

function literal(text) {
  const frag = document.createDocumentFragment();
  appendLines(String(text ?? ""), frag);
  return frag;
}

function link(item) {
  const url = String(item.url || "");
  if (!/^(https?:|mailto:)/i.test(url)) return literal(item.text || url);
  const a = document.createElement("a");
  a.href = url;
  a.target = "_blank";
  a.rel = "noopener noreferrer";
  a.textContent = item.text || url;
  return a;
}

function date(item) {
  const at = document.createElement("time");
  at.className = "date";
  const seconds = Number(item.timestamp);
  at.textContent = seconds ? formatDate(seconds, item.format || "{date}") : item.fallback || "";
  if (item.fallback) at.title = item.fallback;
  return at;
}

function inline(item, ctx) {
  switch (item.type) {
    case "text":
      return literal(item.text);
    case "link":
      return link(item);
    case "emoji":
      return emojiNode(item.name) || literal(item.unicode ? String.fromCodePoint(...item.unicode.split("-").map((h) => parseInt(h, 16))) : `:${item.name}:`);
    case "user": {
      const person = ctx.people?.[item.user_id];
      return pill("mention", "@" + (person ? person.name : item.user_id));
    }
    case "channel": {
      const channel = ctx.channels?.[item.channel_id];
      return pill("mention", "#" + (channel ? channel.name : item.channel_id));
    }
    case "usergroup":
      return pill("mention", "@" + item.usergroup_id);
    case "broadcast":
      return pill("broadcast", "@" + (item.range || "here"));
    case "date":
      return date(item);
    default: {
      const span = document.createElement("span");
      span.className = "bk-unknown";
      span.textContent = `[${item.type}]`;
      return span;
    }
  }
}

function section(part, ctx, tag = "div") {
  const node = document.createElement(tag);
  node.className = "bk-rich-section";
  for (const item of part.elements || []) node.appendChild(styled(inline(item, ctx), item.style));
  return node;
}

function list(part, ctx) {
  const node = document.createElement(part.style === "ordered" ? "ol" : "ul");
  node.className = "bk-rich-list";
  if (part.indent) node.style.marginLeft = `${Number(part.indent) * 16}px`;
  if (part.offset) node.start = Number(part.offset) + 1;
  for (const item of part.elements || []) node.appendChild(section(item, ctx, "li"));
  return node;
}

function part(item, ctx) {
  switch (item.type) {
    case "rich_text_section":
      return section(item, ctx);
    case "rich_text_list":
      return list(item, ctx);
    case "rich_text_quote":
      return section(item, ctx, "blockquote");
    case "rich_text_preformatted": {
      const pre = document.createElement("pre");
      for (const each of item.elements || []) pre.appendChild(literal(each.text ?? each.url ?? ""));
      return pre;
    }
    default: {
      const span = document.createElement("div");
      span.className = "bk-unknown";
      span.textContent = `[${item.type}]`;
      return span;
    }
  }
}

export function richText(block, ctx) {
  const node = document.createElement("div");
  node.className = "bk-rich";
  for (const item of block.elements || []) node.appendChild(part(item, ctx));
  return node;
}
