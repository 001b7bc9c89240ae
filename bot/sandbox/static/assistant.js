// The app's assistant pane, drawn as Slack's split view: an assistant thread in the person's DM
// with the app, its title, the suggested prompts as chips (a tap sends the prompt, as Slack
// does), and the status line while the app works ("countersign is reading requests…"). Slack
// sends the app `assistant_thread_started` when a new thread opens; the server does that here.
// Builds DOM nodes only; never innerHTML.

const $ = (sel) => document.querySelector(sel);
const threadKey = (t) => `${t.channel}/${t.thread_ts}`;

// What the pane needs from the page: its state, and how it draws and sends.
let P = null;

export function setUpAssistant(page) {
  P = page;
  $("#assistant-open").addEventListener("click", () => openAssistant());
  $("#assistant-close").addEventListener("click", closeAssistant);
  $("#assistant-new").addEventListener("click", () => newChat());
  $("#assistant-history").addEventListener("change", (e) => {
    const thread = P.S.assistant.get(e.target.value);
    if (thread) showThread(thread);
  });
  const form = $("#assistant-composer");
  const field = $("#assistant-text");
  form.addEventListener("submit", (e) => { e.preventDefault(); sendTyped(field); });
  field.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); sendTyped(field); }
  });
}

export function assistantThreads(list) {
  return new Map((list || []).map((t) => [threadKey(t), t]));
}

export function keepThread(thread) {
  P.S.assistant.set(threadKey(thread), thread);
}

// The person's own DM with the app: the assistant lives there.
function myDm() {
  const S = P.S;
  return Object.values(S.channels).find((c) => c.kind === "im" && c.team === S.team.id);
}

// Opening the pane picks up the latest thread of the DM, as Slack does; the first time, or
// with "New chat", a new thread starts.
export async function openAssistant() {
  P.S.thread = null;
  const latest = myThreads().pop();
  if (latest) {
    showThread(latest);
    return;
  }
  await newChat();
}

// The threads of the person's DM with the app, oldest first.
function myThreads() {
  const dm = myDm();
  return [...P.S.assistant.values()].filter((t) => dm && t.channel === dm.id)
    .sort((a, b) => P.tsCompare(a.thread_ts, b.thread_ts));
}

async function newChat() {
  const S = P.S;
  const viewing = S.channels[S.current];
  try {
    const answer = await P.api("/ui/assistant", { context: viewing && viewing.kind === "channel" ? viewing.id : null });
    keepThread(answer.thread);
    showThread(answer.thread);
  } catch (failed) {
    P.toast(String(failed.message || failed));
  }
}

function showThread(thread) {
  P.S.pane = { channel: thread.channel, thread_ts: thread.thread_ts };
  document.body.classList.remove("sidebar-open");
  $("#assistant-messages").dataset.fresh = "yes";
  P.render();
  $("#assistant-text").focus({ preventScroll: true });
}

// Slack tells the app when the person moves to another channel with the pane open.
export function contextChanged(channel) {
  const pane = P.S.pane;
  if (!pane || !channel || channel.kind !== "channel") return;
  P.api("/ui/assistant", { thread_ts: pane.thread_ts, context: channel.id })
    .catch((failed) => P.toast(String(failed.message || failed)));
}

function closeAssistant() {
  P.S.pane = null;
  P.render();
}

function inPane(m) {
  const pane = P.S.pane;
  return pane && m.channel === pane.channel && m.thread_ts === pane.thread_ts && m.ts !== pane.thread_ts;
}

export function renderAssistant() {
  const S = P.S;
  const pane = $("#assistant");
  const thread = S.pane && S.assistant.get(threadKey(S.pane));
  document.body.classList.toggle("assistant-open", !!thread);
  pane.hidden = !thread;
  // The DM's Chat tab opens the pane beside its messages; it says whether the pane is open.
  for (const tab of document.querySelectorAll("#tabs button[data-tab='chat']")) tab.setAttribute("aria-expanded", String(!!thread));
  if (!thread) return;
  $("#assistant-title").textContent = thread.title || "New chat";
  renderHistory(thread);
  const shown = [...S.messages.values()].filter(inPane).sort((a, b) => P.tsCompare(a.ts, b.ts));
  const list = $("#assistant-messages");
  P.stickToBottom(list, () => {
    list.replaceChildren();
    if (!shown.length) {
      const hello = P.el("div", "empty assistant-hello", list);
      hello.appendChild(P.avatar(S.bot));
      P.el("div", "empty-title", hello, "How can countersign help?");
      P.el("div", "empty-text", hello, "Ask about requests, orders, stock and sales. Anything that would change something comes back as a card, which runs only once a person approves it.");
    }
    for (const m of shown) list.appendChild(P.renderMessage(m, { inThread: true }));
  });
  renderStatus(thread);
  renderPrompts(thread, shown);
}

// Slack's History: the earlier threads, newest first, by title and when they started.
function renderHistory(open) {
  const pick = $("#assistant-history");
  const threads = myThreads().reverse();
  pick.hidden = threads.length < 2;
  pick.replaceChildren();
  for (const t of threads) {
    const option = P.el("option", "", pick, `${t.title || "New chat"} · ${P.clock(t.thread_ts)}`);
    option.value = threadKey(t);
    option.selected = threadKey(t) === threadKey(open);
  }
}

function renderStatus(thread) {
  const line = $("#assistant-status");
  line.hidden = !thread.status;
  line.replaceChildren();
  if (!thread.status) return;
  P.el("span", "assistant-status-name", line, "countersign");
  P.el("span", "", line, ` ${thread.status}`);
  const dots = P.el("span", "assistant-dots", line);
  dots.setAttribute("aria-hidden", "true");
  for (let i = 0; i < 3; i += 1) P.el("span", "", dots);
}

// Slack shows a thread's suggested prompts until the person writes in it.
function renderPrompts(thread, shown) {
  const box = $("#assistant-prompts");
  const asked = shown.some((m) => m.user === P.S.me.id);
  const prompts = asked ? [] : thread.prompts || [];
  box.hidden = !prompts.length;
  box.replaceChildren();
  if (!prompts.length) return;
  if (thread.prompts_title) P.el("div", "assistant-prompts-title", box, thread.prompts_title);
  const chips = P.el("div", "assistant-chips", box);
  for (const prompt of prompts) {
    const chip = P.el("button", "assistant-chip", chips, prompt.title);
    chip.type = "button";
    chip.addEventListener("click", () => send(prompt.message));
  }
}

async function sendTyped(field) {
  const words = field.value.trim();
  if (!words) return;
  field.value = "";
  if (!(await send(words))) field.value = words;
}

async function send(words) {
  const pane = P.S.pane;
  if (!pane) return false;
  try {
    await P.api("/ui/say", { channel: pane.channel, thread_ts: pane.thread_ts, text: words });
    return true;
  } catch (failed) {
    P.toast(String(failed.message || failed));
    return false;
  }
}
