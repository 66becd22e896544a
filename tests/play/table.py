"""``gin-referee play`` as a real process, for the tests: its page's URL, its record, its end."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from referee.rules import CardSet, apply, parse_action, parse_cards
from referee.rules.state import deal
from tests.e2e.helpers import RANDOM

CARD = re.compile(r"^[A2-9TJQK][cdhs]$")


@contextmanager
def table(
    out: Path, *extra: str, games: int = 1, hands: int = 3, bot: str = RANDOM
) -> Iterator[tuple[str, Any]]:
    """Run ``gin-referee play`` against ``bot`` (the random sample bot); yields (the page's URL,
    the process). The process is interrupted (SIGINT) and reaped at the end."""
    argv = [sys.executable, "-m", "referee", "play", bot, "--games", str(games),
            "--max-hands", str(hands), "--out", str(out), "--linger", "60", *extra]  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    errors = (out / "play.stderr").open("w")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errors, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("play at http://"), (line, (out / "play.stderr").read_text())
        yield line.removeprefix("play at ").strip(), proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        errors.close()


def record_lines(out: Path) -> list[dict[str, Any]]:
    """The match record's lines."""
    import json

    return [json.loads(line) for line in (out / "match.jsonl").read_text().splitlines()]


def cards_in(value: Any) -> set[str]:
    """Every card named anywhere in a JSON value."""
    if isinstance(value, str):
        return {value} if CARD.match(value) else set()
    if isinstance(value, dict):
        return set().union(*(cards_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(cards_in(v) for v in value)) if value else set()
    return set()


def seen_by(hand: dict[str, Any], rules: Any, seat: int) -> tuple[set[str], set[str]]:
    """For one recorded hand: the cards ``seat`` may see while it is played (its own cards and
    the face-up discards, at any point), and every card either hand held at any point."""
    state = deal(rules, parse_cards(" ".join(hand["deck"])), dealer=hand["dealer"])
    seen: set[str] = set()
    held: set[str] = set()

    def note(s: Any) -> None:
        seen.update(str(c) for c in s.hand(seat))
        seen.update(str(c) for c in CardSet(sum(1 << i for i in s.discard_pile)))
        held.update(str(c) for c in s.hand(0))
        held.update(str(c) for c in s.hand(1))

    note(state)
    for _, text, _ in hand["actions"]:
        if state.is_over:
            break
        state = apply(state, parse_action(text))
        note(state)
    return seen, held
