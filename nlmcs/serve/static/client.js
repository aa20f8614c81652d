// The nlmcs browser client: draws the engine's state on a canvas and sends the player's choices
// to the server's JSON API. Everything shown comes from the server's view of the game; the client
// keeps only what is selected. The game id lives in the URL (#game=ID), so a reload resumes the
// game and another tab can hold another game.
"use strict";

const TERRAIN_COLOURS = {
  grassland: "#73bf4d", plains: "#ccc766", desert: "#edd98c", tundra: "#b3b8b3",
  forest: "#267326", hills: "#8c804d", mountains: "#736661", swamp: "#597366",
  jungle: "#338c40", ocean: "#3359b3",
};
const SELECTED = "#00e5ff";  // outline of the selected unit or city (capitals have a gold one)
const DELTAS = [[0, -1], [1, -1], [1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1]];

const el = (id) => document.getElementById(id);
let view = null;        // the server's last answer for this game
let selected = null;    // agent id ("unit:3", "city:5") or null
let busy = false;       // a request is in flight
let tile = 32;          // pixels per tile
let config = null;      // server facts (opponent, corpus, maps) and the games to resume
const HINT = "Click one of your units or cities.";

// --- talking to the server -------------------------------------------------------------------
async function api(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  let data = null;
  try { data = await response.json(); } catch (e) { data = { error: response.statusText }; }
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

function say(text, isError) {
  el("message").textContent = text || "";
  el("message").className = isError ? "error" : "";
}

async function run(work) {
  if (busy) return;
  busy = true;
  document.body.style.cursor = "progress";
  try { await work(); } catch (err) { say(err.message, true); } finally {
    busy = false;
    document.body.style.cursor = "";
    render();
  }
}

function gameId() {
  const m = /game=([0-9a-f]{16})/.exec(location.hash);
  return m ? m[1] : null;
}

async function loadGame(id) {
  view = await api("GET", `/api/games/${id}`);
  location.hash = `game=${view.id}`;
  await refreshGames();
}

async function newGame() {
  const body = { map: el("map-select").value };
  const seed = el("seed").value.trim();
  if (seed !== "") body.seed = Number(seed);
  view = await api("POST", "/api/games", body);
  select(nextAgent(null));
  location.hash = `game=${view.id}`;
  say(`New game ${view.id} against ${view.players[1 - view.human].name}.`);
  await refreshGames();
}

async function act(agent, action) {
  view = await api("POST", `/api/games/${view.id}/actions`,
                   { turn: view.turn, agent, action: { kind: action.kind, arg: action.arg } });
  say(`${agent}: ${action.text}`);
  const still = agentById(agent);
  if (!still || still.acted) select(nextAgent(agent));
}

async function endTurn() {
  const before = view.turn;
  view = await api("POST", `/api/games/${view.id}/end-turn`, { turn: view.turn });
  select(nextAgent(null));
  say(view.over ? gameOverText() : `Turn ${before} ended; the opponent made ${view.opponent_moves.length} moves.`);
  await refreshGames();
}

async function askAdvice() {
  const agent = selected;
  el("advice").innerHTML = `<span class="muted">The text agent is thinking about ${agent}…</span>`;
  const a = await api("GET", `/api/games/${view.id}/advice?agent=${encodeURIComponent(agent)}`);
  if (a.turn !== view.turn || agent !== selected) return;
  const box = el("advice");
  box.textContent = "";
  const head = document.createElement("div");
  head.innerHTML = `<b>Text agent</b> would <b></b> <span class="muted">(${a.rollouts} roll-outs, ${a.seconds}s)</span>`;
  head.querySelector("b + b").textContent = a.action ? a.action.text : "do nothing";
  box.appendChild(head);
  const quote = document.createElement("blockquote");
  quote.textContent = a.sentence ? a.sentence : "No manual sentence mentions this agent.";
  box.appendChild(quote);
  if (a.relevance !== null) {
    const p = document.createElement("div");
    p.className = "muted";
    p.textContent = a.relevance_verdict && a.relevance_verdict.startsWith("uniform")
      ? `relevance is uniform: this sentence is no more relevant than the others (p = ${a.relevance.toFixed(3)})`
      : `most relevant sentence, p = ${a.relevance.toFixed(3)}` + (a.relevance_verdict ? ` (${a.relevance_verdict})` : "");
    box.appendChild(p);
  }
}

async function ingest() {
  const answer = await api("POST", "/api/ingest", {});
  say(answer.message);
}

function select(agent) {
  if (agent !== selected) el("advice").textContent = "";
  selected = agent;
}

// --- what the view holds -----------------------------------------------------------------------
function agentById(id) { return view ? view.agents.find((a) => a.agent === id) : null; }
function unitAt(t) { return view.state.units.filter((u) => u.tile === t); }
function cityAt(t) { return view.state.cities.find((c) => c.tile === t); }
function cityInfo(agent) { return view.cities.find((c) => c.agent === agent); }

function nextAgent(after) {
  if (!view || view.over) return null;
  const open = view.agents.filter((a) => !a.acted && a.kind !== "civ");
  if (!open.length) return null;
  const i = open.findIndex((a) => a.agent === after);
  return open[(i + 1) % open.length].agent;
}

function gameOverText() {
  if (!view.over) return "";
  if (view.winner === null) return "Game over: undecided (equal scores).";
  return view.winner === view.human ? "Game over: you won!" : "Game over: the opponent won.";
}

// Each seat's colour comes with the game (`players[p].colour`, from the server's one table), so
// the map and the legend cannot disagree.
function colourOf(player) {
  const p = view.players[player];
  return p && p.colour ? p.colour.hex : "#888";
}

function ownerText(player) {
  const p = view.players[player];
  const who = player === view.human ? "yours" : (p ? p.name : `player ${player}`);
  return p && p.colour ? `${p.colour.name}, ${who}` : who;
}

// --- drawing -----------------------------------------------------------------------------------
function tileXY(t) { const w = view.state.map.width; return [t % w, Math.floor(t / w)]; }

function drawMap() {
  const canvas = el("map");
  const ctx = canvas.getContext("2d");
  if (!view) { ctx.clearRect(0, 0, canvas.width, canvas.height); return; }
  const map = view.state.map;
  tile = Math.max(20, Math.min(48, Math.floor(Math.min(900 / map.width, 640 / map.height))));
  canvas.width = map.width * tile;
  canvas.height = map.height * tile;
  const names = view.legend.terrain;
  map.terrain.forEach((row, y) => {
    [...row].forEach((ident, x) => {
      ctx.fillStyle = TERRAIN_COLOURS[names[ident]] || "#000";
      ctx.fillRect(x * tile, y * tile, tile, tile);
    });
  });
  ctx.strokeStyle = "rgba(0,0,0,0.12)";
  for (let x = 0; x <= map.width; x++) line(ctx, x * tile, 0, x * tile, canvas.height);
  for (let y = 0; y <= map.height; y++) line(ctx, 0, y * tile, canvas.width, y * tile);
  drawRivers(ctx, map);
  for (const [t, imps] of map.improvements) drawImprovements(ctx, t, imps);
  for (const [t, name] of map.resources) {
    const [x, y] = tileXY(t);
    ctx.fillStyle = "#ffd700";
    ctx.strokeStyle = "#7a5c00";
    ctx.beginPath();
    ctx.arc((x + 0.82) * tile, (y + 0.18) * tile, tile * 0.11, 0, 2 * Math.PI);
    ctx.fill(); ctx.stroke();
  }
  drawTargets(ctx);
  for (const c of view.state.cities) drawCity(ctx, c);
  drawUnits(ctx);
  drawOpponentMoves(ctx);
}

function line(ctx, x1, y1, x2, y2) {
  ctx.beginPath(); ctx.moveTo(x1, y1); ctx.lineTo(x2, y2); ctx.stroke();
}

function drawRivers(ctx, map) {
  const river = new Set(map.rivers);
  const ocean = (t) => view.legend.terrain[map.terrain[Math.floor(t / map.width)][t % map.width]] === "ocean";
  ctx.strokeStyle = "#6fa8ff";
  ctx.lineWidth = Math.max(2, tile / 9);
  for (const t of map.rivers) {
    const [x, y] = tileXY(t);
    let linked = false;
    for (const d of [0, 2, 4, 6]) {
      const nx = x + DELTAS[d][0], ny = y + DELTAS[d][1];
      if (nx < 0 || ny < 0 || nx >= map.width || ny >= map.height) continue;
      const n = ny * map.width + nx;
      if (river.has(n) || ocean(n)) {
        line(ctx, (x + 0.5) * tile, (y + 0.5) * tile, (x + 0.5 + DELTAS[d][0] / 2) * tile,
             (y + 0.5 + DELTAS[d][1] / 2) * tile);
        linked = true;
      }
    }
    if (!linked) line(ctx, (x + 0.2) * tile, (y + 0.5) * tile, (x + 0.8) * tile, (y + 0.5) * tile);
  }
  ctx.lineWidth = 1;
}

function drawImprovements(ctx, t, imps) {
  const [x, y] = tileXY(t);
  if (imps.includes("road")) {
    ctx.strokeStyle = "#5a3d1e"; ctx.lineWidth = 2;
    line(ctx, x * tile, (y + 0.85) * tile, (x + 1) * tile, (y + 0.85) * tile);
    ctx.lineWidth = 1;
  }
  if (imps.includes("irrigation")) {
    ctx.strokeStyle = "#00e5ff";
    for (let k = 1; k < 4; k++) line(ctx, (x + k / 4) * tile, (y + 0.6) * tile, (x + k / 4) * tile, (y + 0.75) * tile);
  }
  if (imps.includes("mine")) {
    ctx.fillStyle = "#111";
    ctx.beginPath();
    ctx.moveTo((x + 0.1) * tile, (y + 0.8) * tile);
    ctx.lineTo((x + 0.25) * tile, (y + 0.55) * tile);
    ctx.lineTo((x + 0.4) * tile, (y + 0.8) * tile);
    ctx.fill();
  }
}

function drawCity(ctx, c) {
  const [x, y] = tileXY(c.tile);
  ctx.fillStyle = colourOf(c.owner);
  ctx.fillRect((x + 0.08) * tile, (y + 0.08) * tile, tile * 0.84, tile * 0.84);
  ctx.strokeStyle = c.capital ? "#ffd700" : "#fff";
  ctx.lineWidth = 2;
  ctx.strokeRect((x + 0.08) * tile, (y + 0.08) * tile, tile * 0.84, tile * 0.84);
  ctx.lineWidth = 1;
  ctx.fillStyle = "#fff";
  ctx.font = `bold ${Math.round(tile * 0.45)}px sans-serif`;
  ctx.textAlign = "center"; ctx.textBaseline = "middle";
  ctx.fillText(String(c.size), (x + 0.5) * tile, (y + 0.5) * tile);
  if (selected === `city:${c.id}`) outline(ctx, c.tile, SELECTED);
}

function drawUnits(ctx) {
  const stacks = new Map();
  for (const u of view.state.units) {
    if (!stacks.has(u.tile)) stacks.set(u.tile, []);
    stacks.get(u.tile).push(u);
  }
  for (const [t, units] of stacks) {
    const u = units.find((v) => `unit:${v.id}` === selected) || units[0];
    const [x, y] = tileXY(t);
    const inCity = cityAt(t) !== undefined;
    const cx = (x + 0.5) * tile, cy = (y + (inCity ? 0.78 : 0.5)) * tile;
    const r = tile * (inCity ? 0.2 : 0.32);
    const mine = u.owner === view.human;
    const a = mine ? agentById(`unit:${u.id}`) : null;
    ctx.globalAlpha = mine && (!a || a.acted) ? 0.55 : 1;
    ctx.fillStyle = colourOf(u.owner);
    ctx.beginPath(); ctx.arc(cx, cy, r, 0, 2 * Math.PI); ctx.fill();
    ctx.strokeStyle = "#fff"; ctx.stroke();
    ctx.fillStyle = "#fff";
    ctx.font = `bold ${Math.round(r * 1.1)}px sans-serif`;
    ctx.textAlign = "center"; ctx.textBaseline = "middle";
    ctx.fillText(u.type[0].toUpperCase(), cx, cy + 1);
    ctx.globalAlpha = 1;
    if (units.length > 1) {
      ctx.fillStyle = "#000";
      ctx.font = `${Math.round(tile * 0.28)}px sans-serif`;
      ctx.fillText(String(units.length), cx + r, cy - r);
    }
    if (units.some((v) => `unit:${v.id}` === selected)) outline(ctx, t, SELECTED);
  }
}

function outline(ctx, t, colour) {
  const [x, y] = tileXY(t);
  ctx.strokeStyle = colour; ctx.lineWidth = 3;
  ctx.strokeRect(x * tile + 1.5, y * tile + 1.5, tile - 3, tile - 3);
  ctx.lineWidth = 1;
}

function drawTargets(ctx) {
  const a = agentById(selected);
  if (!a || a.acted) return;
  for (const choice of a.actions) {
    if (choice.target === null) continue;
    const [x, y] = tileXY(choice.target);
    ctx.fillStyle = choice.kind === "attack" ? "rgba(255,0,0,0.35)" : "rgba(255,255,255,0.35)";
    ctx.fillRect(x * tile, y * tile, tile, tile);
  }
}

function drawOpponentMoves(ctx) {
  ctx.setLineDash([4, 3]);
  ctx.lineWidth = 2;
  for (const m of view.opponent_moves) {
    if (m.from === null || m.to === null || m.to === undefined || m.from === m.to) continue;
    const [x1, y1] = tileXY(m.from), [x2, y2] = tileXY(m.to);
    ctx.strokeStyle = colourOf(m.player);
    line(ctx, (x1 + 0.5) * tile, (y1 + 0.5) * tile, (x2 + 0.5) * tile, (y2 + 0.5) * tile);
  }
  ctx.setLineDash([]);
  ctx.lineWidth = 1;
}

// --- panels ------------------------------------------------------------------------------------
function render() {
  // Before a game exists the board says what to do first, not how to play.
  el("empty").hidden = !!view;
  el("map").hidden = !view;
  el("legend").hidden = !view;
  drawMap();
  renderResumable();
  const playing = view && !view.over;
  el("end-turn").disabled = !playing || busy;
  if (!view) {
    el("turn").textContent = "no game";
    el("scores").textContent = "";
    el("hover").textContent = "";
    return;
  }
  if (!el("hover").textContent) el("hover").textContent = HINT;
  renderLegend();
  el("turn").textContent = `turn ${view.turn} / ${view.max_turns}` + (view.over ? " — over" : "");
  const me = view.players[view.human], them = view.players[1 - view.human];
  el("scores").innerHTML = `you <b>${me.score.toFixed(1)}</b> · ${them.name} <b>${them.score.toFixed(1)}</b>`;
  el("game-info").textContent = `game ${view.id}; opponent ${them.name}. ${gameOverText()}`;
  renderResearch();
  renderSelected();
  renderAgents();
  const list = el("opponent-moves");
  list.textContent = "";
  for (const m of view.opponent_moves) {
    const li = document.createElement("li");
    const outcome = m.kind === "attack" ? (m.survived ? " and won" : " and lost") : "";
    li.textContent = `${m.what} ${m.agent}: ${m.text}${outcome}`;
    list.appendChild(li);
  }
  if (!view.opponent_moves.length) {
    list.innerHTML = '<li class="muted" style="list-style: none">none since your last turn</li>';
  }
}

function swatch(hex) {
  const s = document.createElement("span");
  s.className = "swatch";
  s.style.background = hex;
  return s;
}

function renderLegend() {
  const box = el("legend");
  box.textContent = "";
  const mine = view.players[view.human];
  const order = [mine, ...view.players.filter((p) => p.player !== view.human)];
  for (const p of order) {
    const item = document.createElement("span");
    item.dataset.player = String(p.player);
    const label = document.createElement("b");
    label.textContent = p.player === view.human ? "You:" : "Opponent:";
    item.append(label, swatch(p.colour.hex),
                `${p.colour.name}` + (p.player === view.human ? "" : ` (${p.name})`));
    box.appendChild(item);
  }
}

function renderResearch() {
  const r = view.research;
  el("research-info").textContent = r.researching
    ? `researching ${r.researching}: ${r.bulbs} / ${r.cost} bulbs; known: ${r.known.join(", ") || "none"}`
    : `no research chosen (${r.bulbs} bulbs saved); known: ${r.known.join(", ") || "none"}`;
  const civ = view.agents.find((a) => a.kind === "civ");
  const select = el("research-select");
  select.textContent = "";
  const choices = civ ? civ.actions.filter((a) => a.kind === "research") : [];
  const first = document.createElement("option");
  first.textContent = civ && civ.acted ? `chosen: ${civ.acted.text}` : "choose research…";
  first.value = "";
  select.appendChild(first);
  for (const a of choices) {
    const o = document.createElement("option");
    o.value = a.arg; o.textContent = a.arg;
    select.appendChild(o);
  }
  select.disabled = !civ || !!civ.acted || !choices.length || view.over;
}

function renderSelected() {
  const info = el("selected-info"), actions = el("actions"), cityPanel = el("city-panel");
  actions.textContent = ""; cityPanel.textContent = "";
  const a = agentById(selected);
  el("advice-button").disabled = !a || view.over;
  if (!a) { info.textContent = "Nothing selected."; el("advice").textContent = ""; return; }
  if (a.kind === "unit") {
    const u = view.state.units.find((v) => `unit:${v.id}` === a.agent);
    const s = view.legend.units[u.type];
    info.textContent = `${u.type} (${a.agent}) — attack ${s.attack}, defence ${s.defense}, moves ${s.moves}, hp ${u.hp}/${s.hp}` +
      (u.veteran ? `, veteran ${u.veteran}` : "") + (u.activity !== "idle" ? `, ${u.activity}` : "");
  } else if (a.kind === "city") {
    const c = cityInfo(a.agent);
    info.textContent = `city ${a.agent}`;
    cityPanel.innerHTML =
      `<div>size <b>${c.size}</b> · food ${c.food} / ${c.food_box} (${signed(c.surplus_food)} a turn)</div>` +
      `<div>building <b id="city-build"></b>: ${c.shields} / ${c.build_cost} shields (${signed(c.surplus_shield)} a turn) · trade ${c.trade}</div>`;
    el("city-build").textContent = c.build;
    const select = document.createElement("select");
    select.id = "build-select";
    const first = document.createElement("option");
    first.value = ""; first.textContent = a.acted ? `chosen: ${a.acted.text}` : "change production…";
    select.appendChild(first);
    a.actions.forEach((choice, i) => {
      const o = document.createElement("option");
      o.value = String(i); o.textContent = choice.text;
      select.appendChild(o);
    });
    select.disabled = !!a.acted || view.over;
    select.addEventListener("change", () => {
      if (select.value !== "") run(() => act(a.agent, a.actions[Number(select.value)]));
    });
    cityPanel.appendChild(select);
    return;
  }
  if (a.acted) {
    const done = document.createElement("div");
    done.className = "muted";
    done.textContent = `done this turn: ${a.acted.text}`;
    actions.appendChild(done);
    return;
  }
  for (const choice of a.actions) {
    const b = document.createElement("button");
    b.className = `action ${choice.kind}`;
    b.dataset.kind = choice.kind;
    b.dataset.arg = choice.arg === null ? "" : String(choice.arg);
    b.textContent = choice.text;
    b.disabled = view.over;
    b.addEventListener("click", () => run(() => act(a.agent, choice)));
    actions.appendChild(b);
  }
}

function signed(n) { return n >= 0 ? `+${n}` : String(n); }

function renderAgents() {
  const ul = el("agents").querySelector("ul");
  ul.textContent = "";
  for (const a of view.agents) {
    if (a.kind === "civ") continue;
    const li = document.createElement("li");
    li.dataset.agent = a.agent;
    const what = a.kind === "unit" ? a.type : `city (${cityInfo(a.agent).build})`;
    li.textContent = `${a.agent} ${what}` + (a.acted ? ` — ${a.acted.text}` : "");
    if (a.acted) li.classList.add("done");
    if (a.agent === selected) li.classList.add("selected");
    li.addEventListener("click", () => { select(a.agent); render(); });
    ul.appendChild(li);
  }
}

async function showStart() {
  await refreshGames();
  const select = el("map-select");
  select.textContent = "";
  for (const m of config.maps) {
    const o = document.createElement("option");
    o.value = m; o.textContent = m; o.selected = m === config.default_map;
    select.appendChild(o);
  }
  el("corpus-info").textContent = `Every game is recorded into corpus “${config.corpus}”.`;
}

// The games to resume, asked for again whenever a game's turn may have changed (loaded, started,
// a turn ended): a list kept from the page's start would offer the turn a game had back then.
async function refreshGames() {
  config = await api("GET", "/api/games");
}

function renderResumable() {
  const ul = el("resumable");
  ul.textContent = "";
  if (!config) return;
  // the game on the board is not "to resume"
  for (const g of config.games.filter((g) => !g.over && (!view || g.id !== view.id))) {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = `#game=${g.id}`;
    a.textContent = `resume ${g.id}` + (Number.isInteger(g.turn) ? ` (turn ${g.turn})` : "");
    li.appendChild(a);
    ul.appendChild(li);
  }
}

// --- input -------------------------------------------------------------------------------------
function tileFromEvent(ev) {
  const rect = el("map").getBoundingClientRect();
  const x = Math.floor((ev.clientX - rect.left) / tile), y = Math.floor((ev.clientY - rect.top) / tile);
  const map = view.state.map;
  if (x < 0 || y < 0 || x >= map.width || y >= map.height) return null;
  return y * map.width + x;
}

function onMapClick(ev) {
  if (!view) return;
  const t = tileFromEvent(ev);
  if (t === null) return;
  const a = agentById(selected);
  const target = a && !a.acted ? a.actions.find((choice) => choice.target === t) : null;
  if (target) { run(() => act(a.agent, target)); return; }
  const mine = unitAt(t).filter((u) => u.owner === view.human).map((u) => `unit:${u.id}`)
    .filter((id) => agentById(id));
  const c = cityAt(t);
  const choices = [...mine, ...(c && c.owner === view.human ? [`city:${c.id}`] : [])];
  if (choices.length) {
    const i = choices.indexOf(selected);
    select(choices[(i + 1) % choices.length]);
  }
  render();
}

function onMapHover(ev) {
  if (!view) return;
  const t = tileFromEvent(ev);
  if (t === null) return;
  const map = view.state.map;
  const [x, y] = tileXY(t);
  const parts = [`(${x}, ${y})`, view.legend.terrain[map.terrain[y][x]]];
  const res = map.resources.find((r) => r[0] === t);
  if (res) parts.push(res[1]);
  if (map.rivers.includes(t)) parts.push("river");
  const imp = map.improvements.find((r) => r[0] === t);
  if (imp) parts.push(...imp[1]);
  const c = cityAt(t);
  if (c) parts.push(`city (${ownerText(c.owner)}), size ${c.size}`);
  for (const u of unitAt(t)) parts.push(`${u.type} (${ownerText(u.owner)}, unit:${u.id})`);
  el("hover").textContent = parts.join(" · ");
}

document.addEventListener("keydown", (ev) => {
  if (!view || ev.target.tagName === "SELECT" || ev.target.tagName === "INPUT") return;
  if (ev.key === "Enter" || ev.key === "e") { ev.preventDefault(); if (!view.over) run(endTurn); }
  else if (ev.key === "n") { select(nextAgent(selected)); render(); }
  else if (ev.key === "Escape") { select(null); render(); }
});

el("map").addEventListener("click", onMapClick);
el("map").addEventListener("mousemove", onMapHover);
el("end-turn").addEventListener("click", () => run(endTurn));
el("new-game").addEventListener("click", () => run(newGame));
el("advice-button").addEventListener("click", () => run(askAdvice));
el("ingest").addEventListener("click", () => run(ingest));
el("research-select").addEventListener("change", () => {
  const civ = view.agents.find((a) => a.kind === "civ");
  const value = el("research-select").value;
  const choice = civ.actions.find((a) => a.kind === "research" && a.arg === value);
  if (choice) run(() => act(civ.agent, choice));
});
window.addEventListener("hashchange", () => {
  const id = gameId();
  if (id && (!view || view.id !== id)) {
    run(async () => { await loadGame(id); select(nextAgent(null)); });
  }
});

run(async () => {
  await showStart();
  const id = gameId();
  if (id) {
    try { await loadGame(id); select(nextAgent(null)); } catch (err) {
      say(`${err.message} — start a new game.`, true);
      location.hash = "";
    }
  }
});
