"""A do-nothing "referee": the control series for the tournament benchmark.

It runs the same bot processes the way the referee does (own process group, nice +10, the
endpoint and a token in the environment) and drives them from one blocking pyzmq ROUTER in
one Python process, but with no rules, no asyncio, no clocks, no records: each pair of bots
alternates answering one canned request (a typical request with one inline event), and every
reply is unpacked and counted. Whatever this control cannot do, no Python referee can, so the
tournament benchmark compares the real referee with it at every concurrency level in the same
run: a decline that the control shows too belongs to the machine (2N bot processes sharing
the cores), not to the referee.

Run alone: ``python -m bench.raw_referee --pairs 8 [--decisions 5000] [--bot CMD]
[--transport blocking|referee]``. ``--transport referee`` drives the same loop from the
referee's own transport (:class:`referee.net.transport.RouterTransport` on an asyncio loop, push
style) instead of a blocking socket: the difference is what the transport and asyncio cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import msgpack
import zmq

from bench.common import cpu_figures, cpu_seconds
from protocol.codec import encode
from protocol.examples import REQUEST_WITH_EVENTS
from protocol.schema import MatchEnd
from referee.net.transport import Incoming, RouterTransport, TransportConfig

INSTANT = f"{sys.executable} -m bench.instant_bot"
NICE = 10


def _spawn(argv: list[str], endpoint: str, token: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, GIN_REFEREE_ENDPOINT=endpoint, GIN_REFEREE_TOKEN=token)
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, process_group=0)
    try:
        own = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, proc.pid, min(19, own + NICE))
    except OSError:
        pass
    return proc


class _Pairs:
    """Who is who, and what to send next: each pair alternates answering ``request``.

    ``games`` are the lengths (answered requests) of the games to play, in order: each pair
    starts with the next one and, when it is done, goes on with the next one left (its bots
    kept, as a tournament keeps them), until none is left; then both its bots get ``match_end``.
    """

    def __init__(self, pairs: int, games: Sequence[int], request: bytes, match_end: bytes) -> None:
        if not 0 < pairs <= len(games) or min(games) < 1:
            raise ValueError(f"{pairs} pairs cannot play games of lengths {list(games)}")
        self.peers: dict[int, list[bytes]] = {pair: [b"", b""] for pair in range(pairs)}
        self.seat_of: dict[bytes, tuple[int, int]] = {}
        self.left = list(games[:pairs])
        self.queue = list(reversed(games[pairs:]))
        self.finished = 0
        self.request, self.match_end = request, match_end

    def on_message(self, peer: bytes, payload: bytes) -> list[tuple[bytes, bytes]]:
        """Unpack one message; return the (peer, bytes) to send in reply."""
        msg = msgpack.unpackb(payload)
        known = self.seat_of.get(peer)
        if known is None:  # a hello: the token says which pair and seat
            pair, seat = (int(part) for part in msg["token"].split(":"))
            self.seat_of[peer] = (pair, seat)
            self.peers[pair][seat] = peer
            first, second = self.peers[pair]
            return [(first, self.request)] if first and second else []
        pair, seat = known
        self.left[pair] -= 1
        if self.left[pair] == 0 and self.queue:
            self.left[pair] = self.queue.pop()
        elif self.left[pair] == 0:
            self.finished += 1
            return [(other, self.match_end) for other in self.peers[pair]]
        return [(self.peers[pair][1 - seat], self.request)]


async def _serve_with_referee_transport(
    endpoint: str, pairing: _Pairs, spawn: Callable[[str], None]
) -> None:
    """The same loop on ``RouterTransport`` (push style) and asyncio."""
    transport = RouterTransport(TransportConfig(endpoint=endpoint))
    done = asyncio.get_running_loop().create_future()
    pairs = len(pairing.left)

    def handler(incoming: Incoming) -> None:
        if incoming.peer not in pairing.seat_of:  # a hello: admitted, as the hub admits a
            transport.admit(incoming.peer)  # bot's (else dropped after admit_timeout_ms)
        for target, data in pairing.on_message(incoming.peer, incoming.payload):
            transport.send(target, data)
        if pairing.finished == pairs and not done.done():
            done.set_result(None)

    async with transport:
        transport.set_handler(handler)
        spawn(transport.endpoint)
        await done


def _serve_blocking(endpoint: str, pairing: _Pairs, spawn: Callable[[str], None]) -> None:
    """One blocking pyzmq ROUTER: receive, reply, until every pair is done."""
    ctx = zmq.Context()
    sock = ctx.socket(zmq.ROUTER)
    sock.setsockopt(zmq.LINGER, 0)
    try:
        if endpoint.startswith("tcp://"):
            address = f"{endpoint}:{sock.bind_to_random_port(endpoint)}"
        else:
            sock.bind(endpoint)
            address = endpoint
        spawn(address)
        pairs = len(pairing.left)
        recv, send = sock.recv_multipart, sock.send_multipart
        while pairing.finished < pairs:
            peer, payload = recv()
            for target, data in pairing.on_message(peer, payload):
                send([target, data])
    finally:
        sock.close(0)
        ctx.term()


def run(
    pairs: int,
    decisions: int | Sequence[int],
    bot: str = INSTANT,
    endpoint: str = "tcp://127.0.0.1",
    transport: str = "blocking",
) -> dict[str, Any]:
    """Play ``pairs`` pairs of bots at once, ``decisions`` answered requests per pair, or,
    given a game length per game, those games, ``pairs`` at a time (see :class:`_Pairs`).

    Returns decisions/s over the wall time (bot start-up included, as in the tournament's
    amortised series), this process's share of the CPU used, and both per decision in µs.
    ``endpoint`` is ``tcp://127.0.0.1`` (a random port) or an ``ipc://`` path; ``transport``
    is ``blocking`` (a plain pyzmq socket) or ``referee`` (the referee's transport on asyncio).
    """
    request = encode(replace(REQUEST_WITH_EVENTS, request_id=1))
    match_end = encode(MatchEnd("draw", (0, 0), (0, 0), "normal", None))
    games = [decisions] * pairs if isinstance(decisions, int) else list(decisions)
    pairing = _Pairs(pairs, games, request, match_end)
    argv = shlex.split(bot)
    procs: list[subprocess.Popen[bytes]] = []

    def spawn(address: str) -> None:
        for pair in range(pairs):
            for seat in (0, 1):
                procs.append(_spawn(argv, address, f"{pair}:{seat}"))

    self0, children0 = cpu_seconds(resource.RUSAGE_SELF), cpu_seconds(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        if transport == "referee":
            bind = f"{endpoint}:0" if endpoint.startswith("tcp://") else endpoint
            asyncio.run(_serve_with_referee_transport(bind, pairing, spawn))
        else:
            _serve_blocking(endpoint, pairing, spawn)
        for proc in procs:
            proc.wait(30)
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    seconds = time.perf_counter() - start
    referee = cpu_seconds(resource.RUSAGE_SELF) - self0
    bots = cpu_seconds(resource.RUSAGE_CHILDREN) - children0
    total = sum(games)
    return {"concurrency": pairs, "decisions": total, **cpu_figures(referee, bots, total, seconds)}


def main() -> None:
    """Print one run's figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--decisions", type=int, default=5000, help="per pair")
    parser.add_argument("--bot", default=INSTANT)
    parser.add_argument("--endpoint", default="tcp://127.0.0.1")
    parser.add_argument("--transport", choices=("blocking", "referee"), default="blocking")
    args = parser.parse_args()
    result = run(args.pairs, args.decisions, args.bot, args.endpoint, args.transport)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
