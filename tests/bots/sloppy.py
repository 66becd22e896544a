"""A raw-protocol bot (zmq + msgpack, no SDK) with one small mistake, for ``check``'s tests.

Usage: ``python sloppy.py MODE``; it plays the first legal action, answers pings and says
``bye`` after ``match_end``, except for what MODE changes:

- ``plain``: no mistake (a deterministic first-legal bot);
- ``no_pong``: never answers a ping;
- ``error_exit``: exits with status 1 when it receives an ``error``;
- ``resend``: on an ``error`` naming a request, answers that request again;
- ``no_bye``: after ``match_end`` sends nothing and keeps running;
- ``bye_exit1``: says ``bye`` after ``match_end`` but exits with status 1;
- ``late``: sleeps 1.5 s before its third decision (beyond a 1 s move time, within the bank);
- ``melds``: knocks whenever it may, declaring its melds as one list of all its kept cards
  (not a meld: refused as illegal).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import msgpack
import zmq


def pack(obj: dict[str, Any]) -> bytes:
    """msgpack bytes of a map."""
    return msgpack.packb(obj, use_bin_type=True)


def choose(msg: dict[str, Any], mode: str) -> dict[str, Any]:
    """The action for a request."""
    legal: list[dict[str, Any]] = msg["legal"]
    if mode == "melds":
        for action in legal:
            if action["kind"] == "knock":
                kept = [c for c in msg["view"]["hand"] if c != action["card"]]
                return {**action, "melds": [kept]}
    return legal[0]


def main() -> int:
    """Play, with the chosen mistake."""
    mode = sys.argv[1]
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 1000)
    sock.connect(os.environ["GIN_REFEREE_ENDPOINT"])
    token = os.environ["GIN_REFEREE_TOKEN"]
    sock.send(
        pack({"type": "hello", "protocol_version": 1, "name": f"sloppy-{mode}", "token": token})
    )
    decisions = 0
    sent: dict[int, dict[str, Any]] = {}
    while True:
        if not sock.poll(30_000):
            return 4
        msg = msgpack.unpackb(sock.recv(), raw=False)
        kind = msg["type"]
        if kind == "ping" and mode != "no_pong":
            sock.send(pack({"type": "pong", "nonce": msg["nonce"]}))
        elif kind == "request":
            decisions += 1
            if mode == "late" and decisions == 3:
                time.sleep(1.5)
            action = choose(msg, mode)
            sent[msg["request_id"]] = action
            sock.send(pack({"type": "action", "request_id": msg["request_id"], "action": action}))
        elif kind == "error":
            if mode == "error_exit":
                return 1
            rid = msg.get("request_id")
            if mode == "resend" and rid in sent:
                sock.send(pack({"type": "action", "request_id": rid, "action": sent[rid]}))
        elif kind == "match_end":
            if mode == "no_bye":
                time.sleep(60)
                return 0
            sock.send(pack({"type": "bye", "reason": "match over"}))
            sock.close()
            ctx.term()
            return 1 if mode == "bye_exit1" else 0
        elif kind in ("bye", "reject"):
            return 0 if kind == "bye" else 2


if __name__ == "__main__":
    sys.exit(main())
