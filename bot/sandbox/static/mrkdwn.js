// Renders Slack mrkdwn and plain_text as DOM nodes. Never uses innerHTML: every piece of
// text becomes a text node, so a branch named "<img onerror=…>" is shown, not run.

const EMOJI = {
  warning: "⚠️", hourglass_flowing_sand: "⏳", hourglass: "⌛", white_check_mark: "✅",
  heavy_check_mark: "✔️", x: "❌", no_entry: "⛔", no_entry_sign: "🚫", lock: "🔒",
  bell: "🔔", tada: "🎉", information_source: "ℹ️", moneybag: "💰", package: "📦",
  memo: "📝", eyes: "👀", "+1": "👍", thumbsup: "👍", wave: "👋", rotating_light: "🚨",
  clock3: "🕒", receipt: "🧾", store: "🏬", chart_with_upwards_trend: "📈", question: "❓",
  arrow_right: "➡️", inbox_tray: "📥", speech_balloon: "💬", robot_face: "🤖",
  ballot_box_with_check: "☑️", leftwards_arrow_with_hook: "↩️",
};

// The emoji the app itself uses are drawn as small badges, so they read the same on every
// machine, with or without a colour-emoji font.
const BADGES = {
  white_check_mark: ["ok", "✓"], heavy_check_mark: ["ok", "✓"], x: ["bad", "✕"],
  no_entry_sign: ["stop", "–"], no_entry: ["stop", "–"], warning: ["warn", "!"],
  hourglass_flowing_sand: ["wait", "⌛"], hourglass: ["wait", "⌛"],
  // The first of two approvals, and a card withdrawn by its asker.
  ballot_box_with_check: ["part", "✓"], leftwards_arrow_with_hook: ["undo", "↩"],
};

export function emoji(name) {
  return EMOJI[name] || null;
}

function badge(name) {
  const found = BADGES[name];
  if (!found) return null;
  const span = document.createElement("span");
  span.className = `emoji-badge ${found[0]}`;
  span.title = `:${name}:`;
  span.setAttribute("role", "img");
  span.setAttribute("aria-label", name.replace(/_/g, " "));
  span.textContent = found[1];
  return span;
}

function decode(text) {
  // Slack escapes exactly these three in mrkdwn; decoding them yields plain text for a text node.
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

// The node an emoji named `name` is drawn as (a badge, or its glyph), or null when unknown.
export function emojiNode(name) {
  const drawn = badge(name);
  if (drawn) return drawn;
  const glyph = emoji(name);
  if (!glyph) return null;
  const span = document.createElement("span");
  span.className = "emoji";
  span.title = `:${name}:`;
  span.textContent = glyph;
  return span;
}

function withEmoji(text, into) {
  const parts = text.split(/(:[a-z0-9_+\-]+:)/g);
  for (const part of parts) {
    if (!part) continue;
    const named = /^:[a-z0-9_+\-]+:$/.test(part) ? part.slice(1, -1) : null;
    const drawn = named ? emojiNode(named) : null;
    if (drawn) into.appendChild(drawn);
    else appendLines(part, into);
  }
}

export function appendLines(text, into) {
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (i > 0) into.appendChild(document.createElement("br"));
    if (line) into.appendChild(document.createTextNode(line));
  });
}

export function plain(text, into, { emojis = true } = {}) {
  const target = into || document.createDocumentFragment();
  if (emojis) withEmoji(String(text ?? ""), target);
  else appendLines(String(text ?? ""), target);
  return target;
}

const DAY = 86400000;

export function formatDate(seconds, format) {
  const at = new Date(seconds * 1000);
  const today = new Date();
  today.setHours(0, 0, 0, 0);
  const that = new Date(at);
  that.setHours(0, 0, 0, 0);
  const days = Math.round((that - today) / DAY);
  const shortDate = at.toLocaleDateString(undefined, { month: "short", day: "numeric" });
  const pretty = days === 0 ? "today" : days === 1 ? "tomorrow" : days === -1 ? "yesterday" : shortDate;
  const tokens = {
    "{date_short_pretty}": pretty,
    "{date_pretty}": pretty,
    "{date_short}": shortDate,
    "{date}": at.toLocaleDateString(undefined, { month: "long", day: "numeric", year: "numeric" }),
    "{time}": at.toLocaleTimeString(undefined, { hour: "numeric", minute: "2-digit" }),
    "{date_num}": at.toISOString().slice(0, 10),
  };
  return format.replace(/\{[a-z_]+\}/g, (token) => tokens[token] ?? token);
}

// One Slack angle-bracket token: <@U123>, <#C123|name>, <!here>, <!date^…|…>, <url|label>.
function token(inner, ctx) {
  const [target, label] = splitOnce(inner, "|");
  if (target.startsWith("@")) {
    const person = ctx.people?.[target.slice(1)];
    return pill("mention", "@" + (person ? person.name : label || target.slice(1)));
  }
  if (target.startsWith("#")) {
    const channel = ctx.channels?.[target.slice(1)];
    return pill("mention", "#" + (label || (channel ? channel.name : target.slice(1))));
  }
  if (target.startsWith("!date^")) {
    const [, seconds, format] = target.split("^");
    const span = document.createElement("time");
    span.className = "date";
    span.textContent = Number(seconds) ? formatDate(Number(seconds), format || "{date}") : decode(label || "");
    if (label) span.title = decode(label);
    return span;
  }
  if (target.startsWith("!")) {
    return pill("broadcast", "@" + decode(label || target.slice(1).split("^")[0]));
  }
  const url = decode(target);
  if (/^(https?:|mailto:)/i.test(url)) {
    const a = document.createElement("a");
    a.href = url;
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    a.textContent = decode(label || url);
    return a;
  }
  return document.createTextNode(decode("<" + inner + ">"));
}

function splitOnce(text, sep) {
  const i = text.indexOf(sep);
  return i < 0 ? [text, ""] : [text.slice(0, i), text.slice(i + 1)];
}

export function pill(kind, text) {
  const span = document.createElement("span");
  span.className = kind;
  span.textContent = text;
  return span;
}

const STYLES = [
  { re: /```([\s\S]+?)```/, tag: "pre", raw: true },
  { re: /`([^`\n]+)`/, tag: "code", raw: true },
  { re: /(?<![\w*])\*(?!\s)([^*\n]+?)\*(?![\w*])/, tag: "b" },
  { re: /(?<![\w_])_(?!\s)([^_\n]+?)_(?![\w_])/, tag: "i" },
  { re: /(?<![\w~])~(?!\s)([^~\n]+?)~(?![\w~])/, tag: "s" },
  { re: /<([^<>\n]+)>/, tag: "token" },
];

function inline(text, into, ctx) {
  let rest = text;
  while (rest) {
    let best = null;
    for (const style of STYLES) {
      const m = style.re.exec(rest);
      if (m && (best === null || m.index < best.m.index)) best = { m, style };
    }
    if (!best) {
      withEmoji(decode(rest), into);
      return;
    }
    const { m, style } = best;
    if (m.index > 0) withEmoji(decode(rest.slice(0, m.index)), into);
    if (style.tag === "token") {
      into.appendChild(token(m[1], ctx));
    } else {
      const el = document.createElement(style.tag);
      if (style.raw) el.textContent = decode(m[1]);
      else inline(m[1], el, ctx);
      into.appendChild(el);
    }
    rest = rest.slice(m.index + m[0].length);
  }
}

export function mrkdwn(text, ctx = {}, into = null) {
  const target = into || document.createDocumentFragment();
  const lines = String(text ?? "").split("\n");
  let quote = null;
  lines.forEach((line, i) => {
    if (line.startsWith("&gt; ") || line === "&gt;") {
      if (!quote) {
        quote = document.createElement("blockquote");
        target.appendChild(quote);
      } else {
        quote.appendChild(document.createElement("br"));
      }
      inline(line.replace(/^&gt; ?/, ""), quote, ctx);
      return;
    }
    quote = null;
    if (i > 0 && !(target.lastChild && target.lastChild.nodeName === "BLOCKQUOTE")) {
      target.appendChild(document.createElement("br"));
    }
    inline(line, target, ctx);
  });
  return target;
}
