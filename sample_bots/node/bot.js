// A sample gin-referee bot in Node.js (>= 18): msgpack over a ZeroMQ DEALER socket.
// Install once with `npm ci` in this folder, then run: node bot.js
// The referee passes GIN_REFEREE_ENDPOINT and GIN_REFEREE_TOKEN in the environment.
// Over tcp:// the referee requires CURVE: set GIN_REFEREE_SERVER_KEY (the referee's public key)
// and GIN_BOT_KEY_FILE (this bot's NAME.key_secret from `gin-referee keygen --bot NAME`), or
// GIN_BOT_PUBLIC_KEY and GIN_BOT_SECRET_KEY (docs/protocol.md, "Connecting over the network").
// Strategy (deterministic): big gin > knock > shed the card that fits the hand worst;
// take the discard only when it fits the hand, otherwise draw from the stock.
import { readFileSync } from "node:fs";
import * as zmq from "zeromq";
import { encode, decode } from "@msgpack/msgpack";

const IDLE_LIMIT_MS = 60_000; // give up if the referee is silent this long

const endpoint = process.env.GIN_REFEREE_ENDPOINT;
const token = process.env.GIN_REFEREE_TOKEN;
if (!endpoint || !token) {
  console.error("node-bot: GIN_REFEREE_ENDPOINT and GIN_REFEREE_TOKEN must be set");
  process.exit(2);
}

// ---------------------------------------------------------------- strategy
const RANKS = "A23456789TJQK";
const rank = (card) => RANKS.indexOf(card[0]); // 0 (ace) .. 12 (king)
const points = (card) => Math.min(rank(card) + 1, 10); // deadwood value

// How well `card` fits `hand`: 2 per card of the same rank, 1 per run neighbour
// (same suit, at most two ranks away).
function fit(card, hand) {
  let score = 0;
  for (const other of hand) {
    if (other === card) continue;
    if (rank(other) === rank(card)) score += 2;
    else if (other[1] === card[1] && Math.abs(rank(other) - rank(card)) <= 2) score += 1;
  }
  return score;
}

// Among discard/knock actions, the one shedding the worst-fitting card (highest points on ties).
function shed(actions, hand) {
  const cost = (a) => fit(a.card, hand) * 100 - points(a.card);
  return actions.reduce((best, a) => (cost(a) < cost(best) ? a : best));
}

// Pick one entry of request.legal; a legal entry is always a valid answer as it is.
function choose(request) {
  const { legal, view } = request;
  const of = (kind) => legal.filter((a) => a.kind === kind);
  const [bigGin] = of("big_gin");
  if (bigGin) return bigGin;
  for (const kind of ["knock", "discard"]) {
    const options = of(kind);
    if (options.length > 0) return shed(options, view.hand);
  }
  const top = view.discard_pile.at(-1);
  const [take] = of("take_discard");
  if (take && top && fit(top, view.hand) >= 2) return take;
  return of("draw_stock")[0] ?? of("pass_upcard")[0] ?? legal[0];
}

// ---------------------------------------------------------------- connection
// zeromq.js socket options for CURVE (none when GIN_REFEREE_SERVER_KEY is unset).
function curveOptions() {
  const curveServerKey = process.env.GIN_REFEREE_SERVER_KEY;
  if (!curveServerKey) return {};
  let curvePublicKey = process.env.GIN_BOT_PUBLIC_KEY;
  let curveSecretKey = process.env.GIN_BOT_SECRET_KEY;
  const file = process.env.GIN_BOT_KEY_FILE;
  if (file) {
    const text = readFileSync(file, "utf8"); // a ZeroMQ certificate: key = "40 Z85 chars"
    curvePublicKey = /public-key\s*=\s*"([^"]{40})"/.exec(text)?.[1];
    curveSecretKey = /secret-key\s*=\s*"([^"]{40})"/.exec(text)?.[1];
  }
  if (!curvePublicKey || !curveSecretKey) {
    console.error(
      "node-bot: GIN_REFEREE_SERVER_KEY is set: set GIN_BOT_KEY_FILE (a NAME.key_secret file) " +
        "or GIN_BOT_PUBLIC_KEY and GIN_BOT_SECRET_KEY",
    );
    process.exit(2);
  }
  return { curveServerKey, curvePublicKey, curveSecretKey };
}

const sock = new zmq.Dealer({ linger: 0, ...curveOptions() });
// A key the referee does not know is refused during the CURVE handshake (status 400).
sock.events.on("handshake:error:auth", ({ error }) => {
  console.error(`node-bot: the referee refused this bot's key: ${error.message}`);
  finish(2);
});
sock.connect(endpoint);
const send = (msg) => sock.send(encode(msg)); // one message = one frame

// Watchdog: exit non-zero if no message arrives for IDLE_LIMIT_MS.
let watchdog;
function rearm() {
  clearTimeout(watchdog);
  watchdog = setTimeout(() => {
    console.error(`node-bot: no message from the referee for ${IDLE_LIMIT_MS} ms; giving up`);
    process.exit(3);
  }, IDLE_LIMIT_MS);
}

function finish(code) {
  clearTimeout(watchdog);
  sock.close();
  process.exit(code);
}

rearm();
// The strategy keeps no state between matches, so the bot may be kept for the next match of
// a tournament (multi_match): after match_end it waits for match_start or the referee's bye.
await send({ type: "hello", protocol_version: 1, name: "node-bot", token, multi_match: true });
let kept = false; // the welcome granted multi_match

try {
  for await (const [frame] of sock) {
    rearm();
    const msg = decode(frame);
    switch (msg.type) {
      case "request":
        // request_id is a whole JS number, so @msgpack/msgpack encodes it as a msgpack int.
        await send({ type: "action", request_id: msg.request_id, action: choose(msg) });
        break;
      case "ping":
        await send({ type: "pong", nonce: msg.nonce });
        break;
      case "reject":
        console.error(`node-bot: rejected: ${msg.code}: ${msg.message}`);
        finish(2);
        break;
      case "error":
        console.error(`node-bot: referee error: ${msg.code}: ${msg.message}`);
        break;
      case "welcome":
        kept = msg.multi_match === true;
        break;
      case "match_end":
        console.error(`node-bot: ${msg.result} (${msg.reason})`);
        if (kept) break; // wait for the next match_start, or the bye
        await send({ type: "bye" });
        finish(0);
        break;
      case "bye":
        finish(0);
        break;
      default: // match_start, hand_start, event, hand_end, game_end, unknown types
        break;
    }
  }
  console.error("node-bot: socket closed before match_end");
  finish(1);
} catch (err) {
  console.error(`node-bot: ${err.stack ?? err}`);
  finish(1);
}
