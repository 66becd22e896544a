"""A worker of a ladder: one more referee process, on this machine or another, that plays the
games of pairs whose two players are local, from the ladder's shared store.

The ladder's own process (``ladder run``) stays the only one that chooses pairs, writes them
(:mod:`.pairs`, commitment first) and rates them: a worker only claims games with a lease,
plays them and records them, as a tournament's worker does (:mod:`referee.tournament.worker`).
It never plays a game of a remote player (they connect to the ladder's endpoint) nor one of a
voided pair, and it checks every local player against its fingerprint before it plays it:
a program whose files differ here is not played here (the ladder plays that game itself once
nobody has claimed it for a lease). A worker killed mid-game loses that game's lease: another
runner claims it once the lease expires and plays it again from the same deal (its pair's own
key), and only one result is ever recorded (the lease is the store's fencing token).
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from referee.match import Deal, Hub
from referee.tournament.bots import BotKeeper
from referee.tournament.dealkey import LADDER_META
from referee.tournament.ladder.book import LadderBook, Player
from referee.tournament.ladder.choosing import first_of
from referee.tournament.ladder.config import LadderConfig, parse_ladder
from referee.tournament.ladder.pairs import PairLedger, pair_deal
from referee.tournament.ladder.roster import entry_of, same_program
from referee.tournament.runner import TournamentRun
from referee.tournament.store import GameSpec, Store
from referee.tournament.worker import WorkerError, stored_config

__all__ = ["LADDER_KEY", "LadderWorker", "ladder_worker_config", "with_concurrency"]

LOGGER = logging.getLogger(__name__)
LADDER_KEY = LADDER_META
"""Store metadata key naming the ladder (a tournament's store has none)."""


def ladder_worker_config(store: Store, location: str | Path) -> tuple[LadderConfig, str]:
    """The stored ladder's configuration (and TOML source), checked against this gin-referee
    (the same hash), and every active local player checked against its fingerprint here:
    :class:`WorkerError` saying what differs."""
    missing = "the ladder has not run yet (start `gin-referee ladder run` first)"
    ladder, text = stored_config(store, parse_ladder, missing=missing, whose="ladder")
    with LadderBook.open(location, ladder=ladder.name) as book:
        for player in book.players():
            if player.active and player.kind == "local" and not same_program(player):
                raise WorkerError(
                    f"entrant {player.player}: its command or files differ on this machine"
                    f" (the ladder added it with fingerprint {player.fingerprint[:16]}): install"
                    f" the same program at the same paths ({player.command})"
                )
    return ladder, text


class LadderWorker(TournamentRun):
    """Claims and plays a ladder's local games until stopped (see the module)."""

    def __init__(self, ladder: LadderConfig, out: Path, **kwargs: Any) -> None:
        super().__init__(ladder.play, out, worker=True, **kwargs)
        self.ladder = ladder
        self.book: LadderBook | None = None
        self.ledger: PairLedger | None = None
        self.players: dict[str, Player] = {}
        self._revision = -1
        self._left: set[int] = set()
        """Games of players whose programs differ here: left to the ladder's process."""

    async def run(self) -> Store:
        """Play until stopped; returns the store (closed)."""
        try:
            return await super().run()
        finally:
            if self.book is not None:
                self.book.close()

    def _init(self, store: Store) -> bool:
        self.book = LadderBook.open(self.location, ladder=self.ladder.name)
        self.ledger = PairLedger(self.book)
        return False

    def _reload(self) -> None:
        assert self.book is not None
        revision = self.book.revision()
        if revision != self._revision:
            self._revision = revision
            for player in self.book.players():
                self.players[player.player] = player
                entry = entry_of(player, self.ladder.local, curve=False)
                if player.kind == "local" and entry is not None:
                    self.bots[player.player] = entry

    def _playable(self, spec: GameSpec) -> bool:
        """Both players local, and the same programs here as when they were added."""
        self._reload()
        for name in (spec.seat0, spec.seat1):
            player = self.players.get(name)
            if player is None or player.kind != "local":
                return False
            if not same_program(player):
                LOGGER.warning("game %d not played here: %s's files differ on this machine",
                               spec.game_id, name)  # fmt: skip
                return False
        return True

    async def _claim_and_play(
        self, store: Store, hub: Hub, keeper: BotKeeper, last: str | None
    ) -> str | None:
        """Claim a game this worker may play, play it, record it; wait while there is none (a
        ladder never ends). None once stopped."""
        assert self.ledger is not None
        while not self.stop.is_set():
            avoid = self.ledger.not_for_workers() | set(self.failed) | self._left
            claim = store.claim(owner=self.owner, lease_seconds=self.lease, now=time.time(),
                                prefer=last or None, skip=avoid)  # fmt: skip
            if claim is None:
                await first_of(self._ended.wait(), self.stop.wait(), within=self.ladder.poll)
            elif self._playable(claim.game):
                return await self._play_claimed(store, hub, keeper, claim)
            else:
                store.release(claim)
                self._left.add(claim.game.game_id)
        return None

    def _deal_for(self, spec: GameSpec) -> Deal:
        """The pair's own deal (:mod:`.pairs`); the ladder's for a pair scheduled before."""
        assert self.ledger is not None
        known = self.ledger.known(spec.deal_id)  # one look-up per game
        return pair_deal(self.deal, spec.deal_id) if known else self.deal


def with_concurrency(ladder: LadderConfig, concurrency: int | None) -> LadderConfig:
    """``ladder`` playing ``concurrency`` games at once (None: as configured)."""
    if concurrency is None:
        return ladder
    return replace(ladder, play=replace(ladder.play, concurrency=concurrency))
