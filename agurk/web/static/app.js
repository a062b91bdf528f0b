// agurk serve's page: play, watch and replay. Every rule is the server's (the engine's): this script only shows
// what the view says (the legal cards, the reason, the trick, the scores) and sends the card clicked.
"use strict";

const $ = (id) => document.getElementById(id);
const games = {play: null, watch: null};  // each tab's own game: {id, token, view, paused, busy, record}
let game = null;        // the game of the tab shown (none on Replay)
let tab = "play";
let timer = null;       // the step loop: a watched game, or a played one once you are out
let stepping = 0;       // the step loop's generation: a new loop makes the old one stop
let replay = null;      // {names, frames, at, head}
let starting = 0;       // the newest "New game": an older request's answer is dropped and its game forgotten
const INTRO = {
  play: "Pick the rules, the players and your opponents, then press New game: you play your seat against the agents.",
  watch: "Pick the rules and the agents (one spec, or one per seat), then press New game to watch them play.",
  replay: "Choose a record file (Download record, agurk play --record or agurk simulate --out), then press Open.",
};

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("data-")) node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const c of children) node.append(c);
  return node;
}

function say(text, kind = "") {
  const m = $("message");
  m.textContent = text;
  m.className = kind;
}

async function api(method, path, body, raw = false, of = game) {
  const headers = {};
  if (of) headers["X-Game-Token"] = of.token;
  let payload;
  if (body !== undefined) {
    if (typeof body === "string") payload = body;
    else { payload = JSON.stringify(body); headers["Content-Type"] = "application/json"; }
  }
  const r = await fetch(path, {method, headers, body: payload});
  if (!r.ok) {
    let why = r.statusText;
    try { why = (await r.json()).error; } catch (e) { /* not JSON */ }
    throw new Error(why);
  }
  return raw ? r.text() : r.json();
}

function card(name, classes = "") {
  return el("span", {class: "card " + classes, "data-card": name}, name === "X" ? "🃏" : name);
}

// ------------------------------------------------------------------ setup

async function loadOptions() {
  const o = await api("GET", "/api/options");
  for (const p of o.presets) $("preset").append(el("option", {value: p}, p));
  for (const a of o.agents) $("agent-list").append(el("option", {value: a.spec.split("[")[0], label: a.help}));
}

function layout() {
  for (const b of document.querySelectorAll(".tab")) b.classList.toggle("active", b.dataset.tab === tab);
  for (const n of document.querySelectorAll(".for-play")) n.classList.toggle("hidden", tab !== "play");
  for (const n of document.querySelectorAll(".for-watch")) n.classList.toggle("hidden", tab !== "watch");
  $("setup").classList.toggle("hidden", tab === "replay");
  $("replay-setup").classList.toggle("hidden", tab !== "replay");
  $("replay-view").classList.toggle("hidden", tab !== "replay" || !replay);  // no empty table before a file is open
  $("game").classList.toggle("hidden", !game);
  $("intro").textContent = INTRO[tab];
  $("intro").classList.toggle("hidden", tab === "replay" ? Boolean(replay) : Boolean(game));
  $("replay-prev").disabled = $("replay-next").disabled = !replay;
}

function setTab(name) {
  stopLoop();
  tab = name;
  game = name === "replay" ? null : games[name];  // a tab shows its own game only: never another tab's hands
  layout();
  say("");
  if (game) {
    show(game, game.view);
    stepLoop();
  }
}

function newGameBody() {
  const sets = $("set").value.split(/[\n,]/).map((s) => s.trim()).filter((s) => s);
  const body = {rules: $("preset").value, set: sets, players: Number($("players").value), seed: Number($("seed").value)};
  if (tab === "watch") Object.assign(body, {mode: "watch", opponents: $("agents").value});
  else Object.assign(body, {mode: "play", opponents: $("opponents").value, seat: Number($("seat").value)});
  if (tab === "play" && $("duplicate").value.trim()) {  // the server picks the deal: no seed
    delete body.seed;
    Object.assign(body, {duplicate: $("duplicate").value.trim(), name: $("name").value.trim()});
    localStorage.setItem("agurk-name", body.name);
  }
  return body;
}

function forget(made) {
  fetch(`/api/games/${made.id}`, {method: "DELETE", headers: {"X-Game-Token": made.token}}).catch(() => {});
}

async function start() {
  stopLoop();
  const mine = ++starting;
  const where = tab;
  if (games[where]) forget(games[where]);
  games[where] = game = null;
  layout();
  say("dealing…");
  try {
    const made = await api("POST", "/api/games", newGameBody(), false, null);
    if (mine !== starting) { forget(made); return; }  // a newer New game was clicked meanwhile
    // a watched game runs at once; a played one, once you are out, waits for Next move or Play on
    games[where] = {id: made.id, token: made.token, view: made.view, paused: where === "play", busy: false};
    if (tab === where) setTab(where);  // else it is shown when its tab is
  } catch (e) {
    if (mine === starting && tab === where) say(e.message, "error");
  }
}

// ------------------------------------------------------------------ the table

function seatBox(view, s, row) {
  const box = el("div", {class: "seat", "data-seat": String(s)});
  if (row.out) box.classList.add("out");
  if (view.to_move === s) box.classList.add("to-move");
  if (view.winners && view.winners.includes(s)) box.classList.add("winner");
  const facts = [`score ${row.score}`];
  if (view.lives) facts.push(`lives ${row.lives}`);
  if (view.rebuys) facts.push(`rebuys ${row.rebuys}`);
  facts.push(row.out ? "out" : `${row.cards} card${row.cards === 1 ? "" : "s"}`);
  if (s === view.dealer) facts.push("dealer");
  box.append(el("div", {class: "name"}, row.name), el("div", {class: "facts"}, facts.join(" · ")));
  if (row.hand && s !== view.seat) {
    const shown = el("div", {class: "open-hand"});
    for (const c of row.hand) shown.append(card(c, "small"));
    box.append(shown);
  }
  return box;
}

function show(g, view) {
  g.view = view;
  if (g !== game) return;  // a game of another tab: kept, not shown
  $("game").dataset.moves = String(view.moves);
  const names = view.seats.map((r) => r.name);
  $("status-line").textContent = view.over
    ? `match over · ${view.rounds.length} rounds · seed ${view.seed}`
    : `round ${view.round} · trick ${view.trick}/${view.hand_size} · dealer P${view.dealer} · ${names[view.to_move]} to move`;
  const seats = $("seats");
  seats.replaceChildren(...view.seats.map((row, s) => seatBox(view, s, row)));

  const trick = $("trick");
  trick.replaceChildren();
  if (view.current_trick.length) {
    for (const [s, c] of view.current_trick) {
      const top = s === view.top_seat;
      trick.append(el("div", {class: "play" + (top ? " top" : ""), "data-seat": String(s)},
        card(c), el("div", {class: "who"}, names[s] + (top ? " ★ top" : ""))));
    }
  } else {
    trick.append(el("div", {class: "empty"}, view.over ? "" : `${names[view.to_move]} leads`));
  }
  const last = view.last_trick;
  $("last-trick").textContent = last
    ? `last trick (round ${last.round}, trick ${last.trick}): ` +
      last.plays.map(([s, c]) => `P${s} ${c}`).join(", ") + ` · taken by ${names[last.winner]}`
    : "";

  const hand = $("hand");
  hand.replaceChildren();
  const mine = view.seat !== null && view.seats[view.seat].hand;
  const myTurn = !view.over && view.seat !== null && view.to_move === view.seat;
  if (mine) {
    mine.forEach((c, i) => {
      const legal = myTurn && view.legal.includes(c);
      const b = el("button", {class: "card big " + (legal ? "legal" : "dimmed"), "data-card": c, id: `card-${i}`},
        c === "X" ? "🃏" : c);
      b.title = myTurn ? (legal ? "legal: " : "not legal: ") + view.reason : "wait for your turn";
      b.addEventListener("click", () => clickCard(c, legal));
      hand.append(b);
    });
  }
  $("reason").textContent = myTurn ? `why: ${view.reason}` : (view.mode === "watch" && !view.over && view.reason
    ? `${names[view.to_move]} may play ${view.legal.join(" ")} (${view.reason})` : "");
  $("hand-area").classList.toggle("hidden", view.mode === "watch" && view.over);
  $("hint").disabled = !myTurn;
  const out = view.mode === "play" && view.stepped;  // you are out: the agents play on, step by step
  $("hint-area").classList.toggle("hidden", view.mode !== "play" || out);
  if ($("hint-out").dataset.moves !== String(view.moves)) $("hint-out").textContent = "";  // a hint is for its turn only
  $("out-area").classList.toggle("hidden", !out);
  if (out) {
    $("out-text").textContent = "You are out: the agents play the rest of the match.";
    $("play-on").textContent = g.paused ? "Play on" : "Pause";
    $("step-one").disabled = !g.paused;
  }
  $("pause").textContent = g.paused ? "Resume" : "Pause";

  const rounds = $("rounds");
  rounds.replaceChildren(el("tr", {}, el("th", {}, "round"), ...names.map((n) => el("th", {}, n))));
  for (const r of view.rounds) {
    rounds.append(el("tr", {}, el("td", {}, String(r.round)), ...names.map((_, s) => {
      let text = r.played[s] ? `+${r.penalties[s]} → ${r.scores[s]}` : "–";
      if (r.lives && r.played[s]) text += ` (${r.lives[s]} lives)`;
      if (r.out.includes(s)) text += " OUT";
      if (r.rebought.includes(s)) text += " rebought";
      return el("td", {}, text);
    })));
  }
  $("log").replaceChildren(...view.log.map((line) => el("li", {}, line)));
  $("log").scrollTop = $("log").scrollHeight;  // the newest line in sight

  $("over").classList.toggle("hidden", !view.over);
  if (view.over) {
    const won = view.winners.map((s) => names[s]).join(", ") || "nobody";
    const you = view.seat === null ? "" : (view.winners.includes(view.seat) ? " · you win!" : " · you lose");
    $("over-text").textContent = `Match over · winners: ${won}${you}`;
  }
  showDuplicate(view);
}

// ------------------------------------------------------------------ duplicate play

const fmt = (x, d = 2) => (x === null || x === undefined ? "–" : x.toFixed(d));
const signed = (x, d = 2) => (x > 0 ? "+" : "") + fmt(x, d);

function showDuplicate(view) {
  const dup = view.duplicate;
  const box = $("dup-result");
  const done = Boolean(view.over && dup && (dup.person_result || dup.error));
  box.classList.toggle("hidden", !done);
  if (dup && !view.over) {
    $("status-line").textContent += ` · duplicate deal ${dup.deal} of ${dup.person} vs ${dup.agent}`;
  }
  if (!done) return;
  if (dup.error) { box.textContent = dup.error; return; }
  const me = dup.person_result, it = dup.agent_result;
  const line = (who, r) => el("tr", {}, el("td", {}, who), el("td", {}, fmt(r.win)), el("td", {}, fmt(r.penalty)),
    el("td", {}, String(r.rounds)), el("td", {}, r.penalties.filter((p) => p !== null).join(" ")));
  box.replaceChildren(
    el("div", {}, `Duplicate deal ${dup.deal}: the same cards, ${dup.agent} in your seat`),
    el("table", {id: "dup-compare"},
      el("tr", {}, ...["", "win", "penalty / round", "rounds", "penalties"].map((h) => el("th", {}, h))),
      line(`you (${dup.person})`, me), line(dup.agent, it),
      el("tr", {}, el("td", {}, "you − agent"), el("td", {}, signed(dup.win_diff)),
        el("td", {}, signed(dup.penalty_diff)), el("td", {}), el("td", {}))),
    el("button", {id: "dup-record"}, `Download ${dup.agent}'s record`));
  $("dup-record").addEventListener("click", async () => {
    const text = await api("GET", `/api/games/${game.id}/duplicate`, undefined, true, game);
    const url = URL.createObjectURL(new Blob([text], {type: "application/x-ndjson"}));
    el("a", {href: url, download: `agurk-seed${view.seed}-${dup.agent.replace(/[:/]/g, "-")}.jsonl`}).click();
  });
  if (!box.dataset.shown || box.dataset.shown !== String(dup.id)) { box.dataset.shown = String(dup.id); loadDuplicate(); }
}

async function loadDuplicate() {
  const s = (await api("GET", "/api/duplicate")).summary;
  const ci = (i, d) => `${signed(i.mean, d)} [${fmt(i.low, d)}, ${fmt(i.high, d)}]`;
  $("dup-table").replaceChildren(
    el("tr", {}, ...["person", "agent", "matches", "win: you / agent", "win diff [95%]",
      "penalty/round: you / agent", "penalty diff [95%]"].map((h) => el("th", {}, h))),
    ...s.map((r) => el("tr", {"data-person": r.person, "data-agent": r.agent}, el("td", {}, r.person),
      el("td", {}, r.agent), el("td", {class: "matches"}, String(r.matches)),
      el("td", {}, `${fmt(r.person_win)} / ${fmt(r.agent_win)}`), el("td", {class: "win-diff"}, ci(r.win_diff, 3)),
      el("td", {}, `${fmt(r.person_penalty)} / ${fmt(r.agent_penalty)}`),
      el("td", {class: "penalty-diff"}, ci(r.penalty_diff, 2)))));
  if (!s.length) $("dup-table").append(el("tr", {}, el("td", {colSpan: 7}, "no duplicate match finished yet")));
}

async function clickCard(c, legal) {
  const g = game;
  const view = g.view;
  if (view.over || view.to_move !== view.seat) { say("wait for your turn", "error"); return; }
  if (!legal) {
    const held = view.seats[view.seat].hand.includes(c);
    say(`illegal: you ${held ? "may not play" : "do not hold"} ${c}: ${view.reason}`, "error");
    return;
  }
  say(`you play ${c}; the agents are playing…`);
  for (const b of document.querySelectorAll("#hand button")) b.disabled = true;
  try {
    show(g, await api("POST", `/api/games/${g.id}/play`, {card: c}, false, g));
    if (g === game) say("");
  } catch (e) {
    if (g === game) say(e.message, "error");
    show(g, await api("GET", `/api/games/${g.id}`, undefined, false, g));
  }
}

async function hint() {
  const g = game;
  const out = $("hint-out");
  out.dataset.moves = String(g.view.moves);
  out.textContent = "thinking…";
  try {
    const h = await api("POST", `/api/games/${g.id}/hint`, undefined, false, g);
    if (g !== game || h.moves !== g.view.moves) return;  // the turn it was asked for is gone
    const values = Object.entries(h.values).sort((a, b) => b[1] - a[1])
      .map(([c, v]) => `${c}: ${v.toFixed(2)}`).join(" · ");
    out.textContent = `${h.agent} plays ${h.card} — values (${h.method}, higher is better): ${values}`;
    for (const b of document.querySelectorAll("#hand button")) b.classList.toggle("hinted", b.dataset.card === h.card);
  } catch (e) {
    if (g === game) out.textContent = e.message;
  }
}

// ------------------------------------------------------------------ watch, and a played game once you are out

function stopLoop() {
  if (timer) clearTimeout(timer);
  timer = null;
  stepping += 1;  // a step already sent is shown, but starts no further step
}

async function stepOnce(g) {
  if (g.busy || g.view.over || !g.view.stepped) return false;
  g.busy = true;
  try {
    show(g, await api("POST", `/api/games/${g.id}/step`, undefined, false, g));
    return true;
  } catch (e) {
    if (g === game) say(e.message, "error");
    return false;
  } finally {
    g.busy = false;
  }
}

function stepLoop() {
  stopLoop();
  const g = game;
  if (!g || g.view.over || !g.view.stepped || g.paused) return;
  const mine = stepping;
  timer = setTimeout(async () => {
    timer = null;
    if (await stepOnce(g) && mine === stepping) stepLoop();
  }, Number($("speed").value));
}

function togglePause() {
  if (!game) return;
  game.paused = !game.paused;
  show(game, game.view);
  if (game.paused) stopLoop(); else stepLoop();
}

// ------------------------------------------------------------------ records and replay

async function recordOf(g) {
  if (!g.record) g.record = await api("GET", `/api/games/${g.id}/record`, undefined, true, g);
  return g.record;
}

async function download() {
  const g = game;
  const text = await recordOf(g);
  const url = URL.createObjectURL(new Blob([text], {type: "application/x-ndjson"}));
  const a = el("a", {href: url, download: `agurk-seed${g.view.seed}.jsonl`});
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

async function openReplay(text, match) {
  try {
    const data = await api("POST", `/api/replay?match=${match}`, text);
    replay = {names: data.names, frames: data.frames, at: 0, head: `seed ${data.seed} · match ${data.match}`};
    say("");
    layout();
    showFrame();
  } catch (e) {
    say(e.message, "error");
  }
}

function showFrame() {
  const f = replay.frames[replay.at];
  $("replay-pos").textContent = `${replay.at + 1}/${replay.frames.length}`;
  const box = $("replay-frame");
  box.replaceChildren();
  if (f.kind === "trick") {
    $("replay-head").textContent = `${replay.head} · round ${f.round} · trick ${f.trick}/${f.tricks} · dealer P${f.dealer}`;
    const played = Object.fromEntries(f.plays.map(([s, c]) => [s, c]));
    f.hands.forEach((hand, s) => {
      const row = el("div", {class: "replay-seat" + (f.winner === s ? " winner" : "")}, el("span", {class: "name"}, replay.names[s]));
      if (hand === null) row.append(el("span", {class: "facts"}, "out"));
      else for (const c of hand) row.append(card(c, "small" + (played[s] === c ? " played-card" : "")));
      box.append(row);
    });
    box.append(el("div", {class: "replay-plays"}, "plays: " + f.plays.map(([s, c]) => `P${s} ${c}`).join(", ") +
      (f.winner === null ? "" : ` · taken by ${replay.names[f.winner]}`)));
  } else if (f.kind === "round") {
    $("replay-head").textContent = `${replay.head} · round ${f.round} over`;
    f.rows.forEach((r, s) => {
      let text = `penalty ${r.penalty}, score ${r.score}`;
      if (r.lives !== undefined) text += `, lives ${r.lives}`;
      if (r.out) text += ", OUT";
      if (r.rebought) text += ", rebought";
      box.append(el("div", {class: "replay-seat"}, el("span", {class: "name"}, replay.names[s]), el("span", {}, text)));
    });
  } else {
    $("replay-head").textContent = `${replay.head} · match over`;
    box.append(el("div", {class: "replay-plays"}, "winners: " + (f.winners.map((s) => replay.names[s]).join(", ") || "nobody")));
  }
}

function stepReplay(by) {
  if (!replay) { say("open a record first", "error"); return; }
  replay.at = Math.max(0, Math.min(replay.frames.length - 1, replay.at + by));
  showFrame();
}

// ------------------------------------------------------------------ wiring

for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => setTab(b.dataset.tab));
$("start").addEventListener("click", start);
$("pause").addEventListener("click", togglePause);
$("play-on").addEventListener("click", togglePause);
$("step-one").addEventListener("click", () => { if (game && game.paused) stepOnce(game); });
$("speed").addEventListener("change", () => { if (timer) stepLoop(); });  // a step in flight goes on at the new speed
$("hint").addEventListener("click", hint);
$("download").addEventListener("click", download);
$("replay-this").addEventListener("click", async () => {
  const text = await recordOf(game);
  setTab("replay");
  $("replay-match").value = "0";
  await openReplay(text, 0);
});
$("replay-open").addEventListener("click", async () => {
  const file = $("replay-file").files[0];
  if (!file) { say("choose a record file (.jsonl) first", "error"); return; }
  await openReplay(await file.text(), Number($("replay-match").value));
});
$("replay-prev").addEventListener("click", () => stepReplay(-1));
$("replay-next").addEventListener("click", () => stepReplay(1));
document.addEventListener("keydown", (e) => {
  if (tab === "replay" && replay && e.target.tagName !== "INPUT") {
    if (e.key === "ArrowRight" || e.key === "n") stepReplay(1);
    if (e.key === "ArrowLeft" || e.key === "p") stepReplay(-1);
  }
});
$("dup-refresh").addEventListener("click", () => loadDuplicate().catch((e) => say(e.message, "error")));
$("name").value = localStorage.getItem("agurk-name") || "";
layout();
loadOptions().catch((e) => say(e.message, "error"));
loadDuplicate().catch((e) => say(e.message, "error"));
