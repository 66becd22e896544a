"""A ladder run: a tournament whose games are chosen as it goes.

:class:`LadderRun` is a :class:`~referee.tournament.runner.TournamentRun` (same hub, seats,
sandbox, CURVE, kept bots, store lifecycle, deal key) whose slots, instead of claiming the next
game of a fixed schedule, each take the next drawn pair whose players are ready (the
matchmaker's rounds, :mod:`.matchmaker` and :mod:`.queue`), append its games to the store (a
duplicate pair: two games on one deal with the seats swapped), claim and play them, and rate
the pair (:mod:`.skill`) into the book (:mod:`.book`). The book is read again whenever its
revision changes (every ``poll`` seconds at most, and when a game ends): added versions become
available, superseded and retired ones stop being chosen (a pair in progress is finished; a
drawn pair not yet started is voided) and their remote tokens are dismissed.

A run killed mid-pair leaves its games open in the store; the next run on the store plays
them first (same deals: each pair's key derives from the ladder's, :mod:`.pairs`), rates any
complete pair whose ratings were not stored, in the order its games were recorded, and voids a
pair still open ``void_after`` seconds after it was scheduled whose players are not both
available (its recorded games are kept; it is never rated; the audit log says so).

Workers (:mod:`.worker`) may play the games of pairs whose players are both local: this process
stays the only one that chooses pairs and rates them. While a worker is alive, a slot leaves its
pair's local games to the workers and reads their results from the store; it plays such a game
itself when no worker is alive, or when none has claimed it for a whole lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from typing import Any

from referee.match import Hub
from referee.tournament.bots import BotKeeper
from referee.tournament.ladder.book import RatingRow
from referee.tournament.ladder.choosing import LadderChoosing, Pair, first_of
from referee.tournament.ladder.pairs import pair_deal
from referee.tournament.ladder.skill import Skill, pair_score, unplayed
from referee.tournament.store import Claim, GameSpec, Store, StoreError

__all__ = ["LadderRun", "Pair"]

LOGGER = logging.getLogger(__name__)
COLLECT_EVERY = 0.1
"""Seconds between two reads of the games workers play (one query for all the slots')."""


class LadderRun(LadderChoosing):
    """Runs a ladder until stopped (see the module)."""

    def _joined(self, store: Store) -> None:
        """The ratings so far; the pairs a previous run left (only now: a second ladder run on
        the store has been refused, and cannot rate a pair this one is finishing)."""
        assert self.book is not None
        self.skills = {
            name: Skill(mu, sigma) for name, (mu, sigma, _) in self.book.current().items()
        }
        self.last_played = self.book.last_played()
        self._resume_open(store)
        self._background.append(asyncio.ensure_future(self._collect()))

    def _resume_open(self, store: Store) -> None:
        """Queue the pairs a previous run left unplayed; rate those complete but unrated."""
        assert self.book is not None and self.ledger is not None
        rated = self.book.rated_deals() | self.ledger.closed()
        self._scheduled = {r.deal_id: r.scheduled_at for r in self.ledger.rows(open_only=True)}
        deals: dict[str, list[Any]] = defaultdict(list)
        for row in store.games():
            if row.spec.deal_id not in rated:
                deals[row.spec.deal_id].append(row)
        complete = []
        for deal_id, rows in deals.items():
            first = rows[0].spec
            pair = Pair(deal_id, (first.seat0, first.seat1),
                        [r.spec for r in rows if r.status != "done"],
                        [r.result for r in rows if r.status == "done"])  # fmt: skip
            if pair.games:
                self._resume.append(pair)
                if self.on_scheduled is not None:
                    self.on_scheduled(pair)
            else:
                complete.append((max(r.recorded_at or 0.0 for r in rows), pair))
        for _, pair in sorted(complete, key=lambda item: item[0]):
            self._rate(pair)
        if self._resume:
            LOGGER.info(
                "%d pair(s) left open by an earlier run are played first", len(self._resume)
            )

    def _cannot_play(self, name: str) -> None:
        """A version whose files cannot be had here is not chosen again by this run."""
        if name not in self.changed:
            LOGGER.warning("%s is not played again by this run: its files cannot be had here", name)
            self.changed.add(name)

    # ------------------------------------------------------------- playing and rating

    async def _work(self, store: Store, hub: Hub, keeper: BotKeeper) -> None:
        while not self.stop.is_set():
            pair = await self._next_pair(store, hub)
            if pair is None:
                return
            try:
                await self._play_pair(store, hub, keeper, pair)
            finally:
                self.busy.difference_update(pair.players)
                with contextlib.suppress(Exception):
                    self._register_remotes(hub)
                self._game_over()

    async def _play_pair(self, store: Store, hub: Hub, keeper: BotKeeper, pair: Pair) -> None:
        """Play the pair's games left (or see workers play them), then rate it; a pair not
        finished stays open."""
        while pair.games and not self.stop.is_set():
            game = pair.games[0]
            result = await self._settle(store, hub, keeper, pair, game)
            if result is None:  # stopped, or a game this run failed: the pair stays open
                return
            pair.games = pair.games[1:]
            pair.results.append(result)
        if not pair.games:
            self._rate(pair)

    async def _settle(
        self, store: Store, hub: Hub, keeper: BotKeeper, pair: Pair, game: GameSpec
    ) -> dict[str, Any] | None:
        """A game's stored result, once it is recorded: by this process, or by a worker (read
        from the store); None if stopped first, or if this run failed to play it."""
        assert self.ledger is not None
        since = time.time()
        while not self.stop.is_set():
            if game.game_id in self.failed:
                LOGGER.warning("pair %s: game %d is not played again by this run",
                               pair.deal_id, game.game_id)  # fmt: skip
                return None
            state = self.ledger.game_states([game.game_id]).get(game.game_id)
            if state is not None and state[0] == "done":
                return state[1]
            here = self._plays_here(store, game, state, since)
            if here:
                claim = self._claim(store, game)
                if claim is not None:
                    await self._play_claimed(store, hub, keeper, claim)
                    result = self._results.pop(game.game_id, None)
                    if result is not None:
                        return result
                    continue  # stopped, failed, or its lease lost: see the store again
            else:
                self._awaited.add(game.game_id)  # :meth:`_collect` wakes this slot
            try:
                await first_of(self._ended.wait(), self.stop.wait(), within=self.ladder.poll)
            finally:
                self._awaited.discard(game.game_id)
        return None

    async def _collect(self) -> None:
        """While slots wait for games that workers play, read those games' states every
        :data:`COLLECT_EVERY` seconds, in one query for all, and wake the slots when one is
        recorded (a slot would otherwise see it only after ``poll``)."""
        assert self.ledger is not None
        while True:
            await asyncio.sleep(COLLECT_EVERY)
            if not self._awaited:
                continue
            try:
                states = self.ledger.game_states(self._awaited)
            except StoreError as err:  # the store briefly locked or unreachable: next time
                LOGGER.warning("ladder: the games in play elsewhere could not be read (%s)", err)
                continue
            if any(status == "done" for status, _ in states.values()):
                self._game_over()

    def _plays_here(
        self, store: Store, game: GameSpec, state: tuple[str, Any] | None, since: float
    ) -> bool:
        """Whether this process plays the game: always one of a remote player (it connects
        here); a local one when no worker is alive, or none claimed it for a whole lease."""
        local = all(self.players[n].kind == "local" for n in (game.seat0, game.seat1))
        if not local:
            return True
        now = time.time()
        if not any(r.role == "worker" for r in store.runners(now=now)):
            return True
        return state is not None and state[0] == "pending" and now - since >= self.lease

    def _claim(self, store: Store, game: GameSpec) -> Claim | None:
        """Claim ``game`` (None if another runner holds it). The pairing's name is its players'
        (as a tournament's), so the other open games of the ledger's pairs are skipped; one
        of a pair scheduled by an earlier version may still come first: it is given back, and
        its own pair plays it."""
        assert self.ledger is not None
        open_games = {g for row in self.ledger.rows(open_only=True) for g in row.games}
        skip = set(self.failed) | (open_games - {game.game_id})
        while True:
            claim = store.claim(owner=self.owner, lease_seconds=self.lease, now=time.time(),
                                prefer=game.pairing, only=True, skip=skip)  # fmt: skip
            if claim is None or claim.game.game_id == game.game_id:
                return claim
            store.release(claim)
            skip.add(claim.game.game_id)

    def _rate(self, pair: Pair) -> None:
        """Rate a complete pair and store the ratings (once: a pair rated before is skipped)."""
        assert self.book is not None
        a, b = pair.players
        key = (
            pair_deal(self.deal, pair.deal_id).key_hex if pair.deal_id in self._scheduled else None
        )
        self._scheduled.pop(pair.deal_id, None)
        if unplayed(pair.results):
            LOGGER.warning("pair %s (%s vs %s) not rated: neither bot started in one of its games",
                           pair.deal_id, a, b)  # fmt: skip
            pair.outcome = "unrated"
            if key is not None and self.ledger is not None:
                self.ledger.close(pair.deal_id, "unrated", key, now=time.time())
            if self.on_pair is not None:
                self.on_pair(pair)
            return
        score = pair_score(a, pair.results)
        now = time.time()
        new_a, new_b = self.model.rate(self._skill(a, now), self._skill(b, now), score)
        rows = [RatingRow(pair.deal_id, a, b, score, new_a.mu, new_a.sigma, now),
                RatingRow(pair.deal_id, b, a, 1.0 - score, new_b.mu, new_b.sigma, now)]  # fmt: skip
        pair.outcome = "rated"
        if self.book.record_pair(rows, deal_key=key):
            self.skills[a], self.skills[b] = new_a, new_b
            self.last_played[a] = self.last_played[b] = now
            self.pairs_rated += 1
        else:  # rated already (by whom?): keep to what the book says
            LOGGER.warning("pair %s was rated already: its ratings are kept", pair.deal_id)
            stored = self.book.current()
            for name in (a, b):
                if name in stored:
                    self.skills[name] = Skill(stored[name][0], stored[name][1])
        if self.on_pair is not None:
            self.on_pair(pair)
