"""The referee's own Python cost per decision, without sockets or bot processes.

Run: ``python -m bench.bench_inproc [--games 4] [--rounds 5]``. One match (target 500, the
``amortised`` games of ``bench_tournament``) is played by :func:`referee.match.play.play_match`
through a real :class:`~referee.match.hub.Hub` whose transport answers every request in
process, like ``bench/instant_bot.py`` (knock when listed, else the first legal action), from
the loop's next iteration. The transport's own time (unpacking the request, packing the reply)
is measured and subtracted, so what is left is the referee's Python cost: rules, requests,
decoding, seats, the hub, asyncio, records. Two more figures split it: the rules + request +
decode work alone (no asyncio, no seats) over the same decisions, and the rest.

Set beside ``bench_tournament``'s ``ref µs`` (the same referee with real bots and sockets), it
tells how much of the referee's CPU is its own code and how much the sockets and the machine.
Prints one JSON object (medians over the rounds).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import statistics
import time
from typing import Any

import msgpack

from bench.common import machine
from protocol.codec import decode_action, encode
from protocol.schema import Hello
from referee.cli.logs import configure
from referee.match.clock import TimeControl
from referee.match.config import MatchConfig
from referee.match.deals import Deal
from referee.match.hub import Hub
from referee.match.play import play_match
from referee.match.request import request_bytes
from referee.match.wire import to_action, to_wire_action
from referee.net.transport import Incoming
from referee.rules import Knock, RuleSet, apply, deal, legal_actions

CLOCK = TimeControl(move=5.0, bank=60.0, startup=20.0, heartbeat=5.0)


class AnsweringTransport:
    """A transport whose 'bots' answer each request from the loop's next iteration."""

    endpoint = local_endpoint = "inproc://bench"

    def __init__(self) -> None:
        self.handler: Any = None
        self.loop = asyncio.get_running_loop()
        self.seconds = 0.0

    def set_handler(self, handler: Any) -> None:
        """Install the hub's handler."""
        self.handler = handler

    def old_zmtp(self) -> tuple[int, str]:
        return 0, ""

    def without_curve(self) -> int:
        """No connections: none without CURVE."""
        return 0

    def drain_now(self) -> None:
        """Nothing is ever waiting."""

    def set_lost_handler(self, handler: Any) -> None:
        """No connection is ever lost."""

    def admit(self, peer: bytes) -> None:
        """Every peer is admitted."""

    def disconnect(self, peer: bytes, reason: str = "") -> None:
        """Nothing to close."""

    def peer_key(self, peer: bytes) -> bytes | None:
        """No CURVE in process."""
        return None

    def send(self, peer: bytes, payload: bytes) -> bool:
        """Answer a request as the instant bot would (timed, to be subtracted)."""
        start = time.perf_counter()
        msg = msgpack.unpackb(payload)
        if msg["type"] == "request":
            legal = msg["legal"]
            choice = next((a for a in legal if a["kind"] == "knock"), legal[0])
            reply = {"type": "action", "request_id": msg["request_id"], "action": choice}
            self.loop.call_soon(self.handler, Incoming(peer, msgpack.packb(reply), False))
        self.seconds += time.perf_counter() - start
        return True


async def one_match(games: int, seed: int) -> tuple[int, float, float]:
    """Play one match; (decisions, CPU seconds, the transport's seconds)."""
    transport = AnsweringTransport()
    hub = Hub(transport)
    rules = dataclasses.replace(RuleSet.preset("standard"), target=500)
    config = MatchConfig(rules=rules, games=games, time=CLOCK, seed=seed)
    links = (hub.open_seat(0, CLOCK), hub.open_seat(1, CLOCK))
    for seat, link in enumerate(links):
        hello = Hello(1, f"bench{seat}", link.token, inline_events=True)
        transport.handler(Incoming(bytes([seat + 1]), encode(hello), False))
    start = time.process_time()
    result = await play_match(config, links)
    cpu = time.process_time() - start
    return sum(s.decisions for s in result.seats), cpu, transport.seconds


def core_only(seed: int, hands: int) -> tuple[int, float]:
    """Rules + legal actions + request bytes + reply decoding alone, over fresh hands."""
    rules = RuleSet.preset("standard")
    steps = []
    for hand in range(hands):
        state = deal(
            rules, Deal.from_seed(seed).deck("bench", 0, hand), dealer=hand % 2, scores=(0, 0)
        )
        rid = 1
        while not state.is_over:
            legal = legal_actions(state)
            action = next((a for a in legal if isinstance(a, Knock)), legal[0])
            steps.append((state, rid, msgpack.packb(_action_map(rid, action))))
            state = apply(state, action)
            rid += 1
    start = time.process_time()
    for state, rid, reply in steps:
        legal = legal_actions(state)
        request_bytes(state, legal, rid, 5000, 60000, ())
        decoded = decode_action(reply)
        assert decoded is not None
        apply(state, to_action(decoded[1]))
    return len(steps), time.process_time() - start


def _action_map(rid: int, action: Any) -> dict[str, Any]:
    wire = to_wire_action(action)
    body: dict[str, Any] = {"kind": wire.kind}
    if wire.card is not None:
        body["card"] = wire.card
    return {"type": "action", "request_id": rid, "action": body}


def main() -> None:
    """Run the rounds and print medians as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    configure(level="info", console=False)
    referee, core = [], []
    for rnd in range(args.rounds):
        decisions, cpu, bots = asyncio.run(one_match(args.games, seed=rnd))
        referee.append((cpu - bots) / decisions * 1e6)
        count, seconds = core_only(seed=rnd, hands=300)
        core.append(seconds / count * 1e6)
    ref, rules = statistics.median(referee), statistics.median(core)
    print(
        json.dumps(
            {
                "machine": machine(),
                "rounds": args.rounds,
                "referee_us_per_decision": round(ref, 1),
                "rules_request_decode_us": round(rules, 1),
                "rest_us": round(ref - rules, 1),
                "per_round_referee_us": [round(x, 1) for x in referee],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
