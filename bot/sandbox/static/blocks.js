// Renders Block Kit as DOM: header, section (text, fields, accessory), context, divider,
// actions with buttons (primary / danger, confirm dialogs), context_actions with feedback
// buttons (thumbs up / down), image, input, rich_text. Text goes through mrkdwn(), plain() or
// richText(), which only ever create text nodes.

import { mrkdwn, plain } from "./mrkdwn.js";
import { richText } from "./rich.js";

function el(tag, className, parent) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (parent) parent.appendChild(node);
  return node;
}

export function text(obj, ctx, into) {
  if (!obj) return into;
  if (obj.type === "mrkdwn") return mrkdwn(obj.text, ctx, into);
  return plain(obj.text, into, { emojis: obj.emoji !== false });
}

function button(element, block, ctx) {
  const node = el("button", "bk-button");
  node.type = "button";
  if (element.style === "primary" || element.style === "danger") node.classList.add(element.style);
  node.dataset.actionId = element.action_id || "";
  node.dataset.blockId = block.block_id || "";
  text(element.text, ctx, node);
  if (element.url) {
    node.addEventListener("click", () => window.open(element.url, "_blank", "noopener"));
    return node;
  }
  node.addEventListener("click", async () => {
    if (element.confirm && !(await ctx.confirm(element.confirm, element.style))) return;
    node.disabled = true;
    node.classList.add("busy");
    try {
      await ctx.press(element, block);
    } finally {
      node.disabled = false;
      node.classList.remove("busy");
    }
  });
  return node;
}

// Slack draws a feedback pair as two thumbs; the pair's texts are what a screen reader and
// a pointer's tooltip say. A press sends the pressed one's value; the thumb given stays shown.
const THUMBS = { positive_button: "👍", negative_button: "👎" };

function feedback(item, block, ctx) {
  const pair = el("span", "bk-feedback");
  pair.setAttribute("role", "group");
  const thumbs = [];
  for (const [side, face] of Object.entries(THUMBS)) {
    const spec = item[side];
    if (!spec) continue;
    const node = el("button", `bk-thumb ${side === "positive_button" ? "up" : "down"}`, pair);
    node.type = "button";
    node.dataset.actionId = item.action_id || "";
    node.dataset.value = spec.value || "";
    const label = spec.accessibility_label || spec.text?.text || face;
    node.setAttribute("aria-label", label);
    node.title = spec.text?.text || label;
    el("span", "emoji", node).textContent = face;
    thumbs.push(node);
    node.addEventListener("click", async () => {
      node.disabled = true;
      // Given before the press is sent: the bot's private thanks can redraw the message while
      // the press is on its way, and thumbs redrawn then showed none given.
      const before = ctx.chosen?.(block, item);
      ctx.choose?.(block, item, spec.value);
      for (const thumb of thumbs) thumb.setAttribute("aria-pressed", String(thumb === node));
      try {
        if (!(await ctx.press(item, block, spec.value))) {
          ctx.choose?.(block, item, before);
          for (const thumb of thumbs) thumb.setAttribute("aria-pressed", String(thumb.dataset.value === before));
        }
      } finally {
        node.disabled = false;
      }
    });
  }
  const chosen = ctx.chosen?.(block, item);
  for (const thumb of thumbs) thumb.setAttribute("aria-pressed", String(chosen === thumb.dataset.value));
  return pair;
}

function element(item, block, ctx) {
  switch (item.type) {
    case "button":
    case "icon_button":
      return button(item, block, ctx);
    case "feedback_buttons":
      return feedback(item, block, ctx);
    case "mrkdwn":
    case "plain_text": {
      const span = el("span", "bk-text");
      text(item, ctx, span);
      return span;
    }
    case "image": {
      const span = el("span", "bk-image-alt");
      span.textContent = item.alt_text || "image";
      return span;
    }
    default: {
      const span = el("span", "bk-unknown");
      span.textContent = `[${item.type}]`;
      return span;
    }
  }
}

function input(block, ctx) {
  const wrap = el("div", "bk-input");
  const label = el("label", "bk-label", wrap);
  text(block.label, ctx, label);
  if (block.optional && !/optional/i.test(block.label?.text || "")) el("span", "bk-optional", label).textContent = " (optional)";
  const spec = block.element || {};
  const field = spec.multiline ? el("textarea", "bk-field", wrap) : el("input", "bk-field", wrap);
  if (!spec.multiline) field.type = "text";
  const id = `in-${block.block_id}-${spec.action_id}`;
  field.id = id;
  label.htmlFor = id;
  if (spec.placeholder) field.placeholder = spec.placeholder.text || "";
  if (spec.max_length) field.maxLength = spec.max_length;
  if (spec.initial_value) field.value = spec.initial_value;
  field.dataset.blockId = block.block_id || "";
  field.dataset.actionId = spec.action_id || "";
  field.dataset.kind = spec.type || "plain_text_input";
  if (block.hint) text(block.hint, ctx, el("div", "bk-hint", wrap));
  el("div", "bk-error", wrap).dataset.errorFor = block.block_id || "";
  return wrap;
}

export function renderBlock(block, ctx) {
  switch (block.type) {
    case "header": {
      const h = el("div", "bk-header");
      text(block.text, ctx, h);
      return h;
    }
    case "section": {
      const s = el("div", "bk-section");
      const body = el("div", "bk-section-body", s);
      if (block.text) text(block.text, ctx, el("div", "bk-section-text", body));
      if (block.fields && block.fields.length) {
        const grid = el("div", "bk-fields", body);
        for (const field of block.fields) text(field, ctx, el("div", "bk-field-cell", grid));
      }
      if (block.accessory) s.appendChild(element(block.accessory, block, ctx)).classList.add("bk-accessory");
      return s;
    }
    case "context": {
      const c = el("div", "bk-context");
      for (const item of block.elements || []) c.appendChild(element(item, block, ctx));
      return c;
    }
    case "divider":
      return el("hr", "bk-divider");
    case "context_actions": {
      const a = el("div", "bk-context-actions");
      for (const item of block.elements || []) a.appendChild(element(item, block, ctx));
      return a;
    }
    case "actions": {
      const a = el("div", "bk-actions");
      for (const item of block.elements || []) a.appendChild(element(item, block, ctx));
      return a;
    }
    case "image": {
      const figure = el("div", "bk-image-alt");
      figure.textContent = block.alt_text || "image";
      return figure;
    }
    case "input":
      return input(block, ctx);
    case "rich_text":
      return richText(block, ctx);
    default: {
      const unknown = el("div", "bk-unknown");
      unknown.textContent = `Unsupported block: ${block.type}`;
      return unknown;
    }
  }
}

export function renderBlocks(blocks, ctx) {
  const wrap = el("div", "bk");
  for (const block of blocks || []) {
    const node = renderBlock(block, ctx);
    if (block.block_id) node.dataset.blockId = block.block_id;
    node.dataset.type = block.type;
    wrap.appendChild(node);
  }
  return wrap;
}

// Collects a modal's inputs into Slack's state.values shape.
export function stateValues(root) {
  const values = {};
  for (const field of root.querySelectorAll(".bk-field")) {
    const block = (values[field.dataset.blockId] ||= {});
    block[field.dataset.actionId] = { type: field.dataset.kind, value: field.value || null };
  }
  return values;
}
