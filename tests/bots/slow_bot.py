"""A random bot that takes its time, so a test can catch it in the middle of a game.

Usage: ``slow_bot.py SECONDS [stubborn] [multi] [MARKER]`` (endpoint and token from the
environment, as for any bot; a MARKER argument only lets a test find the process). It sleeps
SECONDS before each action; the SDK writes what the referee reports to stderr (``referee
reports shutdown: ...``, ``the referee said bye``). ``stubborn`` ignores SIGTERM (the referee
must SIGKILL it); ``multi`` asks for ``multi_match`` (the connection may wait in the lobby).
"""

from __future__ import annotations

import os
import signal
import sys
import time

from protocol.bot import run_bot
from protocol.schema import Request, WireAction
from sample_bots.random_bot import RandomBot


class SlowBot(RandomBot):
    """A random bot that sleeps before each action."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    def act(self, request: Request) -> WireAction:
        """A random legal action, late."""
        time.sleep(self.delay)
        return super().act(request)


def main() -> int:
    """Play until the referee says the match (or, with ``multi``, the connection) is over."""
    delay = float(sys.argv[1])
    flags = set(sys.argv[2:])
    if "stubborn" in flags:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    name = os.environ.get("SLOW_BOT_NAME", "slow-bot")
    return run_bot(SlowBot(delay), name=name, multi_match="multi" in flags, recv_timeout_ms=30_000)


if __name__ == "__main__":
    sys.exit(main())
