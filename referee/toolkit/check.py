"""``gin-referee check``: a conformance run of one bot against the scripted battery.

:func:`run_check` starts the bot the way a match does (sandbox, ``GIN_REFEREE_ENDPOINT``,
``GIN_REFEREE_TOKEN``, ``GIN_BOT_SEED``), seats it in seat 0 of a real match
(:func:`~referee.match.runner.play_watched`) on a :class:`~referee.toolkit.probe.ProbeLink`
against the scripted opponent and decks of :mod:`referee.toolkit.battery`; if its hello asked
for ``multi_match``, it plays a second match on the same connection, then says ``bye``. It then
watches the bot exit, and :mod:`referee.toolkit.checklist` turns what was seen into a checklist.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from protocol.schema import LINK_PATIENCE_MS
from referee.match.bots import (
    curve_env,
    curve_transport,
    local_bot_keys,
    start_bot,
)
from referee.match.clock import CHECK_TIME, TimeControl
from referee.match.config import MatchConfig
from referee.match.deals import Deal
from referee.match.faults import FaultPolicy
from referee.match.hub import Hub
from referee.match.result import RefereeError
from referee.match.runner import (
    play_watched,
)
from referee.net.keys import KeyPair, KeyRing
from referee.net.process import BotCommand, BotProcess
from referee.net.transport import RouterTransport, TransportConfig
from referee.toolkit.battery import (
    BATTERY_GAMES,
    CHECK_RULES,
    ERROR_GAME,
    battery_deck,
    puppet_delay,
    puppet_move,
)
from referee.toolkit.checklist import CheckReport, Observed, evaluate
from referee.toolkit.probe import ProbeLink, PuppetLink

__all__ = ["CHECK_TIME", "CheckOptions", "CheckReport", "run_check"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckOptions:
    """How to run the battery."""

    time: TimeControl = field(default_factory=lambda: CHECK_TIME)
    """Clocks (the bot's decision times are judged against ``time.move``)."""
    exit_grace: float = 1.0
    """Seconds the bot has to exit by itself after ``match_end`` (or the last ``bye``)."""
    bind: str = "tcp://127.0.0.1:0"
    """Endpoint the referee binds."""
    local_ipc: bool = True
    """Let the bot connect over a private ipc:// socket (else over ``bind``)."""
    kill_grace: float = 1.0
    """SIGTERM to SIGKILL, at the end."""
    max_hands: int = 4
    """Hands after which a battery game with no score ends."""


def _config(match_id: str, games: int, time: TimeControl, max_hands: int) -> MatchConfig:
    return MatchConfig(
        rules=CHECK_RULES,
        games=games,
        deal=Deal.from_seed(1),
        time=time,
        policy=FaultPolicy.FORFEIT_GAME,
        max_hands_per_game=max_hands,
        match_id=match_id,
    )


async def _play(
    config: MatchConfig, link: ProbeLink, process: BotProcess | None, obs: Observed
) -> None:
    puppet = PuppetLink(
        seat=1, control=config.time, name="check-puppet", policy=puppet_move, delay=puppet_delay
    )
    try:
        result = await play_watched(
            config, (link, puppet), (process, None), deck_source=battery_deck
        )
    finally:
        puppet.close()
    RefereeError.check(result)  # a referee bug: no item may blame the bot for it
    obs.results.append(result)


async def _exit_status(process: BotProcess | None, grace: float) -> tuple[int | None, float]:
    """The bot's exit status within ``grace`` seconds (None: still running), and the wait."""
    if process is None:
        return None, 0.0
    loop = asyncio.get_running_loop()
    start = loop.time()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(process.wait()), grace)
    return process.returncode, loop.time() - start


async def run_check(
    command: BotCommand, *, name: str = "bot", options: CheckOptions | None = None
) -> CheckReport:
    """Play the battery against the bot ``command`` starts; tear everything down."""
    opts = options or CheckOptions()
    time = opts.time
    server, ring = KeyPair.generate(), KeyRing()  # CURVE on TCP: only this bot's fresh key
    transport = RouterTransport(
        TransportConfig(
            endpoint=opts.bind,
            curve=curve_transport(server, ring),
            local_ipc=opts.local_ipc,
            heartbeat_ivl_ms=1000,
            heartbeat_timeout_ms=round(5000 * time.heartbeat),
            heartbeat_ttl_ms=LINK_PATIENCE_MS,
        )
    )
    obs = Observed(move_ms=round(time.move * 1000), exit_grace=opts.exit_grace)
    hub: Hub | None = None
    links: list[ProbeLink] = []
    process: BotProcess | None = None
    try:
        await transport.start()
        hub = Hub(transport, multi_match=True, keys=ring)
        first = _config("check-1", BATTERY_GAMES, time, opts.max_hands)
        seed = first.deal.bot_seed("check-1/0")
        pair = local_bot_keys(server, transport.local_endpoint)
        key = None if pair is None else pair.public
        link = hub.open_seat(0, time, name=name, seed=seed, link_type=ProbeLink, public_key=key)
        assert isinstance(link, ProbeLink)
        link.error_game = ERROR_GAME
        links.append(link)
        endpoint = transport.local_endpoint
        process = await start_bot(
            link, command, endpoint=endpoint, stderr_path=None, extra_env=curve_env(server, pair)
        )
        await _play(first, link, process, obs)
        obs.rejections = list(hub.rejections)
        token = link.token
        alive = process is not None and process.returncode is None
        clean = not obs.results[-1].seats[0].faults
        if link.multi_match and alive and clean and hub.retain(link):
            second = _config("check-2", 1, time, opts.max_hands)
            again = hub.open_seat(0, time, token, reusable=True, name=name, link_type=ProbeLink)
            assert isinstance(again, ProbeLink)
            again.seed = second.deal.bot_seed("check-2/0")
            links.append(again)
            await _play(second, again, process, obs)
            if hub.retain(again):
                hub.dismiss(token)
                obs.sent_bye = True
        obs.exit_code, obs.exit_wait = await _exit_status(process, opts.exit_grace)
    finally:
        for each in links:
            each.close()
        if process is not None:
            await process.terminate(grace=opts.kill_grace)
            obs.stderr_tail = process.stderr_tail(600).strip()
            obs.exit_hint = process.exit_hint()
        if hub is not None:
            for each in links:
                hub.close_seat(each)
        await transport.close()
    obs.links = links
    return evaluate(obs)
