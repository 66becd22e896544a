"""A do-nothing "referee": the control series for the tournament benchmark.

It runs the same bot processes the way the referee does (own process group, nice +10, the
endpoint and a token in the environment) and drives them from one blocking pyzmq ROUTER in
one Python process, but with no rules, no asyncio, no clocks, no records: each pair of bots
alternates answering one canned request (a typical request with one inline event), and every
reply is unpacked and counted. Whatever this control cannot do, no Python referee can, so the
tournament benchmark compares the real referee with it at every concurrency level in the same
run: a decline that the control shows too belongs to the machine (2N bot processes sharing
the cores), not to the referee.

Run alone: ``python -m bench.raw_referee --pairs 8 [--decisions 5000] [--bot CMD]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import replace
from typing import Any

import msgpack
import zmq

from protocol.codec import encode
from protocol.examples import REQUEST_WITH_EVENTS
from protocol.schema import MatchEnd

INSTANT = f"{sys.executable} -m bench.instant_bot"
NICE = 10


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _spawn(argv: list[str], endpoint: str, token: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, GIN_REFEREE_ENDPOINT=endpoint, GIN_REFEREE_TOKEN=token)
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, process_group=0)
    try:
        own = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, proc.pid, min(19, own + NICE))
    except OSError:
        pass
    return proc


def run(
    pairs: int, decisions: int, bot: str = INSTANT, endpoint: str = "tcp://127.0.0.1"
) -> dict[str, Any]:
    """Play ``pairs`` pairs of bots at once, ``decisions`` answered requests per pair.

    Returns decisions/s over the wall time (bot start-up included, as in the tournament's
    amortised series), this process's share of the CPU used, and both per decision in µs.
    ``endpoint`` is ``tcp://127.0.0.1`` (a random port) or an ``ipc://`` path.
    """
    request = encode(replace(REQUEST_WITH_EVENTS, request_id=1))
    match_end = encode(MatchEnd("draw", (0, 0), (0, 0), "normal", None))
    ctx = zmq.Context()
    sock = ctx.socket(zmq.ROUTER)
    sock.setsockopt(zmq.LINGER, 0)
    if endpoint.startswith("tcp://"):
        port = sock.bind_to_random_port(endpoint)
        address = f"{endpoint}:{port}"
    else:
        sock.bind(endpoint)
        address = endpoint
    argv = shlex.split(bot)
    procs: list[subprocess.Popen[bytes]] = []
    self0, children0 = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        for pair in range(pairs):
            for seat in (0, 1):
                procs.append(_spawn(argv, address, f"{pair}:{seat}"))
        peers: dict[int, list[bytes | None]] = {pair: [None, None] for pair in range(pairs)}
        seat_of: dict[bytes, tuple[int, int]] = {}
        left = [decisions] * pairs
        finished = 0
        recv, send, unpack = sock.recv_multipart, sock.send_multipart, msgpack.unpackb
        while finished < pairs:
            peer, payload = recv()
            msg = unpack(payload)
            known = seat_of.get(peer)
            if known is None:  # a hello: the token says which pair and seat
                pair, seat = (int(part) for part in msg["token"].split(":"))
                seat_of[peer] = (pair, seat)
                peers[pair][seat] = peer
                first = peers[pair][0]
                if first is not None and peers[pair][1] is not None:
                    send([first, request])
                continue
            pair, seat = known
            left[pair] -= 1
            if left[pair] == 0:
                for other in peers[pair]:
                    assert other is not None
                    send([other, match_end])
                finished += 1
            else:
                target = peers[pair][1 - seat]
                assert target is not None
                send([target, request])
        for proc in procs:
            proc.wait(30)
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        sock.close(0)
        ctx.term()
    seconds = time.perf_counter() - start
    referee = _cpu(resource.RUSAGE_SELF) - self0
    bots = _cpu(resource.RUSAGE_CHILDREN) - children0
    total = pairs * decisions
    return {
        "concurrency": pairs,
        "decisions": total,
        "seconds": round(seconds, 3),
        "decisions_per_s": round(total / seconds),
        "referee_cpu_share": round(referee / (referee + bots), 3),
        "referee_us_per_decision": round(referee / total * 1e6, 1),
        "bots_us_per_decision": round(bots / total * 1e6, 1),
    }


def main() -> None:
    """Print one run's figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--decisions", type=int, default=5000, help="per pair")
    parser.add_argument("--bot", default=INSTANT)
    parser.add_argument("--endpoint", default="tcp://127.0.0.1")
    args = parser.parse_args()
    print(json.dumps(run(args.pairs, args.decisions, args.bot, args.endpoint), indent=2))


if __name__ == "__main__":
    main()
