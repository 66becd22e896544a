"""A ladder's state and its choice of pairs: the book's players (read again when it changes),
the remote players' tokens, who is present and ready, the rounds of the matchmaker
(:mod:`.matchmaker`, drawn from the ratings alone and stored, :mod:`.rounds`), the order the
drawn pairs are played in (:mod:`.queue`: a pair waits for an away player, nobody re-chosen),
the pairs left open by an earlier run (played first, or voided once they have waited
``void_after``), and each pair's own deal (:mod:`.pairs`).
:class:`~referee.tournament.ladder.run.LadderRun` plays and rates them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.match import Deal, Hub
from referee.tournament.dealkey import LADDER_META
from referee.tournament.games import SEPARATE, GameOutcome
from referee.tournament.ladder.book import LadderBook, Player
from referee.tournament.ladder.config import LadderConfig
from referee.tournament.ladder.matchmaker import Candidate, Meetings, draw_round, round_seed
from referee.tournament.ladder.pairs import PairLedger, PairRow, pair_deal
from referee.tournament.ladder.queue import Drawn, PairQueue
from referee.tournament.ladder.roster import entry_of, same_program
from referee.tournament.ladder.rounds import RoundLedger
from referee.tournament.ladder.skill import Skill, SkillModel
from referee.tournament.runner import TournamentRun
from referee.tournament.store import GameSpec, Store, StoreError

__all__ = ["LadderChoosing", "Pair", "first_of"]

LOGGER = logging.getLogger(__name__)


async def first_of(*waits: Awaitable[Any], within: float) -> None:
    """Wait until the first of ``waits`` is done, or ``within`` seconds; cancel the others."""
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, timeout=within, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


@dataclass(slots=True)
class Pair:
    """A pair being played: its deal, its two players, the games left and the results so far."""

    deal_id: str
    players: tuple[str, str]
    games: list[GameSpec]
    results: list[dict[str, Any]] = field(default_factory=list)
    outcome: str = "open"
    """``open`` while played; then ``rated``, ``unrated`` (a game neither bot started) or
    ``voided`` (left open by an earlier run, and its players did not come back in time)."""


class LadderChoosing(TournamentRun):
    """A ladder's state and its choice of pairs; :class:`~.run.LadderRun` plays them."""

    def __init__(
        self,
        ladder: LadderConfig,
        out: Path,
        *,
        on_pair: Callable[[Pair], None] | None = None,
        on_scheduled: Callable[[Pair], None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(ladder.play, out, serve=False, **kwargs)
        self.ladder = ladder
        self.model = SkillModel(ladder.ratings)
        self.on_pair = on_pair
        """Called once a pair is rated."""
        self.on_scheduled = on_scheduled
        """Called when a pair's games are added (before the first is played)."""
        self.book: LadderBook | None = None
        self.ledger: PairLedger | None = None
        self.rounds: RoundLedger | None = None
        self.queue = PairQueue()
        """The drawn pairs not yet started (:mod:`.queue`)."""
        self.meetings = Meetings()
        """What every round so far drew (the next draw's history)."""
        self.round = 0
        """The last round drawn."""
        self.players: dict[str, Player] = {}
        self.skills: dict[str, Skill] = {}
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
        self._scheduled: dict[str, float] = {}
        """The open pairs dealt from keys of their own (:mod:`.pairs`), with when they were
        scheduled (a pair a version before them left open: dealt from the ladder's key)."""
        self._started = time.time()
        self._tokens: set[str] = set()
        self._results: dict[int, dict[str, Any]] = {}
        self._awaited: set[int] = set()
        """Games slots wait for while other processes (workers) play them."""
        self._watcher: asyncio.Future[None] | None = None
        self._background: list[asyncio.Future[None]] = []
        """Tasks that live as long as the run (the book's watcher...): cancelled at its end."""
        self._report = self.on_game
        self.on_game = self._recorded

    # ------------------------------------------------------------- start and the book

    async def run(self) -> Store:
        """Play until stopped; returns the store (closed)."""
        try:
            return await super().run()
        finally:
            for task in self._background:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
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
        store.set_meta(LADDER_META, self.ladder.name)
        self.book = LadderBook.open(self.location, ladder=self.ladder.name)
        self.ledger = PairLedger(self.book)
        self.rounds = RoundLedger(self.book)
        self.queue = PairQueue(self.rounds.waiting())
        self.meetings = self.rounds.meetings()
        self.round = self.rounds.next_number() - 1
        self._reload()
        return created

    def _reload(self) -> bool:
        """Read the players again if the book changed; whether it did."""
        assert self.book is not None
        revision = self.book.revision()
        if revision == self._revision:
            return False
        self._revision = revision
        for player in self.book.players():
            self.players[player.player] = player
            entry = entry_of(player, self.ladder.local, curve=self.curve is not None)
            if entry is not None:
                self.bots[player.player] = entry
        return True

    def _register_remotes(self, hub: Hub) -> None:
        """Accept the tokens of the active remote players; dismiss those of ended ones (once
        they are out of their pair). The first call (the hub is new) starts the watcher."""
        if self._watcher is None:
            self._watcher = asyncio.ensure_future(self._watch(hub))
            self._background.append(self._watcher)
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

    def _present(self, hub: Hub, name: str) -> bool:
        """Whether ``name`` can be reached (:mod:`.queue`): in a pair being played; else a
        local player that is unchanged, or a remote one waiting in the lobby."""
        entry = self.bots.get(name)
        if entry is None or name not in self.players or name in self.changed:
            return False
        if name in self.busy or entry.token is None:
            return True
        return hub.is_available(entry.token)

    def _ready(self, hub: Hub, name: str) -> bool:
        """Whether ``name`` can start a pair now: present and in no pair being played."""
        return name not in self.busy and self._present(hub, name)

    def _stale(self, name: str) -> bool:
        """Whether a local player's files changed since it was added (then it is not played
        again: the change is a new version, to be added)."""
        player = self.players[name]
        if name in self.changed or same_program(player):
            return name in self.changed
        LOGGER.warning("%s is not played: its files changed since it was added (add it again:"
                       " a new version)", name)  # fmt: skip
        self.changed.add(name)
        return True

    def _resumable(self, hub: Hub) -> Pair | None:
        for pair in self._resume:
            if all(self._ready(hub, n) for n in pair.players) and not any(
                self._stale(n) for n in pair.players
            ):
                self._resume.remove(pair)
                return pair
        return None

    def _void_ended(self) -> None:
        """Void the drawn pairs of players that ended (superseded or retired) or whose files
        changed: they will never be played (a pair in progress is finished)."""
        assert self.rounds is not None
        for drawn in list(self.queue.items):
            gone = [n for n in drawn.players if n in self.changed or not self._active(n)]
            if gone:
                why = "changed" if gone[0] in self.changed else self.players[gone[0]].status
                detail = f"{gone[0]} {why} before the pair started"
                self.rounds.void(drawn, detail)
                self.queue.remove(drawn)
                LOGGER.info("round %d: %s vs %s voided (%s)", drawn.round, *drawn.players, detail)

    def _active(self, name: str) -> bool:
        player = self.players.get(name)
        return player is not None and player.active

    def _candidates(self, hub: Hub) -> list[Candidate]:
        """The players of the next draw: every active, playable player, but those away that
        already hold a drawn pair (it waits for them)."""
        now = time.time()
        holding = {name for drawn in self.queue.items for name in drawn.players}
        found = []
        for name, player in self.players.items():
            if not player.active or name in self.changed or self.bots.get(name) is None:
                continue
            if name in holding and not self._present(hub, name):
                continue
            skill = self._skill(name, now)
            found.append(Candidate(name, skill.mu, skill.sigma))
        return found

    def _draw(self, hub: Hub) -> bool:
        """Draw the next round from the ratings (stored before any of its pairs starts);
        False if fewer than two players are in the draw."""
        assert self.rounds is not None
        candidates = self._candidates(hub)
        if len(candidates) < 2:
            return False
        number = self.round + 1
        seed = round_seed(self.deal.key, number)
        draw = draw_round(candidates, self.meetings, seed, self.ladder.matchmaking,
                          beta=self.ladder.ratings.beta)  # fmt: skip
        for drawn in self.rounds.record(number, time.time(), seed, candidates, draw):
            self.queue.add(drawn)
            self.meetings.add(*drawn.players)
        self.round = number
        LOGGER.info("round %d drawn: %s%s", number,
                    ", ".join(f"{a} vs {b}" for a, b in draw.pairs),
                    f"; {draw.bye} sits out" if draw.bye else "")  # fmt: skip
        return True

    def _choose(self, store: Store, hub: Hub) -> Pair | None:
        """The next drawn pair to play, its games added to the store (a round is drawn when
        none waits for present players); None if none can start now."""
        present, ready = (lambda n: self._present(hub, n)), (lambda n: self._ready(hub, n))
        for _ in range(4):  # a draw, another for the players an away one left: at most two
            self._void_ended()
            drawn = self.queue.next_playable(present, ready)
            if drawn is not None:
                if any(self._stale(n) for n in drawn.players):
                    continue  # voided at the next turn
                return self._start(store, drawn)
            if not self.queue.needs_round(present) or not self._draw(hub):
                return None
        return None

    def _start(self, store: Store, drawn: Drawn) -> Pair:
        """Start a drawn pair: its row in the ledger (its deal's commitment, and the drawn pair
        marked started, in one transaction), then its games in the store."""
        assert self.ledger is not None
        a, b = drawn.players
        first = store.next_game_id()  # one runner adds games, and nothing awaits in between
        local = all(self.players[name].kind == "local" for name in (a, b))
        # A remote player could remember the first game's deal: the two games then deal apart.
        deal_id = f"ladder/{first}" + ("" if local else SEPARATE)
        pairing = f"{a}-vs-{b}"
        games = [GameSpec(first, pairing, a, b, deal_id, first)]
        if self.config.duplicate:
            games.append(GameSpec(first + 1, pairing, b, a, deal_id, first))
        now = time.time()
        commitment = pair_deal(self.deal, deal_id).commitment
        self.ledger.schedule(PairRow(deal_id, (a, b), tuple(g.game_id for g in games), local,
                                     commitment, now, None, None, None),
                             drawn=(drawn.round, drawn.index))  # fmt: skip
        self.queue.remove(drawn)
        self._scheduled[deal_id] = now  # committed before its games exist
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
            self._void_expired(hub)
            pair = self._resumable(hub) or self._choose(store, hub)
            if pair is not None:
                self.busy.update(pair.players)
                return pair
            await first_of(hub.changed(), self._ended.wait(), self.stop.wait(),
                           within=self.ladder.poll)  # fmt: skip
        return None

    def _skill(self, name: str, now: float) -> Skill:
        """A player's rating now: a new player's, or its last grown for the time since."""
        skill = self.skills.get(name)
        if skill is None:
            return self.model.new()
        return self.model.idle(skill, now - self.last_played.get(name, now))

    def _deal_for(self, spec: GameSpec) -> Deal:
        """The pair's own deal (:mod:`.pairs`); the ladder's for a pair scheduled before."""
        return pair_deal(self.deal, spec.deal_id) if spec.deal_id in self._scheduled else self.deal

    def _void_expired(self, hub: Hub) -> None:
        """Void the pairs left open by an earlier run that have waited ``void_after`` since
        they were scheduled and whose players are not both available now: their recorded games
        are kept, they are never rated, their deal key is revealed, and the audit log says so."""
        assert self.ledger is not None
        now = time.time()
        for pair in list(self._resume):
            since = self._scheduled.get(pair.deal_id)
            absent = [p for p in pair.players if not self._ready(hub, p)]
            if since is None or now - since < self.ladder.void_after or not absent:
                continue
            self._resume.remove(pair)
            who = self.players.get(absent[0])
            detail = (
                f"pair {pair.deal_id} ({pair.players[0]} vs {pair.players[1]}) voided: open"
                f" {now - since:.0f} s (void_after {self.ladder.void_after:g} s), game(s)"
                f" {', '.join(str(g.game_id) for g in pair.games)} unplayed, {', '.join(absent)}"
                f" not available; its {len(pair.results)} recorded game(s) kept, not rated"
            )
            key = pair_deal(self.deal, pair.deal_id).key_hex
            audit = (who.entrant if who else absent[0], absent[0], detail)
            if self.ledger.close(pair.deal_id, "voided", key, now=now, audit=audit):
                LOGGER.warning("%s", detail)
                self._scheduled.pop(pair.deal_id, None)
                pair.outcome = "voided"
                if self.on_pair is not None:
                    self.on_pair(pair)

    def _recorded(self, outcome: GameOutcome) -> None:
        self._results[outcome.spec.game_id] = outcome.result
        if self._report is not None:
            self._report(outcome)
