"""A random bot that computes: it spins the CPU for SECONDS of its own CPU time before each
action (``time.process_time``, not the wall clock, so a starved bot still does all its work).

Usage: ``spin_bot.py SECONDS``.
"""

from __future__ import annotations

import sys
import time

from protocol.bot import run_bot
from protocol.schema import Request, WireAction
from sample_bots.random_bot import RandomBot


class SpinBot(RandomBot):
    """A random bot that burns CPU before each action."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    def act(self, request: Request) -> WireAction:
        """A random legal action, after the work."""
        until = time.process_time() + self.seconds
        while time.process_time() < until:
            pass
        return super().act(request)


if __name__ == "__main__":
    sys.exit(run_bot(SpinBot(float(sys.argv[1])), name="spin-bot"))
