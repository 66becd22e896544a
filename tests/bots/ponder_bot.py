"""A test bot that plays like the greedy sample bot but thinks for a while before every
decision, so a game lasts long enough for a browser to watch it in progress.

Usage: ``python ponder_bot.py SECONDS`` (default 0.15 s a decision).
"""

from __future__ import annotations

import sys
import time

from protocol.bot import run_bot_main
from protocol.schema import Request, WireAction
from sample_bots.greedy_bot import GreedyBot


class PonderBot(GreedyBot):
    """The greedy bot, slowed down."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    def act(self, request: Request) -> WireAction:
        """Think, then play the greedy choice."""
        time.sleep(self.seconds)
        return super().act(request)


if __name__ == "__main__":
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 0.15
    sys.exit(run_bot_main(PonderBot(seconds), "ponder", argv=[]))
