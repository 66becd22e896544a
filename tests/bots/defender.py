"""A raw-protocol bot (zmq + msgpack, no SDK) that asks for ``declare_melds`` and never knocks.

Usage: ``python defender.py MODE``. At each ``defend`` request it writes ``defend request N``
to stderr and answers: ``nothing`` declares no meld (every card deadwood, less layoffs),
``steal`` declares the knocker's first meld as its own (refused: an illegal fault), ``card``
sends a ``defend`` with a ``card`` (malformed). Elsewhere it plays the first legal action that
is not a knock.
"""

from __future__ import annotations

import os
import sys

import msgpack
import zmq


def main() -> int:
    """Play one match as MODE says."""
    mode = sys.argv[1]
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 1000)
    sock.setsockopt(zmq.RCVTIMEO, 60_000)
    sock.connect(os.environ["GIN_REFEREE_ENDPOINT"])
    hello = {"type": "hello", "protocol_version": 1, "name": f"defender-{mode}",
             "token": os.environ["GIN_REFEREE_TOKEN"], "declare_melds": True}  # fmt: skip
    sock.send(msgpack.packb(hello))
    asked = 0
    while True:
        msg = msgpack.unpackb(sock.recv())
        kind = msg["type"]
        if kind == "welcome":
            print(f"welcome declare_melds={msg.get('declare_melds')}", file=sys.stderr, flush=True)
        elif kind == "ping":
            sock.send(msgpack.packb({"type": "pong", "nonce": msg["nonce"]}))
        elif kind == "request" and msg["decision"] == "defend":
            asked += 1
            print(f"defend request {asked}", file=sys.stderr, flush=True)
            action: dict[str, object] = {"kind": "defend"}
            if mode == "nothing":
                action["melds"] = []
            elif mode == "steal":
                action["melds"] = msg["knocker_melds"][:1]
            elif mode == "card":
                action["card"] = msg["view"]["hand"][0]
            sock.send(
                msgpack.packb({"type": "action", "request_id": msg["request_id"], "action": action})
            )
        elif kind == "request":
            legal = [a for a in msg["legal"] if a["kind"] != "knock"] or msg["legal"]
            sock.send(
                msgpack.packb(
                    {"type": "action", "request_id": msg["request_id"], "action": legal[0]}
                )
            )
        elif kind in ("error", "match_end"):
            print(f"got {kind} {msg.get('code') or msg.get('fault')}", file=sys.stderr, flush=True)
            if kind == "match_end":
                sock.send(msgpack.packb({"type": "bye"}))
                break
        elif kind == "bye":
            break
    sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
