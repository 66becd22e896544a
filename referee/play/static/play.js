/* The person's page of `gin-referee play`: a client of its seat's WebSocket. It shows what the
   seat's messages say and offers only the actions of the open request's `legal` list. */
"use strict";
(() => {
  const RANKS = "A23456789TJQK", SUITS = "cdhs", SYM = { c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660" };
  const $ = (id) => document.getElementById(id);
  const st = { seat: 0, names: ["you", "bot"], hand: [], pile: [], stock: 0, known: [], scores: [0, 0],
    games: [0, 0], pending: null, sel: -1, fresh: null, sortBy: "suit", knock: null, summary: false,
    over: null, received: [], sent: [] };
  window.GinPlay = st;
  st.bestMelds = (cards) => bestMelds(cards);
  const token = new URLSearchParams(location.search).get("t") || "";
  const rank = (c) => RANKS.indexOf(c[0]), suit = (c) => SUITS.indexOf(c[1]);
  const value = (c) => Math.min(10, rank(c) + 1);
  const label = (c) => (c[0] === "T" ? "10" : c[0]) + SYM[c[1]];

  function cardEl(c, tag = "span") {
    const e = document.createElement(tag);
    e.className = "card" + ("dh".includes(c[1]) ? " red" : "");
    e.textContent = label(c); e.dataset.card = c; e.setAttribute("aria-label", c);
    return e;
  }
  function cardsInto(el, cards) { el.replaceChildren(...cards.map((c) => cardEl(c))); }

  /* Every meld of `cards` (as index lists), then the packing of least deadwood. */
  function melds(cards) {
    const out = [];
    for (let r = 0; r < 13; r++) {
      const same = cards.filter((c) => rank(c) === r);
      if (same.length >= 3) {
        out.push(same.slice());
        if (same.length === 4) for (let i = 0; i < 4; i++) out.push(same.filter((_, j) => j !== i));
      }
    }
    for (let s = 0; s < 4; s++) {
      const row = cards.filter((c) => suit(c) === s).sort((a, b) => rank(a) - rank(b));
      for (let i = 0; i < row.length; i++) {
        for (let j = i + 2; j < row.length; j++) {
          if (rank(row[j]) - rank(row[i]) !== j - i) break;
          out.push(row.slice(i, j + 1));
        }
      }
    }
    return out;
  }
  function bestMelds(cards) {
    const all = melds(cards); let best = { melds: [], dead: cards.reduce((t, c) => t + value(c), 0) };
    const walk = (start, used, chosen) => {
      const dead = cards.filter((c) => !used.has(c)).reduce((t, c) => t + value(c), 0);
      if (dead < best.dead) best = { melds: chosen.slice(), dead };
      for (let i = start; i < all.length; i++) {
        if (all[i].some((c) => used.has(c))) continue;
        all[i].forEach((c) => used.add(c)); chosen.push(all[i]);
        walk(i + 1, used, chosen);
        chosen.pop(); all[i].forEach((c) => used.delete(c));
      }
    };
    walk(0, new Set(), []);
    return best;
  }

  function sortHand() {
    const key = st.sortBy === "suit" ? (c) => suit(c) * 13 + rank(c) : (c) => rank(c) * 4 + suit(c);
    st.hand.sort((a, b) => key(a) - key(b));
  }
  function setHand(cards) {  /* keeps the person's order; new cards go at the end */
    const kept = st.hand.filter((c) => cards.includes(c));
    const added = cards.filter((c) => !kept.includes(c));
    st.fresh = added.length === 1 && kept.length ? added[0] : null;
    st.hand = kept.concat(added);
    if (st.sel >= st.hand.length) st.sel = st.hand.length - 1;
  }

  const legal = () => (st.pending ? st.pending.legal : []);
  const find = (kind, card) => legal().find((a) => a.kind === kind && (card === undefined || a.card === card));
  const seconds = (ms) => `${Math.floor(ms / 60000)}:${String(Math.floor(ms / 1000) % 60).padStart(2, "0")}`;

  function render() {
    const me = st.seat, opp = 1 - me;
    $("score").textContent = `You ${st.scores[me]} - ${st.scores[opp]} ${st.names[opp]}` +
      `  (games ${st.games[me]}-${st.games[opp]})`;
    $("opp-name").textContent = st.names[opp];
    cardsInto($("opp-known"), st.known);
    $("stock-count").textContent = String(st.stock);
    const top = st.pile[st.pile.length - 1];
    const up = $("upcard");
    up.replaceChildren(); up.className = "card";
    if (top) { up.textContent = label(top); up.dataset.card = top; if ("dh".includes(top[1])) up.classList.add("red"); }
    cardsInto($("pile"), st.pile.slice(0, -1).reverse());
    $("stock").disabled = !find("draw_stock"); up.disabled = !find("take_discard");
    const hand = $("hand"); const best = bestMelds(st.hand);
    const group = new Map(); best.melds.forEach((m, i) => m.forEach((c) => group.set(c, i)));
    hand.replaceChildren(...st.hand.map((c, i) => {
      const e = cardEl(c, "button"); e.draggable = true; e.dataset.index = String(i);
      if (i === st.sel) e.classList.add("sel");
      if (c === st.fresh) e.classList.add("new");
      if (group.has(c)) e.classList.add("m" + (group.get(c) % 4));
      if (st.pending && st.pending.decision === "discard" && !find("discard", c) && !find("knock", c)) e.classList.add("locked");
      return e;
    }));
    $("deadwood").textContent = `deadwood ${best.dead}`;
    $("melds").replaceChildren(...best.melds.map((m) => { const g = document.createElement("span"); g.className = "meld"; m.forEach((c) => g.append(cardEl(c))); return g; }));
    $("my-clock").textContent = st.pending ? `your time ${seconds(st.pending.time_left_ms)}` : "";
    renderActions();
  }

  function button(text, action, key) {
    const b = document.createElement("button");
    b.textContent = text; b.dataset.action = JSON.stringify(action);
    if (key) b.title = `key ${key}`;
    b.addEventListener("click", () => act(action));
    return b;
  }
  function renderActions() {
    const box = $("actions"); box.replaceChildren();
    if (!st.pending || st.knock) return;
    const p = st.pending, top = st.pile[st.pile.length - 1];
    if (p.decision !== "discard") {
      for (const a of p.legal) {
        if (a.kind === "take_discard") box.append(button(`Take ${label(top)}`, a, "t"));
        if (a.kind === "pass_upcard") box.append(button("Pass", a, "p"));
        if (a.kind === "draw_stock") box.append(button("Draw from stock", a, "s"));
      }
      $("status").textContent = p.decision === "first_upcard" ? "Take the upcard or pass" : "Draw: the stock or the discard";
      return;
    }
    const c = st.hand[st.sel];
    const d = c && find("discard", c), k = c && find("knock", c);
    if (d) box.append(button(`Discard ${label(c)}`, d, "d"));
    if (k) {
      const gin = p.knocks && p.knocks[c] && p.knocks[c].options[0].deadwood === 0;
      const b = button(gin ? `Gin (discard ${label(c)})` : `Knock with ${label(c)}`, k, "k");
      b.addEventListener("click", () => {}, { once: true });
      box.append(b);
    }
    const big = find("big_gin"); if (big) box.append(button("Big gin!", big));
    const knockable = p.legal.filter((a) => a.kind === "knock").map((a) => label(a.card));
    $("status").textContent = "Choose a card to discard" + (knockable.length ? ` (you may knock with ${knockable.join(" ")})` : "");
  }

  function act(action) {
    if (!st.pending) return;
    if (!st.pending.legal.some((a) => JSON.stringify(a) === JSON.stringify(action))) return;
    if (action.kind === "knock") { openKnock(action.card); return; }
    send(action);
  }
  function send(action) {
    const p = st.pending; st.pending = null; st.knock = null; $("knock").hidden = true;
    st.sent.push(action);
    ws.send(JSON.stringify({ request_id: p.request_id, action }));
    if (action.kind === "discard" || action.kind === "knock") {
      st.hand = st.hand.filter((c) => c !== action.card); st.fresh = null;
      if (action.kind === "discard") st.pile.push(action.card);
      st.sel = Math.min(st.sel, st.hand.length - 1);
    }
    $("status").textContent = `${st.names[1 - st.seat]} to play...`;
    render();
  }
  function openKnock(card) {
    const info = st.pending.knocks[card]; st.knock = { card, choice: info.best };
    $("knock-title").textContent = `${info.options[0].deadwood === 0 ? "Gin" : "Knock"}: discard ${label(card)} and lay down`;
    $("knock-options").replaceChildren(...info.options.map((o, i) => {
      const l = document.createElement("label"); const r = document.createElement("input");
      r.type = "radio"; r.name = "arr"; r.value = String(i); r.checked = i === info.best;
      r.addEventListener("change", () => { st.knock.choice = i; });
      l.append(r, ` ${i + 1}. deadwood ${o.deadwood}: `);
      o.melds.forEach((m) => { const g = document.createElement("span"); g.className = "meld cards small"; m.forEach((c) => g.append(cardEl(c))); l.append(g); });
      return l;
    }));
    $("knock").hidden = false; render();
  }
  function confirmKnock() {
    if (!st.knock) return;
    const o = st.pending.knocks[st.knock.card].options[st.knock.choice];
    send({ kind: "knock", card: st.knock.card, melds: o.melds });
  }

  function meldsHtml(ms) { const d = document.createElement("span"); ms.forEach((m) => { const g = document.createElement("span"); g.className = "meld cards small"; m.forEach((c) => g.append(cardEl(c))); d.append(g); }); return d; }
  function showHandEnd(m) {
    const box = $("summary"); box.replaceChildren();
    const h = document.createElement("h2");
    const who = m.winner === null ? "Void hand" : m.winner === st.seat ? "You win the hand" : `${st.names[m.winner]} wins the hand`;
    h.textContent = `${who}: ${m.termination}${m.winner === null ? "" : `, ${m.points} points`}`;
    const t = document.createElement("table"); t.className = "end";
    for (const s of [st.seat, 1 - st.seat]) {
      const tr = t.insertRow(); tr.insertCell().textContent = s === st.seat ? "You" : st.names[s];
      const melded = new Set(m.melds[s].flat());
      const loose = document.createElement("span"); loose.className = "cards small";
      m.hands[s].filter((c) => !melded.has(c)).forEach((c) => loose.append(cardEl(c)));
      tr.insertCell().append(meldsHtml(m.melds[s]), loose);
      tr.insertCell().textContent = `deadwood ${m.deadwood[s]}`;
    }
    box.append(h, t);
    if (m.layoffs.length) { const p = document.createElement("p"); p.textContent = "Laid off: " + m.layoffs.map((l) => `${label(l[0])} on ${l.slice(1).map(label).join(" ")}`).join(", "); box.append(p); }
    const sc = document.createElement("p"); sc.textContent = `Game score: you ${m.scores[st.seat]}, ${st.names[1 - st.seat]} ${m.scores[1 - st.seat]}`;
    const go = document.createElement("button"); go.id = "continue"; go.textContent = "Continue (Enter)";
    go.addEventListener("click", () => { box.hidden = true; st.summary = false; });
    box.append(sc, go); box.hidden = false; st.summary = true;
    st.scores = m.scores;
  }

  function on(m) {
    st.received.push(m);
    switch (m.type) {
      case "match_start": st.seat = m.seat; st.names[1 - m.seat] = m.opponent; break;
      case "hand_start": st.hand = []; setHand(m.hand_cards); st.fresh = null; sortHand(); st.pile = [m.upcard];
        st.stock = 31; st.known = []; st.scores = m.scores; st.sel = -1; break;
      case "request": { const v = m.view; st.pending = m; setHand(v.hand); st.pile = v.discard_pile.slice();
        st.stock = v.stock_size; st.known = v.opponent_known; st.scores = v.scores;
        if (m.decision === "discard" && st.sel < 0) st.sel = st.fresh ? st.hand.indexOf(st.fresh) : 0; break; }
      case "event": { const a = m.action;
        if (a.kind === "take_discard") { st.pile.pop(); if (a.card) st.known = st.known.concat([a.card]); }
        else if (a.kind === "draw_stock") st.stock -= 1;
        else if (a.kind === "discard") { st.pile.push(a.card); st.known = st.known.filter((c) => c !== a.card); }
        $("status").textContent = `${st.names[1 - st.seat]}: ${a.kind.replace("_", " ")}${a.card ? " " + label(a.card) : ""}`; break; }
      case "hand_end": st.pending = null; showHandEnd(m); break;
      case "game_end": if (m.winner !== null && m.winner !== undefined) st.games[m.winner] += 1; break;
      case "match_end": { st.over = m; const f = $("final");
        f.replaceChildren(); const h = document.createElement("h2");
        h.textContent = `Match over: you ${m.result === "win" ? "won" : m.result === "loss" ? "lost" : m.result} (games ${m.games_won[st.seat]}-${m.games_won[1 - st.seat]})`;
        const a = document.createElement("a"); a.id = "replay"; a.href = `replay?t=${encodeURIComponent(token)}`; a.textContent = "Replay of the match";
        f.append(h, a); f.hidden = false; $("status").textContent = "The match is over"; break; }
      case "refused": $("status").textContent = `Refused: ${m.reason}`; break;
      case "reject": $("status").textContent = `The referee refused the seat: ${m.message}`; break;
      default: break;
    }
    render();
  }

  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws?t=${encodeURIComponent(token)}`);
  st.ws = ws;
  ws.addEventListener("open", () => { $("status").textContent = "Waiting for the deal..."; });
  ws.addEventListener("message", (e) => on(JSON.parse(e.data)));
  ws.addEventListener("close", (e) => {
    st.closed = e.code;
    if (!st.over) $("status").textContent = e.code === 4409 ? "This seat is open in another tab." : "Disconnected: reload the page to return to your seat.";
  });

  /* Selection, drag and keys. */
  $("hand").addEventListener("click", (e) => { const b = e.target.closest(".card"); if (!b) return; st.sel = Number(b.dataset.index); render(); });
  $("hand").addEventListener("dblclick", (e) => { const b = e.target.closest(".card"); if (!b) return; const a = find("discard", b.dataset.card); if (a) act(a); });
  let dragFrom = -1;
  $("hand").addEventListener("dragstart", (e) => { const b = e.target.closest(".card"); dragFrom = b ? Number(b.dataset.index) : -1; });
  $("hand").addEventListener("dragover", (e) => e.preventDefault());
  $("hand").addEventListener("drop", (e) => { e.preventDefault(); const b = e.target.closest(".card"); if (!b || dragFrom < 0) return;
    const to = Number(b.dataset.index); const [c] = st.hand.splice(dragFrom, 1); st.hand.splice(to, 0, c); st.sel = to; render(); });
  $("stock").addEventListener("click", () => { const a = find("draw_stock"); if (a) act(a); });
  $("upcard").addEventListener("click", () => { const a = find("take_discard"); if (a) act(a); });
  $("sort").addEventListener("click", () => { st.sortBy = st.sortBy === "suit" ? "rank" : "suit"; sortHand(); render(); });
  $("knock-go").addEventListener("click", confirmKnock);
  $("knock-cancel").addEventListener("click", () => { st.knock = null; $("knock").hidden = true; render(); });
  document.addEventListener("keydown", (e) => {
    const n = st.hand.length;
    if (st.summary && (e.key === "Enter" || e.key === "Escape")) { $("continue").click(); e.preventDefault(); return; }
    if (st.knock) {
      if (e.key === "Enter") confirmKnock();
      else if (e.key === "Escape") $("knock-cancel").click();
      else if (/^[1-9]$/.test(e.key)) { const r = document.querySelectorAll("#knock-options input")[Number(e.key) - 1]; if (r) { r.checked = true; st.knock.choice = Number(e.key) - 1; } }
      e.preventDefault(); return;
    }
    if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
      const step = e.key === "ArrowLeft" ? -1 : 1;
      if (e.shiftKey && st.sel >= 0) { const to = (st.sel + step + n) % n; const [c] = st.hand.splice(st.sel, 1); st.hand.splice(to, 0, c); st.sel = to; }
      else st.sel = st.sel < 0 ? 0 : (st.sel + step + n) % n;
      render(); e.preventDefault(); return;
    }
    const c = st.hand[st.sel];
    const pick = { Enter: c && find("discard", c), d: c && find("discard", c), k: c && find("knock", c),
      s: find("draw_stock"), t: find("take_discard"), p: find("pass_upcard") }[e.key];
    if (pick) { act(pick); e.preventDefault(); }
    else if (e.key === "o") $("sort").click();
  });
  render();
})();
