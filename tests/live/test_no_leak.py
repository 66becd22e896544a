"""The attack: a bot's operator opens the spectator page during a real tournament and keeps
every byte it sends. No card that is unseen in a running hand may reach it.

A real tournament (duplicate deals: each game's twin, on the same cards, is played after it;
real bot processes) runs with the real live server; a real HTTP client subscribes before the
first game, and for each game that appears another one watches it (``events?game=ID``, as the
page does: only a watcher is sent a game's hands); at the end of every hand the test also asks
for the snapshot page of its game (``snapshot?game=ID``), whose embedded events are the state
at that moment. The test taps the match's observer itself (the ledger: when each hand was
dealt, each decision made and each hand ended, and which cards were public after each decision)
and checks every event every stream and snapshot carried against it:

- a masked hand, or a batch of its newest steps, may name only the cards public at its last
  step (the first upcard and the cards discarded face up so far), and may arrive only after
  that step was played;
- a hand's full cards may arrive only ``DELAY`` seconds after the hand ended and after every
  game dealt from the same deal (its duplicate twin) was recorded, and must be the record's;
- nothing else (header data, results, standings) may name a card at all, and a spectator
  watching no game is sent no hand.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from yarl import URL

from referee.live import LiveConfig, Spectating
from referee.live.server import live_page
from referee.live.snapshot import SNAPSHOT_ID
from referee.match import Observer
from referee.match.record_gzip import record_stem
from referee.tournament.config import load_config
from referee.tournament.runner import GameOutcome, TournamentRun, schedule
from referee.view.replay_data import match_data
from tests.e2e.helpers import BOTS, PY, RANDOM
from tests.live.spectator import Event, Spectator, cards_in
from tests.tournament.test_tournament_e2e import write_config

pytestmark = pytest.mark.timeout(240)

DELAY = 0.05
"""Shorter than a game (the greedy bot thinks ``PONDER`` s a decision: a hand lasts more than
the live page's 0.1 s batching), so that the test sees both rules act: steps sent while
their hand is in play, and hands held for their duplicate twin past the delay. (Between two
instant bots on a quiet machine a one-hand game takes ~40 ms, and neither might happen.)"""
PONDER = 0.01


class Ledger:
    """What the matches told the live hub, and when (taken before the hub is told)."""

    def __init__(self) -> None:
        self.steps: dict[tuple[str, str], list[tuple[float, frozenset[str]]]] = {}
        """(match, hand id) -> (time, cards public after it) of the deal and every decision."""
        self.ended: dict[tuple[str, str], float] = {}
        self.deal_of: dict[str, str] = {}
        self.recorded: dict[str, list[float]] = defaultdict(list)
        """deal id -> when each game dealt from it was recorded."""
        self.dealt = asyncio.Event()
        """Set at the first deal."""

    def tap(self, match_id: str, inner: Observer) -> Observer:
        def observe(event: dict[str, Any]) -> None:
            now = time.monotonic()
            kind = event["type"]
            if kind == "header":
                self.deal_of[match_id] = event["deal_id"]
            elif kind in ("deal", "action", "hand"):
                key = (match_id, f"g{event['game'] + 1}-h{event['hand'] + 1}")
                if kind == "deal":
                    self.steps[key] = [(now, frozenset({event["upcard"]}))]
                    self.dealt.set()
                elif kind == "action":
                    public = set(self.steps[key][-1][1])
                    verb, _, rest = event["action"].partition(" ")
                    if verb == "discard":
                        public.add(rest)
                    self.steps[key].append((now, frozenset(public)))
                else:
                    self.ended[key] = now
            inner(event)

        return observe


def check_masked(ledger: Ledger, event: Event, key: tuple[str, str], step: int) -> None:
    at, public = ledger.steps[key][step]
    assert event.at >= at, f"{key} step {step} arrived before it was played"
    leaked = cards_in(event.raw) - public
    assert not leaked, f"{key} step {step}: unseen cards {sorted(leaked)} in {event.raw[:400]}"


def test_a_spectator_never_receives_an_unseen_card(tmp_path: Path) -> None:
    bots = [("greedy", f"{PY} {BOTS / 'ponder_bot.py'} {PONDER}"), ("random", RANDOM)]
    config = load_config(write_config(tmp_path / "t.toml", bots, games=4, concurrency=1))
    assert config.duplicate
    out = tmp_path / "out"
    games = schedule(config)
    ledger = Ledger()
    streams = asyncio.run(_spectate(config, out, games, ledger))

    expected: dict[tuple[str, str], dict[str, Any]] = {}
    for record in sorted((out / "games").glob("*.jsonl.gz")):
        for hand in match_data(record)["hands"]:
            expected[(record_stem(record.name), hand["id"])] = hand
    per_deal = Counter(spec.deal_id for spec in games)

    light = streams[""]
    # A stream watching no game gets no hand until the end: then, just before ``over``, the
    # last hand of each game (its cards checked below like every stream's)
    kinds = [e.kind for e in light]
    first_hand = kinds.index("hand") if "hand" in kinds else len(kinds)
    assert set(kinds[:first_hand]) <= {"config", "match", "standings", "drop"}
    assert kinds[first_hand:] == ["hand"] * (len(kinds) - first_hand - 1) + ["over"], kinds
    assert all(cards_in(e.raw) == set() for e in light[:first_hand])
    last = {(e.data["id"], e.data["hand"]["id"]) for e in light[first_hand:-1]}
    latest = dict(ledger.steps)  # (match, hand): in the order dealt, so the last one stays
    assert last == set({match: hand for match, hand in latest}.items())
    snapshots = [name for name in streams if name.startswith("snapshot")]
    assert len(snapshots) >= len(expected), "a snapshot at the end of every hand"
    full: set[tuple[str, str]] = set()
    seen: dict[tuple[str, str], int] = {}
    batches = held_by_twin = masked_in_snapshots = 0
    for name, events in streams.items():
        seen_steps: dict[tuple[str, str], int] = {}
        for event in events:
            data = event.data
            if event.kind == "hand":
                hand = data["hand"]
                key = (data["id"], hand["id"])
                if hand.get("masked"):
                    step = len(hand["steps"]) - 1
                    check_masked(ledger, event, key, step)
                    seen_steps[key] = step
                    masked_in_snapshots += name in snapshots
                else:
                    deal_id = ledger.deal_of[key[0]]
                    twins = ledger.recorded[deal_id]
                    assert len(twins) == per_deal[deal_id], f"{key} shown before its twin"
                    assert event.at >= max(twins), f"{key} shown before every twin was recorded"
                    assert event.at >= ledger.ended[key] + DELAY, f"{key} shown before its delay"
                    assert json.loads(json.dumps(expected[key])) == hand, f"{key} differs"
                    held_by_twin += max(twins) > ledger.ended[key] + DELAY
                    full.add(key)
            elif event.kind == "steps":
                key = (data["id"], data["hand"])
                assert data["from"] == seen_steps[key] + 1, f"{key}: steps skipped or repeated"
                seen_steps[key] = data["from"] + len(data["steps"]) - 1
                check_masked(ledger, event, key, seen_steps[key])  # the batch, at its last step
                batches += name not in snapshots
            else:
                allowed = ("config", "match", "standings", "drop", "over", "end")
                assert event.kind in allowed, event.kind
                assert cards_in(event.raw) == set(), f"a card in a {event.kind} event: {event.raw}"
        for key, step in seen_steps.items():
            seen[key] = max(seen.get(key, -1), step)
    # Not vacuous: every step of every hand was seen masked (in batches while the hand was in
    # play, or with the masked hand), then every hand in full.
    assert full == set(expected) and len(expected) >= 4
    assert {key: n + 1 for key, n in seen.items()} == {
        key: len(steps) for key, steps in ledger.steps.items()
    }
    assert batches > 0, "no step was sent while its hand was in play: the test proves less"
    assert held_by_twin > 0, "no hand was ever held back for its twin: the test proves less"
    assert masked_in_snapshots > 0, "no snapshot showed a withheld hand: the test proves less"


async def _spectate(config: Any, out: Path, games: Any, ledger: Ledger) -> dict[str, list[Event]]:
    """Run the tournament with a spectator subscribed from before the first game to after the
    last release, one watching each game from when it appears, and a snapshot of a game at the
    end of each of its hands; returns every event each received (the light stream's under
    ``""``, a watcher's under its game, snapshots under ``snapshot N``)."""
    live = Spectating("127.0.0.1", 0, LiveConfig(delay=DELAY), out / "tournament.sqlite", games)
    hands_total = 0
    all_released = asyncio.Event()
    full: set[tuple[str, str]] = set()
    streams: dict[str, list[Event]] = {}
    watchers: list[Spectator] = []
    tasks: list[asyncio.Future[None]] = []
    snapshots: list[asyncio.Future[None]] = []

    def check_released() -> None:
        if hands_total and len(full) >= hands_total:
            all_released.set()

    def on_watched(event: Event) -> None:
        if event.kind == "hand" and not event.data["hand"].get("masked"):
            full.add((event.data["id"], event.data["hand"]["id"]))
        elif event.kind == "end":  # the hand is over, its cards not yet due
            snapshots.append(asyncio.ensure_future(snap(event.data["id"])))
        check_released()

    async def snap(game: str) -> None:
        name = f"snapshot {len(streams)}"
        streams[name] = []
        async with session.get(URL(live.url + "snapshot").with_query(game=game)) as resp:
            assert resp.status == 200
            body = await resp.text()
        reader = Spectator("")
        at = time.monotonic()
        head = f'<script type="application/json" id="{SNAPSHOT_ID}">'
        text = json.loads(body.split(head, 1)[1].split("</script>", 1)[0])
        reader._parse(text.encode(), at)
        streams[name] = reader.events

    def on_light(event: Event) -> None:
        if event.kind == "match" and event.data["id"] not in streams:
            game = event.data["id"]
            watcher = Spectator(str(URL(live.url + "events").with_query(game=game)))
            watcher.on_event = on_watched
            streams[game] = watcher.events
            watchers.append(watcher)
            tasks.append(asyncio.ensure_future(watcher.run(session)))

    def on_game(outcome: GameOutcome) -> None:
        ledger.recorded[outcome.spec.deal_id].append(time.monotonic())
        live.on_game(outcome)

    spectator = Spectator("", on_event=on_light)
    streams[""] = spectator.events
    page, _ = live_page()
    async with aiohttp.ClientSession() as session, live:
        spectator.url = live.url + "events"
        listener = asyncio.ensure_future(spectator.run(session))
        await asyncio.wait_for(spectator.connected.wait(), 30)
        assert spectator.status == 200
        run = TournamentRun(
            config, out, on_game=on_game, observe=lambda mid: ledger.tap(mid, live.observe(mid))
        )
        playing = asyncio.ensure_future(run.run())
        await asyncio.wait({playing, asyncio.ensure_future(ledger.dealt.wait())},
                           return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
        async with session.get(live.url) as resp:
            assert resp.status == 200 and await resp.read() == page  # no game data in it
        await playing
        hands_total = len(ledger.ended)
        check_released()
        await asyncio.wait_for(all_released.wait(), 30)
        await asyncio.wait_for(asyncio.gather(*snapshots), 30)
    await asyncio.wait_for(asyncio.gather(listener, *tasks), 30)  # the server closed
    assert spectator.leftover() == b"" and all(w.leftover() == b"" for w in watchers)
    assert all(w.status == 200 for w in watchers) and len(watchers) == len(games)
    return streams
