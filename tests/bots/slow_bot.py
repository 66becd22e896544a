"""A random bot that takes its time, so a test can catch it in the middle of a game.

Usage: ``slow_bot.py SECONDS [stubborn] [multi] [yield] [MARKER]`` (endpoint and token from
the environment, as for any bot; a MARKER argument only lets a test find the process). It
sleeps SECONDS before each action; the SDK writes what the referee reports to stderr
(``referee reports shutdown: ...``, ``the referee said bye``). ``stubborn`` ignores SIGTERM
(the referee must SIGKILL it); ``multi`` asks for ``multi_match`` (the connection may wait in
the lobby); ``yield`` keeps a thread runnable while it sleeps, giving up the CPU in a loop
(``sched_yield``): always in state ``R``, using little CPU, the attack on the fair clocks'
"wait in progress" rule (docs/tournaments.md, "Fair clocks").
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

from protocol.bot import run_bot
from protocol.schema import Request, WireAction
from sample_bots.random_bot import RandomBot


class SlowBot(RandomBot):
    """A random bot that sleeps before each action."""

    def __init__(self, delay: float, *, yielding: bool = False) -> None:
        super().__init__()
        self.delay = delay
        self.yielding = yielding

    def act(self, request: Request) -> WireAction:
        """A random legal action, late."""
        if not self.yielding:
            time.sleep(self.delay)
            return super().act(request)
        stop = threading.Event()
        runnable = threading.Thread(target=_yield_until, args=(stop,))
        runnable.start()
        try:
            time.sleep(self.delay)
        finally:
            stop.set()
            runnable.join()
        return super().act(request)


def _yield_until(stop: threading.Event) -> None:
    while not stop.is_set():
        os.sched_yield()


def main() -> int:
    """Play until the referee says the match (or, with ``multi``, the connection) is over."""
    delay = float(sys.argv[1])
    flags = set(sys.argv[2:])
    if "stubborn" in flags:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    name = os.environ.get("SLOW_BOT_NAME", "slow-bot")
    bot = SlowBot(delay, yielding="yield" in flags)
    return run_bot(bot, name=name, multi_match="multi" in flags, recv_timeout_ms=30_000)


if __name__ == "__main__":
    sys.exit(main())
