"""A live progress line for tournaments: games done / total, rate, ETA, current leader.

On a terminal the line is redrawn in place; otherwise a plain line is printed every few games.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from typing import TextIO

from referee.tournament.runner import GameOutcome

__all__ = ["Progress"]


class Progress:
    """Counts finished games and prints progress to ``stream``."""

    def __init__(
        self, total: int, *, done: int = 0, stream: TextIO | None = None, every: int = 10
    ) -> None:
        self.total = total
        self.done = done
        self.start_done = done
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.every = every
        self.started = time.monotonic()
        self.scores: dict[str, float] = defaultdict(float)
        self.games: dict[str, int] = defaultdict(int)

    def on_game(self, outcome: GameOutcome) -> None:
        """Account one finished game and print."""
        self.done += 1
        winner = outcome.result.get("winner")
        for name in outcome.result["seats"]:
            self.games[name] += 1
            self.scores[name] += 0.5 if winner is None else float(winner == name)
        if self.tty or self.done % self.every == 0 or self.done == self.total:
            self.stream.write(("\r" if self.tty else "") + self.line() + ("" if self.tty else "\n"))
            self.stream.flush()

    def line(self) -> str:
        """The progress text."""
        elapsed = max(1e-9, time.monotonic() - self.started)
        rate = (self.done - self.start_done) / elapsed
        left = self.total - self.done
        eta = left / rate if rate > 0 else float("inf")
        leader = max(self.games, key=lambda n: self.scores[n] / self.games[n], default=None)
        lead = ""
        if leader is not None:
            lead = f", leader {leader} {self.scores[leader] / self.games[leader]:.2f}"
        eta_text = f"{eta:,.0f}s" if eta != float("inf") else "?"
        width = 20
        filled = int(width * self.done / self.total) if self.total else width
        bar = "#" * filled + "." * (width - filled)
        return f"[{bar}] {self.done}/{self.total} games, {rate:.2f}/s, ETA {eta_text}{lead}"

    def close(self) -> None:
        """End the in-place line on a terminal."""
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
