"""One person's match: the page's server, the person's seat and :func:`run_match`, together.

The person's seat is a remote seat (``BotSpec`` without a command) with its own clocks
(``PlayOptions.clock``: by default no per-move limit worth the name and a bank of minutes) and a
start-up limit long enough to open the page; its bot is :class:`~referee.play.bridge.PersonSeat`,
on the referee's loopback TCP endpoint. The bot under test is started and sandboxed as in
``match`` and keeps the match's clocks.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from referee.match import BotSpec, MatchConfig, MatchResult, TimeControl, run_match
from referee.play.bridge import PersonSeat
from referee.play.server import play_app

__all__ = ["HUMAN_CLOCK", "PERSON_STARTUP", "PlayOptions", "play_session"]

HUMAN_CLOCK = TimeControl(move=60.0, bank=600.0, grace=0.5, startup=3600.0, heartbeat=1.0)
"""The person's default clock: a minute per move free, then a 10-minute bank per game."""
PERSON_STARTUP = 3600.0
"""Seconds the match waits for the person to open the page."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayOptions:
    """What ``gin-referee play`` was asked for."""

    config: MatchConfig
    bot: BotSpec
    clock: TimeControl = HUMAN_CLOCK
    host: str = "127.0.0.1"
    port: int = 0
    person_seat: int = 0
    grace: float = 30.0
    """Seconds a closed page has to come back before the seat is left (a lost bot)."""
    linger: float = 600.0
    """Seconds the page (and the replay) stays served after the match."""
    out_dir: Path | None = None
    name: str = field(default="you")


async def play_session(
    options: PlayOptions,
    on_url: Callable[[str], None],
    *,
    stop: asyncio.Event | None = None,
    on_end: Callable[[MatchResult, str], None] | None = None,
    on_remote: Callable[[str, str, str], None] | None = None,
) -> MatchResult:
    """Serve the page (``on_url`` gets its address), play the match (``on_end`` gets its result
    and the replay's address), then keep the page up for ``options.linger`` seconds or until
    ``stop``. A remote bot (``remote:NAME``) is told where to connect through ``on_remote``
    (its name, the loopback endpoint and its seat's token)."""
    page_token = secrets.token_urlsafe(18)
    seat = PersonSeat(grace=options.grace)
    record = None
    if options.out_dir is not None:
        record = options.out_dir / f"{options.config.match_id}.jsonl"
    runner = web.AppRunner(play_app(seat, page_token, record), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, options.host, options.port)
    await site.start()
    bridge: asyncio.Task[None] | None = None
    try:
        port = runner.addresses[0][1]
        shown = "127.0.0.1" if options.host in ("0.0.0.0", "") else options.host
        base = f"http://{shown}:{port}/"
        on_url(f"{base}?t={page_token}")
        person = BotSpec(
            name=options.name, command=None, startup=PERSON_STARTUP, time=options.clock
        )
        specs = (person, options.bot) if options.person_seat == 0 else (options.bot, person)

        def on_token(name: str, endpoint: str, token: str) -> None:
            nonlocal bridge
            if name != options.name:  # the bot's own remote seat
                if on_remote is not None:
                    on_remote(name, endpoint, token)
                return
            bridge = asyncio.ensure_future(seat.run(endpoint, token))

        result = await run_match(
            options.config,
            specs,
            bind="tcp://127.0.0.1:0",
            out_dir=options.out_dir,
            stop=stop,
            on_token=on_token,
        )
        seat.ended.set()
        if on_end is not None:
            on_end(result, f"{base}replay?t={page_token}")
        await _linger(options.linger, stop)
        return result
    finally:
        if bridge is not None:
            bridge.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await bridge
        await runner.cleanup()


async def _linger(seconds: float, stop: asyncio.Event | None) -> None:
    if stop is None:
        await asyncio.sleep(seconds)
        return
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
