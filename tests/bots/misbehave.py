"""A raw-protocol test bot (zmq + msgpack, no SDK) that misbehaves on purpose.

Usage: ``python misbehave.py MODE [N]``; it plays the first legal action until decision N
(default 3), then does what MODE says. Every ``error``, ``reject`` and ``match_end`` it reads
is written to stderr as one line (``got error CODE: MESSAGE``), which the tests read back from
the seat's stderr file.

Modes at decision N: sleep, crash, garbage, shape, trailing (a reply in the common layout with
a byte after it), huge_id (a request id past 2**53 - 1), illegal, double, flood, disconnect,
freeze (SIGSTOPs itself), oversize (a 70 KB reply), bye, multiframe, hello_twice, pong_flood
(1,100 pongs to no ping), mute (at its first discard from decision N on, replies, then reads
and sends nothing more: idle and silent), slow (from decision N on, thinks 4 s per decision),
wide_id (from decision N on, every request id written as a uint32: valid, and played),
and one per message
in :data:`BAD_ACTIONS` (sent instead of the reply). ``draw_card`` and ``knock_meld`` wait for
the first request from N on where ``draw_stock`` or a discard is legal. Other modes: never
(no connection), wrong_token, old_version, ignore_term; ``probe:NAME`` says hello, then sends
the :data:`PROBES` message NAME from a second connection of its own (a stranger to the
referee), logs the answer (``probe got reject CODE: ...``) and plays on; and two that ask for
``multi_match`` and then do not keep it: kept_leaves (exits after match_end) and kept_bye
(says bye after match_end, then exits).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import Any

import msgpack
import zmq


def pack(obj: dict[str, Any]) -> bytes:
    """msgpack bytes of a map."""
    return msgpack.packb(obj, use_bin_type=True)


def hello(token: str, version: int = 1, name: str = "bad") -> dict[str, Any]:
    """A hello map."""
    return {"type": "hello", "protocol_version": version, "name": name, "token": token}


PROBES: dict[str, Any] = {
    "malformed": b"\xc1 not msgpack",
    "unknown_type": {"type": "frobnicate"},
    "missing_field": {"type": "hello", "protocol_version": 1, "name": "x"},
    "bad_type": {"type": "hello", "protocol_version": "one", "name": "x", "token": "t"},
    "bad_value": {"type": "hello", "protocol_version": 1, "name": "", "token": "t"},
    "bad_card": {"type": "action", "request_id": 1, "action": {"kind": "discard", "card": "1h"}},
    "unexpected_type": {"type": "ping", "nonce": 1},
    "unexpected_message": {"type": "pong", "nonce": 1},
    "bad_token": hello("not-a-token"),
    "version_unsupported": hello("{token}", version=99),
    "token_in_use": hello("{token}"),
}
"""What ``probe:NAME`` sends before any hello on its second connection (``{token}``: the
seat's own token)."""

BAD_ACTIONS: dict[str, Any] = {
    "missing": lambda rid, msg: {"type": "action", "action": msg["legal"][0]},
    "bad_card": lambda rid, msg: {
        "type": "action",
        "request_id": rid,
        "action": {"kind": "discard", "card": "1h"},
    },
    "unknown_type": lambda rid, msg: {"type": "frobnicate", "request_id": rid},
    "unexpected_type": lambda rid, msg: {"type": "ping", "nonce": rid},
    "draw_card": lambda rid, msg: {
        "type": "action",
        "request_id": rid,
        "action": {"kind": "draw_stock", "card": msg["view"]["discard_pile"][-1]},
    },
    "knock_meld": lambda rid, msg: {
        "type": "action",
        "request_id": rid,
        "action": {
            "kind": "knock",
            "card": msg["view"]["hand"][0],
            "melds": [msg["view"]["hand"][:3]],
        },
    },
}
"""Modes that answer decision N with a message the referee must refuse."""

WANTS = {"draw_card": "draw_stock", "knock_meld": "discard"}
"""Modes that wait for a request in which this kind is legal."""


def probe(ctx: zmq.Context[zmq.Socket[bytes]], endpoint: str, name: str, token: str) -> None:
    """Send PROBES[name] from a fresh connection and log the referee's answer."""
    side = ctx.socket(zmq.DEALER)
    side.setsockopt(zmq.LINGER, 0)
    side.connect(endpoint)
    payload = PROBES[name]
    if isinstance(payload, dict):
        payload = pack({k: v.format(token=token) if v == "{token}" else v
                        for k, v in payload.items()})  # fmt: skip
    side.send(payload)
    if side.poll(10_000):
        msg = msgpack.unpackb(side.recv(), raw=False)
        print(f"probe got {msg['type']} {msg.get('code')}: {msg.get('message')}", file=sys.stderr)
    else:
        print("probe got nothing", file=sys.stderr)
    sys.stderr.flush()
    side.close(0)


def main() -> int:
    """Run the chosen misbehaviour."""
    mode = sys.argv[1]
    at = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    if mode == "never":
        time.sleep(600)
        return 0
    if mode == "ignore_term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    endpoint = os.environ["GIN_REFEREE_ENDPOINT"]
    sock.connect(endpoint)
    real_token = os.environ["GIN_REFEREE_TOKEN"]
    token = "not-a-token" if mode == "wrong_token" else real_token
    first = hello(token, 99 if mode == "old_version" else 1, f"bad-{mode}")
    if mode.startswith("kept_"):
        first["multi_match"] = True
    sock.send(pack(first))
    decisions = 0
    last_id = None
    done_bad = False
    while True:
        if not sock.poll(30_000):
            return 4
        msg = msgpack.unpackb(sock.recv(), raw=False)
        kind = msg["type"]
        if kind in ("error", "reject"):
            print(f"got {kind} {msg['code']}: {msg['message']}", file=sys.stderr, flush=True)
        if kind == "reject":
            return 2
        if kind == "welcome" and mode.startswith("probe:"):
            probe(ctx, endpoint, mode.removeprefix("probe:"), real_token)
        if kind == "ping":
            sock.send(pack({"type": "pong", "nonce": msg["nonce"]}))
        elif kind in ("match_end", "bye"):
            print(f"got {kind} {msg.get('reason')}", file=sys.stderr, flush=True)
            if mode == "kept_bye" and kind == "match_end":
                sock.send(pack({"type": "bye", "reason": "leaving anyway"}))
                time.sleep(0.2)  # let the bye leave before the socket closes
            if mode == "ignore_term":
                time.sleep(600)
            return 0
        elif kind == "request":
            decisions += 1
            rid = msg["request_id"]
            reply = {"type": "action", "request_id": rid, "action": msg["legal"][0]}
            if mode == "slow" and decisions >= at:
                time.sleep(4.0)
            if mode == "mute" and decisions >= at and msg["decision"] == "discard":
                sock.send(pack(reply))  # its turn ends: it is idle from now on, and silent
                time.sleep(600)
            if mode in BAD_ACTIONS and decisions >= at and not done_bad:
                wanted = WANTS.get(mode)
                if wanted is None or any(a["kind"] == wanted for a in msg["legal"]):
                    done_bad = True
                    sock.send(pack(BAD_ACTIONS[mode](rid, msg)))
                    continue
            if decisions == at:
                if mode == "sleep":
                    time.sleep(600)
                elif mode == "crash":
                    print("crashing on purpose", file=sys.stderr, flush=True)
                    os._exit(3)
                elif mode == "garbage":
                    sock.send(b"\xc1\xff\x00 definitely not msgpack")
                    continue
                elif mode == "shape":
                    sock.send(pack({"type": "action", "request_id": "seven"}))
                    continue
                elif mode == "trailing":  # the common reply's layout, one byte too many
                    sock.send(pack(reply) + b"\x00")
                    continue
                elif mode == "huge_id":  # the common layout, an id past 2**53 - 1 (as uint64)
                    sock.send(pack({**reply, "request_id": 2**60}))
                    continue
                elif mode == "multiframe":
                    sock.send_multipart([b"", pack(reply)])
                    continue
                elif mode == "illegal":
                    hand = set(msg["view"]["hand"])
                    card = next(c for c in ("As", "Kd", "7h", "2c", "9s") if c not in hand)
                    reply["action"] = {"kind": "discard", "card": card}
                elif mode == "hello_twice":
                    sock.send(pack(hello(real_token)))
                elif mode == "flood":
                    for i in range(3000):
                        stale = {"type": "action", "request_id": 10**6 + i,
                                 "action": {"kind": "pass_upcard"}}  # fmt: skip
                        sock.send(pack(stale))
                elif mode == "pong_flood":
                    for i in range(1100):
                        sock.send(pack({"type": "pong", "nonce": 10**6 + i}))
                elif mode == "disconnect":
                    sock.send(pack(reply))
                    sock.close(0)
                    time.sleep(600)
                elif mode == "freeze":
                    os.kill(os.getpid(), signal.SIGSTOP)  # silent, connection open: a vanished host
                elif mode == "oversize":
                    sock.send(pack({**reply, "padding": "x" * 70_000}))
                    time.sleep(600)
                elif mode == "bye":
                    sock.send(pack({"type": "bye", "reason": "leaving"}))
                    time.sleep(600)
            if mode == "wide_id" and decisions >= at:  # each id as a uint32: valid, if long
                head = pack({"type": "action"})[1:]  # the "type" entry, without its map header
                rest = pack({"action": reply["action"]})[1:]
                sock.send(b"\x83" + head + msgpack.packb("request_id") + b"\xce"
                          + rid.to_bytes(4, "big") + rest)  # fmt: skip
                continue
            sock.send(pack(reply))
            if mode == "double":
                sock.send(pack(reply))
                if last_id is not None:
                    sock.send(pack({**reply, "request_id": last_id}))
            last_id = rid


if __name__ == "__main__":
    sys.exit(main())
