"""The baselines of one match: raw round trips with the instant bot, on pyzmq and on the
referee's own transport.

Both drive **the same bot process** a match uses (``bench/instant_bot.py``, started like the
referee starts bots: own process group, ``nice`` +10, no sandbox), send it the referee's
typical decision request (:data:`protocol.examples.TYPICAL_REQUEST`, encoded as the referee
sends it) and read its action reply, one round trip at a time, until the request count is
reached:

* :func:`raw_pyzmq` — a blocking pyzmq ``DEALER`` bound at the endpoint: the least a Python
  process on libzmq can do per round trip (no rules, no asyncio, no parsing of the reply);
* :func:`raw_transport` — the referee's :class:`~referee.net.transport.RouterTransport` on
  asyncio with a handler that only answers each reply with the canned request: the floor of
  any referee built on this transport;
* :func:`minimal_referee` — the same transport with a handler that does the rules' work of a
  decision and nothing else: it decodes the reply, applies it to a real hand, lists the legal
  actions and writes the next request from the state (a new hand when one ends), with no
  seats, clocks, faults, events or records; two bots play the two seats, as in a match. The
  least CPU per decision any referee that enforces the rules on this transport spends,
  measured in the same conditions as the referee (the same code warm in one process costs two
  to three times less than between a bot's turns).

Timing starts only after the bots have connected and said hello and after ``warmup`` round
trips; then ``lengths`` timed segments follow back to back on the same connections (so a
segment's rate shows whether the estimate depends on the run's length). Each segment reports
round trips/s, this process's CPU per round trip (``RUSAGE_SELF``: for pyzmq that includes
libzmq's I/O thread) and the bots' (from ``/proc/<pid>/stat``).

Run alone: ``python -m bench.pingpong [--endpoint ipc|tcp] [--lengths 2000,8000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import zmq

from bench.common import cpu_seconds, proc_seconds
from protocol.codec import decode_action, encode
from protocol.examples import TYPICAL_REQUEST
from protocol.schema import MatchEnd
from referee.match.deals import Deal
from referee.match.request import request_bytes
from referee.match.wire import to_action
from referee.net.transport import Incoming, RouterTransport, TransportConfig
from referee.rules import STANDARD, HandState, apply, deal, legal_actions

INSTANT = f"{sys.executable} -m bench.instant_bot"
NICE = 10
REQUEST = encode(replace(TYPICAL_REQUEST, request_id=1))
MATCH_END = encode(MatchEnd("draw", (0, 0), (0, 0), "normal", None))


def spawn_bot(endpoint: str, bot: str = INSTANT) -> subprocess.Popen[bytes]:
    """Start the bot as the referee does (own group, lower priority)."""
    env = dict(os.environ, GIN_REFEREE_ENDPOINT=endpoint, GIN_REFEREE_TOKEN="t")
    proc = subprocess.Popen(shlex.split(bot), env=env, stdin=subprocess.DEVNULL, process_group=0)
    with contextlib.suppress(OSError):
        os.setpriority(
            os.PRIO_PROCESS, proc.pid, min(19, os.getpriority(os.PRIO_PROCESS, 0) + NICE)
        )
    return proc


class Segments:
    """Times ``lengths`` consecutive segments of round trips after ``warmup`` untimed ones."""

    def __init__(self, warmup: int, lengths: list[int], pids: Callable[[], list[int]]) -> None:
        self.warmup, self.lengths, self.pids = warmup, lengths, pids
        self.left = warmup
        self.index = -1  # -1: warming up
        self.results: list[dict[str, float]] = []
        self._mark: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def _bot(self) -> float:
        # The bots are alive until the last segment is timed.
        return sum(proc_seconds(pid) or 0.0 for pid in self.pids())

    def _start(self) -> None:
        self._mark = (time.perf_counter(), cpu_seconds(resource.RUSAGE_SELF), self._bot())

    def tick(self) -> bool:
        """One round trip done; False once every segment is complete."""
        self.left -= 1
        if self.left > 0:
            return True
        if self.index >= 0:
            wall, cpu, bot = self._mark
            count = self.lengths[self.index]
            seconds = time.perf_counter() - wall
            self.results.append({
                "round_trips": count,
                "per_s": count / seconds,
                "server_cpu_us": (cpu_seconds(resource.RUSAGE_SELF) - cpu) / count * 1e6,
                "bot_cpu_us": (self._bot() - bot) / count * 1e6,
            })  # fmt: skip
        self.index += 1
        if self.index == len(self.lengths):
            return False
        self.left = self.lengths[self.index]
        self._start()
        return True


def _endpoint(kind: str, tmp: str) -> str:
    return f"ipc://{tmp}/pp.sock" if kind == "ipc" else "tcp://127.0.0.1"


def raw_pyzmq(
    kind: str, warmup: int, lengths: list[int], bot: str = INSTANT
) -> list[dict[str, float]]:
    """Segments of round trips from a blocking pyzmq DEALER (``kind``: ``ipc`` or ``tcp``)."""
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    proc = None
    with tempfile.TemporaryDirectory() as tmp:
        try:
            endpoint = _endpoint(kind, tmp)
            if kind == "tcp":
                endpoint = f"{endpoint}:{sock.bind_to_random_port(endpoint)}"
            else:
                sock.bind(endpoint)
            proc = spawn_bot(endpoint, bot)
            pid = proc.pid
            timer = Segments(warmup, lengths, lambda: [pid])
            send, recv = sock.send, sock.recv
            recv()  # the hello: the bot is connected
            while True:
                send(REQUEST)
                recv()
                if not timer.tick():
                    break
            send(MATCH_END)
            proc.wait(30)
        finally:
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
            sock.close(0)
            ctx.term()
    return timer.results


class RulesOnly:
    """The rules' work of each decision, nothing else (:func:`minimal_referee`'s handler)."""

    def __init__(self, seed: int = 1) -> None:
        self.deal = Deal.from_seed(seed)
        self.hand = 0
        self.request_id = 0
        self.state = self._new_hand()

    def _new_hand(self) -> HandState:
        deck = self.deal.deck("bench", 0, self.hand)
        state = deal(STANDARD, deck, dealer=self.hand % 2)
        self.hand += 1
        return state

    @property
    def to_act(self) -> int:
        """The seat the next request goes to."""
        return self.state.to_act

    def request(self) -> bytes:
        """The request for the current decision."""
        state = self.state
        self.request_id += 1
        return request_bytes(state, legal_actions(state), self.request_id, 5000, 60000, ())

    def apply(self, reply: bytes) -> None:
        """Apply the bot's reply (a new hand when it ends the hand)."""
        decoded = decode_action(reply)
        if decoded is None or decoded[0] != self.request_id:
            raise RuntimeError(f"unexpected reply {reply!r}")
        state = apply(self.state, to_action(decoded[1]))
        self.state = self._new_hand() if state.is_over else state


async def _serve_transport(
    kind: str,
    tmp: str,
    warmup: int,
    lengths: list[int],
    bot: str,
    rules: RulesOnly | None = None,
) -> list[dict[str, float]]:
    """Round trips on the referee's transport: with ``rules``, two bots (one per seat, as in a
    match) get the requests of real hands; without, one bot gets the canned request."""
    bind = f"{_endpoint(kind, tmp)}" + (":0" if kind == "tcp" else "")
    transport = RouterTransport(TransportConfig(endpoint=bind, heartbeat_timeout_ms=60000))
    done = asyncio.get_running_loop().create_future()
    bots = 1 if rules is None else 2
    procs: list[subprocess.Popen[bytes]] = []
    timer = Segments(warmup, lengths, lambda: [proc.pid for proc in procs])
    send = transport.send
    peers: list[bytes] = []

    def handler(incoming: Incoming) -> None:
        if len(peers) < bots:  # a hello: nothing to count until every bot is connected
            peers.append(incoming.peer)
            transport.admit(incoming.peer)
            if len(peers) == bots:
                ask()
            return
        if rules is not None:
            rules.apply(incoming.payload)
        if timer.tick():
            ask()
        else:
            for peer in peers:
                send(peer, MATCH_END)
            if not done.done():
                done.set_result(None)

    def ask() -> None:
        if rules is None:
            send(peers[0], REQUEST)
        else:
            send(peers[rules.to_act], rules.request())

    async with transport:
        transport.set_handler(handler)
        procs.extend(spawn_bot(transport.endpoint, bot) for _ in range(bots))
        try:
            try:
                await asyncio.wait_for(done, 120)
            except TimeoutError:
                raise RuntimeError(
                    f"floor stalled after {timer.index} segments, {timer.left} left: "
                    f"{transport.stats}"
                ) from None
            for proc in procs:
                await asyncio.to_thread(proc.wait, 30)
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    return timer.results


def raw_transport(
    kind: str, warmup: int, lengths: list[int], bot: str = INSTANT
) -> list[dict[str, float]]:
    """Segments of round trips from the referee's transport with a do-nothing handler."""
    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(_serve_transport(kind, tmp, warmup, lengths, bot))


def minimal_referee(
    kind: str, warmup: int, lengths: list[int], bot: str = INSTANT
) -> list[dict[str, float]]:
    """Segments of decisions from the transport with the rules' work alone (:class:`RulesOnly`),
    two bots playing the seats as in a match."""
    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(_serve_transport(kind, tmp, warmup, lengths, bot, RulesOnly()))


def parse_lengths(text: str) -> list[int]:
    """``2000,8000`` -> [2000, 8000]."""
    return [int(part) for part in text.split(",")]


def main() -> None:
    """Print one run of each baseline as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--endpoint", choices=("ipc", "tcp"), default="ipc")
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--lengths", type=parse_lengths, default=[2000, 8000])
    args = parser.parse_args()
    out: dict[str, Any] = {"request_bytes": len(REQUEST)}
    out["pyzmq"] = raw_pyzmq(args.endpoint, args.warmup, args.lengths)
    out["transport"] = raw_transport(args.endpoint, args.warmup, args.lengths)
    out["minimal_referee"] = minimal_referee(args.endpoint, args.warmup, args.lengths)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
