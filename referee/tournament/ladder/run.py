"""A ladder run: a tournament whose games are chosen as it goes.

:class:`LadderRun` is a :class:`~referee.tournament.runner.TournamentRun` (same hub, seats,
sandbox, CURVE, kept bots, store lifecycle, deal key) whose slots, instead of claiming the next
game of a fixed schedule, each take a pair from the matchmaker (:mod:`.matchmaker`) among the
players available now, append its games to the store (a duplicate pair: two games on one
deal with the seats swapped), claim and play them, and rate the pair (:mod:`.skill`) into the
book (:mod:`.book`). The book is read again whenever its revision changes (every ``poll``
seconds at most, and when a game ends): added versions become available, superseded and retired
ones stop being chosen (a pair in progress is finished) and their remote tokens are dismissed.

A run killed mid-pair leaves its games open in the store; the next run on the store plays
them first (same deals, from the same key: ``open_deal``), and rates any complete pair whose
ratings were not stored, in the order its games were recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from referee.match import Hub
from referee.net.keys import KeyFileError, decode_key
from referee.tournament.bots import BotKeeper
from referee.tournament.config import BotEntry
from referee.tournament.games import GameOutcome
from referee.tournament.ladder.book import LadderBook, Player, RatingRow, fingerprint_command
from referee.tournament.ladder.config import LadderConfig
from referee.tournament.ladder.matchmaker import Candidate, choose_pair
from referee.tournament.ladder.skill import Skill, SkillModel, pair_score, unplayed
from referee.tournament.runner import TournamentRun
from referee.tournament.store import Claim, GameSpec, Store, StoreError

__all__ = ["LadderRun", "Pair"]

LOGGER = logging.getLogger(__name__)


@dataclass(slots=True)
class Pair:
    """A pair being played: its deal, its two players, the games left and the results so far."""

    deal_id: str
    players: tuple[str, str]
    games: list[GameSpec]
    results: list[dict[str, Any]] = field(default_factory=list)


class LadderRun(TournamentRun):
    """Runs a ladder until stopped (see the module)."""

    def __init__(
        self,
        ladder: LadderConfig,
        out: Path,
        *,
        rng: random.Random | None = None,
        on_pair: Callable[[Pair], None] | None = None,
        on_scheduled: Callable[[Pair], None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(ladder.play, out, serve=False, **kwargs)
        self.ladder = ladder
        self.model = SkillModel(ladder.ratings)
        self.rng = rng or random.SystemRandom()
        """Whom the matchmaker draws: the operating system's randomness, seeded by nobody."""
        self.on_pair = on_pair
        """Called once a pair is rated."""
        self.on_scheduled = on_scheduled
        """Called when a pair's games are added (before the first is played)."""
        self.book: LadderBook | None = None
        self.players: dict[str, Player] = {}
        self.skills: dict[str, Skill] = {}
        self.last_opponent: dict[str, str] = {}
        self.last_played: dict[str, float] = {}
        """When each player's last pair was rated (its rating's uncertainty grows since)."""
        self.busy: set[str] = set()
        """Players in a pair being played: not available to the matchmaker."""
        self.changed: set[str] = set()
        """Local players whose files changed since they were added: never chosen again."""
        self.pairs_rated = 0
        """Pairs rated by this run."""
        self._revision = -1
        self._resume: list[Pair] = []
        self._tokens: set[str] = set()
        self._results: dict[int, dict[str, Any]] = {}
        self._watcher: asyncio.Future[None] | None = None
        self._report = self.on_game
        self.on_game = self._recorded

    # ------------------------------------------------------------- start and the book

    async def run(self) -> Store:
        """Play until stopped; returns the store (closed)."""
        try:
            return await super().run()
        finally:
            if self._watcher is not None:
                self._watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._watcher
            if self.book is not None:
                self.book.close()

    async def _watch(self, hub: Hub) -> None:
        """Read the book every ``poll`` seconds, whether or not a slot is waiting for a pair:
        a remote entrant added while every slot plays may connect at once."""
        while True:
            await asyncio.sleep(self.ladder.poll)
            try:
                if self._reload():
                    self._register_remotes(hub)
                    self._game_over()  # wake the slots waiting for a pair
            except StoreError as err:  # the store briefly locked: next time
                LOGGER.warning("ladder: the book could not be read (%s)", err)

    def _init(self, store: Store) -> bool:
        created = store.init_tournament(
            config=self.ladder.to_dict(), config_hash=self.ladder.config_hash, games=[],
            now=time.time(), growing=True,
        )  # fmt: skip
        if self.config_text is not None:
            store.set_meta("config_toml", self.config_text)
        store.set_meta("ladder", self.ladder.name)
        self.book = LadderBook.open(self.location, ladder=self.ladder.name)
        self._reload()
        return created

    def _joined(self, store: Store) -> None:
        """The ratings so far; the pairs a previous run left (only now: a second ladder run on
        the store has been refused, and cannot rate a pair this one is finishing)."""
        assert self.book is not None
        self.skills = {
            name: Skill(mu, sigma) for name, (mu, sigma, _) in self.book.current().items()
        }
        self.last_played = self.book.last_played()
        self._resume_open(store)

    def _resume_open(self, store: Store) -> None:
        """Queue the pairs a previous run left unplayed; rate those complete but unrated."""
        assert self.book is not None
        rated = self.book.rated_deals()
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

    def _reload(self) -> bool:
        """Read the players again if the book changed; whether it did."""
        assert self.book is not None
        revision = self.book.revision()
        if revision == self._revision:
            return False
        self._revision = revision
        for player in self.book.players():
            self.players[player.player] = player
            entry = self._entry(player)
            if entry is not None:
                self.bots[player.player] = entry
        return True

    def _entry(self, player: Player) -> BotEntry | None:
        if player.kind == "local":
            return replace(self.ladder.local, name=player.player, command=player.command)
        key: bytes | None = None
        if player.public_key is not None:
            try:
                key = decode_key(player.public_key, "")
            except KeyFileError as err:
                LOGGER.warning("%s not played: its public key is unusable (%s)", player.player, err)
                return None
        if key is None and self.curve is not None:
            if player.active:
                LOGGER.warning("%s not played: a remote entrant needs a public key under CURVE",
                               player.player)  # fmt: skip
            return None
        return BotEntry(player.player, None, player.token, public_key=key)

    def _register_remotes(self, hub: Hub) -> None:
        """Accept the tokens of the active remote players; dismiss those of ended ones (once
        they are out of their pair). The first call (the hub is new) starts the watcher."""
        if self._watcher is None:
            self._watcher = asyncio.ensure_future(self._watch(hub))
        for name, player in self.players.items():
            entry = self.bots.get(name)
            if entry is None or entry.token is None:
                continue
            if player.active and entry.token not in self._tokens:
                hub.register_remote(
                    entry.token, name, None if self.curve is None else entry.public_key
                )
                self._tokens.add(entry.token)
                LOGGER.info("remote player %s may connect", name)
            elif not player.active and entry.token in self._tokens and name not in self.busy:
                hub.dismiss(entry.token)
                self._tokens.discard(entry.token)

    # ------------------------------------------------------------- choosing pairs

    def _available(self, hub: Hub) -> list[Candidate]:
        """The players the matchmaker may choose now: active, idle, unchanged and (remote)
        waiting in the lobby."""
        found = []
        now = time.time()
        for name, player in self.players.items():
            if not player.active or name in self.busy or name in self.changed:
                continue
            entry = self.bots.get(name)
            if entry is None or (entry.token is not None and not hub.is_available(entry.token)):
                continue
            skill = self._skill(name, now)
            found.append(Candidate(name, skill.mu, skill.sigma, self.last_opponent.get(name)))
        return found

    def _stale(self, name: str) -> bool:
        """Whether a local player's files changed since it was added (then it is not played
        again: the change is a new version, to be added)."""
        player = self.players[name]
        if player.command is None or name in self.changed:
            return name in self.changed
        if fingerprint_command(player.command, Path.cwd()) == player.fingerprint:
            return False
        LOGGER.warning("%s is not played: its files changed since it was added (add it again:"
                       " a new version)", name)  # fmt: skip
        self.changed.add(name)
        return True

    def _resumable(self, hub: Hub) -> Pair | None:
        ready = {c.name for c in self._available(hub)}
        for pair in self._resume:
            if set(pair.players) <= ready:
                self._resume.remove(pair)
                return pair
        return None

    def _choose(self, store: Store, hub: Hub) -> Pair | None:
        """A new pair from the matchmaker, its games added to the store; None if none."""
        while True:
            chosen = choose_pair(self._available(hub), self.rng, self.ladder.matchmaking,
                                 beta=self.ladder.ratings.beta)  # fmt: skip
            if chosen is None:
                return None
            if not any(self._stale(c.name) for c in chosen):
                break
        a, b = chosen[0].name, chosen[1].name
        first = store.next_game_id()  # one runner adds games, and nothing awaits in between
        deal_id, pairing = f"ladder/{first}", f"{a}-vs-{b}"
        games = [GameSpec(first, pairing, a, b, deal_id, first)]
        if self.config.duplicate:
            games.append(GameSpec(first + 1, pairing, b, a, deal_id, first))
        store.add_games(games)
        pair = Pair(deal_id, (a, b), games)
        if self.on_scheduled is not None:
            self.on_scheduled(pair)
        return pair

    async def _next_pair(self, store: Store, hub: Hub) -> Pair | None:
        """Wait for a pair to play (None once stopped); its players are marked busy."""
        while not self.stop.is_set():
            self._reload()
            self._register_remotes(hub)
            pair = self._resumable(hub) or self._choose(store, hub)
            if pair is not None:
                self.busy.update(pair.players)
                return pair
            waiters = [asyncio.ensure_future(hub.changed()),
                       asyncio.ensure_future(self._ended.wait()),
                       asyncio.ensure_future(self.stop.wait())]  # fmt: skip
            try:
                await asyncio.wait(waiters, timeout=self.ladder.poll,
                                   return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
            finally:
                for waiter in waiters:
                    waiter.cancel()
        return None

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
        """Play the pair's games left, then rate it; a pair not finished stays open."""
        while pair.games and not self.stop.is_set():
            claim = self._claim(store, pair)
            if claim is None:  # a game this run failed to play: the pair waits for the next run
                LOGGER.warning("pair %s: game %d is not played again by this run",
                               pair.deal_id, pair.games[0].game_id)  # fmt: skip
                return
            await self._play_claimed(store, hub, keeper, claim)
            result = self._results.pop(claim.game.game_id, None)
            if result is None:  # stopped, a referee error, or the lease lost: not recorded
                return
            pair.games = [g for g in pair.games if g.game_id != claim.game.game_id]
            pair.results.append(result)
        if not pair.games:
            self._rate(pair)

    def _claim(self, store: Store, pair: Pair) -> Claim | None:
        """Claim the pair's next game (not one this run failed to play). The pairing's name
        is its players' (as a tournament's), so an open game of an earlier pair of the same two
        players may come first: it is given back, and its own pair plays it."""
        skip = set(self.failed)
        mine = {g.game_id for g in pair.games}
        while True:
            claim = store.claim(owner=self.owner, lease_seconds=self.lease, now=time.time(),
                                prefer=pair.games[0].pairing, only=True, skip=skip)  # fmt: skip
            if claim is None or claim.game.game_id in mine:
                return claim
            store.release(claim)
            skip.add(claim.game.game_id)

    def _skill(self, name: str, now: float) -> Skill:
        """A player's rating now: a new player's, or its last grown for the time since."""
        skill = self.skills.get(name)
        if skill is None:
            return self.model.new()
        return self.model.idle(skill, now - self.last_played.get(name, now))

    def _recorded(self, outcome: GameOutcome) -> None:
        self._results[outcome.spec.game_id] = outcome.result
        if self._report is not None:
            self._report(outcome)

    def _rate(self, pair: Pair) -> None:
        """Rate a complete pair and store the ratings (once: a pair rated before is skipped)."""
        assert self.book is not None
        a, b = pair.players
        if unplayed(pair.results):
            LOGGER.warning("pair %s (%s vs %s) not rated: neither bot started in one of its games",
                           pair.deal_id, a, b)  # fmt: skip
            if self.on_pair is not None:
                self.on_pair(pair)
            return
        score = pair_score(a, pair.results)
        now = time.time()
        new_a, new_b = self.model.rate(self._skill(a, now), self._skill(b, now), score)
        rows = [RatingRow(pair.deal_id, a, b, score, new_a.mu, new_a.sigma, now),
                RatingRow(pair.deal_id, b, a, 1.0 - score, new_b.mu, new_b.sigma, now)]  # fmt: skip
        if self.book.record_pair(rows):
            self.skills[a], self.skills[b] = new_a, new_b
            self.last_played[a] = self.last_played[b] = now
            self.last_opponent[a], self.last_opponent[b] = b, a
            self.pairs_rated += 1
        else:  # rated already (by whom?): keep to what the book says
            LOGGER.warning("pair %s was rated already: its ratings are kept", pair.deal_id)
            stored = self.book.current()
            for name in (a, b):
                if name in stored:
                    self.skills[name] = Skill(stored[name][0], stored[name][1])
        if self.on_pair is not None:
            self.on_pair(pair)
