// kgsql's page: the schema graph of a database (cytoscape), a question, and how it was answered.
// Everything comes from the service's /api/ routes; window.kgsql exposes the state for tests.
"use strict";

const AUTO = "";  // the database choice that routes each question (kgsql.route)
const CHECK_READINGS = 3;  // the readings "check" asks for: the method option opinions (docs/eval.md, session 34)
const state = { db: null, cy: null, answer: null, thread: { id: null, turns: [] } };
window.kgsql = state;

const $ = (id) => document.getElementById(id);

async function api(path, body) {
  const init = body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const response = await fetch(path, init);
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function say(text, isError = false) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

function el(tag, text, attrs = {}) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  Object.entries(attrs).forEach(([k, v]) => node.setAttribute(k, v));
  return node;
}

// ------------------------------------------------------------------ the graph

const FONT_PX = 16;     // label size at zoom 1
const MIN_FONT_PX = 10; // never fit the picture smaller than this on screen
const STYLE = [
  { selector: "node", style: {
      "shape": "round-rectangle", "background-color": "#e8eef7", "border-color": "#7a8ba3", "border-width": 1,
      "label": "data(label)", "text-valign": "center", "text-halign": "center", "font-size": FONT_PX,
      "text-wrap": "wrap", "width": "data(w)", "height": "data(h)" } },
  { selector: "edge", style: {
      "width": 1.2, "line-color": "#9aa7b8", "target-arrow-color": "#9aa7b8", "target-arrow-shape": "triangle",
      "curve-style": "bezier", "arrow-scale": 0.8 } },
  { selector: "edge.discovered, edge.mined", style: { "line-style": "dashed" } },
  { selector: "node.match", style: { "border-color": "#d48a00", "border-width": 3 } },
  { selector: "node.selected", style: { "background-color": "#ffd76a", "border-color": "#a36b00", "border-width": 2 } },
  { selector: "edge.selected", style: { "line-color": "#a36b00", "target-arrow-color": "#a36b00", "width": 2.5 } },
  { selector: "node.faded, edge.faded", style: { "opacity": 0.35 } },
];

function drawGraph(picture) {
  const nodes = picture.tables.map((t) => {
    const label = `${t.name}\n(${t.columns.length} columns)`;
    const longest = Math.max(...label.split("\n").map((line) => line.length));
    return { data: { id: t.name, label, columns: t.columns, rows: t.row_count, w: 18 + 9.2 * longest, h: 48 } };
  });
  const names = new Set(picture.tables.map((t) => t.name));
  const edges = picture.joins
    .map((j, i) => ({ j, i, from: j.from.split(".")[0], to: j.to.split(".")[0] }))
    .filter((e) => names.has(e.from) && names.has(e.to) && e.from !== e.to)
    .map((e) => ({ data: { id: `e${e.i}`, source: e.from, target: e.to, label: `${e.j.from} = ${e.j.to}` },
                   classes: e.j.origin || "declared" }));
  // start from a grid (the same picture every time), let the force layout settle, then push apart
  // any boxes that still touch: readable at 50+ tables
  const side = Math.ceil(Math.sqrt(nodes.length));
  nodes.forEach((n, i) => { n.position = { x: (i % side) * 180, y: Math.floor(i / side) * 90 }; });
  if (state.cy) state.cy.destroy();
  state.cy = cytoscape({ container: $("graph"), elements: { nodes, edges }, style: STYLE,
                         layout: { name: "preset" } });
  state.cy.layout({ name: "cose", animate: false, randomize: false, nodeDimensionsIncludeLabels: true,
                    idealEdgeLength: () => 30, nodeRepulsion: () => 4000, componentSpacing: 40, padding: 10 }).run();
  toAspect(state.cy, $("graph").clientWidth / Math.max(1, $("graph").clientHeight));
  separate(state.cy);
  state.cy.fit(undefined, 12);
  if (state.cy.zoom() * FONT_PX < MIN_FONT_PX) {  // too many tables to read them all at once:
    const hub = state.cy.nodes().max((n) => n.degree()).ele;  // readable labels around the busiest table;
    state.cy.zoom(MIN_FONT_PX / FONT_PX);                     // pan, zoom and search reach the rest
    state.cy.center(hub);
  }
  state.cy.on("tap", "node", (event) => showTable(event.target.data()));
  state.drawn = false;  // true once the canvas has painted the laid-out graph (tests wait for it)
  state.cy.forceRender();
  requestAnimationFrame(() => requestAnimationFrame(() => { state.drawn = true; }));
}

// stretch the picture to the canvas's shape, so fitting it wastes no room (and labels stay larger)
function toAspect(cy, aspect) {
  const box = cy.nodes().boundingBox();
  if (!box.w || !box.h) return;
  const cx = (box.x1 + box.x2) / 2, cyy = (box.y1 + box.y2) / 2;
  const sx = box.w / box.h < aspect ? (aspect * box.h) / box.w : 1;
  const sy = box.w / box.h > aspect ? box.w / (aspect * box.h) : 1;
  cy.nodes().positions((n) => ({ x: cx + (n.position("x") - cx) * sx, y: cyy + (n.position("y") - cyy) * sy }));
}

function separate(cy, gap = 6, rounds = 100) {
  const nodes = cy.nodes();
  for (let round = 0; round < rounds; round++) {
    let moved = false;
    for (let i = 0; i < nodes.length; i++) {
      for (let j = i + 1; j < nodes.length; j++) {
        const a = nodes[i].boundingBox(), b = nodes[j].boundingBox();
        const dx = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1) + gap;
        const dy = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1) + gap;
        if (dx <= 0 || dy <= 0) continue;
        moved = true;
        const pa = nodes[i].position(), pb = nodes[j].position();
        if (dx < dy) {
          const s = (pa.x <= pb.x ? -1 : 1) * dx / 2;
          nodes[i].position({ x: pa.x + s, y: pa.y }); nodes[j].position({ x: pb.x - s, y: pb.y });
        } else {
          const s = (pa.y <= pb.y ? -1 : 1) * dy / 2;
          nodes[i].position({ x: pa.x, y: pa.y + s }); nodes[j].position({ x: pb.x, y: pb.y - s });
        }
      }
    }
    if (!moved) return;
  }
}

function showTable(table) {
  const box = $("table");
  box.replaceChildren(el("h3", `Table ${table.id}` + (table.rows != null ? ` (${table.rows} rows)` : "")));
  const list = el("ul");
  table.columns.forEach((c) => list.appendChild(el("li", `${c.name} ${c.type || ""}${c.primary_key ? " (key)" : ""}`)));
  box.appendChild(list);
}

function search(text) {
  const cy = state.cy;
  if (!cy) return;
  const q = text.trim().toLowerCase();
  cy.nodes().removeClass("match");
  if (!q) return;
  const hits = cy.nodes().filter((n) => n.id().toLowerCase().includes(q)
    || n.data("columns").some((c) => c.name.toLowerCase().includes(q)));
  hits.addClass("match");
  if (hits.length) cy.animate({ fit: { eles: hits, padding: 80 } }, { duration: 250 });
}

function tablesOfSql(sql) {
  // The graph's tables the SQL reads (after FROM, JOIN or a comma; case-insensitive): what the answer used.
  const text = ` ${String(sql || "").toLowerCase()} `;
  return state.cy.nodes().map((n) => n.id()).filter((id) => {
    const name = id.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return new RegExp(`(from|join|,)\\s*["\`\\[]?${name}["\`\\]]?([^a-z0-9_]|$)`).test(text);
  });
}

function highlight(answer) {
  const cy = state.cy;
  const used = tablesOfSql(answer.sql);  // the tables the SQL uses; without SQL, what retrieval selected
  const tables = new Set(used.length ? used : (answer.selection && answer.selection.tables) || []);
  cy.elements().removeClass("selected faded");
  if (!tables.size) return;
  cy.nodes().forEach((n) => n.addClass(tables.has(n.id()) ? "selected" : "faded"));
  cy.edges().forEach((e) => e.addClass(tables.has(e.source().id()) && tables.has(e.target().id()) ? "selected" : "faded"));
}

// ------------------------------------------------------------------ asking

// A cell as the sqlite3 shell and `kgsql ask` show it: NULL, a real to 15 significant digits (11.35, not
// the binary float's 11.350000000000001).
function shownValue(v) {
  if (v === null) return "NULL";
  if (typeof v === "number" && Number.isFinite(v) && !Number.isInteger(v)) return String(Number(v.toPrecision(15)));
  return String(v);
}

function rowsTable(columns, rows) {
  const table = el("table", undefined, { id: "result" });
  const head = el("tr");
  columns.forEach((c) => head.appendChild(el("th", c)));
  table.appendChild(head);
  rows.slice(0, 50).forEach((r) => {
    const tr = el("tr");
    r.forEach((v) => tr.appendChild(el("td", shownValue(v))));
    table.appendChild(tr);
  });
  return table;
}

function hintsOf(answer) {
  const prompt = (answer.prompts || []).map((p) => p.messages.map((m) => m.content).join("\n")).join("\n");
  const block = prompt.split("Hints from the database:")[1];
  if (!block) return [];
  const lines = block.split("\n").slice(1).map((l) => l.trim());
  const end = lines.indexOf("");  // the block ends at the first blank line
  return lines.slice(0, end < 0 ? lines.length : end).filter((l) => l && !l.startsWith("/*")).slice(0, 8);
}

function showAnswer(answer) {
  state.answer = answer;
  $("answer").hidden = false;
  $("sql").textContent = answer.sql || "(no SQL)";
  const tokens = (answer.tokens && answer.tokens.total) || 0;
  $("flags").replaceChildren(...(answer.warnings || []).map((f) => el("li", `⚠ ${f.text}`, { class: "flag", "data-code": f.code })));
  $("explanation").replaceChildren(...((answer.explanation || {}).lines || []).map((line) => el("li", line)));
  $("explained").hidden = !((answer.explanation || {}).lines || []).length;
  const readings = answer.opinions || [];  // "check": the answer's readings, each agreeing or not
  const checked = readings.length
    ? ` · checked: ${readings.filter((o) => o.agrees === true).length} of ${readings.length} reading(s) returned these rows` : "";
  $("cost").textContent = `${answer.rounds} round(s) · ${tokens} tokens · ${answer.latency_s.toFixed(1)} s${checked}`;
  $("rows").replaceChildren(answer.refusal ? el("p", answer.refusal, { class: "refusal" })
    : answer.error ? el("p", answer.error, { class: "error" }) : rowsTable(answer.columns, answer.rows));
  drawChart(answer.chart || null);  // chart.js: bars, a line, a scatter or a map when the rows' shape fits
  const selected = $("selected");
  selected.replaceChildren();
  const sel = answer.selection || {};
  (sel.tables || []).forEach((t) => {
    const cols = (sel.columns || []).filter((c) => c.table === t).map((c) => c.column);
    selected.appendChild(el("li", `${t}: ${cols.join(", ") || "(table)"}`));
  });
  $("hints").replaceChildren(...hintsOf(answer).map((h) => el("li", h)));
  $("calls").replaceChildren(...(answer.prompts || []).map((p) => {
    const item = el("li");
    item.appendChild(el("strong", `${p.step}: ${p.prompt_tokens} prompt + ${p.completion_tokens} generated tokens`));
    item.appendChild(el("pre", p.messages[p.messages.length - 1].content));
    item.appendChild(el("pre", p.response));
    return item;
  }));
  $("taught").textContent = "";
  // only a query that ran and returned rows can be kept as right (an empty one would teach its joins unchecked)
  $("right").disabled = Boolean(answer.error) || !answer.sql || !(answer.rows && answer.rows.length);
  highlight(answer);
  $("answer").scrollTop = 0;
  $("sql").scrollIntoView({ block: "nearest" });  // the SQL and rows first, not the end of the prompts
}

function clearAnswer() {
  // a new database: nothing of the previous one's question, answer, kept note or panels stays
  state.answer = null;
  $("answer").hidden = true;
  $("question").value = "";
  $("taught").textContent = "";
  $("fix").value = "";
  ["sql", "cost"].forEach((id) => { $(id).textContent = ""; });
  ["rows", "selected", "hints", "calls", "flags", "explanation"].forEach((id) => $(id).replaceChildren());
  drawChart(null);
}

// ------------------------------------------------------------------ the conversation

// A thread per database, kept by the service under an id made here: a follow-up goes with it and is
// read in the context of the earlier questions; "New conversation" and another database start a new one.
function newThread() {
  const id = (window.crypto && crypto.randomUUID) ? crypto.randomUUID()
    : `t${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
  state.thread = { id, turns: [] };
  showTurns([]);
}

function showTurns(turns) {
  state.thread.turns = turns;
  $("thread").hidden = turns.length === 0;
  $("turns").replaceChildren(...turns.map((t) => {
    const item = el("li", t.question, t.error ? { class: "failed" } : {});
    if (t.standalone && t.standalone !== t.question) item.appendChild(el("span", ` → read as: ${t.standalone}`, { class: "muted" }));
    return item;
  }));
}

async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question || state.db === null) return;
  say("Answering...");
  $("go").disabled = true;
  try {
    const body = { question, method: $("method").value, trace: true, conversation: state.thread.id };
    if ($("check").checked && !$("check").disabled) body.sets = { opinions: CHECK_READINGS };
    if (state.db !== AUTO) body.db = state.db;  // "auto": the service routes the question to a database
    const answer = await api("/api/ask", body);
    if (answer.routing) drawGraph(await api(`/api/databases/${encodeURIComponent(answer.routing.db)}/graph`));
    showTurns(answer.turns || []);
    $("question").value = "";  // ready for the follow-up
    showAnswer(answer);
    const flagged = (answer.warnings || []).length;  // issue 34: "Answered." alone hid a join on nothing
    say(routedNote(answer.routing) + (answer.refusal ? "Not answered: the database lacks what the question needs."
      : answer.error ? "The query did not run."
      : flagged ? `Answered, with ${flagged} warning(s): see under the SQL.` : "Answered."), Boolean(answer.error));
  } catch (err) {
    say(err.message, true);
  } finally {
    $("go").disabled = false;
  }
}

// Which database a routed question went to; a close second is named (the answer is the first's).
function routedNote(routing) {
  if (!routing) return "";
  const close = routing.tied_with ? ` (close call: ${routing.tied_with} was nearly as likely; pick it to ask there)` : "";
  // why this database, worded by the service: a name it stores, a likelier one whose answer said nothing
  const why = (routing.notes || []).map((note) => ` (${note})`).join("");
  return `Routed to ${routing.db}${why}${close}. `;
}

async function teach(sql) {
  if (!state.answer || !sql.trim()) return;
  try {
    // a follow-up is kept as it was read (standing alone), not as its words that need the earlier ones
    const question = state.answer.standalone || state.answer.question;
    const db = state.answer.db || state.db;  // a routed answer's database
    const result = await api("/api/examples", { db, question, sql });
    $("taught").textContent = `kept: ${result.examples} example(s) for ${db}`;
  } catch (err) {
    $("taught").textContent = err.message;
  }
}

// ------------------------------------------------------------------ start

async function pick(db) {
  state.db = db;
  clearAnswer();
  newThread();
  if (db === AUTO) {
    say("auto: each question goes to the database it is likeliest about (a close second is named).");
    return;
  }
  say(`Loading ${db}...`);
  try {
    drawGraph(await api(`/api/databases/${encodeURIComponent(db)}/graph`));
    const whole = state.cy.nodes().every((n) => {
      const b = n.renderedBoundingBox();
      return b.x1 >= 0 && b.y1 >= 0 && b.x2 <= state.cy.width() && b.y2 <= state.cy.height();
    });
    say(`${db}: ${state.cy.nodes().length} tables.` + (whole ? "" : " Drag to pan, scroll to zoom, or search.")
        + " Ask a question.");
  } catch (err) {
    say(err.message, true);
  }
}

async function start() {
  if (typeof cytoscape === "undefined") {
    say("The graph library is not installed (./run install copies it with npm).", true);
    return;
  }
  const dbs = await api("/api/databases");
  const select = $("db");
  dbs.forEach((d) => select.appendChild(el("option", `${d.name} (${d.tables})`, { value: d.name })));
  if (dbs.length > 1) select.appendChild(el("option", "auto (route each question)", { value: AUTO }));
  select.addEventListener("change", () => pick(select.value));
  $("search").addEventListener("input", (e) => search(e.target.value));
  $("ask").addEventListener("submit", ask);
  // only the kgsql method has readings (the option opinions): "check" asks nothing of another
  $("method").addEventListener("change", () => { $("check").disabled = $("method").value !== "kgsql"; });
  $("right").addEventListener("click", () => teach(state.answer ? state.answer.sql : ""));
  $("save").addEventListener("click", () => teach($("fix").value));
  $("new-thread").addEventListener("click", () => { clearAnswer(); newThread(); say("A new conversation: ask a question."); });
  const wanted = new URLSearchParams(location.search).get("db");
  if (wanted && dbs.some((d) => d.name === wanted)) select.value = wanted;
  if (dbs.length) await pick(select.value);
  else say("The graph holds no databases yet: python -m kgsql.ingest FILE");
}

start().catch((err) => say(err.message, true));
