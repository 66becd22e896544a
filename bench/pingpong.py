"""Raw pyzmq REQ/REP ping-pong between two processes: the baseline for the referee's rate.

``python -m bench.pingpong --size N --count K`` prints round trips per second and latency
percentiles for payloads of N bytes (the size of a typical decision request).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time

import zmq

from bench.common import percentile


def _server(endpoint: str, count: int, size: int) -> None:
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REP)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)
    reply = b"r" * 60  # a typical action reply
    for _ in range(count):
        sock.recv()
        sock.send(reply)
    sock.close(0)
    ctx.term()


def run(size: int, count: int) -> dict[str, float]:
    """Round trips of ``size``-byte requests and ~60-byte replies; rate and latencies."""
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    port = sock.bind_to_random_port("tcp://127.0.0.1")
    proc = multiprocessing.get_context("spawn").Process(
        target=_server, args=(f"tcp://127.0.0.1:{port}", count, size)
    )
    proc.start()
    payload = b"x" * size
    samples = []
    clock = time.perf_counter
    start = clock()
    for _ in range(count):
        t = clock()
        sock.send(payload)
        sock.recv()
        samples.append((clock() - t) * 1e6)
    elapsed = clock() - start
    proc.join(10)
    sock.close(0)
    ctx.term()
    samples.sort()
    return {
        "round_trips_per_s": count / elapsed,
        "p50_us": percentile(samples, 0.5),
        "p99_us": percentile(samples, 0.99),
    }


def main() -> None:
    """Print the baseline as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=900)
    parser.add_argument("--count", type=int, default=20000)
    args = parser.parse_args()
    print(json.dumps(run(args.size, args.count), indent=2))


if __name__ == "__main__":
    main()
