"""The live page's standings: recomputed after games end, one computation at a time, with a
rest between two computations so that a long tournament's growing store does not take the
referee's time from its games."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, cast

import pytest

from referee.live import feed as feed_module
from referee.live.feed import REST, TournamentFeed
from referee.live.hub import LiveHub

pytestmark = pytest.mark.timeout(30)


class _Hub:
    def __init__(self) -> None:
        self.standings: list[dict[str, Any]] = []

    def set_standings(self, standings: dict[str, Any]) -> None:
        self.standings.append(standings)


def test_a_game_ending_during_a_computation_gets_one_more_after_a_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    rests: list[float] = []
    release = threading.Event()
    running = threading.Event()
    computed: list[float] = []

    def standings_of(path: Path) -> dict[str, Any]:
        """A computation that takes 2.5 s on the injected clock (the first waits for the test)."""
        running.set()
        if not computed:
            assert release.wait(10)
        computed.append(now[0])
        now[0] += 2.5
        return {"computation": len(computed)}

    async def sleep(seconds: float) -> None:
        rests.append(seconds)
        now[0] += seconds

    async def run() -> None:
        monkeypatch.setattr(feed_module, "standings_of", standings_of)
        hub = _Hub()
        feed = TournamentFeed(cast(LiveHub, hub), Path("unused"), [],
                              clock=lambda: now[0], sleep=sleep)  # fmt: skip
        feed.refresh()
        await asyncio.to_thread(running.wait, 10)
        for _ in range(5):  # five games end while the first computation runs: one more
            feed.refresh()
        release.set()
        await feed.close()
        assert [s["computation"] for s in hub.standings] == [1, 2]
        assert rests == [REST * 2.5]
        assert computed == [100.0, 100.0 + 2.5 + REST * 2.5]
        feed.refresh()  # a game after the computations: computed at once, no rest
        await feed.close()
        assert hub.standings[-1]["computation"] == 3 and rests == [REST * 2.5]

    asyncio.run(run())


def test_closing_during_a_rest_does_not_wait_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tournament is over: standings still owed after a rest are dropped at once."""
    release = threading.Event()
    resting = asyncio.Event()
    computed: list[int] = []

    def standings_of(path: Path) -> dict[str, Any]:
        if not computed:
            assert release.wait(10)
        computed.append(1)
        return {}

    async def sleep(seconds: float) -> None:
        resting.set()
        await asyncio.Event().wait()  # a rest that never ends by itself

    async def run() -> None:
        monkeypatch.setattr(feed_module, "standings_of", standings_of)
        feed = TournamentFeed(cast(LiveHub, _Hub()), Path("unused"), [], sleep=sleep)
        feed.refresh()
        await asyncio.sleep(0)  # the computation starts in its thread
        feed.refresh()  # a game ends meanwhile
        release.set()
        await resting.wait()
        await asyncio.wait_for(feed.close(), 5)
        assert computed == [1]

    asyncio.run(run())
