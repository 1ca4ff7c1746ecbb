// clawrl dashboard and browser chat.
//
// Safety: every string that came from a model, a user or the store is put
// into the page with textContent (through el()), never innerHTML. The API key
// lives in sessionStorage (this tab only) and travels as a header, never in a
// URL. The server's Content Security Policy forbids inline script.
"use strict";

const KEY_STORE = "clawrl.apiKey";
const main = document.getElementById("main");
let refreshTimer = null;
let pageToken = 0; // bumps on every navigation, so late answers of an old page are dropped

// ---------- DOM helpers ----------

// el(tag, attrs, ...children): children are nodes or strings (as text).
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") node.textContent = v;
    else node.setAttribute(k, String(v));
  }
  for (const c of children) if (c) node.append(c);
  return node;
}

function clear(node) { while (node.firstChild) node.firstChild.remove(); return node; }

function badge(text, kind) { return el("span", { class: "badge " + (kind || "") }, text); }

function stateBadge(state) {
  const kinds = { generated: "", observed: "info", judged: "info", ready: "accent", trained: "good", expired: "warn", dropped: "bad" };
  return badge(state, kinds[state] || "");
}

function scoreBadge(score) {
  if (score > 0) return badge("+1", "good");
  if (score < 0) return badge("−1", "bad");
  return badge("0", "");
}

// thumb draws a thumbs-up (or, turned over, down) icon: inline SVG, so it
// shows without an emoji font.
function thumb(up) {
  const path = svg("path", { d: "M2 10h4v11H2z M8 21h9.2c.9 0 1.6-.6 1.8-1.4l1.9-7.2c.3-1.2-.6-2.4-1.9-2.4H14l.8-4.1c.2-1-.4-2-1.4-2.3L12.6 3 8 9.5z", fill: "currentColor" });
  return svg("svg", { viewBox: "0 0 24 24", class: "icon", "aria-hidden": "true" }, svg("g", up ? {} : { transform: "rotate(180 12 12)" }, path));
}

// ratingBadge shows a feedback's rating: good, bad, or a note without one.
function ratingBadge(f) {
  if (!f) return null;
  if (f.rating > 0) return el("span", { class: "badge good rating" }, thumb(true), " good");
  if (f.rating < 0) return el("span", { class: "badge bad rating" }, thumb(false), " bad");
  return el("span", { class: "badge rating" }, "note");
}

function ago(iso) {
  if (!iso) return "";
  const s = (Date.now() - new Date(iso).getTime()) / 1000;
  if (s < 5) return "just now";
  if (s < 60) return Math.round(s) + " s ago";
  if (s < 3600) return Math.round(s / 60) + " min ago";
  if (s < 86400) return Math.round(s / 3600) + " h ago";
  return new Date(iso).toLocaleDateString();
}

function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }
// sig writes a number with 4 significant digits (a loss near 0 stays readable).
function sig(x) { return x === undefined || x === null ? "—" : Math.abs(x) < 1e-12 ? "0" : Number(x.toPrecision(4)).toString(); }
function when(iso) { return iso ? new Date(iso).toLocaleString() : "—"; }
function fmt(x, digits) { return x === undefined || x === null || Number.isNaN(x) ? "—" : Number(x).toFixed(digits); }
function ms(x) { return x >= 1000 ? (x / 1000).toFixed(2) + " s" : fmt(x, 1) + " ms"; }

// ---------- API ----------

class AuthError extends Error {}

function authHeaders(extra) {
  const h = Object.assign({}, extra || {});
  const key = sessionStorage.getItem(KEY_STORE);
  if (key) h["Authorization"] = "Bearer " + key;
  return h;
}

async function api(path) {
  const res = await fetch(path, { headers: authHeaders(), cache: "no-store" });
  if (res.status === 401) throw new AuthError("the server wants an API key");
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error((body.error && body.error.message) || res.status + " " + res.statusText);
  return body;
}

async function postJSON(path, payload) {
  const res = await fetch(path, { method: "POST", headers: authHeaders({ "Content-Type": "application/json" }), body: JSON.stringify(payload) });
  if (res.status === 401) throw new AuthError("the server wants an API key");
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error((body.error && body.error.message) || res.status + " " + res.statusText);
  return body;
}

// ---------- login ----------

function showLogin(message) {
  const box = document.getElementById("login");
  box.hidden = false;
  const err = document.getElementById("login-error");
  err.hidden = !message;
  err.textContent = message || "";
  document.getElementById("login-key").focus();
}

document.getElementById("login-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const input = document.getElementById("login-key");
  sessionStorage.setItem(KEY_STORE, input.value.trim());
  input.value = "";
  start();
});

document.getElementById("signout").addEventListener("click", () => {
  sessionStorage.removeItem(KEY_STORE);
  location.hash = "#/chat";
  start();
});

async function start() {
  try {
    const ov = await api("/ui/api/overview");
    document.getElementById("login").hidden = true;
    document.getElementById("signout").hidden = !sessionStorage.getItem(KEY_STORE);
    state.model = ov.model;
    showTopStatus(ov);
    route();
  } catch (e) {
    if (e instanceof AuthError) {
      const had = sessionStorage.getItem(KEY_STORE);
      sessionStorage.removeItem(KEY_STORE);
      showLogin(had ? "That key was not accepted." : "");
    } else {
      clear(main).append(el("p", { class: "pad error" }, "Cannot reach the server: " + e.message));
    }
  }
}

function showTopStatus(ov) {
  const box = clear(document.getElementById("top-status"));
  append(box, [
    el("span", {}, "model ", el("b", {}, ov.model || "—")),
    el("span", { id: "top-version" }, "policy ", el("b", {}, "v" + ov.policy_version)),
  ]);
}

// failed renders an error on the page (or the login form).
function failed(e) {
  if (e instanceof AuthError) { sessionStorage.removeItem(KEY_STORE); showLogin("Please sign in again."); return; }
  clear(main).append(el("div", { class: "page" }, el("p", { class: "error" }, "Something went wrong: " + e.message)));
}

// ---------- routing ----------

const state = { model: "", chat: null };

function route() {
  if (refreshTimer) { clearInterval(refreshTimer); refreshTimer = null; }
  pageToken++;
  const hash = location.hash || "#/chat";
  const [path, query] = hash.slice(1).split("?");
  const parts = path.split("/").filter(Boolean);
  const params = new URLSearchParams(query || "");
  const page = parts[0] || "chat";
  for (const a of document.querySelectorAll("#nav a")) {
    const p = a.dataset.page;
    a.classList.toggle("active", p === page || (p === "sessions" && (page === "session" || page === "turn")));
  }
  const token = pageToken;
  const run = {
    chat: () => chatPage(token),
    sessions: () => sessionsPage(token, params),
    session: () => sessionPage(token, decodeURIComponent(parts[1] || "")),
    turn: () => turnPage(token, decodeURIComponent(parts[1] || "")),
    learning: () => learningPage(token),
  }[page] || (() => chatPage(token));
  Promise.resolve(run()).catch(failed);
}

window.addEventListener("hashchange", route);

// ---------- chat ----------

function newChatState(sessionName) {
  return { session: sessionName, messages: [], busy: false };
}

function randomName() {
  const a = new Uint8Array(5);
  crypto.getRandomValues(a);
  return "web-" + Array.from(a, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function chatPage(token) {
  if (!state.chat) state.chat = newChatState(randomName());
  const list = el("div", { class: "chat-sessions", id: "chat-sessions" });
  const log = el("div", { class: "inner", id: "chat-log" });
  const input = el("textarea", { id: "chat-input", rows: 1, placeholder: "Message the model — Enter sends, Shift+Enter starts a new line" });
  const send = el("button", { type: "submit", class: "primary", id: "chat-send" }, "Send");
  const form = el("form", { onsubmit: (e) => { e.preventDefault(); sendMessage(input, send); } }, input, send);
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); }
  });
  input.addEventListener("input", () => { input.style.height = "auto"; input.style.height = Math.min(input.scrollHeight, 200) + "px"; });
  const title = el("div", { class: "chat-title" });
  clear(main).append(el("div", { class: "chat" },
    el("aside", { class: "chat-side" },
      el("div", { class: "head" }, el("button", { type: "button", class: "primary", id: "new-chat", onclick: () => {
        state.chat = newChatState(randomName()); chatPage(++pageToken);
      } }, "+ New chat")),
      list),
    el("section", { class: "chat-main" },
      title,
      el("div", { class: "chat-log" }, log),
      el("div", { class: "composer" }, form))));
  renderChatTitle(title);
  renderChatLog(log);
  input.focus();
  await loadChatSessions(token);
}

// loadChatSessions lists the most recent sessions to pick from.
async function loadChatSessions(token) {
  const data = await api("/ui/api/sessions?limit=30");
  const list = document.getElementById("chat-sessions");
  if (token !== pageToken || !list) return;
  clear(list);
  if (!data.sessions.length) list.append(el("p", { class: "muted pad" }, "No sessions yet."));
  for (const s of data.sessions) {
    const active = s.name === state.chat.session;
    list.append(el("button", { type: "button", class: active ? "active" : "", title: s.name, onclick: () => pickSession(s) },
      el("div", { class: "name" }, s.name),
      el("div", { class: "meta" }, plural(s.main || 0, "turn") + " · " + ago(s.last_seen) + (s.client ? " · " + s.client : ""))));
  }
}

function renderChatTitle(title) {
  clear(title).append(el("strong", {}, "Session"), el("span", { class: "mono", id: "chat-session" }, state.chat.session),
    el("span", { class: "muted" }, "· every answer can be rated; ratings train the model"));
}

// pickSession continues a recorded conversation: its last main turn's
// messages and answer become the history.
async function pickSession(s) {
  const token = ++pageToken;
  const page = await api("/ui/api/sessions/" + encodeURIComponent(s.id) + "?limit=1");
  const chat = newChatState(s.client_id || s.name);
  chat.anonymous = !s.client_id; // found by history only: send no id, the history finds it
  if (page.last_main) {
    const t = await api("/ui/api/turns/" + encodeURIComponent(page.last_main));
    chat.messages = t.turn.messages.map((m) => ({ msg: m }));
    chat.messages.push({ msg: t.turn.response, id: t.turn.id, feedback: t.turn.feedback, usage: { completion_tokens: t.turn.completion_tokens } });
  }
  if (token !== pageToken) return;
  state.chat = chat;
  chatPage(++pageToken);
}

function renderChatLog(log) {
  clear(log);
  if (!state.chat.messages.length) {
    log.append(el("div", { class: "hello" }, el("h1", {}, "Talk to " + (state.model || "the model")),
      el("p", {}, "Answers stream in as they are generated. Rate each one good or bad and say what would have been better: the next version learns from it.")));
    return;
  }
  for (const entry of state.chat.messages) log.append(renderEntry(entry));
  log.parentElement.scrollTop = log.parentElement.scrollHeight;
}

function renderMessage(m, streaming) {
  const wrap = el("div", { class: "msg " + m.role });
  const who = { user: "You", assistant: "Model", system: "System", developer: "Developer", tool: "Tool result" }[m.role] || m.role;
  wrap.append(el("div", { class: "who" }, who + (m.name ? " · " + m.name : "")));
  const bubble = el("div", { class: "bubble" + (streaming ? " streaming" : "") });
  if (m.reasoning_content) {
    bubble.append(el("details", { class: "reasoning", open: streaming }, el("summary", {}, "Reasoning"), m.reasoning_content));
  }
  if (m.content) bubble.append(el("span", { class: "content" }, m.content));
  for (const tc of m.tool_calls || []) {
    bubble.append(el("div", { class: "toolcall" }, el("span", { class: "label" }, "tool call "), (tc.function && tc.function.name) || "?",
      "(" + ((tc.function && tc.function.arguments) || "") + ")"));
  }
  if (!m.content && !m.reasoning_content && !(m.tool_calls || []).length) bubble.append(el("span", { class: "muted" }, streaming ? "" : "(empty)"));
  wrap.append(bubble);
  return wrap;
}

function renderEntry(entry) {
  const node = renderMessage(entry.msg, entry.streaming);
  // A failed answer was not recorded: there is nothing to rate.
  if (entry.msg.role === "assistant" && entry.id && !entry.streaming && !entry.error) node.append(rateBar(entry));
  if (entry.error) node.append(el("p", { class: "error" }, entry.error));
  return node;
}

// rateBar: good/bad and written feedback for one answer, through /v1/feedback.
function rateBar(entry) {
  const up = el("button", { type: "button", class: "rate-up", title: "Good answer" }, thumb(true), " Good");
  const down = el("button", { type: "button", class: "rate-down", title: "Bad answer" }, thumb(false), " Bad");
  const text = el("input", { type: "text", class: "rate-text", placeholder: "What would have been better? (optional)", maxlength: 4000 });
  const sendText = el("button", { type: "button", class: "rate-send" }, "Send feedback");
  const status = el("span", { class: "done" });
  const meta = el("span", { class: "meta" });
  if (entry.usage) meta.textContent = entry.usage.completion_tokens + " tokens";
  const said = el("div", { class: "said" });
  const paint = () => {
    const r = entry.feedback ? entry.feedback.rating : 0;
    up.classList.toggle("on-good", r > 0);
    down.classList.toggle("on-bad", r < 0);
    clear(said);
    if (entry.feedback && entry.feedback.text) said.append(el("span", { class: "muted" }, "Your feedback: "), entry.feedback.text);
  };
  const submit = async (rating, withText) => {
    const payload = { id: entry.id };
    const written = withText ? text.value.trim() : "";
    if (rating !== null) payload.rating = rating;
    else if (entry.feedback) payload.rating = entry.feedback.rating;
    if (written) payload.text = written;
    else if (entry.feedback && entry.feedback.text) payload.text = entry.feedback.text;
    try {
      await postJSON("/v1/feedback", payload);
      entry.feedback = { rating: payload.rating || 0, text: payload.text || "" };
      status.textContent = written ? "Thanks — feedback recorded" : "Thanks — rating recorded";
      if (written) text.value = "";
      paint();
    } catch (e) {
      if (e instanceof AuthError) { showLogin("Please sign in again."); return; }
      status.textContent = "";
      status.append(el("span", { class: "error" }, "Not recorded: " + e.message));
    }
  };
  up.addEventListener("click", () => submit(1, false));
  down.addEventListener("click", () => submit(-1, false));
  sendText.addEventListener("click", () => submit(null, true));
  text.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); submit(null, true); } });
  paint();
  return el("div", {}, el("div", { class: "rate" }, up, down, text, sendText, status, meta), said);
}

async function sendMessage(input, send) {
  const chat = state.chat;
  const content = input.value.trim();
  if (!content || chat.busy) return;
  input.value = "";
  input.style.height = "auto";
  chat.busy = true;
  send.disabled = true;
  chat.messages.push({ msg: { role: "user", content } });
  const entry = { msg: { role: "assistant", content: "", reasoning_content: "", tool_calls: [] }, streaming: true };
  chat.messages.push(entry);
  const log = document.getElementById("chat-log");
  renderChatLog(log);
  const history = chatHistory(chat.messages.filter((e) => e !== entry));
  const headers = authHeaders({ "Content-Type": "application/json", "Accept": "text/event-stream" });
  if (!chat.anonymous) headers["X-Session-Id"] = chat.session;
  let lastPaint = 0;
  const repaint = (force) => {
    const now = performance.now();
    if (!force && now - lastPaint < 50) return;
    lastPaint = now;
    if (state.chat === chat && document.getElementById("chat-log") === log) {
      log.lastChild.replaceWith(renderEntry(entry));
      log.parentElement.scrollTop = log.parentElement.scrollHeight;
    }
  };
  try {
    const res = await fetch("/v1/chat/completions", {
      method: "POST", headers,
      body: JSON.stringify({ model: state.model, messages: history.map(wireMessage), stream: true, stream_options: { include_usage: true } }),
    });
    if (res.status === 401) throw new AuthError("the server wants an API key");
    if (!res.ok) {
      const body = await res.json().catch(() => ({}));
      throw new Error((body.error && body.error.message) || res.status + " " + res.statusText);
    }
    await readSSE(res.body, (chunk) => {
      if (chunk.error) throw new Error(chunk.error.message || "the server stopped the answer");
      if (chunk.id) entry.id = chunk.id;
      if (chunk.usage) entry.usage = chunk.usage;
      for (const choice of chunk.choices || []) applyDelta(entry.msg, choice.delta || {});
      repaint(false);
    });
  } catch (e) {
    if (e instanceof AuthError) showLogin("Please sign in again.");
    const why = e instanceof TypeError ? e.message + " (the connection to the server failed or broke off)" : e.message;
    entry.error = "The answer failed: " + why + ". It was not recorded: there is nothing to rate, and the next message goes without it.";
  } finally {
    entry.streaming = false;
    chat.busy = false;
    send.disabled = false;
    repaint(true);
  }
  const token = pageToken;
  if (state.chat === chat) loadChatSessions(token).catch(() => {});
}

// chatHistory is what the conversation said, as sent back with the next
// message: an exchange whose answer failed (and so was not recorded) is left
// out, its question with it, as if it had not been asked.
function chatHistory(entries) {
  const out = [];
  for (const e of entries) {
    if (e.error) {
      if (out.length && out[out.length - 1].role === "user") out.pop();
      continue;
    }
    out.push(e.msg);
  }
  return out;
}

// wireMessage is a recorded message as the API takes it back.
function wireMessage(m) {
  const out = { role: m.role, content: m.content_null ? null : (m.content || "") };
  if (m.reasoning_content) out.reasoning_content = m.reasoning_content;
  if (m.tool_calls && m.tool_calls.length) out.tool_calls = m.tool_calls;
  if (m.tool_call_id) out.tool_call_id = m.tool_call_id;
  if (m.name) out.name = m.name;
  return out;
}

function applyDelta(msg, d) {
  if (d.content) msg.content += d.content;
  if (d.reasoning_content) msg.reasoning_content += d.reasoning_content;
  for (const tc of d.tool_calls || []) {
    const i = tc.index || 0;
    if (!msg.tool_calls[i]) msg.tool_calls[i] = { id: tc.id || "", type: "function", function: { name: "", arguments: "" } };
    const call = msg.tool_calls[i];
    if (tc.id) call.id = tc.id;
    if (tc.function && tc.function.name) call.function.name += tc.function.name;
    if (tc.function && tc.function.arguments) call.function.arguments += tc.function.arguments;
  }
}

// readSSE calls onData with each JSON event of a text/event-stream body.
async function readSSE(body, onData) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buf.search(/\r?\n\r?\n/)) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut).replace(/^\r?\n\r?\n/, "");
      const data = block.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
      if (!data) continue;
      if (data === "[DONE]") return;
      onData(JSON.parse(data));
    }
  }
  // An answer is whole only once [DONE] arrives; without it the server went
  // away mid-answer.
  throw new Error("the stream ended before the answer did (the server closed it)");
}

// ---------- sessions ----------

async function sessionsPage(token, params) {
  const q = params.get("q") || "";
  const search = el("input", { type: "search", id: "session-search", placeholder: "Search by id, key or client", value: q });
  const form = el("form", { class: "toolbar", onsubmit: (e) => {
    e.preventDefault();
    location.hash = "#/sessions" + (search.value.trim() ? "?q=" + encodeURIComponent(search.value.trim()) : "");
  } }, search, el("button", { type: "submit" }, "Search"));
  const body = el("tbody", { id: "sessions-body" });
  const more = el("div", { class: "more" });
  clear(main).append(el("div", { class: "page" },
    el("div", { class: "page-head" }, el("h1", {}, "Sessions"), el("span", { class: "sub" }, "each conversation under the id its client gave it, most recent first")),
    form,
    el("div", { class: "card table-wrap" }, el("table", {},
      el("thead", {}, el("tr", {}, el("th", {}, "Session"), el("th", {}, "Key source"), el("th", {}, "Client"),
        el("th", { class: "num" }, "Main"), el("th", { class: "num" }, "Side"), el("th", {}, "Last activity"), el("th", {}, "State"))),
      body), more)));
  const load = async (before) => {
    const data = await api("/ui/api/sessions?limit=50" + (q ? "&q=" + encodeURIComponent(q) : "") + (before ? "&before=" + encodeURIComponent(before) : ""));
    if (token !== pageToken) return;
    if (!before && !data.sessions.length) {
      body.append(el("tr", {}, el("td", { colspan: 7, class: "empty" }, q ? "No session matches “" + q + "”." : "No sessions yet — start one in the chat.")));
    }
    for (const s of data.sessions) {
      const href = "#/session/" + encodeURIComponent(s.id);
      body.append(el("tr", { class: "link", onclick: () => { location.hash = href; } },
        el("td", {}, el("a", { href, class: "session-name" }, s.name), s.client_id ? null : el("div", { class: "muted" }, "no client id")),
        el("td", {}, badge(s.key_source || "—", "")),
        el("td", { class: "muted" }, s.client || "—"),
        el("td", { class: "num" }, s.main), el("td", { class: "num" }, s.side),
        el("td", { class: "nowrap", title: when(s.last_seen) }, ago(s.last_seen)),
        el("td", {}, s.expired ? badge("idle", "warn") : badge("live", "good"))));
    }
    clear(more);
    if (data.next) more.append(el("button", { type: "button", onclick: () => load(data.next) }, "Load more"));
  };
  await load("");
}

async function sessionPage(token, id) {
  const data = await api("/ui/api/sessions/" + encodeURIComponent(id) + "?limit=50");
  if (token !== pageToken) return;
  const s = data.session;
  const body = el("tbody", { id: "turns-body" });
  const more = el("div", { class: "more" });
  clear(main).append(el("div", { class: "page" },
    el("div", { class: "page-head" }, el("a", { href: "#/sessions" }, "← Sessions")),
    el("div", { class: "page-head" }, el("h1", {}, s.name), s.expired ? badge("idle", "warn") : badge("live", "good")),
    el("div", { class: "card" }, el("dl", { class: "kv" },
      el("dt", {}, "Client's id"), el("dd", {}, s.client_id || "— (found by the history its requests repeat)"),
      el("dt", {}, "Key source"), el("dd", {}, s.key_source),
      el("dt", {}, "Client"), el("dd", {}, s.client || "—"),
      el("dt", {}, "Internal id"), el("dd", { class: "mono" }, s.id),
      el("dt", {}, "Started"), el("dd", {}, when(s.created_at)),
      el("dt", {}, "Last activity"), el("dd", {}, when(s.last_seen) + " (" + ago(s.last_seen) + ")"),
      el("dt", {}, "Turns"), el("dd", {}, String(s.turns)),
      s.epoch ? el("dt", {}, "Compactions") : null, s.epoch ? el("dd", {}, String(s.epoch)) : null)),
    el("div", { class: "card table-wrap" }, el("table", {},
      el("thead", {}, el("tr", {}, el("th", { class: "num" }, "#"), el("th", {}, "Type"), el("th", {}, "State"), el("th", {}, "Answer"),
        el("th", {}, "Feedback"), el("th", {}, "Score"), el("th", {}, "Trained in"), el("th", { class: "num" }, "Tokens"), el("th", {}, "When"))),
      body), more)));
  const add = (page) => {
    for (const t of page.turns) {
      const href = "#/turn/" + encodeURIComponent(t.id);
      const fb = t.feedback ? el("span", { class: "feedback" }, ratingBadge(t.feedback), t.feedback.text ? el("div", { class: "feedback-text" }, t.feedback.text) : null) : "";
      body.append(el("tr", { class: "link turn-row", "data-turn": t.id, onclick: () => { location.hash = href; } },
        el("td", { class: "num" }, el("a", { href }, String(t.index))),
        el("td", {}, t.type === "side" ? badge("side", "warn") : badge("main", "")),
        el("td", {}, stateBadge(t.state)),
        el("td", { class: "preview", title: t.preview }, t.preview || el("span", { class: "muted" }, "(empty)")),
        el("td", {}, fb),
        el("td", {}, t.judged ? scoreBadge(t.score) : el("span", { class: "muted" }, "—")),
        el("td", {}, t.trained_version ? badge("v" + t.trained_version, "good") : t.drop_reason ? el("span", { class: "muted", title: t.drop_reason }, "dropped") : "—"),
        el("td", { class: "num" }, String(t.completion_tokens)),
        el("td", { class: "nowrap", title: when(t.created_at) }, ago(t.created_at))));
    }
    clear(more);
    if (page.next !== null) more.append(el("button", { type: "button", onclick: async () => {
      const next = await api("/ui/api/sessions/" + encodeURIComponent(id) + "?limit=50&after=" + page.next);
      if (token === pageToken) add(next);
    } }, "Load more"));
  };
  if (!data.turns.length) body.append(el("tr", {}, el("td", { colspan: 9, class: "empty" }, "No turns.")));
  add(data);
}

// ---------- one turn ----------

function fold(title, open, ...children) {
  return el("details", { class: "fold", open }, el("summary", {}, title), el("div", { class: "body" }, ...children));
}

async function turnPage(token, id) {
  const data = await api("/ui/api/turns/" + encodeURIComponent(id));
  if (token !== pageToken) return;
  const t = data.turn, s = data.session, j = data.judgment, smp = data.sample;
  const system = t.messages.filter((m) => m.role === "system" || m.role === "developer");
  const rest = t.messages.filter((m) => m.role !== "system" && m.role !== "developer");
  const tm = t.timings || {};
  const decodeRate = tm.decode_ms > 0 ? (t.completion_tokens / (tm.decode_ms / 1000)).toFixed(1) + " tok/s" : "—";

  const prompt = el("div", { class: "card" }, el("h2", {}, "Prompt"),
    system.length ? fold("System prompt (" + system.reduce((n, m) => n + (m.content || "").length, 0) + " characters)", false,
      ...system.map((m) => el("pre", {}, m.content))) : null,
    t.tools && t.tools.length ? fold("Tools (" + t.tools.length + "): " + t.tools.map((x) => x.function && x.function.name).join(", "), false,
      el("pre", {}, JSON.stringify(t.tools, null, 2))) : null,
    ...rest.map((m) => renderMessage(m, false)),
    t.forced_text ? fold("Forced opening of the tool call (tool_choice)", false, el("pre", {}, t.forced_text)) : null);

  const answer = el("div", { class: "card", id: "turn-answer" }, el("h2", {}, "Answer"),
    renderMessage(t.response, false),
    el("dl", { class: "kv" },
      el("dt", {}, "Tokens"), el("dd", {}, t.completion_tokens + " generated · " + t.prompt_tokens + " in the prompt"),
      el("dt", {}, "Timings"), el("dd", {}, "queue " + ms(tm.queue_ms) + " · prefill " + ms(tm.prefill_ms) + " · decode " + ms(tm.decode_ms) + " (" + decodeRate + ") · total " + ms(tm.total_ms)),
      el("dt", {}, "Finish"), el("dd", {}, t.finish_reason || "—"),
      el("dt", {}, "Served by"), el("dd", {}, (t.model || "—") + " · " + (t.engine || "—") + " · policy v" + t.policy_version)));

  const next = el("div", { class: "card", id: "turn-next" }, el("h2", {}, "What came next"),
    t.feedback ? el("div", { class: "vote", id: "turn-feedback" }, el("strong", {}, "Feedback "), ratingBadge(t.feedback),
      t.feedback.text ? el("div", { class: "feedback-text" }, t.feedback.text) : null,
      el("div", { class: "muted" }, when(t.feedback.created_at))) : null,
    t.next_state && t.next_state.length ? [el("p", { class: "muted" }, "Next state (" + t.next_state_kind + "), observed " + when(t.observed_at)),
      ...t.next_state.map((m) => renderMessage(m, false))]
      : el("p", { class: "muted" }, t.state === "expired" ? "Nothing: the session went idle before a next message." : t.feedback ? "" : "Nothing yet: waiting for the next message."));

  let judged;
  if (j) {
    judged = el("div", { class: "card", id: "turn-judgment" }, el("h2", {}, "Judgment"),
      el("dl", { class: "kv" },
        el("dt", {}, "Score"), el("dd", {}, scoreBadge(j.score), " ", j.reason),
        el("dt", {}, "Judge"), el("dd", {}, j.judge || "—"),
        el("dt", {}, "Becomes a sample"), el("dd", {}, j.keep ? "yes" : "no", j.why ? " — " + j.why : ""),
        el("dt", {}, "Judged"), el("dd", {}, when(j.created_at) + (j.revised_at ? " · revised by feedback " + when(j.revised_at) : ""))),
      j.hint ? [el("h3", {}, "Hint " + (j.hint_accepted ? "(accepted)" : "(not accepted)")), el("div", { class: "hint" }, j.hint)]
        : el("p", { class: "muted" }, "No hint: nothing in what came next showed a better answer."),
      el("h3", {}, "Votes (" + (j.votes || []).length + ")"),
      ...(j.votes || []).map((v, i) => el("div", { class: "vote" },
        el("strong", {}, "#" + (i + 1) + " " + v.Kind), " ", badge(v.Source, ""), " ",
        v.Valid ? scoreBadge(v.Score) : badge("no valid \\boxed{}", "warn"),
        v.Err ? el("div", { class: "error" }, v.Err) : null,
        v.Hint ? el("div", { class: "muted" }, "hint: ", v.Hint) : null,
        v.Raw ? el("pre", { class: "raw" }, v.Raw) : null)));
  } else {
    judged = el("div", { class: "card", id: "turn-judgment" }, el("h2", {}, "Judgment"),
      el("p", { class: "muted" }, t.type === "side" ? "Side turns are served and stored, never judged." : "Not judged yet."));
  }

  const sample = el("div", { class: "card", id: "turn-sample" }, el("h2", {}, "Training"),
    smp ? el("dl", { class: "kv" },
      el("dt", {}, "Sample"), el("dd", {}, smp.method + " · " + [smp.use_rl ? "RL reward " + fmt(smp.reward, 2) : null, smp.opd ? "OPD over " + smp.teacher_tokens + " tokens (teacher v" + smp.teacher_version + ")" : null].filter(Boolean).join(" + ")),
      el("dt", {}, "Why"), el("dd", {}, smp.why),
      smp.teacher_wrote ? el("dt", {}, "Trained on") : null,
      smp.teacher_wrote ? el("dd", { id: "turn-teacher-answer" }, "the teacher's answer (the model with the feedback in context), " + smp.teacher_response_tokens + " tokens: ",
        smp.teacher_response ? el("div", { class: "bubble" }, smp.teacher_response) : el("span", { class: "muted" }, "(its text needs the served model's tokenizer)")) : null,
      el("dt", {}, "Generated by"), el("dd", {}, "policy v" + smp.policy_version),
      el("dt", {}, "Trained in"), el("dd", {}, smp.trained_version ? el("a", { href: "#/learning" }, "version " + smp.trained_version) : "not yet")) : null,
    t.drop_reason ? el("p", {}, badge("dropped", "bad"), " ", t.drop_reason) : null,
    !smp && !t.drop_reason ? el("p", { class: "muted" }, "No training sample.") : null);

  clear(main).append(el("div", { class: "page" },
    el("div", { class: "page-head" }, el("a", { href: "#/session/" + encodeURIComponent(s.id) }, "← " + s.name)),
    el("div", { class: "page-head" }, el("h1", {}, "Turn " + t.index), stateBadge(t.state), t.type === "side" ? badge("side", "warn") : badge("main", ""),
      el("span", { class: "sub mono" }, t.id), el("span", { class: "sub" }, when(t.created_at))),
    el("div", { class: "two" }, el("div", {}, prompt, answer), el("div", {}, next, judged, sample))));
}

// ---------- learning ----------

async function learningPage(token) {
  const render = async () => {
    const d = await api("/ui/api/learning?limit=200");
    if (token !== pageToken) return;
    const top = document.getElementById("top-version");
    if (top) clear(top).append("policy ", el("b", {}, "v" + Math.max(d.policy_version, d.latest_version)));
    const recent = d.activity[0] || {}, hour = d.activity[1] || {};
    const stats = el("div", { class: "grid" },
      stat("Latest version", "v" + d.latest_version, plural(d.learning.versions, "version") + " published · newest answer from v" + d.policy_version, "stat-version"),
      stat("Waiting for the judge", d.queues.awaiting_judge, "main turns observed"),
      stat("Waiting for the trainer", d.queues.awaiting_trainer, "samples ready"),
      stat("Judged / min", fmt(recent.judged_per_min, 2), recent.judged + " in 10 min · " + hour.judged + " in 1 h"),
      stat("Trained / min", fmt(recent.trained_per_min, 2), recent.trained + " samples in 10 min · " + hour.versions + " versions in 1 h"),
      stat("Samples", d.learning.samples_total, d.learning.trained + " trained · " + d.learning.hints_accepted + " hints accepted"));
    const versions = d.versions.slice().reverse(); // oldest first for the charts
    const rewardChart = versions.length
      ? lineChart({ series: [{ name: "mean reward", color: "#0f766e", points: versions.map((v) => ({ x: v.version, y: v.metrics.mean_reward })) }], xLabel: "version", yMin: -1, yMax: 1 })
      : el("p", { class: "empty" }, "No version yet. Rate answers in the chat: once enough turns are judged, the trainer publishes one.");
    const lossChart = versions.length
      ? lineChart({ series: [{ name: "loss", color: "#b45309", points: versions.map((v) => ({ x: v.version, y: v.metrics.loss })) }], xLabel: "version" })
      : el("p", { class: "empty" }, "—");
    const byState = d.queues.by_state || {};
    const maxState = Math.max(1, ...Object.values(byState));
    const states = ["generated", "observed", "expired", "judged", "ready", "trained", "dropped"];
    const drops = Object.entries(d.learning.dropped_by || {});
    const rows = d.versions.map((v) => el("tr", { class: "version-row" },
      el("td", {}, badge("v" + v.version, "accent")), el("td", { title: when(v.created_at) }, ago(v.created_at)), el("td", {}, v.method || "—"),
      el("td", { class: "num" }, v.metrics.samples), el("td", { class: "num" }, sig(v.metrics.loss)),
      el("td", { class: "num" }, fmt(v.metrics.mean_reward, 2)), el("td", { class: "num" }, v.metrics.dropped_stale),
      el("td", { class: "num" }, v.metrics.rl_samples + " / " + v.metrics.opd_samples),
      el("td", { class: "num" }, fmt(v.metrics.clip_fraction, 3)), el("td", { class: "num" }, ms(v.metrics.step_nanos / 1e6)),
      el("td", { class: "promotion", title: v.status_reason || "" },
        badge(v.status === "rejected" ? "rejected" : "promoted", v.status === "rejected" ? "bad" : "good"),
        v.source_version ? el("span", { class: "muted" }, " copy of v" + v.source_version) : "",
        v.status_reason ? el("div", { class: "muted small" }, v.status_reason) : "")));
    const page = el("div", { class: "page", id: "learning-page" },
      el("div", { class: "page-head" }, el("h1", {}, "Learning"), el("span", { class: "sub" }, "live · refreshes every 5 s")),
      stats,
      el("div", { class: "two" },
        el("div", { class: "card" }, el("h2", {}, "Mean reward per version"), rewardChart),
        el("div", { class: "card" }, el("h2", {}, "Loss per version"), lossChart)),
      el("div", { class: "two" },
        el("div", { class: "card" }, el("h2", {}, "Turns by state"), el("div", { class: "bars" },
          ...states.map((s) => el("div", { class: "row" }, el("span", {}, s),
            el("div", { class: "track" }, barFill((byState[s] || 0) / maxState)), el("span", { class: "num" }, String(byState[s] || 0)))))),
        el("div", { class: "card" }, el("h2", {}, "Dropped, by reason"), drops.length
          ? el("table", {}, el("tbody", {}, ...drops.map(([r, n]) => el("tr", {}, el("td", {}, r), el("td", { class: "num" }, n)))))
          : el("p", { class: "muted" }, "Nothing dropped."))),
      el("div", { class: "card table-wrap" }, el("h2", {}, "Versions"), d.versions.length ? el("table", { id: "versions-table" },
        el("thead", {}, el("tr", {}, el("th", {}, "Version"), el("th", {}, "Published"), el("th", {}, "Method"), el("th", { class: "num" }, "Samples"),
          el("th", { class: "num" }, "Loss"), el("th", { class: "num" }, "Mean reward"), el("th", { class: "num" }, "Stale drops"),
          el("th", { class: "num" }, "RL / OPD"), el("th", { class: "num" }, "Clipped"), el("th", { class: "num" }, "Step time"), el("th", {}, "Promotion"))),
        el("tbody", {}, ...rows)) : el("p", { class: "empty" }, "No version yet.")),
      benchCard(d));
    clear(main).append(page);
  };
  await render();
  refreshTimer = setInterval(() => { if (token === pageToken) render().catch(failed); }, 5000);
}

function barFill(frac) {
  const f = el("div", { class: "fill" });
  f.style.width = (frac * 100).toFixed(1) + "%";
  return f;
}

function stat(label, value, note, id) {
  return el("div", { class: "stat", id }, el("div", { class: "label" }, label), el("div", { class: "value" }, String(value)), el("div", { class: "note" }, note));
}

const PALETTE = ["#0f766e", "#1d4ed8", "#b45309", "#7c3aed", "#be123c", "#15803d", "#0369a1", "#a16207"];

function benchCard(d) {
  const card = el("div", { class: "card", id: "bench" }, el("h2", {}, "Satisfaction and retention (clawrl bench learn)"));
  if (d.bench_error) card.append(el("p", { class: "error" }, d.bench_error));
  if (!d.bench.length) {
    card.append(el("p", { class: "muted" }, "No results yet. Result files of `clawrl bench learn` in " + (d.bench_dir || "the data folder") + " are drawn here."));
    return card;
  }
  for (const run of d.bench) {
    const curve = (field) => lineChart({
      yMin: 0, yMax: 1, xLabel: "round",
      series: run.arms.map((a, i) => ({ name: a.arm, color: PALETTE[i % PALETTE.length],
        points: a.cells.filter((c) => c[field] && c[field].n > 0).map((c) => ({ x: c.round, y: c[field].p, lo: c[field].low, hi: c[field].high })) })),
    });
    card.append(el("p", { class: "bench-file" }, el("span", { class: "mono" }, run.file), " · " + when(run.modified)),
      el("div", { class: "two" }, el("div", {}, el("strong", {}, "Satisfied"), curve("satisfied")), el("div", {}, el("strong", {}, "Retention"), curve("retention"))));
  }
  return card;
}

// tickLabel writes an axis value with as many digits as the axis' span
// needs (a value within a millionth of the span of 0 is 0).
function tickLabel(y, span) {
  if (Math.abs(y) < span * 1e-6) return "0";
  const digits = Math.max(0, Math.min(6, 2 - Math.floor(Math.log10(span))));
  return Math.abs(y) >= 1e4 || digits > 5 ? y.toPrecision(3) : y.toFixed(digits).replace(/\.?0+$/, "");
}

// lineChart draws series of {x, y[, lo, hi]} points as inline SVG, with an
// interval band where lo/hi are given.
function lineChart({ series, xLabel, yMin, yMax }) {
  const W = 520, H = 220, L = 54, R = 12, T = 12, B = 34;
  const pts = series.flatMap((s) => s.points);
  const xs = pts.map((p) => p.x);
  const ys = pts.flatMap((p) => [p.y, p.lo, p.hi]).filter((v) => typeof v === "number" && isFinite(v));
  let x0 = Math.min(...xs), x1 = Math.max(...xs);
  if (x0 === x1) { x0 -= 1; x1 += 1; }
  let y0 = yMin !== undefined ? Math.min(yMin, ...ys) : Math.min(...ys), y1 = yMax !== undefined ? Math.max(yMax, ...ys) : Math.max(...ys);
  if (!isFinite(y0) || !isFinite(y1)) { y0 = 0; y1 = 1; }
  if (y0 === y1) { y0 -= 1; y1 += 1; }
  const sx = (x) => L + ((x - x0) / (x1 - x0)) * (W - L - R);
  const sy = (y) => T + (1 - (y - y0) / (y1 - y0)) * (H - T - B);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img" });
  for (let i = 0; i <= 4; i++) {
    const y = y0 + ((y1 - y0) * i) / 4;
    root.append(svg("line", { x1: L, x2: W - R, y1: sy(y), y2: sy(y), class: "grid" }),
      svg("text", { x: L - 6, y: sy(y) + 4, "text-anchor": "end", text: tickLabel(y, y1 - y0) }));
  }
  const ticks = Math.min(8, Math.round(x1 - x0));
  for (let i = 0; i <= ticks; i++) {
    const x = x0 + ((x1 - x0) * i) / Math.max(1, ticks);
    root.append(svg("text", { x: sx(x), y: H - B + 16, "text-anchor": "middle", text: Number.isInteger(x) ? String(x) : x.toFixed(1) }));
  }
  root.append(svg("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, class: "axis" }),
    svg("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle", text: xLabel || "" }));
  for (const s of series) {
    const band = s.points.filter((p) => typeof p.lo === "number" && typeof p.hi === "number");
    if (band.length > 1) {
      const d = band.map((p, i) => (i ? "L" : "M") + sx(p.x) + " " + sy(p.hi)).join(" ") + " " +
        band.slice().reverse().map((p) => "L" + sx(p.x) + " " + sy(p.lo)).join(" ") + " Z";
      root.append(svg("path", { d, fill: s.color, "fill-opacity": 0.12, stroke: "none" }));
    }
    if (s.points.length > 1) {
      root.append(svg("path", { d: s.points.map((p, i) => (i ? "L" : "M") + sx(p.x) + " " + sy(p.y)).join(" "), fill: "none", stroke: s.color, "stroke-width": 2 }));
    }
    for (const p of s.points) {
      const dot = svg("circle", { cx: sx(p.x), cy: sy(p.y), r: 3.5, fill: s.color });
      dot.append(svg("title", { text: s.name + " @ " + p.x + ": " + fmt(p.y, 3) }));
      root.append(dot);
    }
  }
  const legend = el("div", { class: "legend" }, ...series.map((s) => {
    const sw = el("span", { class: "sw" });
    sw.style.background = s.color;
    return el("span", {}, sw, s.name);
  }));
  return el("div", {}, root, legend);
}

start();
