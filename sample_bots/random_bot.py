"""A bot that plays a uniformly random legal action at every decision.

Run it with ``python -m sample_bots.random_bot`` (or ``python sample_bots/random_bot.py``);
the referee's endpoint and the bot's token come from ``GIN_REFEREE_ENDPOINT`` and
``GIN_REFEREE_TOKEN`` or from ``--endpoint`` and ``--token``. The choices are seeded from
``GIN_BOT_SEED`` (default ``"0"``) and reseeded from each ``match_start``'s ``seed``, so a
replayed match makes the same moves, also when the process is kept for several matches.
"""

from __future__ import annotations

import gc
import os
import random
import sys

from protocol.bot import Bot, run_bot_main
from protocol.schema import MatchStart, Request, WireAction

SEED_ENV = "GIN_BOT_SEED"


class RandomBot(Bot):
    """Picks uniformly among ``request.legal``, reproducibly from its seed."""

    def __init__(self, seed: int | str | None = None) -> None:
        self.rng = random.Random(os.environ.get(SEED_ENV, "0") if seed is None else seed)

    def on_match_start(self, msg: MatchStart) -> None:
        """Reseed from the match's seed (a kept process plays each match as a fresh one)."""
        if msg.seed is not None:
            self.rng = random.Random(msg.seed)

    def act(self, request: Request) -> WireAction:
        """Any legal action, each with the same chance."""
        return self.rng.choice(request.legal)


def main() -> int:
    """Play against the referee named by the environment or the arguments (one match, or
    several when the referee keeps the process)."""
    return run_bot_main(RandomBot(), "random-bot", multi_match=True)


if __name__ == "__main__":
    gc.freeze()  # what the imports made lives to the end: the collector skips it (faster exit)
    sys.exit(main())
