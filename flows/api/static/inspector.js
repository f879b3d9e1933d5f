/* RecallFlow inspector: plain JS over the HTTP API (no build step). Every text from the API is
   inserted with textContent, never as HTML. */
"use strict";

const $ = (id) => document.getElementById(id);
const state = { config: null, tenant: "", key: "", session: null };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function status(msg, isError) {
  $("status").textContent = msg || "";
  $("status").className = isError ? "error" : "";
}

async function api(path, options) {
  const headers = Object.assign({ Accept: "application/json" }, (options && options.headers) || {});
  if (state.config) {
    if (state.config.auth === "required") headers[state.config.api_key_header] = state.key;
    else if (state.tenant) headers[state.config.tenant_header] = state.tenant;
  }
  const res = await fetch(path, Object.assign({}, options, { headers }));
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = (body && body.error) || { code: String(res.status), message: res.statusText };
    throw new Error(`${err.code}: ${err.message}`);
  }
  return body;
}

const fmt = (n, d = 2) => (n === null || n === undefined ? "–" : Number(n).toFixed(d));
const when = (ts) => (ts ? ts.replace("T", " ").replace(/(\.\d+)?(Z|\+00:00)$/, "Z") : "–");

function bars(values, cls) {
  const box = el("div", { class: "bars" });
  for (const [name, v] of Object.entries(values)) {
    const pct = Math.max(0, Math.min(1, Number(v) || 0)) * 100;
    box.append(el("span", { text: name }), el("div", { class: `bar ${cls || ""}` }, el("i", { style: `width:${pct}%` })),
      el("span", { text: fmt(v) }));
  }
  return box;
}

/* ---------- sessions ---------- */

async function loadSessions() {
  const list = $("sessions");
  list.replaceChildren();
  const data = await api("/sessions");
  for (const s of data.sessions) {
    const li = el("li", { "data-session": s.session_id, onclick: () => openSession(s.session_id) },
      el("strong", { text: s.session_id }),
      el("small", { text: `${s.units} units · ${s.recalls} recalls · ${s.user_ids.join(", ") || "no user"}` }),
      el("small", { text: when(s.last_ts) }));
    list.append(li);
  }
  if (!data.sessions.length) list.append(el("li", { text: "no session for this tenant" }));
  status(`${data.sessions.length} sessions of tenant ${data.tenant_id}`);
}

async function openSession(id) {
  state.session = id;
  for (const li of document.querySelectorAll("#sessions li")) li.classList.toggle("active", li.dataset.session === id);
  $("session-view").hidden = false;
  $("session-title").textContent = id;
  const enc = encodeURIComponent(id);
  const [turns, history, current, recalls] = await Promise.all([
    api(`/sessions/${enc}/turns`), api(`/sessions/${enc}/history`), api(`/sessions/${enc}/state`),
    api(`/sessions/${enc}/recalls`),
  ]);
  renderState(history, current);
  renderRecallList(recalls.recalls);
  renderTurns(turns);
  if (location.hash !== `#session=${enc}` && !location.hash.startsWith("#recall=")) history_push(`#session=${enc}`);
  status(`session ${id}: ${turns.turns.length} turns, ${recalls.recalls.length} recalls`);
}

function renderState(history, current) {
  const box = $("state-view");
  box.replaceChildren();
  const table = el("table", {}, el("tr", {}, ...["time", "event", "task", "stage", "intent chain", "anchoring", "entities"]
    .map((h) => el("th", { text: h }))));
  for (const s of history.steps) {
    table.append(el("tr", {},
      el("td", { text: when(s.ts) }), el("td", { text: s.event_id || "–" }), el("td", { text: s.task_id || "–" }),
      el("td", { text: s.stage }),
      el("td", { class: "chain" }, s.intent_chain.length ? s.intent_chain.map((i) => el("span", { text: i })) : "–"),
      el("td", { text: s.anchor ? `${s.anchor}${s.similarity !== null ? ` (cos ${fmt(s.similarity, 3)})` : ""}` : "–" }),
      el("td", { text: s.entities.join(", ") || "–" })));
  }
  if (!history.steps.length) table.append(el("tr", {}, el("td", { colspan: 7, text: "no task state log for this session" })));
  box.append(table);
  if (current.archived.length) {
    box.append(el("p", { class: "muted", text: "archived tasks: " + current.archived
      .map((a) => `${a.task_id} (${a.reason}, ${a.final_state.current_stage}: ${a.final_state.intent_chain.join(" → ") || "no intent"})`)
      .join("; ") }));
  }
}

function renderRecallList(recalls) {
  const ul = $("recalls");
  ul.replaceChildren();
  for (const r of recalls) {
    ul.append(el("li", {},
      el("a", { onclick: () => showRecall(r), text: `${when(r.ts)} [${r.question_class}] ${r.query_text}` }),
      el("span", { class: "muted", text: ` — ${r.cues.length} cues` })));
  }
  if (!recalls.length) ul.append(el("li", { class: "muted", text: "no recall recorded for this session" }));
}

function unitCard(u) {
  const head = el("div", {},
    el("div", { class: "text", text: u.text }),
    el("div", {},
      el("span", { class: "badge", text: u.unit_type }),
      el("span", { class: "badge", text: `intent ${u.intent_label} ${fmt(u.confidence_score)}` }),
      u.priority_flag ? el("span", { class: "badge alert", text: "priority" }) : null,
      el("span", { class: "badge", text: `entropy ${fmt(u.entropy)}` }),
      el("span", { class: `badge ${u.validity.validity_type === "transient" ? "warn" : "ok"}`,
        text: `${u.validity.validity_type}${u.validity.effective_to ? " until " + when(u.validity.effective_to) : ""}${u.validity.cycle_pattern ? " · " + u.validity.cycle_pattern : ""}` }),
      u.severity !== "low" ? el("span", { class: "badge alert", text: `severity ${u.severity}` }) : null,
      u.resolution_status !== "none" ? el("span", { class: "badge warn", text: u.resolution_status }) : null,
      u.superseded_by ? el("span", { class: "badge alert", text: "superseded" }) : null),
    u.coref.length ? el("div", { class: "coref" }, "coref: ", ...u.coref.map((a) => el("span", { class: a.needs_human_review ? "badge alert" : "badge",
      text: `${a.mention} → ${a.resolved_entity || a.core_referent || "?"} (${fmt(a.confidence)})${a.needs_human_review ? " review" : ""}` }))) : null,
    u.times.length ? el("div", { class: "coref", text: "times: " + u.times.map((t) => `${t.original_form} → ${when(t.start)}`).join("; ") }) : null,
    u.terms.length ? el("div", { class: "coref", text: "terms: " + u.terms.join(", ") }) : null,
    el("div", { class: "muted" }, el("a", { onclick: () => showCue(u.memory_id), text: `CUE-${u.memory_id.replace(/-/g, "").slice(0, 8)}` }),
      u.task_id ? ` · ${u.task_id}` : "", u.topic ? ` · topic ${u.topic}` : ""));
  return el("div", { class: "unit", "data-memory": u.memory_id }, head, bars(u.intent), bars(u.emotion, "emotion"));
}

function renderTurns(data) {
  const box = $("turns");
  box.replaceChildren();
  for (const t of data.turns) {
    box.append(el("div", { class: "turn" },
      el("div", { class: "meta", text: `${when(t.ts)} · ${t.speaker || "?"} (${t.speaker_role}) · ${t.turn_id} · ${t.event_id}` }),
      el("div", { class: "said", text: t.source_text }),
      ...t.units.map(unitCard)));
  }
  if (data.truncated) box.append(el("p", { class: "muted", text: "more units than the scan limit: oldest shown" }));
}

/* ---------- recall view ---------- */

const COMPONENTS = ["emotion_match", "time_proximity", "severity", "resolution_gap", "commitment_strength",
  "semantic", "lexical", "person", "entity", "relevance", "css", "final"];

function showRecall(r) {
  $("recall-view").hidden = false;
  $("recall-title").textContent = r.query_event_id;
  const body = $("recall-body");
  body.replaceChildren(
    el("p", {}, el("strong", { text: r.query_text }), el("span", { class: "muted",
      text: ` — ${r.question_class}, ${when(r.ts)}, session ${r.session_id}${r.user_id ? ", user " + r.user_id : ""}` })));
  if (!r.cues.length) {
    body.append(el("p", { class: "muted", text: r.explanation || "no memory passed the filters for this question" }));
  }
  r.cues.forEach((c, i) => {
    body.append(el("div", { class: `cue rank-${i + 1}`, "data-cue": c.cue_id },
      el("h4", {}, `#${i + 1} `, el("a", { onclick: () => showCue(c.memory_id), text: c.cue_id }),
        ` score ${fmt(c.score, 3)} · css ${fmt(c.components.css, 3)} · ${c.tier}${c.is_fallback ? " · fallback" : ""}`),
      el("div", { text: c.text }),
      el("div", { class: "why", text: "why: " + c.explanation }),
      bars(Object.fromEntries(COMPONENTS.slice(0, 5).map((k) => [k, c.components[k]])), "score")));
  });
  if (r.cues.length > 1) body.append(compareTable(r.cues));
  if (r.validity_decisions.length) {
    body.append(el("h3", { text: "validity decisions" }), el("table", {},
      el("tr", {}, el("th", { text: "memory" }), el("th", { text: "decision" }), el("th", { text: "detail" })),
      ...r.validity_decisions.map((d) => el("tr", {}, el("td", {}, el("a", { onclick: () => showCue(d.memory_id), text: d.memory_id.slice(0, 8) })),
        el("td", { text: d.decision }), el("td", { text: d.detail })))));
  }
  if (r.evidence_chain.length) {
    body.append(el("h3", { text: "evidence chain" }), el("ul", {},
      ...r.evidence_chain.map((e) => el("li", { text: `${e.winner} beats ${e.loser}${e.memory_id ? " (" + e.memory_id.slice(0, 8) + ")" : ""}: ${e.detail}` }))));
  }
  if (r.debug_marker) body.append(el("p", {}, "markers: ", el("span", { class: "marker", text: r.debug_marker })));
  $("recall-view").scrollIntoView({ block: "start" });
  const hash = `#recall=${encodeURIComponent(r.query_event_id)}`;
  if (location.hash !== hash) history_push(hash);
}

function compareTable(cues) {
  const table = el("table", { class: "compare" },
    el("tr", {}, el("th", { text: "why the top three won: component" }), ...cues.map((c, i) => el("th", { text: `#${i + 1} ${c.cue_id}` }))));
  for (const k of COMPONENTS) {
    const vals = cues.map((c) => c.components[k]);
    const best = Math.max(...vals);
    table.append(el("tr", {}, el("td", { text: k }),
      ...vals.map((v) => el("td", { class: v === best && best > 0 ? "ok" : "", text: fmt(v, 3) }))));
  }
  return table;
}

async function findMarker(text) {
  try {
    const found = await api(`/debug-marker?marker=${encodeURIComponent(text)}`);
    if (!found.recalls.length) {
      status(`no recall of this tenant has ${found.markers.map((m) => m.cue_id).join(", ")}: the cue was never activated here`, true);
      return;
    }
    const r = found.recalls[0];
    if (state.session !== r.session_id) await openSession(r.session_id);
    showRecall(r);
    status(found.recalls.length > 1 ? `${found.recalls.length} recalls carry this marker; newest shown (see the session's recall list)`
      : `marker found in recall ${r.query_event_id}`);
  } catch (e) { status(e.message, true); }
}

async function showCue(id) {
  try {
    const c = await api(`/cues/${encodeURIComponent(id)}`);
    $("cue-view").hidden = false;
    $("cue-title").textContent = `${c.cue_id} (${c.memory.memory_id})`;
    $("cue-body").replaceChildren(unitCard(c.memory),
      el("p", { class: "muted", text: `recalled in: ${c.recalled_in.join(", ") || "no recall yet"}` }),
      el("details", {}, el("summary", { text: "every annotation (JSON)" }), el("pre", { text: JSON.stringify(c.memory, null, 2) })));
    $("cue-view").scrollIntoView({ block: "start" });
  } catch (e) { status(e.message, true); }
}

/* ---------- health ---------- */

async function loadHealth() {
  const h = await api("/decision-health");
  $("health-source").textContent = `${h.source === "flow_metrics" ? "from the flow's metrics" : "computed from stored records"}`;
  const head = el("tr", {}, el("th", { text: "decision point" }), el("th", { text: "metric" }), el("th", { text: "alert" }),
    ...h.windows.map((w) => el("th", { text: when(w.start).slice(5, 16) })));
  const table = el("table", {}, head);
  for (const p of h.points) {
    table.append(el("tr", {}, el("td", { text: p.decision_point }), el("td", { text: p.label, title: p.key }),
      el("td", { class: p.status, text: p.rule || "" }),
      ...p.values.map((v) => el("td", { class: v === null ? "no_data" : "", text: v === null ? "·" : fmt(v) }))));
  }
  $("health").replaceChildren(el("p", { class: "muted", text: h.source_detail }), table);
}

/* ---------- start ---------- */

function history_push(hash) { history.replaceState(null, "", hash); }

async function connect() {
  state.tenant = $("tenant").value.trim();
  state.key = $("api-key").value;
  sessionStorage.setItem("rf-tenant", state.tenant);
  try {
    await loadSessions();
    await loadHealth();
    const m = location.hash.match(/^#(session|recall)=(.+)$/);
    if (m && m[1] === "session") await openSession(decodeURIComponent(m[2]));
    if (m && m[1] === "recall") {
      const r = await api(`/recalls/${m[2]}`);
      await openSession(r.session_id);
      showRecall(r);
    }
  } catch (e) { status(e.message, true); }
}

async function start() {
  try {
    state.config = await api("/inspector/config");
  } catch (e) { status(e.message, true); return; }
  const c = state.config;
  $("key-box").hidden = c.auth !== "required";
  $("tenant-box").hidden = c.auth === "required";
  for (const t of c.tenants) $("tenant-list").append(el("option", { value: t }));
  $("tenant").value = sessionStorage.getItem("rf-tenant") || c.tenants[0] || c.default_tenant;
  $("connect").addEventListener("click", connect);
  $("marker-form").addEventListener("submit", (ev) => { ev.preventDefault(); findMarker($("marker").value); });
  $("ask-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = $("ask-text").value.trim();
    if (!text || !state.session) return;
    try {
      const body = { session_id: state.session, text };
      if ($("ask-nocontext").checked) body.context = [];
      const r = await api("/recall", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      await openSession(state.session);
      showRecall(r);
    } catch (e) { status(e.message, true); }
  });
  if (c.auth !== "required") await connect();
  else status("enter the API key and press load");
}

start();
