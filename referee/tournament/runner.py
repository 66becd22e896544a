"""Tournaments: a schedule of games played concurrently over one hub, stored as they end.

Every game is a one-game match between two bot processes started for it, or kept from the
worker's previous game of the same pairing when the bot plays several matches per connection
(``multi_match``, see :mod:`referee.tournament.bots`); a remote bot connects with its
registered token instead. Games are taken from the store by workers with a
lease (*claim*), *played*, and *recorded* in one transaction; a killed referee loses only the
games in progress, which the next run (same command) plays again with the same deals.

Every deck derives from the tournament's one deal key (:mod:`referee.tournament.dealkey`) and
the game's ``deal_id``. Duplicate deals: games ``2p`` and ``2p+1`` of a pairing share a
``deal_id``, so they see the same deck orders, with the seats swapped (the other bot deals the
first hand and receives the cards the first bot received).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from protocol.schema import LINK_PATIENCE_MS
from referee.match import (
    FAREWELL_FLUSH,
    Deal,
    Hub,
    MatchConfig,
    MatchRecorder,
    MatchResult,
    Observer,
    SeatLink,
    curve_env,
    curve_transport,
    local_bot_keys,
    play_watched,
    sandbox_level,
    start_bot,
)
from referee.net.botuid import set_range
from referee.net.keys import KeyPair, KeyRing
from referee.net.private import private_dir
from referee.net.process import BotProcess
from referee.net.transport import RouterTransport, TransportConfig
from referee.net.turns import turns_of
from referee.tournament.botfiles import FilesUnavailable, scan_bots, snapshot_bots, with_files
from referee.tournament.bots import BotKeeper
from referee.tournament.config import BotEntry, TournamentConfig
from referee.tournament.dealkey import open_deal
from referee.tournament.games import (
    STDERR_TAIL,
    GameOutcome,
    compress_record_of,
    deck_label,
    game_files,
    result_dict,
    schedule,
)
from referee.tournament.lease import LEASE_SECONDS, Membership
from referee.tournament.snapshots import SnapshotStore
from referee.tournament.store import Claim, GameSpec, Store, StoreError, is_url, open_store

__all__ = ["STDERR_TAIL", "GameOutcome", "TournamentRun", "schedule"]

LOGGER = logging.getLogger(__name__)


def _bot_seed(deal: Deal, spec: GameSpec, name: str) -> str:
    return deal.bot_seed(f"{spec.deal_id}/{spec.game_id}/{name}")


class TournamentRun:
    """Plays (or resumes) one tournament into an output directory.

    Local bots connect over a private ``ipc://`` endpoint or the bound TCP one, as the config's
    ``local_transport`` says. With ``curve`` (the referee's key pair) the TCP endpoint requires
    CURVE and admits only the remote bots' configured public keys (and the fresh pairs of
    local bots that connect over TCP); every remote bot then needs a ``public_key``.
    """

    def __init__(
        self,
        config: TournamentConfig,
        out: Path,
        *,
        stop: asyncio.Event | None = None,
        on_game: Callable[[GameOutcome], None] | None = None,
        bind: str = "tcp://127.0.0.1:0",
        serve: bool = False,
        linger: bool = False,
        on_ready: Callable[[str], None] | None = None,
        observe: Callable[[str], Observer] | None = None,
        curve: KeyPair | None = None,
        store: str | Path | None = None,
        worker: bool = False,
        lease: float = LEASE_SECONDS,
        config_text: str | None = None,
    ) -> None:
        if curve is not None:
            for entry in config.bots:
                if entry.command is None and entry.public_key is None:
                    raise ValueError(f"remote bot {entry.name!r} has no public_key")
        self.curve = curve
        self.config = config
        self.out = out
        self.stop = stop or asyncio.Event()
        self.on_game = on_game
        self.bind = bind
        self.serve = serve
        self.linger = linger
        self.on_ready = on_ready
        self.observe = observe
        """Gives the observer of each game's record by match id (the live spectator page)."""
        self.location = store if store is not None else out / "tournament.sqlite"
        """Where the store is: a SQLite file (default ``OUT/tournament.sqlite``) or a URL."""
        self.worker = worker
        """True for a worker joining a tournament another command started (no init)."""
        self.lease = lease
        self.config_text = config_text
        """The configuration's TOML source, stored for workers that join later."""
        self.owner = ""
        """This run's id in the store (set when it joins)."""
        self._ended = asyncio.Event()
        self.on_init: Callable[[Store], object] | None = None
        """Called with the store once the tournament is initialised (not in a worker)."""
        self.bots = {b.name: b for b in config.bots}
        self.resumed = False
        self.total = 0
        self.lag_max = 0.0
        """The largest ``timings.lag_max`` of this run's games (each game stores its own)."""
        self.reused = 0
        """Seats played by a kept bot process instead of a new one (all workers)."""
        self.failed: dict[int, str] = {}
        """Games a referee bug ended (game id → the error): left unplayed in the store, not
        tried again by this run; the other games go on."""
        self.deal = Deal.random()
        """The tournament's deal secrets (replaced by :func:`open_deal` when the run starts)."""
        self.files = SnapshotStore(self.location, out / "entrants")
        """The bots' files, where they are given as directories (:mod:`.botfiles`)."""

    async def run(self) -> Store:
        """Play every unplayed game; returns the store (closed: reopen it to read results)."""
        if self.config.bot_uids is not None:
            set_range(self.config.bot_uids)
        private_dir(self.out)
        private_dir(self.out / "games")
        private_dir(self.out / "stderr")
        trees = {} if self.worker else scan_bots(self.config, self.out)  # nothing recorded yet
        remote = is_url(self.location)
        store = open_store(self.location, tournament=self.config.name if remote else None)
        member = Membership(store, role="worker" if self.worker else "tournament", lease=self.lease)
        self.owner = member.owner
        try:
            created = self._init(store)
            member.join(exclusive=not self.worker)
            self.resumed = not created
            self.deal = open_deal(self.out, self.config.seed, store, created=created)
            self.bots.update(snapshot_bots(self.config, store, self.files, trees))
            self._joined(store)
            silence = round(5000 * self.config.time.heartbeat)
            ring = KeyRing()
            transport = RouterTransport(
                TransportConfig(
                    endpoint=self.bind,
                    curve=curve_transport(self.curve, ring),
                    local_ipc=self.config.local_transport == "ipc",
                    heartbeat_ivl_ms=1000,
                    heartbeat_timeout_ms=silence,
                    heartbeat_ttl_ms=LINK_PATIENCE_MS,
                )
            )
            async with transport:
                hub = Hub(transport, multi_match=self.config.reuse_bots, keys=ring)
                self._register_remotes(hub)
                if self.on_ready is not None:
                    self.on_ready(transport.endpoint)
                background = [
                    asyncio.ensure_future(member.keep_alive()),
                    asyncio.ensure_future(hub.lobby_heartbeat()),
                    asyncio.ensure_future(hub.shutdown_when(self.stop)),
                ]
                try:
                    async with asyncio.TaskGroup() as group:
                        for _ in range(self.config.concurrency):
                            group.create_task(self._worker(store, hub))
                    if self.linger and not self.stop.is_set():  # up (bots may connect) until told
                        LOGGER.info("tournament complete; serving until stopped")
                        await self.stop.wait()
                finally:
                    # Stopped, the lobby gets error shutdown + bye; else kept bots may leave.
                    stopped = self.stop.is_set()
                    told = hub.shutdown() if stopped else hub.farewell("tournament over")
                    for task in background:
                        task.cancel()
                    for task in background:
                        with contextlib.suppress(asyncio.CancelledError):
                            await task
                    if told or self.stop.is_set():
                        # The socket closes with linger 0: let the last messages leave first.
                        await asyncio.sleep(FAREWELL_FLUSH)
        finally:
            try:
                member.leave()
            finally:
                store.close()
        return store

    def _init(self, store: Store) -> bool:
        """Store the schedule (unless a worker); True if the store was new."""
        games = schedule(self.config)
        self.total = len(games)
        if self.worker:
            return False
        created = store.init_tournament(
            config=self.config.to_dict(),
            config_hash=self.config.config_hash,
            games=games,
            now=time.time(),
        )
        if self.config_text is not None:
            store.set_meta("config_toml", self.config_text)
        if self.on_init is not None:
            self.on_init(store)
        return created

    def _joined(self, store: Store) -> None:
        """Called once this run is a member of the store (a second independent run was refused
        before it), before any game is played: nothing to do for a tournament."""

    def _register_remotes(self, hub: Hub) -> None:
        """Accept the remote bots' tokens (and keys) in the lobby."""
        for entry in self.config.bots:
            if entry.token is not None:
                hub.register_remote(
                    entry.token, entry.name, None if self.curve is None else entry.public_key
                )

    async def _worker(self, store: Store, hub: Hub) -> None:
        keeper = BotKeeper(hub, enabled=self.config.reuse_bots)
        try:
            await self._work(store, hub, keeper)
        finally:
            await keeper.release()
            self.reused += keeper.reused

    async def _work(self, store: Store, hub: Hub, keeper: BotKeeper) -> None:
        last: str | None = None
        while not self.stop.is_set():
            try:
                claimed = await self._claim_and_play(store, hub, keeper, last)
            finally:
                self._game_over()
            if claimed is None:
                return
            last = claimed

    async def _claim_and_play(
        self, store: Store, hub: Hub, keeper: BotKeeper, last: str | None
    ) -> str | None:
        """Claim a game, play it, record it; the pairing to prefer next (``""``: none), or
        None when this slot is done."""
        while True:
            claim = store.claim(
                owner=self.owner,
                lease_seconds=self.lease,
                now=time.time(),
                prefer=last or None,
                skip=self.failed,
            )
            if claim is not None:
                break
            if self.stop.is_set() or not await self._others_playing(store):
                return None
        return await self._play_claimed(store, hub, keeper, claim)

    async def _play_claimed(
        self, store: Store, hub: Hub, keeper: BotKeeper, claim: Claim
    ) -> str | None:
        """Play a claimed game and record it; as :meth:`_claim_and_play`."""
        renewer = asyncio.ensure_future(self._renew(store, claim))
        files: dict[str, bytes] | None = None
        loop = asyncio.get_running_loop()
        window = turns_of(loop).stalls.window(loop.time())  # this game's lag and stalls
        error: str | None = None
        try:
            result = await self._play(hub, keeper, claim.game, claim.attempt)
            if result is not None and result.error is None:
                files = game_files(self.out, claim) if is_url(self.location) else None
                result = compress_record_of(result)
            error = None if result is None else result.error
        except asyncio.CancelledError:
            store.release(claim)
            raise
        except FilesUnavailable as err:  # the machine's fault, not the bot's
            result, error = None, str(err)
            self._cannot_play(err.player)
        finally:
            timings = window.close(loop.time())
            self.lag_max = max(self.lag_max, timings["lag_max"])
            renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewer
        if error is not None:  # a referee bug: not a result; the others go on
            LOGGER.error("game %d not played: %s", claim.game.game_id, error)
            self.failed[claim.game.game_id] = error
            store.release(claim)
            return ""
        if result is None:  # stopped before the end: give the game back
            store.release(claim)
            return None
        stored = result_dict(claim.game, result)
        stored["files"] = [self.bots[name].files for name in (claim.game.seat0, claim.game.seat1)]
        faults = stored["faults"]
        ok = store.record(
            claim, result=stored, faults=faults, timings=timings,
            now=time.time(), files=files,
        )  # fmt: skip
        if not ok:
            LOGGER.warning("game %d: lease lost, result not recorded", claim.game.game_id)
        if ok and self.on_game is not None:
            self.on_game(GameOutcome(claim.game, stored))
        return claim.game.pairing if keeper.kept else ""

    def _cannot_play(self, name: str) -> None:
        """A bot whose files cannot be had here (its game is a failed one): nothing more to do
        in a tournament, whose schedule is fixed (a ladder chooses it no more)."""

    def _game_over(self) -> None:
        """Wake the slots waiting in :meth:`_others_playing` (a game of this run ended)."""
        self._ended.set()
        self._ended = asyncio.Event()

    async def _others_playing(self, store: Store) -> bool:
        """Nothing to claim: True (after a wait) while games are claimed by this run's other
        slots or by other runners, whose runner may die and whose games are then claimable
        here; False when none are left. Wakes when a game of this run ends, else polls the
        store every sixth of the lease."""
        ended = self._ended
        counts = store.counts()
        if counts["pending"] + counts["claimed"] <= len(self.failed) and all(
            row.status == "done" or row.spec.game_id in self.failed for row in store.games()
        ):  # nothing open but the games this run failed (and will not try again)
            return False
        waiters = [asyncio.ensure_future(e.wait()) for e in (ended, self.stop)]
        try:
            await asyncio.wait(waiters, timeout=self.lease / 6, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
        return True

    async def _renew(self, store: Store, claim: Claim) -> None:
        """Renew the claim's lease every third of it until it is lost. A renewal that fails
        (the database briefly unreachable) is tried again a third later: if the lease lapses
        meanwhile, the result is refused and the game is played again, as for a stopped
        runner; the game in play is never torn down for it."""
        current: Claim | None = claim
        while current is not None:
            await asyncio.sleep(self.lease / 3)
            try:
                current = store.renew(current, lease_seconds=self.lease, now=time.time())
            except StoreError as err:
                LOGGER.warning("game %d: lease renewal failed (%s)", claim.game.game_id, err)

    def _deal_for(self, spec: GameSpec) -> Deal:
        """A game's deal secrets: the tournament's one key (a ladder's are one per pair)."""
        return self.deal

    async def _play(
        self, hub: Hub, keeper: BotKeeper, spec: GameSpec, attempt: int
    ) -> MatchResult | None:
        """Play one game; None if the tournament was stopped before it ended."""
        config = self.config
        deal = self._deal_for(spec)
        match_config = MatchConfig(
            rules=config.rules,
            games=1,
            deal=deal,
            deal_id=deck_label(spec),
            reveal_key=False,
            time=config.time,
            policy=config.policy,
            strikes=config.strikes,
            max_hands_per_game=config.max_hands_per_game,
            match_id=f"g{spec.game_id:06d}-a{attempt}",
        )
        seat0, seat1 = await with_files(self.files, (self.bots[spec.seat0], self.bots[spec.seat1]))
        entries = (seat0, seat1)
        local_names = [e.name if e.command is not None else "" for e in entries]
        while True:
            if not await self._await_remotes(hub, entries):
                return None
            kept = await keeper.take(local_names, spec.deal_id)
            # Another game may have taken a remote bot, or it left, while we waited: check
            # again after the last await, then seat both at once (no await in between, so
            # the check still holds when the seats are opened). Serving, a game never
            # starts without its remote bots, so they are never charged a start-up fault.
            ready = all(e.token is None or hub.is_available(e.token) for e in entries)
            if ready or not self.serve:
                break
            keeper.give_back(local_names, kept)
        links: list[SeatLink] = []
        processes: list[BotProcess | None] = []
        pairs: list[KeyPair | None] = []
        names = [entry.name for entry in entries]
        match_id = match_config.match_id
        recorder = MatchRecorder(
            self.out / "games" / f"{match_id}.jsonl",
            observer=None if self.observe is None else self.observe(match_id),
        )
        result: MatchResult | None = None
        try:
            for seat, (entry, bot) in enumerate(zip(entries, kept, strict=True)):
                token = entry.token if bot is None else bot.token
                fresh = bot is None and entry.command is not None
                pair = local_bot_keys(self.curve, hub.local_endpoint) if fresh else None
                pairs.append(pair)
                link = hub.open_seat(
                    seat,
                    config.time,
                    token,
                    name=entry.name,
                    seed=_bot_seed(deal, spec, entry.name),
                    reusable=token is not None,
                    public_key=None if pair is None else pair.public,
                )
                links.append(link)
                processes.append(None if bot is None else bot.process)
            for seat, (link, entry) in enumerate(zip(links, entries, strict=True)):
                if processes[seat] is None and entry.command is not None:
                    stderr = f"{match_config.match_id}.{entry.name}.stderr"
                    processes[seat] = await start_bot(
                        link,
                        entry.bot_command(),
                        endpoint=hub.local_endpoint,
                        stderr_path=self.out / "stderr" / stderr,
                        hide=self.out,
                        extra_env=curve_env(self.curve, pairs[seat]),
                    )
            asked = [e.sandbox for e in entries if e.command is not None]
            recorder.header_extra["sandbox"] = sandbox_level(processes, asked)
            recorder.header_extra["files"] = [e.files for e in entries]
            result = await play_watched(
                match_config,
                (links[0], links[1]),
                processes,
                recorder=recorder,
                abort=self.stop,
            )
        finally:
            await keeper.settle(
                links, processes, names[: len(links)], result, kept[: len(links)], spec.deal_id
            )
            recorder.close()
        if result.interrupted:
            return None
        asked = [e.sandbox for e in entries if e.command is not None]
        result = replace(result, sandbox=sandbox_level(processes, asked))
        # Stored names are the configured ones, whatever the bots called themselves.
        for summary, entry in zip(result.seats, entries, strict=True):
            summary.name = entry.name
        return result

    async def _await_remotes(self, hub: Hub, entries: tuple[BotEntry, BotEntry]) -> bool:
        """Wait for the game's remote bots to be in the lobby: without limit when serving,
        else up to the start-up limit (then the game starts and a missing bot is a startup
        fault). False if the tournament was stopped meanwhile."""
        for entry in entries:
            if entry.token is None or hub.is_available(entry.token):
                continue
            waiter = asyncio.ensure_future(hub.wait_available(entry.token))
            stopper = asyncio.ensure_future(self.stop.wait())
            limit = None if self.serve else self.config.time.startup
            try:
                await asyncio.wait(
                    {waiter, stopper}, timeout=limit, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                for task in (waiter, stopper):
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
            if self.stop.is_set():
                return False
        return True
