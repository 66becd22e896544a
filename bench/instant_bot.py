"""A trivial bot for benchmarks: raw pyzmq + msgpack, answers every request at once.

It knocks whenever a knock is listed (so hands end), otherwise plays the first legal action.
It asks for the opponent's moves inside its requests (``inline_events``), as the Python SDK
does by default; ``--separate-events`` asks for them as separate ``event`` messages.
``--sdk`` plays the same policy as a bot author would write it: a ``protocol.bot.Bot`` run by
the Python SDK, which decodes and checks every message into typed values. Both ask for
``multi_match`` (stateless, so a tournament may keep the process for the next game) unless
``--one-match`` is given.
"""

from __future__ import annotations

import os
import sys

import msgpack
import zmq


def sdk_main() -> int:
    """The same policy on the Python SDK."""
    from protocol.bot import Bot, run_bot
    from protocol.schema import Request, WireAction

    class Instant(Bot):
        def act(self, request: Request) -> WireAction:
            for action in request.legal:
                if action.kind == "knock":
                    return action
            return request.legal[0]

    return run_bot(Instant(), name="instant-sdk", multi_match="--one-match" not in sys.argv)


def main() -> int:
    """Play until match_end (or, when granted multi_match, until the referee's bye)."""
    if "--sdk" in sys.argv:
        return sdk_main()
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(os.environ["GIN_REFEREE_ENDPOINT"])
    hello = {"type": "hello", "protocol_version": 1, "name": "instant",
             "token": os.environ["GIN_REFEREE_TOKEN"],
             "inline_events": "--separate-events" not in sys.argv,
             "multi_match": "--one-match" not in sys.argv}  # fmt: skip
    sock.send(msgpack.packb(hello))
    unpack, pack = msgpack.unpackb, msgpack.packb
    kept = False
    while True:
        msg = unpack(sock.recv())
        kind = msg["type"]
        if kind == "request":
            legal = msg["legal"]
            choice = legal[0]
            for action in legal:
                if action["kind"] == "knock":
                    choice = action
                    break
            sock.send(pack({"type": "action", "request_id": msg["request_id"], "action": choice}))
        elif kind == "ping":
            sock.send(pack({"type": "pong", "nonce": msg["nonce"]}))
        elif kind == "welcome":
            kept = msg.get("multi_match") is True
        elif kind == "match_end" and kept:
            continue  # granted multi_match: wait for the next match_start or the bye
        elif kind in ("match_end", "bye", "reject"):
            sock.close(0)
            ctx.term()
            return 0


if __name__ == "__main__":
    sys.exit(main())
