"""A raw-protocol test bot (zmq + msgpack, no SDK) that misbehaves on purpose.

Usage: ``python misbehave.py MODE [N]``; it plays the first legal action until decision N
(default 3), then does what MODE says. Modes: never, wrong_token, old_version, sleep, crash,
garbage, shape, illegal, double, flood, ignore_term, disconnect, freeze (SIGSTOPs itself), bye,
multiframe, oversize; and two that
ask for ``multi_match`` and then do not keep it: kept_leaves (exits after match_end) and
kept_bye (says bye after match_end, then exits).
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


def main() -> int:
    """Run the chosen misbehaviour."""
    mode = sys.argv[1]
    at = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    if mode == "never":
        time.sleep(600)
        return 0
    if mode == "ignore_term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(os.environ["GIN_REFEREE_ENDPOINT"])
    token = "not-a-token" if mode == "wrong_token" else os.environ["GIN_REFEREE_TOKEN"]
    version = 99 if mode == "old_version" else 1
    hello = {"type": "hello", "protocol_version": version, "name": f"bad-{mode}", "token": token}
    if mode.startswith("kept_"):
        hello["multi_match"] = True
    sock.send(pack(hello))
    decisions = 0
    last_id = None
    while True:
        if not sock.poll(30_000):
            return 4
        msg = msgpack.unpackb(sock.recv(), raw=False)
        kind = msg["type"]
        if kind == "reject":
            print(f"rejected: {msg['code']}: {msg['message']}", file=sys.stderr)
            return 2
        if kind == "ping":
            sock.send(pack({"type": "pong", "nonce": msg["nonce"]}))
        elif kind in ("match_end", "bye"):
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
                elif mode == "multiframe":
                    sock.send_multipart([b"", pack(reply)])
                    continue
                elif mode == "illegal":
                    hand = set(msg["view"]["hand"])
                    card = next(c for c in ("As", "Kd", "7h", "2c", "9s") if c not in hand)
                    reply["action"] = {"kind": "discard", "card": card}
                    if msg["decision"] != "discard":
                        reply["action"] = {"kind": "discard", "card": card}
                elif mode == "flood":
                    for i in range(3000):
                        sock.send(
                            pack(
                                {
                                    "type": "action",
                                    "request_id": 10**6 + i,
                                    "action": {"kind": "pass_upcard"},
                                }
                            )
                        )
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
            sock.send(pack(reply))
            if mode == "double":
                sock.send(pack(reply))
                if last_id is not None:
                    sock.send(pack({**reply, "request_id": last_id}))
            last_id = rid


if __name__ == "__main__":
    sys.exit(main())
