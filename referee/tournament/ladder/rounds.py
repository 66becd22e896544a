"""A ladder's rounds as an organiser audits them (tables ``ladder_rounds`` and
``ladder_draws``), and their replay.

Each round is stored when it is drawn, with everything its draw depended on: its number, when
it was drawn, its seed (``HMAC-SHA256(ladder key, "gin-referee ladder round v1\\0" + number)``,
:func:`~.matchmaker.round_seed`), the players in the draw with the ratings it used, and what it
drew: a row per pair (``waiting`` until it starts, then ``started`` with its pair's deal id, or
``voided`` with the reason) and the player sitting out. What earlier rounds drew (the
:class:`~.matchmaker.Meetings`) is in the earlier rows. So :func:`replay` can draw every round
again from the stored rows alone and compare; nobody's availability is an input. The seed is
stored at once: the round is drawn, and a round's seed says nothing about another's or about
the ladder's key (HMAC is a pseudo-random function); whoever holds the key (the organiser, or an
arbiter it is given to) can check that each seed derives from it.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Sequence
from dataclasses import dataclass

from referee.tournament.ladder.book import LadderBook
from referee.tournament.ladder.config import MatchmakingParams
from referee.tournament.ladder.matchmaker import Candidate, Draw, Meetings, draw_round, round_seed
from referee.tournament.ladder.queue import Drawn

__all__ = ["DrawRow", "RoundLedger", "RoundRow", "replay"]


@dataclass(frozen=True, slots=True)
class DrawRow:
    """One drawn pair, as stored."""

    drawn: Drawn
    status: str
    """``waiting``, ``started`` or ``voided``."""
    deal_id: str | None
    """Its pair's deal id, once started."""
    detail: str | None
    """Why it was voided."""

    def public(self) -> dict[str, object]:
        """What ``ladder rounds --json`` prints of it."""
        return {"players": list(self.drawn.players), "status": self.status,
                "pair": self.deal_id, "detail": self.detail}  # fmt: skip


@dataclass(frozen=True, slots=True)
class RoundRow:
    """One round, as stored."""

    number: int
    drawn_at: float
    seed: str
    """Hex."""
    candidates: tuple[Candidate, ...]
    bye: str | None
    draws: tuple[DrawRow, ...]

    @property
    def draw(self) -> Draw:
        """What the round drew."""
        return Draw(tuple(d.drawn.players for d in self.draws), self.bye)

    def public(self) -> dict[str, object]:
        """What ``ladder rounds --json`` prints of it."""
        return {"round": self.number, "drawn_at": self.drawn_at, "seed": self.seed,
                "candidates": [[c.name, c.mu, c.sigma] for c in self.candidates],
                "bye": self.bye, "pairs": [d.public() for d in self.draws]}  # fmt: skip


class RoundLedger:
    """The ``ladder_rounds`` and ``ladder_draws`` rows of the book's ladder."""

    def __init__(self, book: LadderBook) -> None:
        self.book = book

    def record(self, number: int, drawn_at: float, seed: bytes,
               candidates: Sequence[Candidate], draw: Draw) -> list[Drawn]:  # fmt: skip
        """Store a round and its pairs (``waiting``); the pairs, for the queue."""
        lad = self.book.ladder
        listed = json.dumps([[c.name, c.mu, c.sigma] for c in candidates], separators=(",", ":"))
        drawn = [Drawn(number, i, pair) for i, pair in enumerate(draw.pairs)]
        with self.book.tables.tx("record_round") as run:
            run("INSERT INTO ladder_rounds (ladder, round, drawn_at, seed, candidates, bye)"
                " VALUES (?,?,?,?,?,?)",
                (lad, number, drawn_at, seed.hex(), listed, draw.bye))  # fmt: skip
            for d in drawn:
                run("INSERT INTO ladder_draws (ladder, round, idx, player_a, player_b, status,"
                    " deal_id, detail) VALUES (?,?,?,?,?,'waiting',NULL,NULL)",
                    (lad, d.round, d.index, *d.players))  # fmt: skip
        return drawn

    def next_number(self) -> int:
        """The next round's number (1 for the first)."""
        with self.book.tables.tx("next_round", write=False) as run:
            row = run("SELECT coalesce(max(round), 0) FROM ladder_rounds WHERE ladder = ?",
                      (self.book.ladder,)).fetchone()  # fmt: skip
        return int(row[0]) + 1

    def _draws(self, where: str = "") -> list[DrawRow]:
        with self.book.tables.tx("draws", write=False) as run:
            rows = run(
                "SELECT round, idx, player_a, player_b, status, deal_id, detail FROM ladder_draws"
                f" WHERE ladder = ?{where} ORDER BY round, idx",
                (self.book.ladder,),
            ).fetchall()
        return [DrawRow(Drawn(int(r[0]), int(r[1]), (str(r[2]), str(r[3]))), str(r[4]), r[5],
                        r[6]) for r in rows]  # fmt: skip

    def waiting(self) -> list[Drawn]:
        """The drawn pairs not yet started nor voided, in order."""
        return [row.drawn for row in self._draws(" AND status = 'waiting'")]

    def meetings(self) -> Meetings:
        """What every round so far drew (:class:`Meetings`, for the next draw)."""
        return Meetings.of(row.drawn.players for row in self._draws())

    def void(self, drawn: Drawn, detail: str) -> bool:
        """Void a waiting pair (one of its players ended); False if it was not waiting."""
        with self.book.tables.tx("void_draw") as run:
            done = run(
                "UPDATE ladder_draws SET status = 'voided', detail = ? WHERE ladder = ? AND"
                " round = ? AND idx = ? AND status = 'waiting'",
                (detail, self.book.ladder, drawn.round, drawn.index),
            ).rowcount
        return bool(done)

    def rounds(self) -> list[RoundRow]:
        """Every round with its pairs, oldest first."""
        by_round: dict[int, list[DrawRow]] = {}
        for row in self._draws():
            by_round.setdefault(row.drawn.round, []).append(row)
        with self.book.tables.tx("rounds", write=False) as run:
            rows = run(
                "SELECT round, drawn_at, seed, candidates, bye FROM ladder_rounds"
                " WHERE ladder = ? ORDER BY round",
                (self.book.ladder,),
            ).fetchall()
        found = []
        for r in rows:
            listed = tuple(Candidate(str(n), float(mu), float(s)) for n, mu, s in json.loads(r[3]))
            found.append(RoundRow(int(r[0]), float(r[1]), str(r[2]), listed, r[4],
                                  tuple(by_round.get(int(r[0]), ()))))  # fmt: skip
        return found


def replay(
    rounds: Sequence[RoundRow],
    params: MatchmakingParams,
    *,
    beta: float,
    key: bytes | None = None,
) -> list[str]:
    """What is wrong with ``rounds`` (every round of a ladder, oldest first): each is drawn
    again from its stored seed, its candidates and what the rounds before it drew, and must
    give the stored pairs and bye; with the ladder's ``key``, each seed must derive from it.
    Empty: every round is what its inputs give."""
    problems = []
    meetings = Meetings()
    for row in rounds:
        seed = bytes.fromhex(row.seed)
        if key is not None and not hmac.compare_digest(seed, round_seed(key, row.number)):
            problems.append(f"round {row.number}: its seed does not derive from the ladder's key")
        again = draw_round(row.candidates, meetings, seed, params, beta=beta)
        if again != row.draw:
            problems.append(f"round {row.number}: drawn again it gives {_text(again)}, not the"
                            f" stored {_text(row.draw)}")  # fmt: skip
        for a, b in row.draw.pairs:
            meetings.add(a, b)
    return problems


def _text(draw: Draw) -> str:
    pairs = ", ".join(f"{a} vs {b}" for a, b in draw.pairs) or "no pair"
    return pairs + (f" ({draw.bye} out)" if draw.bye else "")
