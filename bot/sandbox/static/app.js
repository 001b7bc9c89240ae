// The sandbox's Slack client: sidebar, channel, threads, composer, App Home, modals, confirm
// dialogs, the assistant pane (assistant.js) and live updates (Server-Sent Events). Builds DOM
// nodes only; never innerHTML.

import { assistantThreads, contextChanged, keepThread, openAssistant, renderAssistant, setUpAssistant } from "./assistant.js";
import { renderBlocks, stateValues, text } from "./blocks.js";
import { mrkdwn, plain } from "./mrkdwn.js";

const $ = (sel, root = document) => root.querySelector(sel);
const S = {
  me: null, bot: "UBOT", team: null, teams: {}, people: {}, channels: {}, messages: new Map(),
  modal: null, home: null, current: null, tab: "messages", thread: null, read: {},
  feed: null, flash: new Set(), dismissConfirm: null, loads: 0,
  // assistant threads by "channel/thread_ts"; the one open in the pane; feedback given here
  assistant: new Map(), pane: null, feedback: new Map(),
};

function el(tag, className, parent, textContent) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (textContent !== undefined) node.textContent = textContent;
  if (parent) parent.appendChild(node);
  return node;
}

const key = (m) => `${m.channel}/${m.ts}`;
const tsCompare = (a, b) => {
  const [as, af] = a.split(".").map(Number);
  const [bs, bf] = b.split(".").map(Number);
  return as - bs || af - bf;
};
const tsOrder = (a, b) => tsCompare(a.ts, b.ts);

async function api(path, body) {
  const response = await fetch(path, {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ as: S.me.id, ...body }),
  });
  if (!response.ok) throw new Error(await refusal(response));
  return response.json();
}

// The sandbox refuses with {"ok": false, "error": "…"}; show the sentence, not the JSON.
async function refusal(response) {
  const body = await response.text();
  try {
    return JSON.parse(body).error || body;
  } catch {
    return body || `HTTP ${response.status}`;
  }
}

function toast(message) {
  const t = $("#toast");
  t.textContent = message;
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, 5000);
}

const ctx = () => ({ people: S.people, channels: S.channels, confirm, press: null });

// -- people -----------------------------------------------------------------------------

function avatar(user, size = "") {
  const person = S.people[user] || { name: "?", is_bot: false };
  const a = el("div", `avatar ${size}`);
  if (person.is_bot) {
    a.classList.add("bot");
    a.textContent = "✓";
    return a;
  }
  const hue = [...(user || "")].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 360, 7);
  a.style.background = `hsl(${hue} 45% 42%)`;
  a.textContent = person.name.split(" ").map((w) => w[0]).join("").slice(0, 2);
  return a;
}

function clock(ts) {
  const at = new Date(Number(ts.split(".")[0]) * 1000);
  return at.toLocaleTimeString(undefined, { hour: "numeric", minute: "2-digit" });
}

// -- messages ---------------------------------------------------------------------------

function repliesOf(parent) {
  return [...S.messages.values()]
    .filter((m) => m.channel === parent.channel && m.thread_ts === parent.ts && m.ts !== parent.ts)
    .sort(tsOrder);
}

function renderMessage(m, { inThread = false } = {}) {
  const person = S.people[m.user] || { name: m.user || "someone", is_bot: false };
  const row = el("div", "message");
  row.dataset.ts = m.ts;
  row.dataset.channel = m.channel;
  if (m.ephemeral) row.classList.add("ephemeral");
  if (S.flash.has(key(m))) row.classList.add("flash");
  row.appendChild(avatar(m.user));
  const body = el("div", "message-body", row);
  if (m.ephemeral) el("div", "only-you", body, "Only visible to you");
  if (!inThread && m.reply_broadcast && m.thread_ts) {
    const parent = S.messages.get(`${m.channel}/${m.thread_ts}`);
    const note = el("div", "broadcast-note", body, "replied to a thread: ");
    const link = el("a", "thread-link", note);
    link.href = "#";
    mrkdwn((parent?.text || "").slice(0, 80), ctx(), link);
    link.addEventListener("click", (e) => { e.preventDefault(); openThread(m.channel, m.thread_ts); });
  }
  const head = el("div", "message-head", body);
  el("span", "name", head, person.name);
  if (person.is_bot) el("span", "app-badge", head, "APP");
  el("span", "time", head, clock(m.ts));
  // Blocks replace the text, as in Slack; feedback buttons alone (a streamed answer's) do not.
  const content = (m.blocks || []).filter((b) => b.type !== "context_actions");
  if (m.text && !content.length) mrkdwn(m.text, ctx(), el("div", "message-text", body));
  if (m.blocks && m.blocks.length) {
    const c = ctx();
    c.press = (element, block, value) => pressButton(m, element, block, value);
    // Which thumb this person gave, kept across redraws (Slack shows the one pressed).
    const given = (block, element) => `${key(m)}/${block.block_id}/${element.action_id}`;
    c.chosen = (block, element) => S.feedback.get(given(block, element));
    c.choose = (block, element, value) => S.feedback.set(given(block, element), value);
    body.appendChild(renderBlocks(m.blocks, c));
  }
  if (m.reactions && m.reactions.length) {
    const bar = el("div", "reactions", body);
    for (const name of m.reactions) plain(`:${name}: 1`, el("span", "reaction", bar));
  }
  if (!inThread && !m.thread_ts) {
    const replies = repliesOf(m).filter((r) => !r.ephemeral);
    if (replies.length) {
      const bar = el("button", "reply-bar", body);
      bar.type = "button";
      const faces = el("span", "reply-faces", bar);
      for (const u of [...new Set(replies.map((r) => r.user))].slice(0, 3)) faces.appendChild(avatar(u, "tiny"));
      el("span", "reply-count", bar, `${replies.length} ${replies.length === 1 ? "reply" : "replies"}`);
      el("span", "reply-last", bar, `Last reply ${clock(replies[replies.length - 1].ts)}`);
      bar.addEventListener("click", () => openThread(m.channel, m.ts));
    }
  }
  if (m.ephemeral) {
    const dismiss = el("button", "dismiss", body, "Dismiss");
    dismiss.type = "button";
    dismiss.addEventListener("click", () => { S.messages.delete(key(m)); render(); });
  }
  return row;
}

// ``value`` names the feedback button pressed (a pair shares one action_id).
async function pressButton(m, element, block, value) {
  try {
    const answer = await api("/ui/press", {
      channel: m ? m.channel : null, ts: m ? m.ts : null,
      action_id: element.action_id, block_id: block.block_id, value: value ?? null,
    });
    if (!answer.ok) toast(`countersign didn't answer that press (HTTP ${answer.status ?? "—"}).`);
    return answer.ok;
  } catch (failed) {
    toast(String(failed.message || failed));
    return false;
  }
}

function stickToBottom(list, fill) {
  const near = list.scrollHeight - list.scrollTop - list.clientHeight < 80;
  fill();
  if (near || list.dataset.fresh !== "no") list.scrollTop = list.scrollHeight;
  list.dataset.fresh = "no";
}

// -- unread -------------------------------------------------------------------------------
// What each person has read is kept per person in this browser, so switching "Acting as" to a
// manager shows the card copies that reached her DM meanwhile as unread, as Slack would.

const readKey = (person) => `countersign.read.${person}`;

function loadRead(person) {
  try {
    return JSON.parse(localStorage.getItem(readKey(person))) || {};
  } catch {
    return {};
  }
}

// A channel's list shows top-level messages and replies sent to the channel too.
const listed = (m) => !m.thread_ts || m.thread_ts === m.ts || m.reply_broadcast;

function markRead(channel) {
  const last = [...S.messages.values()].filter((m) => m.channel === channel && listed(m)).sort(tsOrder).pop();
  if (!last || (S.read[channel] && tsCompare(last.ts, S.read[channel]) <= 0)) return;
  S.read[channel] = last.ts;
  try {
    localStorage.setItem(readKey(S.me.id), JSON.stringify(S.read));
  } catch {
    // Storage refused (private mode): unread marks then last as long as the page.
  }
}

function unreadIn(channel) {
  const read = S.read[channel];
  return [...S.messages.values()].filter((m) => m.channel === channel && listed(m)
    && m.user !== S.me.id && (!read || tsCompare(m.ts, read) > 0)).length;
}

// -- panes --------------------------------------------------------------------------------

function renderSidebar() {
  const team = S.team;
  $("#team-name").textContent = team.name;
  $("#me-line").textContent = `${S.me.name} · ${S.me.title}`;
  const lists = { channel: $("#channel-list"), im: $("#dm-list") };
  lists.channel.replaceChildren();
  lists.im.replaceChildren();
  let elsewhere = 0;
  for (const channel of Object.values(S.channels)) {
    const item = el("button", "side-item", lists[channel.kind]);
    item.type = "button";
    item.dataset.channel = channel.id;
    if (channel.id === S.current) item.classList.add("active");
    if (channel.kind === "im") {
      item.appendChild(avatar(S.bot, "tiny"));
      el("span", "side-label", item, dmName(channel));
      el("span", "app-badge small", item, "APP");
    } else {
      el("span", "hash", item, "#");
      el("span", "side-label", item, channel.name);
    }
    const unread = channel.id === S.current ? 0 : unreadIn(channel.id);
    if (unread) {
      const badge = el("span", "unread", item, String(unread));
      badge.setAttribute("aria-label", `${unread} unread`);
      elsewhere += unread;
    }
    item.addEventListener("click", () => selectChannel(channel.id));
  }
  // On a phone the sidebar is folded away: the menu button carries the count instead.
  const menu = $("#menu");
  if (elsewhere) menu.dataset.unread = String(elsewhere);
  else delete menu.dataset.unread;
  menu.setAttribute("aria-label", elsewhere ? `Channels and direct messages, ${elsewhere} unread` : "Channels and direct messages");
}

// The app's DM in another workspace (a Slack Connect installation) says which one it is.
function dmName(channel) {
  if (channel.team === S.team.id) return "countersign";
  const team = S.teams[channel.team];
  return `countersign · ${team ? team.name : channel.team}`;
}

function renderHeader() {
  const channel = S.channels[S.current];
  const title = $("#pane-title");
  title.replaceChildren();
  if (channel.kind === "im") {
    title.appendChild(avatar(S.bot, "tiny"));
    el("span", "", title, dmName(channel));
  } else {
    el("span", "hash", title, "#");
    el("span", "", title, channel.name);
  }
  const tabs = $("#tabs");
  tabs.hidden = channel.kind !== "im";
  for (const tab of tabs.querySelectorAll("button")) tab.classList.toggle("active", tab.dataset.tab === S.tab);
  const members = Object.values(S.people).filter((p) => p.team === S.team.id && !p.is_bot).length;
  $("#pane-sub").textContent = channel.kind === "im" ? `Direct messages between the app and ${S.me.name}, seen by nobody else` : `${members} members · approvals and questions for the shop`;
}

function renderChannel() {
  const list = $("#messages");
  const onHome = S.channels[S.current].kind === "im" && S.tab === "home";
  list.hidden = onHome;
  $("#home").hidden = !onHome;
  $("#composer").hidden = onHome;
  if (onHome) return renderHome();
  const shown = [...S.messages.values()].filter((m) => m.channel === S.current && listed(m)).sort(tsOrder);
  markRead(S.current);
  stickToBottom(list, () => {
    list.replaceChildren();
    if (!shown.length) {
      const empty = el("div", "empty", list);
      const channel = S.channels[S.current];
      el("div", "empty-title", empty, channel.kind === "im" ? "This is your DM with countersign" : `This is the very beginning of #${channel.name}`);
      mrkdwn(channel.kind === "im"
        ? "Ask anything: _pending requests_, _show request 3_, _approve request 3_, _sales this week_. Cards that wait for you on someone else's request arrive here too."
        : "Mention *@countersign* to ask: _@countersign approve request 1_. Cards appear in a thread.", ctx(), el("div", "empty-text", empty));
    }
    for (const m of shown) list.appendChild(renderMessage(m));
  });
}

function renderHome() {
  const home = $("#home");
  home.replaceChildren();
  if (!S.home) {
    el("div", "empty-text", home, "Opening the Home tab…");
    return;
  }
  const c = ctx();
  c.press = (element, block) => pressButton(null, element, block);
  home.appendChild(renderBlocks(S.home.blocks, c));
}

function renderThread() {
  const pane = $("#thread");
  document.body.classList.toggle("thread-open", !!S.thread);
  pane.hidden = !S.thread;
  if (!S.thread) return;
  const parent = S.messages.get(`${S.thread.channel}/${S.thread.ts}`);
  const channel = S.channels[S.thread.channel];
  $("#thread-where").textContent = channel ? (channel.kind === "im" ? "countersign" : `#${channel.name}`) : "";
  const list = $("#thread-messages");
  stickToBottom(list, () => {
    list.replaceChildren();
    if (parent) list.appendChild(renderMessage(parent, { inThread: true }));
    const replies = parent ? repliesOf(parent) : [];
    if (replies.length) el("div", "thread-divider", list, `${replies.length} ${replies.length === 1 ? "reply" : "replies"}`);
    for (const m of replies) list.appendChild(renderMessage(m, { inThread: true }));
  });
}

function renderModal() {
  const root = $("#modal-root");
  root.replaceChildren();
  root.hidden = !S.modal;
  if (!S.modal) return;
  const view = S.modal;
  root.onclick = (e) => { if (e.target === root) closeModal(); };
  const dialog = el("div", "dialog modal", root);
  dialog.setAttribute("role", "dialog");
  dialog.setAttribute("aria-modal", "true");
  const head = el("div", "dialog-head", dialog);
  text(view.title, ctx(), el("div", "dialog-title", head));
  const x = el("button", "dialog-x", head, "✕");
  x.type = "button";
  x.setAttribute("aria-label", "Close");
  x.addEventListener("click", closeModal);
  const body = el("div", "dialog-body", dialog);
  body.appendChild(renderBlocks(view.blocks, ctx()));
  const foot = el("div", "dialog-foot", dialog);
  const cancel = el("button", "bk-button", foot);
  cancel.type = "button";
  text(view.close || { type: "plain_text", text: "Cancel" }, ctx(), cancel);
  cancel.addEventListener("click", closeModal);
  if (view.submit) {
    const submit = el("button", "bk-button primary", foot);
    submit.type = "button";
    submit.id = "modal-submit";
    text(view.submit, ctx(), submit);
    submit.addEventListener("click", async () => {
      submit.disabled = true;
      try {
        const answer = await api("/ui/submit", { values: stateValues(body) });
        for (const [block, message] of Object.entries(answer.errors || {})) {
          const slot = body.querySelector(`[data-error-for="${CSS.escape(block)}"]`);
          if (slot) slot.textContent = message;
        }
        if (!answer.ok) toast(`countersign didn't accept that (HTTP ${answer.status ?? "—"}).`);
      } finally {
        submit.disabled = false;
      }
    });
  }
  const first = body.querySelector(".bk-field");
  if (first) first.focus();
}

function closeModal() {
  api("/ui/close", {}).catch((failed) => toast(String(failed.message || failed)));
}

function confirm(spec, style) {
  return new Promise((resolve) => {
    const root = $("#confirm-root");
    root.replaceChildren();
    root.hidden = false;
    const dialog = el("div", "dialog confirm", root);
    dialog.setAttribute("role", "alertdialog");
    text(spec.title || { type: "plain_text", text: "Are you sure?" }, ctx(), el("div", "dialog-title", el("div", "dialog-head", dialog)));
    text(spec.text, ctx(), el("div", "dialog-body confirm-text", dialog));
    const foot = el("div", "dialog-foot", dialog);
    const done = (answer) => {
      root.hidden = true;
      root.replaceChildren();
      root.onclick = null;
      S.dismissConfirm = null;
      resolve(answer);
    };
    // Escape and a click on the dimmed backdrop mean "not now", as in Slack.
    S.dismissConfirm = () => done(false);
    root.onclick = (e) => { if (e.target === root) done(false); };
    const deny = el("button", "bk-button", foot);
    deny.type = "button";
    text(spec.deny || { type: "plain_text", text: "Cancel" }, ctx(), deny);
    deny.addEventListener("click", () => done(false));
    const ok = el("button", `bk-button ${spec.style === "danger" || style === "danger" ? "danger" : "primary"}`, foot);
    ok.type = "button";
    ok.id = "confirm-ok";
    text(spec.confirm || { type: "plain_text", text: "Yes" }, ctx(), ok);
    ok.addEventListener("click", () => done(true));
    ok.focus();
  });
}

function render() {
  renderSidebar();
  renderHeader();
  renderChannel();
  renderThread();
  renderAssistant();
  renderModal();
  S.flash.clear();
}

// -- navigation -------------------------------------------------------------------------

function selectChannel(id) {
  S.current = id;
  S.tab = "messages";
  S.thread = null;
  // The assistant's split view stays open beside the channels; on a phone it covers them.
  if (NARROW.matches) S.pane = null;
  else contextChanged(S.channels[id]);
  document.body.classList.remove("sidebar-open");
  $("#messages").dataset.fresh = "yes";
  setPlaceholder();
  render();
}

// At phone width the long hint wrapped inside the one-line field and was cut in half.
const NARROW = matchMedia("(max-width: 760px)");

function setPlaceholder() {
  const channel = S.channels[S.current];
  if (!channel) return;
  const hint = NARROW.matches ? "" : " — mention @countersign to ask";
  $("#composer-text").placeholder = channel.kind === "im" ? "Message countersign" : `Message #${channel.name}${hint}`;
}

function openThread(channel, ts) {
  S.thread = { channel, ts };
  S.pane = null;  // one pane at the side: the thread takes the assistant's place
  $("#thread-messages").dataset.fresh = "yes";
  renderThread();
  renderAssistant();
}

async function openHome() {
  S.tab = "home";
  render();
  await api("/ui/home", {});
}

async function load(person) {
  // Switching person while the page's first view was still loading (or twice in a row) once
  // let the older load finish last: it drew its view over the newer one and closed the thread
  // the person had just opened by asking. Only the newest load draws; until it has, the page
  // says nobody is acting, so nothing waits on a view that is about to be replaced.
  const mine = ++S.loads;
  delete document.body.dataset.as;
  if (S.feed) S.feed.close();
  const response = await fetch(`/ui/state?as=${encodeURIComponent(person)}`);
  if (!response.ok) throw new Error(await response.text());
  const snap = await response.json();
  if (mine !== S.loads) return;
  S.me = snap.me; S.team = snap.team; S.bot = snap.bot; S.modal = snap.modal; S.home = snap.home;
  S.people = Object.fromEntries(snap.people.map((p) => [p.id, p]));
  S.teams = Object.fromEntries(snap.teams.map((t) => [t.id, t]));
  S.channels = Object.fromEntries(snap.channels.map((c) => [c.id, c]));
  S.messages = new Map(snap.messages.map((m) => [key(m), m]));
  S.assistant = assistantThreads(snap.assistant);
  S.pane = null;
  S.feedback = new Map();
  S.read = loadRead(person);
  const url = new URL(location.href);
  url.searchParams.set("as", person);
  history.replaceState(null, "", url);
  $("#as").value = person;
  document.body.dataset.as = person;
  const first = snap.channels.find((c) => c.kind === "channel") || snap.channels[0];
  selectChannel(first.id);
  listen(person);
}

function listen(person) {
  const feed = new EventSource(`/ui/feed?as=${encodeURIComponent(person)}`);
  S.feed = feed;
  feed.addEventListener("open", () => {
    document.body.dataset.live = "yes";
    $("#offline").hidden = true;
  });
  // Every stream (a reconnect too) starts with the whole view as it stood when the stream
  // began: what changed since the page's first read, or while the server was away, is in it.
  feed.addEventListener("state", (e) => {
    const snap = JSON.parse(e.data);
    S.channels = Object.fromEntries(snap.channels.map((c) => [c.id, c]));
    S.messages = new Map(snap.messages.map((m) => [key(m), m]));
    S.assistant = assistantThreads(snap.assistant);
    S.modal = snap.modal; S.home = snap.home;
    render();
  });
  feed.addEventListener("error", () => {
    // The browser retries by itself; the banner says why nothing answers meanwhile.
    if (feed !== S.feed) return;
    document.body.dataset.live = "no";
    $("#offline").hidden = false;
  });
  feed.addEventListener("message", (e) => {
    const m = JSON.parse(e.data);
    const old = S.messages.get(key(m));
    S.messages.set(key(m), m);
    if (old) redraw(old, m);
    else render();
  });
  // An assistant thread's status, prompts or title changed.
  feed.addEventListener("assistant", (e) => { keepThread(JSON.parse(e.data)); renderAssistant(); });
  // A DM opened for this person from another workspace's installation.
  feed.addEventListener("channel", (e) => {
    const channel = JSON.parse(e.data);
    S.channels[channel.id] = channel;
    renderSidebar();
  });
  // The demo was started afresh (by this page or another): the old view is gone, read it anew.
  feed.addEventListener("reset", () => {
    if (feed === S.feed) load(S.me.id).then(() => toast("The demo started afresh: its data is as it was at first."));
  });
  feed.addEventListener("modal", (e) => { S.modal = JSON.parse(e.data).view; renderModal(); });
  feed.addEventListener("home", (e) => { S.home = JSON.parse(e.data).view; if (S.tab === "home") renderChannel(); });
}

// -- updates in place ---------------------------------------------------------------------
// An updated message is redrawn where it stands, and nothing else is: a streamed answer grows
// many times a second, and redrawing every list each time lost the scroll position, a button
// being pressed and the text being selected.

function redraw(old, m) {
  const rows = document.querySelectorAll(`.message[data-channel="${CSS.escape(m.channel)}"][data-ts="${CSS.escape(m.ts)}"]`);
  if (!grew(old, m)) S.flash.add(key(m));
  for (const row of rows) {
    const list = row.closest(".messages");
    const near = list.scrollHeight - list.scrollTop - list.clientHeight < 80;
    row.replaceWith(renderMessage(m, { inThread: list.id !== "messages" }));
    if (near) list.scrollTop = list.scrollHeight;
  }
  S.flash.delete(key(m));
}

// A streamed answer only grows: its text lengthens, and at its end it may gain feedback
// buttons. That is drawn quietly; any other change to a message is highlighted, as before.
function grew(old, m) {
  const before = old.blocks || [];
  const after = m.blocks || [];
  const kept = JSON.stringify(after.slice(0, before.length)) === JSON.stringify(before);
  const added = after.slice(before.length);
  const longer = (m.text || "").startsWith(old.text || "");
  return kept && longer && added.every((b) => b.type === "context_actions")
    && (m.text !== old.text || added.length > 0);
}

// -- composing --------------------------------------------------------------------------

function composer(form, field, where) {
  const send = async () => {
    const words = field.value.trim();
    if (!words) return;
    field.value = "";
    const target = where();
    try {
      const answer = await api("/ui/say", { text: words, ...target });
      const channel = S.channels[target.channel];
      // A question to the app at a channel's top level is answered in its thread: open it.
      if (answer.ts && !target.thread_ts && channel.kind === "channel" && /@countersign/i.test(words)) {
        openThread(target.channel, answer.ts);
      }
    } catch (failed) {
      field.value = words;
      toast(String(failed.message || failed));
    }
  };
  form.addEventListener("submit", (e) => { e.preventDefault(); send(); });
  field.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); send(); }
  });
}

async function startAfresh() {
  const sure = await confirm({
    title: { type: "plain_text", text: "Start the demo afresh?" },
    text: { type: "plain_text", text: "Every card, message and change made here goes, for everyone, and the demo merchants' data is loaded again as it was at first. The audit log keeps what happened." },
    confirm: { type: "plain_text", text: "Start afresh" },
    deny: { type: "plain_text", text: "Cancel" },
  }, "danger");
  if (!sure) return;
  document.body.classList.remove("sidebar-open");
  try {
    await api("/ui/reset", {});
  } catch (failed) {
    toast(String(failed.message || failed));
  }
}

// On a phone the "Acting as" menu shows the person's name alone: "Ravi Kumar — Staff, Fiesta
// Foods" was cut at the screen's edge (the sidebar names the role and the shop).
const PHONE = window.matchMedia("(max-width: 760px)");

function fitPeople(people) {
  for (const option of people.options) {
    option.textContent = PHONE.matches ? option.dataset.short : option.dataset.full;
  }
}

function boot() {
  const people = $("#as");
  fetch("/ui/state?as=UPRIYA").then((r) => r.json()).then((snap) => {
    const teams = Object.fromEntries(snap.teams.map((t) => [t.id, t.name]));
    for (const p of snap.people.filter((x) => !x.is_bot)) {
      const option = el("option", "", people, `${p.name} — ${p.title}, ${teams[p.team]}`);
      option.value = p.id;
      option.dataset.full = option.textContent;
      option.dataset.short = p.name;
    }
    fitPeople(people);
    PHONE.addEventListener("change", () => fitPeople(people));
    const wanted = new URL(location.href).searchParams.get("as");
    load(snap.people.some((p) => p.id === wanted && !p.is_bot) ? wanted : "UARJUN");
  });
  people.addEventListener("change", () => load(people.value));
  composer($("#composer"), $("#composer-text"), () => ({ channel: S.current }));
  composer($("#thread-composer"), $("#thread-text"), () => ({ channel: S.thread.channel, thread_ts: S.thread.ts }));
  $("#afresh").addEventListener("click", startAfresh);
  $("#thread-close").addEventListener("click", () => { S.thread = null; renderThread(); });
  $("#menu").addEventListener("click", () => document.body.classList.toggle("sidebar-open"));
  $("#scrim").addEventListener("click", () => document.body.classList.remove("sidebar-open"));
  for (const tab of document.querySelectorAll("#tabs button")) {
    tab.addEventListener("click", () => {
      if (tab.dataset.tab === "home") openHome();
      else if (tab.dataset.tab === "chat") openAssistant();
      else { S.tab = "messages"; render(); }
    });
  }
  setUpAssistant({ S, api, el, avatar, clock, toast, render, renderMessage, stickToBottom, tsCompare });
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape") return;
    // The topmost dialog first: a confirmation can sit over a modal.
    if (S.dismissConfirm) S.dismissConfirm();
    else if (S.modal) closeModal();
    else if (document.body.classList.contains("sidebar-open")) document.body.classList.remove("sidebar-open");
    else if (S.pane) { S.pane = null; render(); }
  });
  NARROW.addEventListener("change", setPlaceholder);
}

boot();
