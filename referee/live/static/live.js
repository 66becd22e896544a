/* gin-referee live page: follows the referee's server-sent events (referee/live/hub.py) and
 * draws the chosen game with the replay page's GinViewer (viewer.js, inlined before this).
 *
 * Events: `config` (the card delay), `match` (a game's header data, progress and results), `hand` (one
 * hand in the replay data's form, masked while its cards are withheld: its steps give each
 * seat's hand size only), `steps` (the newest steps of a masked hand, from index `from`), `end`
 * (a masked hand is over: its public result; `match` carries only the keys that changed),
 * `standings`, `leaderboard` (a ladder's ratings, best first), `drop` (a game leaves the page), `over` (the tournament ended: the page stops
 * reconnecting and says so above the final standings). On (re)connection the server
 * sends the whole current state first, so the page starts from nothing each time.
 * `hand`, `steps` and `end` come for the game the page watches only (`events?game=ID`): when
 * the page shows another game it connects again, watching that one. A snapshot
 * (`snapshot?game=ID`) has those events embedded (element gin-live-snapshot) and no stream.
 * Text from bots and the record only ever goes through textContent (GinCards.h).
 */
"use strict";

(function (global) {
  const h = global.GinCards.h;
  const games = new Map();
  let viewer = null, shown = null, pending = false, delay = null, mark = null, standings = null, ended = null;
  let watching; // the game the stream was opened for (undefined: none opened yet)
  let lost = false; // the event is over and the referee has gone: no game can be loaded now
  let full = new Set(); // the games whose every hand the stream sent (the one it watched); of the others, the end sends the last hand
  const snapshot = document.getElementById("gin-live-snapshot");
  const el = (id) => document.getElementById(id);

  function game(id) {
    let data = games.get(id);
    if (!data) {
      data = { match_id: id, names: ["?", "?"], hands: [], faults: [], games: [], match_end: null, status: "playing" };
      games.set(id, data);
    }
    return data;
  }

  const handlers = {
    config(msg) { delay = msg.delay; },
    match(msg) { const data = game(msg.id); Object.assign(data, msg.data, { hands: data.hands }); },
    hand(msg) {
      const hand = msg.hand, hands = game(msg.id).hands, i = hands.findIndex((x) => x.id === hand.id);
      hand.steps = hand.steps.map(expand);
      if (i >= 0) hands[i] = hand;
      else {
        hands.push(hand);
        hands.sort((a, b) => a.game - b.game || a.hand - b.hand);
      }
    },
    steps(msg) {
      const hand = game(msg.id).hands.find((x) => x.id === msg.hand);
      if (!hand) return;
      hand.steps.length = Math.min(hand.steps.length, msg.from);
      for (const step of msg.steps) hand.steps.push(expand(unpack(hand.steps[hand.steps.length - 1], step)));
    },
    end(msg) {
      const hand = game(msg.id).hands.find((x) => x.id === msg.hand);
      if (!hand) return;
      const last = hand.steps.length - 1;
      hand.steps[last] = Object.assign({}, hand.steps[last], { to_act: null });
      Object.assign(hand, { over: true, result: msg.result, scores_after: msg.scores_after, used_ms: msg.used_ms });
    },
    drop(msg) { games.delete(msg.id); },
    standings(msg) { standings = msg; renderStandings(); },
    leaderboard(msg) { renderLeaderboard(msg); },
    over(msg) {
      ended = msg;
      if (global.liveSource) global.liveSource.close();
      const status = el("live-status");
      status.textContent = board ? "the ladder has stopped: the last leaderboard" : msg.complete ? "the event is over: final standings" : "the referee stopped before the last game";
      status.className = "live-status done";
      const dot = document.querySelector(".live-dot");
      dot.textContent = !board && msg.complete ? "finished" : "stopped";
      dot.classList.add("ended");
      renderStandings();
      later(); // the other games' last hands came just before
    },
  };

  /* A step sent without its pile has the previous step's, with its discard added or its take
   * removed (referee/live/public.py, packed). */
  function unpack(previous, step) {
    if (step.pile || !previous) return step;
    const pile = previous.pile.slice(), verb = ((step.action && step.action.text) || "").split(" ")[0];
    if (verb === "discard") pile.push(step.action.card);
    else if (verb === "take_discard") pile.pop();
    return Object.assign({}, step, { pile });
  }

  /* A masked step gives each hand's size only: that many face-down cards. */
  function expand(step) {
    if (!step.sizes) return step;
    const seats = step.sizes.map((n) => ({ melds: [], deadwood_cards: Array(n).fill("?"), deadwood: null }));
    return Object.assign({ seats }, step);
  }

  function later() {
    if (pending) return;
    pending = true;
    setTimeout(() => { pending = false; render(); }, 0);
  }

  function label(data) {
    const end = data.match_end, names = data.names;
    if (data.status !== "over") {
      const at = data.at || data.hands[data.hands.length - 1];
      return at ? `game ${at.game + 1}, hand ${at.hand + 1}` : "starting";
    }
    if (!end) return "over";
    return end.winner === null || end.winner === undefined ? "draw" : `${names[end.winner]} wins`;
  }

  function renderGames() {
    const list = [...games.values()];
    const playing = list.filter((d) => d.status !== "over"), over = list.filter((d) => d.status === "over");
    // A game gone from the page gives way to the first in play (not while a new stream's
    // state is still to come: the page is empty then).
    if (!shown || (games.size && !games.has(shown))) shown = (playing[0] || over[over.length - 1] || {}).match_id || null;
    const button = (d) => h("button", { type: "button", class: "live-game " + (d.status === "over" ? "over" : "playing") + (d.match_id === shown ? " current" : ""),
      "data-id": d.match_id, "aria-pressed": d.match_id === shown ? "true" : "false", title: global.GinViewer.aka(d).join("; ") || null, onclick: () => choose(d.match_id) },
      h("span", { class: "lg-names" }, `${d.names[0]} vs ${d.names[1]}`),
      h("span", { class: "lg-state" }, `${d.status === "over" ? "over" : "playing"} \u00b7 ${label(d)}`));
    el("games").replaceChildren(
      h("span", { class: "lg-head" }, `${playing.length} in play`), ...playing.map(button),
      ...(over.length ? [h("span", { class: "lg-head" }, "finished")] : []), ...over.slice().reverse().map(button));
  }

  /* Open the stream again, watching ``game`` (its hands come on it). */
  function watch(game) {
    if (global.liveSource) global.liveSource.close();
    watching = game;
    mark = null;
    connect();
  }

  function choose(id) {
    if (snapshot) { global.location.search = "?game=" + encodeURIComponent(id); return; }
    shown = id;
    render(true);
  }

  function render(switched) {
    renderGames();
    if (!snapshot && !lost && shown !== watching && (shown || watching === undefined)) {
      watch(shown);
      switched = true;
    }
    const wait = delay === null ? "" : delay > 0 ? `${delay} s after its hand ends` : "when its hand ends";
    const unseen = lost ? " The referee has stopped: a game whose hands were not loaded before cannot be shown now (its replay page has them)." : "";
    const data = shown && games.get(shown);
    // A game whose stream the page never watched has at most its last hand (sent at the end).
    const partial = data && data.status === "over" && !full.has(shown) && !snapshot;
    const some = partial && data.hands.length ? ` Only this game's last hand reached the page before the referee stopped; its replay page (gin-referee report) has every hand.` : "";
    el("live-note").textContent = (wait && `Cards are face down while a hand is in play; they are shown ${wait}, once no game still to be played deals the same cards.`) + unseen + some;
    if (data) data.no_hands = partial || lost ? "This game's hands did not reach the page before the referee stopped: its replay page (gin-referee report) has them." : data.status === "over" ? null : "The first hand is about to be dealt.";
    if (!data) {
      if (viewer) { viewer = null; el("app").replaceChildren(h("p", { class: "live-empty" }, "No game yet.")); }
      else el("app").replaceChildren(h("p", { class: "live-empty" }, "No game yet."));
      return;
    }
    if (!viewer) {
      viewer = new global.GinViewer(el("app"), data);
      switched = true;
    }
    // Follow the game while the viewer stands where the last render's end was (the newest
    // step); once the reader steps back, leave the position alone until they return there.
    const follow = switched || !mark || (viewer.hand === mark.hand && viewer.step === mark.step);
    viewer.update(data);
    const last = data.hands.length - 1;
    if (follow && last >= 0) viewer.go(last, Infinity, false);
    mark = last >= 0 ? { hand: last, step: data.hands[last].steps.length - 1 } : null;
  }

  function elo(x) {
    if (x === null || x === undefined) return "n/a";
    const r = Math.round(x);
    return r === 0 ? "0" : (r > 0 ? "+" : "") + r;
  }

  function renderStandings() {
    const s = standings;
    if (!s) return;
    const head = h("tr", {}, ...["#", "bot", "games", "W-D-L", "score", "rating", "95% interval", "faults"].map((t) => h("th", {}, t)));
    const rows = s.bots.map((b, i) => h("tr", {},
      h("td", { class: "num" }, b.rank === undefined ? String(i + 1) : b.rank === null ? "-" : `${b.rank}${b.tied ? "=" : ""}`),
      h("th", { class: "bot" }, b.name), h("td", { class: "num" }, String(b.games)),
      h("td", { class: "num" }, `${b.wins}-${b.draws}-${b.losses}`), h("td", { class: "num" }, b.score === null ? "-" : b.score.toFixed(3)),
      h("td", { class: "num" }, elo(b.rating)), h("td", { class: "num" }, b.rating === null ? "" : `${elo(b.rating_low)} .. ${elo(b.rating_high)}`),
      h("td", { class: "num" }, String(b.faults))));
    el("standings").replaceChildren(
      h("h2", {}, `${ended && ended.complete ? "Final standings" : "Standings"} \u00b7 ${s.games_done} of ${s.games_total} games played`),
      h("table", { class: "live-table" }, head, ...rows));
  }

  let board = null, boardView = "all";
  const VIEWS = { all: "every version", best: "each entrant's best version", latest: "each entrant's latest version" };

  function renderLeaderboard(b) {
    board = b;
    const num = (x, d) => (x === null || x === undefined ? "-" : x.toFixed(d));
    const keep = boardView === "all" ? null : new Set((b.entrants || []).map((e) => e[boardView]));
    const players = keep ? b.players.filter((p) => keep.has(p.player)) : b.players;
    const head = h("tr", {}, ...["#", "player", "status", "mu", "sigma", "rank value", "pairs", "W-D-L", "Elo check"].map((t) => h("th", {}, t)));
    const rows = players.map((p) => h("tr", {},
      h("td", { class: "num" }, String(p.rank)), h("th", { class: "bot" }, p.player), h("td", {}, p.status),
      h("td", { class: "num" }, num(p.mu, 2)), h("td", { class: "num" }, num(p.sigma, 2)), h("td", { class: "num" }, num(p.rank_value, 2)),
      h("td", { class: "num" }, String(p.pairs)), h("td", { class: "num" }, `${p.wins}-${p.draws}-${p.losses}`), h("td", { class: "num" }, elo(p.elo))));
    const more = b.total > b.shown ? ` (the best ${b.shown} of ${b.total}: all in leaderboard.json)` : "";
    const select = h("select", { "aria-label": "versions shown", onchange: (event) => { boardView = event.target.value; renderLeaderboard(board); } },
      ...Object.entries(VIEWS).map(([value, text]) => h("option", { value, selected: value === boardView }, text)));
    el("leaderboard").replaceChildren(
      h("h2", {}, `Ladder ${b.ladder} \u00b7 ${b.pairs_rated} pairs rated \u00b7 sorted by ${b.sorted_by}${more}`),
      h("p", {}, "Show ", select), h("table", { class: "live-table" }, head, ...rows));
  }

  function connect() {
    const source = new EventSource(watching ? "events?game=" + encodeURIComponent(watching) : "events");
    source.onopen = () => { games.clear(); full = new Set(watching ? [watching] : []); ended = null; el("live-status").textContent = "live"; el("live-status").className = "live-status on"; };
    source.onerror = () => {
      if (ended) { source.close(); lost = true; later(); return; } // the event is over: no retry
      el("live-status").textContent = "reconnecting\u2026"; el("live-status").className = "live-status off";
    };
    for (const [kind, handle] of Object.entries(handlers)) {
      source.addEventListener(kind, (event) => { handle(JSON.parse(event.data)); later(); });
    }
    global.liveSource = source;
  }

  /* A snapshot: the events the stream would have sent first, drawn once. */
  function still() {
    const text = JSON.parse(snapshot.textContent);
    for (const block of text.split("\n\n")) {
      const m = /^event: (\w+)\ndata: (.*)$/s.exec(block);
      if (m && handlers[m[1]]) handlers[m[1]](JSON.parse(m[2]));
    }
    const asked = new URLSearchParams(global.location.search).get("game");
    if (games.has(asked)) shown = asked;
    renderGames(); // picks the game shown first, as the server did
    watching = shown;
    if (!ended) {
      el("live-status").textContent = `snapshot at ${new Date().toLocaleTimeString()} (reload for a newer one)`;
      el("live-status").className = "live-status off";
    }
    render(true);
  }

  global.GinLive = { games, render: () => render(), viewer: () => viewer, shown: () => shown, watching: () => watching };
  const start = snapshot ? still : () => render();
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})(window);
