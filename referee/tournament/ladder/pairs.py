"""A ladder's pairs as an organiser audits them (table ``ladder_pairs``), and their deals.

Every pair is written here **before** its games are added to the store: its players, its game
ids, whether both players are local (then a worker may play its games), and the commitment to
its own deal secret. A ladder never ends, so it cannot reveal one deal key at its end as a
tournament does; instead each pair is dealt from a key of its own,
``HMAC-SHA256(ladder_key, b"gin-referee ladder pair v1\\0" + deal_id)``, whose commitment its
games' records carry (``deal_commitment``, sent to the bots in ``match_start``) and this table
keeps. Once the pair is **closed** (rated, voided, or unrated because a game never started) no
game will deal from that key again, and the key is stored with the row: ``gin-referee ladder
deals`` publishes it, and ``gin-referee replay RECORD --deal-key KEY`` proves the pair's decks.
The keys of open pairs are never stored, printed or served; nothing in a pair's key says
anything about another pair's, or about the ladder's key (HMAC is a pseudo-random function).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from referee.match import Deal
from referee.tournament.ladder.book import LadderBook

__all__ = ["PAIR_LABEL", "PairLedger", "PairRow", "pair_deal"]

PAIR_LABEL = b"gin-referee ladder pair v1\0"
"""What a pair's deal key is derived under (with its deal id)."""
_COLUMNS = ("deal_id, player_a, player_b, games, local, commitment, scheduled_at, closed,"
            " closed_at, deal_key")  # fmt: skip


def pair_deal(ladder: Deal, deal_id: str) -> Deal:
    """A pair's deal secrets: its own key, derived from the ladder's; the bots' seeds still come
    from the ladder's ``bot_key`` (never revealed)."""
    key = hmac.digest(ladder.key, PAIR_LABEL + deal_id.encode(), "sha256")
    return Deal(key, ladder.bot_key, secret=ladder.secret)


@dataclass(frozen=True, slots=True)
class PairRow:
    """One pair, as stored."""

    deal_id: str
    players: tuple[str, str]
    games: tuple[int, ...]
    local: bool
    """Both players local: a worker may play its games."""
    commitment: str
    scheduled_at: float
    closed: str | None
    """None while open; else ``rated``, ``voided`` or ``unrated``."""
    closed_at: float | None
    deal_key: str | None
    """The pair's deal key (hex), stored only once it is closed."""

    def public(self) -> dict[str, Any]:
        """What ``ladder deals`` prints: everything (an open pair's key is not stored)."""
        return {"pair": self.deal_id, "players": list(self.players), "games": list(self.games),
                "status": self.closed or "open", "scheduled_at": self.scheduled_at,
                "closed_at": self.closed_at, "deal_commitment": self.commitment,
                "deal_key": self.deal_key}  # fmt: skip


def _row(row: Any) -> PairRow:
    games = tuple(int(g) for g in str(row[3]).split(",") if g)
    return PairRow(str(row[0]), (str(row[1]), str(row[2])), games, bool(row[4]), str(row[5]),
                   float(row[6]), row[7], row[8], row[9])  # fmt: skip


class PairLedger:
    """The ``ladder_pairs`` rows of the book's ladder (on the book's connection)."""

    def __init__(self, book: LadderBook) -> None:
        self.book = book

    def schedule(self, row: PairRow, drawn: tuple[int, int] | None = None) -> None:
        """Write an open pair (before its games are added: its commitment comes first); with
        ``drawn`` (its round and index, :mod:`.rounds`), mark that drawn pair started, in the
        same transaction (a pair is started once, whenever the referee stops)."""
        with self.book.tables.tx("schedule") as run:
            run(
                f"INSERT INTO ladder_pairs (ladder, {_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
                " ON CONFLICT (ladder, deal_id) DO NOTHING",
                (self.book.ladder, row.deal_id, *row.players, ",".join(map(str, row.games)),
                 int(row.local), row.commitment, row.scheduled_at, None, None, None),
            )  # fmt: skip
            if drawn is not None:
                run(
                    "UPDATE ladder_draws SET status = 'started', deal_id = ? WHERE ladder = ?"
                    " AND round = ? AND idx = ? AND status = 'waiting'",
                    (row.deal_id, self.book.ladder, *drawn),
                )

    def close(self, deal_id: str, how: str, deal_key: str, *, now: float,
              audit: tuple[str, str, str] | None = None) -> bool:  # fmt: skip
        """Close an open pair (``voided`` or ``unrated``; a rated pair is closed by
        :meth:`LadderBook.record_pair`) and store its deal key; with ``audit`` (entrant,
        player, detail) an entry of the audit log too. False if it was not open."""
        with self.book.tables.tx("close_pair") as run:
            done = run(
                "UPDATE ladder_pairs SET closed = ?, closed_at = ?, deal_key = ?"
                " WHERE ladder = ? AND deal_id = ? AND closed IS NULL",
                (how, now, deal_key, self.book.ladder, deal_id),
            ).rowcount
            if done and audit is not None:
                self.book.log_entry(run, now, "void", *audit)
        return bool(done)

    def rows(self, *, open_only: bool = False) -> list[PairRow]:
        """Every pair (or the open ones), in the order they were scheduled."""
        only = " AND closed IS NULL" if open_only else ""
        with self.book.tables.tx("pairs", write=False) as run:
            rows = run(
                f"SELECT {_COLUMNS} FROM ladder_pairs WHERE ladder = ?{only}"
                " ORDER BY scheduled_at, deal_id",
                (self.book.ladder,),
            ).fetchall()
        return [_row(row) for row in rows]

    def known(self, deal_id: str) -> bool:
        """Whether the pair is in the ledger (then it is dealt from its own key)."""
        with self.book.tables.tx("known", write=False) as run:
            row = run(
                "SELECT 1 FROM ladder_pairs WHERE ladder = ? AND deal_id = ?",
                (self.book.ladder, deal_id),
            ).fetchone()
        return row is not None

    def closed(self) -> set[str]:
        """The deal ids of the closed pairs."""
        with self.book.tables.tx("closed", write=False) as run:
            rows = run(
                "SELECT deal_id FROM ladder_pairs WHERE ladder = ? AND closed IS NOT NULL",
                (self.book.ladder,),
            ).fetchall()
        return {str(row[0]) for row in rows}

    def not_for_workers(self) -> set[int]:
        """The game ids a worker must leave alone: those of open pairs with a remote player
        (they connect to the ladder's process) and of voided pairs (never played)."""
        with self.book.tables.tx("not_for_workers", write=False) as run:
            rows = run(
                "SELECT games FROM ladder_pairs WHERE ladder = ? AND ((local = 0 AND closed IS"
                " NULL) OR closed = 'voided')",
                (self.book.ladder,),
            ).fetchall()
        return {int(g) for row in rows for g in str(row[0]).split(",") if g}

    def game_states(self, ids: Collection[int]) -> dict[int, tuple[str, dict[str, Any] | None]]:
        """The status and result of the store's games ``ids`` (those another process plays)."""
        if not ids:
            return {}
        listed = ", ".join(str(int(g)) for g in ids)
        pg = self.book.tables.postgres
        sql = (f"SELECT game_id, status, {'result::text' if pg else 'result_json'} FROM games"
               f" WHERE game_id IN ({listed})" + (" AND tournament = ?" if pg else ""))  # fmt: skip
        with self.book.tables.tx("game_states", write=False) as run:
            rows = run(sql, (self.book.ladder,) if pg else ()).fetchall()
        return {int(r[0]): (str(r[1]), None if r[2] is None else json.loads(r[2])) for r in rows}
