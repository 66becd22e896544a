/* gin-referee match viewer: draws the snapshots embedded by referee/view/replay_data.py.
 *
 * The script knows no rules: every step of every hand (both hands split into melds and
 * deadwood, the discard pile, the stock count, the decision and its time) was computed by the
 * rules engine when the page was generated. `new GinViewer(root, data)` renders `data` (the
 * format in docs/viewer.md) into `root`; `viewer.update(data)` redraws it with new data (a live
 * page appends hands and calls it), keeping the position. A card "?" is drawn face down; a
 * hand with `masked` set (the live page's hand in play) has no melds, deadwood or result yet.
 * Text from the record (bot names, fault details) only ever goes through textContent.
 */
"use strict";

(function (global) {
  const SUITS = { c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660" };
  const RANKS = { T: "10" };
  const TERMS = {
    knock: "Knock", gin: "Gin", big_gin: "Big gin", undercut: "Undercut",
    wall: "Wall", turn_cap: "Turn cap", forfeit: "Forfeit",
  };

  function h(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function card(code, extra) {
    if (!code || code === "?") {
      return h("span", { class: "card back" + (extra ? " " + extra : ""), "data-card": "?", title: "hidden card" });
    }
    const rank = code.slice(0, -1), suit = code.slice(-1);
    return h("span", { class: `card s-${suit} r-${rank}` + (extra ? " " + extra : ""), "data-card": code, title: code },
      h("span", { class: "rank" }, RANKS[rank] || rank),
      h("span", { class: "suit" }, SUITS[suit] || suit));
  }

  function cardText(code) {
    const rank = code.slice(0, -1), suit = code.slice(-1);
    return h("span", { class: `ctext s-${suit}` }, (RANKS[rank] || rank) + (SUITS[suit] || suit));
  }

  function cards(codes, cls) {
    return h("span", { class: cls || "cards" }, codes.map((c) => card(c)));
  }

  function meldText(text) {
    return text.split(" ").filter(Boolean);
  }

  function ms(value) {
    if (value === undefined || value === null) return "";
    if (value >= 10000) return (value / 1000).toFixed(1) + " s";
    if (value >= 1000) return (value / 1000).toFixed(2) + " s";
    return (value >= 100 ? value.toFixed(0) : value.toFixed(value >= 10 ? 1 : 2)) + " ms";
  }

  function plural(n, word) {
    return `${n} ${word}${n === 1 ? "" : "s"}`;
  }

  class GinViewer {
    constructor(root, data) {
      this.root = root;
      this.hand = 0;
      this.step = 0;
      this.timer = null;
      this.speed = 1;
      this.build();
      this.update(data);
      this.fromHash();
      global.addEventListener("hashchange", () => this.fromHash());
      global.addEventListener("keydown", (event) => this.onKey(event));
    }

    /* The page's fixed skeleton; render() fills it. */
    build() {
      const q = (sel) => this.root.querySelector(sel);
      this.root.replaceChildren(
        h("header", { class: "top" },
          h("div", { class: "title-row" },
            h("h1", { id: "title" }),
            h("div", { id: "scoreboard", class: "scoreboard", "aria-live": "polite" })),
          h("div", { id: "meta", class: "meta" })),
        h("nav", { class: "controls", "aria-label": "replay controls" },
          h("select", { id: "hand-select", "aria-label": "hand", onchange: (e) => this.go(Number(e.target.value), 0) }),
          h("span", { class: "buttons" },
            h("button", { id: "prev-hand", type: "button", title: "previous hand (PageUp, p)", onclick: () => this.go(this.hand - 1, 0) }, "\u00ab hand"),
            h("button", { id: "prev-step", type: "button", title: "previous step (\u2190)", onclick: () => this.move(-1) }, "\u25c0"),
            h("button", { id: "play", type: "button", title: "play / pause (space)", onclick: () => this.toggle() }, "\u25b6 play"),
            h("button", { id: "next-step", type: "button", title: "next step (\u2192)", onclick: () => this.move(1) }, "\u25b6"),
            h("button", { id: "next-hand", type: "button", title: "next hand (PageDown, n)", onclick: () => this.go(this.hand + 1, 0) }, "hand \u00bb"),
            h("select", { id: "speed", "aria-label": "speed", onchange: (e) => { this.speed = Number(e.target.value); } },
              [0.5, 1, 2, 4].map((s) => h("option", { value: s, selected: s === 1 }, `${s}\u00d7`)))),
          h("span", { class: "slider-box" },
            h("input", { id: "slider", type: "range", min: 0, max: 0, value: 0, "aria-label": "step", oninput: (e) => this.go(this.hand, Number(e.target.value)) }),
            h("span", { id: "step-label", class: "step-label" }))),
        h("main", { class: "layout" },
          h("section", { class: "board", "aria-label": "table" },
            h("div", { id: "hand-title", class: "hand-title" }),
            h("div", { id: "seat-0", class: "seat" }),
            h("div", { class: "centre" },
              h("div", { id: "stock", class: "stock" }),
              h("div", { id: "pile", class: "pile" }),
              h("div", { id: "last-action", class: "last-action", "aria-live": "polite" })),
            h("div", { id: "seat-1", class: "seat" }),
            h("div", { id: "hand-faults", class: "faults" }),
            h("div", { id: "result", class: "result" })),
          h("aside", { class: "side" },
            h("section", { class: "panel" }, h("h2", {}, "Decisions"), h("ol", { id: "decisions", class: "decisions" })),
            h("section", { id: "match-faults", class: "panel faults" }),
            h("details", { class: "panel", open: true },
              h("summary", {}, h("h2", {}, "Hands")), h("ol", { id: "hand-list", class: "hand-list" })))),
        h("footer", { class: "help" },
          "Keys: \u2190 \u2192 step \u00b7 Home/End start/end of hand \u00b7 PageUp/PageDown or p/n hand \u00b7 space play. ",
          "Each hand has its own link (#g1-h2; add -s5 for a step)."));
      this.el = {};
      for (const id of ["title", "scoreboard", "meta", "hand-select", "slider", "step-label", "hand-title", "seat-0", "seat-1",
        "stock", "pile", "last-action", "hand-faults", "result", "decisions", "match-faults", "hand-list", "play"]) {
        this.el[id] = q("#" + id);
      }
    }

    update(data) {
      this.data = data;
      const names = data.names, aka = GinViewer.aka(data);
      this.el.title.textContent = `${names[0]} vs ${names[1]}`;
      this.el.title.title = aka.join("; ");
      document.title = `${names[0]} vs ${names[1]} \u2014 gin-referee`;
      const tc = data.time_control || {};
      const bits = [...aka,data.match_id && data.match_id !== "match" && `match id ${data.match_id}`, data.rules && `${data.rules.name} rules`,
        tc.move_ms !== undefined && `${tc.move_ms / 1000} s a move + ${tc.bank_ms / 1000} s bank a game`,
        data.policy && `faults: ${data.policy}`, data.seed !== undefined && data.seed !== null && `seed ${data.seed}`,
        data.complete === false && "record incomplete (no match end)"];
      this.el.meta.textContent = bits.filter(Boolean).join(" \u00b7 ");
      const select = this.el["hand-select"];
      select.replaceChildren(...data.hands.map((hand, i) => h("option", { value: i }, this.handLabel(hand))));
      this.el["hand-list"].replaceChildren(...data.hands.map((hand, i) =>
        h("li", { "data-index": i }, h("a", { href: "#" + hand.id }, this.handLabel(hand)))));
      const loose = data.faults.filter((f) => !this.handOf(f));
      this.el["match-faults"].replaceChildren(...(loose.length ? [h("h2", {}, "Faults outside a hand"), ...loose.map((f) => this.fault(f))] : []));
      this.go(Math.min(this.hand, Math.max(0, data.hands.length - 1)), this.step, false);
    }

    /* The organiser's names are the names; where a bot called itself otherwise in its hello
     * (`self_names`), a detail says so: "random calls itself random-bot". */
    static aka(data) {
      const own = data.self_names || [];
      return [0, 1].filter((seat) => own[seat] && own[seat] !== data.names[seat])
        .map((seat) => `${data.names[seat]} calls itself ${own[seat]}`);
    }

    handOf(fault) {
      return this.data.hands.find((hand) => hand.game === fault.game && hand.hand === fault.hand);
    }

    handLabel(hand) {
      const r = hand.result || {};
      const who = r.winner === null || r.winner === undefined ? "no score" : `${this.data.names[r.winner]} +${r.points}`;
      return `Game ${hand.game + 1}, hand ${hand.hand + 1}: ${TERMS[r.termination] || r.termination || "in play"}, ${who}`;
    }

    fault(f) {
      const where = f.game >= 0 && f.hand >= 0 ? `game ${f.game + 1}, hand ${f.hand + 1}` : "outside a hand";
      return h("div", { class: "fault" },
        h("strong", {}, `Fault: ${f.name || "seat " + f.seat} \u2014 ${f.kind}`),
        h("span", { class: "where" }, ` (${where})`),
        h("pre", {}, f.detail || ""));
    }

    fromHash() {
      const m = /^#g(\d+)-h(\d+)(?:-s(\d+))?$/.exec(global.location.hash);
      if (!m) { this.go(this.hand, this.step, false); return; }
      const index = this.data.hands.findIndex((hand) => hand.game === Number(m[1]) - 1 && hand.hand === Number(m[2]) - 1);
      if (index >= 0) this.go(index, m[3] === undefined ? 0 : Number(m[3]), false);
    }

    move(delta) {
      const hand = this.data.hands[this.hand];
      if (!hand) return;
      const next = this.step + delta;
      if (next < 0 && this.hand > 0) this.go(this.hand - 1, Infinity);
      else if (next >= hand.steps.length && this.hand < this.data.hands.length - 1) this.go(this.hand + 1, 0);
      else this.go(this.hand, next);
    }

    go(index, step, setHash = true) {
      const hands = this.data.hands;
      this.hand = Math.max(0, Math.min(index, hands.length - 1));
      const hand = hands[this.hand];
      this.step = hand ? Math.max(0, Math.min(step, hand.steps.length - 1)) : 0;
      if (hand && setHash) {
        const hash = "#" + hand.id + (this.step ? `-s${this.step}` : "");
        if (global.location.hash !== hash) global.history.replaceState(null, "", hash);
      }
      this.render();
    }

    toggle() {
      if (this.timer) {
        clearTimeout(this.timer);
        this.timer = null;
      } else {
        this.tick(true);
      }
      this.el.play.textContent = this.timer ? "\u23f8 pause" : "\u25b6 play";
    }

    tick(first) {
      const hand = this.data.hands[this.hand];
      const atEnd = !hand || (this.step >= hand.steps.length - 1 && this.hand >= this.data.hands.length - 1);
      if (atEnd) { this.timer = null; this.el.play.textContent = "\u25b6 play"; return; }
      if (!first) this.move(1);
      const pause = this.step === this.data.hands[this.hand].steps.length - 1 ? 3000 : 800;
      this.timer = setTimeout(() => this.tick(false), pause / this.speed);
    }

    onKey(event) {
      const tag = event.target && event.target.tagName;
      if (event.altKey || event.ctrlKey || event.metaKey || tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
      const last = this.data.hands[this.hand] ? this.data.hands[this.hand].steps.length - 1 : 0;
      const actions = {
        ArrowLeft: () => this.move(-1), ArrowRight: () => this.move(1),
        Home: () => this.go(this.hand, 0), End: () => this.go(this.hand, last),
        PageUp: () => this.go(this.hand - 1, 0), PageDown: () => this.go(this.hand + 1, 0),
        p: () => this.go(this.hand - 1, 0), n: () => this.go(this.hand + 1, 0),
        " ": () => this.toggle(),
      };
      const run = actions[event.key];
      if (run) { event.preventDefault(); run(); }
    }

    render() {
      const data = this.data, hand = data.hands[this.hand];
      this.renderScoreboard(hand);
      this.root.querySelector(".board").classList.toggle("no-hand", !hand);
      if (!hand) {
        this.el["hand-title"].textContent = data.no_hands || "No hand was played.";
        for (const id of ["seat-0", "seat-1", "stock", "pile", "last-action", "decisions", "hand-faults"]) this.el[id].replaceChildren();
        this.el.result.replaceChildren(...this.matchEnd());
        return;
      }
      const snap = hand.steps[this.step], last = hand.steps.length - 1;
      this.el["hand-select"].value = String(this.hand);
      this.el.slider.max = String(last);
      this.el.slider.value = String(this.step);
      this.el["step-label"].textContent = `step ${this.step} / ${last}`;
      for (const li of this.el["hand-list"].children) li.classList.toggle("current", Number(li.dataset.index) === this.hand);
      const extras = [`${data.names[hand.dealer]} deals`, `upcard ${hand.upcard}`];
      if (hand.knock_limit !== data.rules.knock_limit) extras.push(`knock limit ${hand.knock_limit}`);
      if (hand.multiplier !== 1) extras.push(`scores \u00d7${hand.multiplier}`);
      if (hand.masked) extras.push("cards hidden");
      this.el["hand-title"].replaceChildren(
        h("strong", {}, `Game ${hand.game + 1}, hand ${hand.hand + 1}`),
        h("span", { class: "hand-of" }, ` (hand ${this.hand + 1} of ${data.hands.length})`),
        h("span", { class: "hand-extras" }, " \u00b7 " + extras.join(" \u00b7 ")));
      for (const seat of [0, 1]) this.renderSeat(hand, snap, seat);
      this.el.stock.replaceChildren(card("?", "stock-card"), h("span", { class: "count" }, `stock ${snap.stock}`));
      const pile = snap.pile, shown = pile.slice(-8);
      this.el.pile.replaceChildren(
        h("span", { class: "fan" }, shown.map((c, i) => card(c, i === shown.length - 1 ? "top" : ""))),
        h("span", { class: "count" }, pile.length ? `discard pile ${pile.length}` : "discard pile empty"));
      this.el["last-action"].replaceChildren(...this.actionLine(snap));
      this.renderDecisions(hand);
      const faults = data.faults.filter((f) => f.game === hand.game && f.hand === hand.hand);
      this.el["hand-faults"].replaceChildren(...faults.map((f) => this.fault(f)));
      this.el.result.replaceChildren(...(this.step === last && hand.result ? this.result(hand) : []));
    }

    renderScoreboard(hand) {
      const data = this.data, names = data.names;
      const game = hand ? hand.game : Infinity;
      const won = [0, 0];
      for (const g of data.games) if (g.game < game && g.winner !== null && g.winner !== undefined) won[g.winner] += 1;
      const scores = !hand ? null : this.step === hand.steps.length - 1 ? hand.scores_after || hand.scores_before : hand.scores_before;
      const head = h("tr", {}, h("th", {}, ""), h("th", {}, "games won"), scores ? h("th", {}, `game ${hand.game + 1}`) : null);
      const rows = [0, 1].map((seat) => h("tr", {},
        h("th", { class: `sb-name n${seat}` }, names[seat]),
        h("td", { class: "sb-score" }, String(won[seat])),
        scores ? h("td", { class: "sb-score" }, String(scores[seat])) : null));
      this.el.scoreboard.replaceChildren(h("table", {}, head, ...rows));
    }

    renderSeat(hand, snap, seat) {
      const s = snap.seats[seat], names = this.data.names;
      const toAct = snap.to_act === seat;
      const act = hand.steps.slice(1, this.step + 1).filter((st) => st.action.seat === seat);
      const used = act.length ? act[act.length - 1].action : null;
      const badges = [];
      if (hand.dealer === seat) badges.push(h("span", { class: "badge" }, "dealer"));
      if (toAct) badges.push(h("span", { class: "badge to-act" }, "to act"));
      const clock = used ? `${ms(used.used_ms)} used this game` + (used.bank_ms !== undefined ? ` \u00b7 bank ${ms(used.bank_ms)}` : "") : "";
      const drawn = snap.action && snap.action.seat === seat && ["draw_stock", "take_discard"].includes(snap.action.text) ? snap.action.card : null;
      const group = (codes, cls) => h("span", { class: cls }, codes.map((c) => card(c, c === drawn ? "drawn" : "")));
      const node = this.el["seat-" + seat];
      node.classList.toggle("active", toAct);
      node.replaceChildren(
        h("div", { class: "seat-bar" },
          h("span", { class: `name n${seat}` }, names[seat]), ...badges,
          h("span", { class: "deadwood" }, s.deadwood === null || s.deadwood === undefined ? `${s.deadwood_cards.length} cards` : `deadwood ${s.deadwood}`),
          h("span", { class: "clock" }, clock)),
        h("div", { class: "hand" },
          s.melds.map((m) => group(m, "meld")),
          s.deadwood_cards.length ? group(s.deadwood_cards, "loose") : null));
    }

    actionLine(snap) {
      const a = snap.action;
      if (!a) return [h("span", {}, "The deal. "), h("span", { class: "muted" }, `${this.data.names[snap.to_act]} decides on the upcard.`)];
      const verb = a.text.split(" ")[0];
      const out = [h("strong", { class: `n${a.seat}` }, this.data.names[a.seat]), " "];
      const words = { pass_upcard: "passes the upcard", take_discard: "takes", draw_stock: "draws", discard: "discards", knock: "knocks, discarding", big_gin: "declares big gin" };
      out.push(verb === "knock" && !a.card ? "knocks" : words[verb] || a.text, " ");
      if (a.card) out.push(card(a.card, "inline"));
      if (verb === "knock" && a.text.includes(" melds ")) out.push(" ", h("span", { class: "muted" }, "(declares " + a.text.split(" melds ")[1] + ")"));
      out.push(" ", h("span", { class: "muted" }, `in ${ms(a.ms)}`));
      return out;
    }

    renderDecisions(hand) {
      const tc = this.data.time_control || {}, move = tc.move_ms || 1000;
      const rows = hand.steps.slice(1).map((st, i) => {
        const a = st.action, n = i + 1;
        const bar = h("span", { class: "bar" + (a.ms > move ? " over" : "") });
        bar.style.width = Math.min(100, (100 * a.ms) / move).toFixed(1) + "%";
        return h("li", { class: (n === this.step ? "current" : "") + (n > this.step ? " future" : ""), "data-step": n,
          onclick: () => this.go(this.hand, n) },
          h("span", { class: "who n" + a.seat }, this.data.names[a.seat]),
          h("span", { class: "what", title: a.text }, ...this.describe(a)),
          h("span", { class: "time" }, ms(a.ms), h("span", { class: "meter" }, bar)));
      });
      this.el.decisions.replaceChildren(...rows);
      const current = this.el.decisions.querySelector(".current");
      if (current) {
        const list = this.el.decisions, top = current.offsetTop;
        if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - current.offsetHeight) list.scrollTop = top - list.clientHeight / 2;
      }
    }

    /* A decision in a few words, with its card as coloured text ("draw 7\u2665"). */
    describe(a) {
      const verb = a.text.split(" ")[0];
      const words = { pass_upcard: "pass", take_discard: "take", draw_stock: "draw", discard: "discard", knock: "knock", big_gin: "big gin" };
      const out = [words[verb] || a.text];
      if (a.card) out.push(" ", cardText(a.card));
      if (verb === "knock" && a.text.includes(" melds ")) out.push(" +melds");
      return out;
    }

    result(hand) {
      const r = hand.result, names = this.data.names, out = [];
      const term = TERMS[r.termination] || r.termination;
      let line;
      if (r.termination === "forfeit") line = `${term}: ${names[r.winner]} wins the hand (${r.points} points)`;
      else if (r.winner === null || r.winner === undefined) line = `${term}: no score; the same dealer deals again`;
      else if (r.termination === "undercut") line = `${term}: ${names[r.knocker]} knocked, ${names[r.winner]} scores ${r.points}`;
      else line = `${term} by ${names[r.knocker]}: ${names[r.winner]} scores ${r.points}`;
      out.push(h("h2", {}, line));
      if (r.knocker !== null && r.knocker !== undefined && r.melds) {
        const table = h("table", { class: "melds" },
          h("tr", {}, h("th", {}, ""), h("th", {}, "melds"), h("th", {}, "laid off"), h("th", {}, "deadwood")));
        for (const seat of [0, 1]) {
          const layoffs = seat === r.knocker ? [] : (r.layoffs || []);
          table.append(h("tr", {},
            h("th", { class: "n" + seat }, names[seat] + (seat === r.knocker ? " (knocker)" : "")),
            h("td", {}, (r.melds[seat] || []).map((m) => cards(meldText(m), "cards meld"))),
            h("td", {}, layoffs.map(([c, m]) => h("span", { class: "layoff" }, card(c), " on ", cards(meldText(m), "cards meld small")))),
            h("td", { class: "num" }, String(r.deadwood[seat]))));
        }
        out.push(table);
      }
      out.push(h("p", { class: "scores" }, `Game ${hand.game + 1} score: ${names[0]} ${hand.scores_after[0]}, ${names[1]} ${hand.scores_after[1]}` +
        ` (before this hand ${hand.scores_before[0]}\u2013${hand.scores_before[1]}); time this hand ${ms(this.handTime(hand, 0))} / ${ms(this.handTime(hand, 1))}`));
      const nextSame = this.data.hands[this.hand + 1] && this.data.hands[this.hand + 1].game === hand.game;
      const game = this.data.games.find((g) => g.game === hand.game);
      if (game && !nextSame) {
        const who = game.winner === null || game.winner === undefined ? "no winner" : `${names[game.winner]} wins`;
        out.push(h("div", { class: "game-end" },
          h("strong", {}, `Game ${game.game + 1}: ${who} (${game.how})`),
          h("span", {}, ` \u00b7 hand points ${game.scores.join("\u2013")} \u00b7 hands won ${game.hands_won.join("\u2013")} \u00b7 totals with bonuses ${game.totals.join("\u2013")}`)));
      }
      if (this.hand === this.data.hands.length - 1) out.push(...this.matchEnd());
      return out;
    }

    handTime(hand, seat) {
      let sum = 0;
      for (const st of hand.steps.slice(1)) if (st.action.seat === seat) sum += st.action.ms;
      return sum;
    }

    matchEnd() {
      const end = this.data.match_end, names = this.data.names;
      if (!end && this.data.status === "playing") return [h("p", { class: "match-end" }, "The match is in progress.")];
      if (!end) return [h("p", { class: "match-end" }, "The record ends here without a match end (the match was cut short).")];
      const who = end.winner === null || end.winner === undefined ? "a draw" : `${names[end.winner]} wins the match`;
      return [h("div", { class: "match-end" },
        h("strong", {}, `Match over: ${who}`),
        h("span", {}, ` \u00b7 ${plural(end.games_played, "game")} played \u00b7 games won ${end.games_won.join("\u2013")} \u00b7 points ${end.points.join("\u2013")} \u00b7 ${end.reason}` +
          (end.interrupted ? " (interrupted)" : "")))];
    }
  }

  global.GinViewer = GinViewer;
  global.GinCards = { card, cards, h };
  const boot = () => {
    const node = document.getElementById("gin-data");
    const root = document.getElementById("app");
    if (node && root) global.viewer = new GinViewer(root, JSON.parse(node.textContent));
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
  else boot();
})(window);
