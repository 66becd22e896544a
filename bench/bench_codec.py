"""Microseconds of the protocol paths one decision takes, for A/B runs of two trees.

Run: ``python -m bench.bench_codec [--rounds 7]``. Over the decisions of 200 seeded hands it
times, per call: the referee's request writer (``request_bytes``), the decoding fast path of
the action reply (``decode_action``), ``encode`` of the event the opponent is told, and, for
the Python SDK's side, ``decode`` of a request and of a hello. Prints one JSON object: the
median and the spread (min, max) over the rounds of each figure.

To compare two checkouts, run this file against each in turn, alternating, with the other
tree's packages first on the path, e.g.
``PYTHONPATH=../main python bench/bench_codec.py`` (it imports nothing from ``bench``).
``bench/eval_msgspec.py`` times msgspec over the same :func:`decisions`.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable
from typing import TypeAlias

import msgpack

from protocol.codec import decode, decode_action, decode_bot_message, encode
from protocol.schema import Event, Hello
from referee.match.deals import Deal
from referee.match.request import request_bytes
from referee.match.wire import to_wire_action
from referee.rules import Action, HandState, Knock, RuleSet, apply, deal, legal_actions

_Step: TypeAlias = tuple[HandState, tuple[Action, ...], int, bytes, Event]


def decisions(hands: int) -> list[_Step]:
    """(state, legal, request id, reply bytes, event) for every decision of seeded hands."""
    rules = RuleSet.preset("standard")
    steps: list[_Step] = []
    for hand in range(hands):
        state = deal(
            rules, Deal.from_seed(7).deck("bench", 0, hand), dealer=hand % 2, scores=(0, 0)
        )
        rid = 1
        while not state.is_over:
            legal = legal_actions(state)
            action = next((a for a in legal if isinstance(a, Knock)), legal[0])
            wire = to_wire_action(action)
            body = {"kind": wire.kind, "card": wire.card}
            if wire.card is None:
                del body["card"]
            reply: bytes = msgpack.packb({"type": "action", "request_id": rid, "action": body})
            steps.append((state, legal, rid, reply, Event(state.to_act, wire)))
            state = apply(state, action)
            rid += 1
    return steps


def main() -> None:
    """Run the rounds and print the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    steps = decisions(200)
    requests = [request_bytes(s, lg, r, 5000, 60000, ()) for s, lg, r, _, _ in steps[:500]]
    hello = encode(Hello(1, "bench", "token", "me", "1.0", inline_events=True))

    def write_requests() -> int:
        for state, legal, rid, _, _ in steps:
            request_bytes(state, legal, rid, 5000, 60000, ())
        return len(steps)

    def read_replies() -> int:
        for _, _, _, reply, _ in steps:
            decode_action(reply)
        return len(steps)

    def encode_events() -> int:
        for _, _, _, _, event in steps:
            encode(event)
        return len(steps)

    def decode_requests() -> int:
        for data in requests:
            decode(data)
        return len(requests)

    def decode_hellos() -> int:
        for _ in range(5000):
            decode_bot_message(hello)
        return 5000

    cases: dict[str, Callable[[], int]] = {
        "request_bytes": write_requests,
        "decode_action": read_replies,
        "encode_event": encode_events,
        "decode_request": decode_requests,
        "decode_hello": decode_hellos,
    }
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.rounds):
        for name, run in cases.items():
            start = time.process_time_ns()
            count = run()
            samples[name].append((time.process_time_ns() - start) / count / 1000)
    print(
        json.dumps(
            {
                "machine": f"{platform.machine()} {platform.python_version()}",
                "rounds": args.rounds,
                "decisions": len(steps),
                "us": {
                    name: [round(statistics.median(xs), 3), round(min(xs), 3), round(max(xs), 3)]
                    for name, xs in samples.items()
                },
            }
        )
    )


if __name__ == "__main__":
    main()
