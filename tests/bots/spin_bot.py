"""A random bot that computes: it spins the CPU for SECONDS of its own CPU time before each
action (the thinking thread's CPU time, not the wall clock, so a starved bot still does all its
work), with THREADS more threads spinning beside it while it thinks (each hashing a buffer,
which runs without the GIL): the attack of docs/tournaments.md, "Fair clocks".

Usage: ``spin_bot.py SECONDS [THREADS]``.
"""

from __future__ import annotations

import hashlib
import sys
import threading
import time

from protocol.bot import run_bot
from protocol.schema import Request, WireAction
from sample_bots.random_bot import RandomBot

_BLOCK = bytes(1 << 16)


def _spin(stop: threading.Event) -> None:
    while not stop.is_set():
        hashlib.sha256(_BLOCK).digest()


class SpinBot(RandomBot):
    """A random bot that burns CPU before each action."""

    def __init__(self, seconds: float, threads: int = 0) -> None:
        super().__init__()
        self.seconds = seconds
        self.threads = threads

    def act(self, request: Request) -> WireAction:
        """A random legal action, after the work."""
        stop = threading.Event()
        spinners = [threading.Thread(target=_spin, args=(stop,)) for _ in range(self.threads)]
        for thread in spinners:
            thread.start()
        until = time.thread_time() + self.seconds
        while time.thread_time() < until:
            pass
        stop.set()
        for thread in spinners:
            thread.join()
        return super().act(request)


if __name__ == "__main__":
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    sys.exit(run_bot(SpinBot(float(sys.argv[1]), threads), name="spin-bot"))
