"""``gin-referee ladder rounds DIR [--json]``: every round the matchmaker drew, with its seed, the
players in its draw and their ratings, and what became of each pair; every round drawn again
from those inputs (docs/ladder.md, "Matchmaking"). Exit 1 if one does not give its stored
pairs (or, with the ladder's ``deal.key`` in DIR, if a seed does not derive from it)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from referee.match import parse_key
from referee.tournament.config import ConfigError
from referee.tournament.dealkey import KEY_FILE
from referee.tournament.ladder import LadderBook, LadderConfig, RoundLedger, parse_ladder, replay
from referee.tournament.store import StoreError, open_store

__all__ = ["rounds_report"]


def _stored(location: str | Path, name: str) -> LadderConfig | None:
    """The ladder's stored configuration (None before its first run)."""
    store = open_store(location, tournament=name or None)
    try:
        text = store.get_meta("config_toml")
    finally:
        store.close()
    if text is None:
        return None
    try:
        return parse_ladder(tomllib.loads(text), source=f"{store.location} (stored config)")
    except (tomllib.TOMLDecodeError, ConfigError) as err:
        raise StoreError(
            store.location, f"its stored ladder configuration is unreadable: {err}"
        ) from None


def _key(out: Path | None) -> bytes | None:
    """The ladder's key from ``out/deal.key``, if it is there and readable."""
    if out is None or not (out / KEY_FILE).is_file():
        return None
    try:
        return parse_key(json.loads((out / KEY_FILE).read_text(encoding="utf-8"))["deal_key"])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise StoreError(out / KEY_FILE, f"cannot read the ladder's key: {err}") from None


def rounds_report(
    book: LadderBook, location: str | Path, name: str, out: Path | None
) -> tuple[dict[str, Any], str, bool]:
    """The rounds as data and as text, and whether every one replays (see the module)."""
    rows = RoundLedger(book).rounds()
    config = _stored(location, name)
    key = _key(out)
    problems = [] if config is None else replay(
        rows, config.matchmaking, beta=config.ratings.beta, key=key
    )  # fmt: skip
    lines = []
    for row in rows:
        pairs = ", ".join(
            f"{d.drawn.players[0]} vs {d.drawn.players[1]} ({d.deal_id or d.status})"
            for d in row.draws
        )
        bye = f"; {row.bye} sits out" if row.bye else ""
        lines.append(f"round {row.number}: {len(row.candidates)} in the draw, seed {row.seed};"
                     f" {pairs or 'no pair'}{bye}")  # fmt: skip
    checked = "its seed derived from deal.key, " if key is not None else ""
    verdict = (
        "\n".join(problems)
        if problems
        else f"{len(rows)} round(s): each drawn again from {checked}its players' ratings and the"
        " earlier rounds gives its stored pairs"
    )
    lines.append(verdict)
    data = {"rounds": [row.public() for row in rows], "replayed": not problems,
            "seeds_checked": key is not None, "problems": problems}  # fmt: skip
    return data, "\n".join(lines), not problems
