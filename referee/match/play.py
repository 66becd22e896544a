"""One match between two seated bots: games of hands, clocks, faults and the record.

:func:`play_match` drives the rules engine and talks to both bots through their
:class:`~referee.match.seat.SeatLink`. Whatever a bot does (stall, crash, lie, flood), the
match ends in a :class:`~referee.match.config.MatchResult`. A referee bug (any other
exception on the way) is no bot's fault: the match ends at once with reason ``error``, the
exception's text in the result and the record, and the bots are told ``aborted``. Fault
resolution (see docs/design/faults.md):

- startup, crash and stall faults forfeit the match (the bot cannot go on);
- other faults follow :class:`~referee.match.faults.FaultPolicy`: forfeit the game (default),
  forfeit the match, or play a safe default move and count a strike.

Two events end a match early, marked interrupted and without a fault: ``stop`` at the next
hand boundary, and ``abort`` (the referee is shutting down) at once, whether the match is
waiting for hellos or in the middle of a hand: the hand in progress is dropped (the record keeps
the hands that ended), and each bot gets an ``error`` with code ``shutdown``, then
``match_end`` with reason ``aborted``, then ``bye``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine

from protocol.errors import ErrorCode
from protocol.schema import Bye, MatchEnd
from protocol.schema import Fault as WireFault
from referee.match.config import MatchConfig
from referee.match.faults import Fault
from referee.match.games import (
    Aborted,
    BothFailed,
    DeckSource,
    MatchForfeited,
    MatchGames,
    safe_default,
)
from referee.match.outbox import error_bytes
from referee.match.record import MatchRecorder
from referee.match.result import MatchResult
from referee.match.seat import SeatLink

__all__ = ["SHUTDOWN_MESSAGE", "DeckSource", "MatchForfeited", "play_match", "safe_default"]

SHUTDOWN_MESSAGE = "the referee is shutting down; the match is aborted"

LOGGER = logging.getLogger(__name__)


async def play_match(
    config: MatchConfig,
    links: tuple[SeatLink, SeatLink],
    *,
    recorder: MatchRecorder | None = None,
    deck_source: DeckSource | None = None,
    stop: asyncio.Event | None = None,
    abort: asyncio.Event | None = None,
) -> MatchResult:
    """Play a whole match between two issued seats and return its result (``stop`` and
    ``abort``: see the module docstring).

    The caller starts the bot processes (or remote bots connect with their tokens), watches
    them (:func:`referee.match.runner.play_watched`) and tears them down afterwards; this
    function never raises for anything a bot does.
    """
    label = config.deal_label
    source = deck_source or (lambda g, h: config.deal.deck(label, g, h))
    match = MatchGames(config, links, recorder, source, stop)
    winner: int | None = None
    reason = "aborted"
    forfeit: Fault | None = None
    interrupted = shutdown = False
    error: str | None = None
    revealed = config.deal.key_hex if config.reveal_key else None
    if recorder is not None:
        recorder.header(
            match_id=config.match_id,
            rules=config.rules.to_dict(),
            rules_hash=config.rules.rules_hash,
            seed=config.seed,
            deal_commitment=config.deal.commitment,
            deal_id=label,
            deal_secret=config.deal.secret,
            seats=[link.given_name for link in links],
            time_control=config.time.to_wire(),
            heartbeat_ms=round(config.time.heartbeat * 1000),
            policy=str(config.policy),
            games=config.games,
            target_points=config.target_points,
            max_hands_per_game=config.max_hands_per_game,
            bot_seeds=[link.seed for link in links],
        )
    try:
        try:
            winner, reason = await _until_stopped(_connect_and_run(match, recorder), abort)
        except MatchForfeited as err:
            forfeit = err.fault
            winner, reason = 1 - forfeit.seat, "forfeit"
        except BothFailed:
            winner, reason = None, "no_start"
        except Aborted:
            interrupted = True
            shutdown = abort is not None and abort.is_set()
        except asyncio.CancelledError:
            _close_aborted(match, links, recorder, revealed)
            raise
        except Exception as err:  # a referee bug: this match fails, nobody's fault
            LOGGER.error("match %s failed: referee error", config.match_id, exc_info=err)
            error = f"referee error: {type(err).__name__}: {err}"
            winner, reason = None, "error"
    finally:
        for link in links:
            link.close()
    for link in links:
        summary = match.seats[link.seat]
        summary.stale_replies = link.stale_replies
        mine = link.seat
        result_text = "draw" if winner is None else "win" if winner == mine else "loss"
        own = forfeit if forfeit is not None and forfeit.seat == mine else None
        for fault in match.startup_faults:
            if fault.seat == mine:
                own = fault
        if interrupted or error is not None:
            why = "aborted"
        elif own is not None:
            why = "your_fault"
        elif forfeit is not None:
            why = "opponent_forfeit"
        else:
            why = "normal"
        wire_fault = None if own is None else WireFault(str(own.kind), own.detail[:400])
        a, b = match.seats
        if shutdown:
            link.send(error_bytes(ErrorCode.SHUTDOWN, SHUTDOWN_MESSAGE))
        link.send(
            MatchEnd(
                result_text,
                (a.games_won, b.games_won),
                (a.points, b.points),
                why,
                wire_fault,
                revealed,
            )
        )
        if shutdown:
            link.send(Bye("shutting down"))
    result = MatchResult(
        match_id=config.match_id,
        winner=winner,
        reason=reason,
        games_played=match.games_played,
        seats=match.seats,
        interrupted=interrupted,
        record_path=None if recorder is None else str(recorder.path),
        deal_commitment=config.deal.commitment,
        deal_key=revealed,
        deal_secret=config.deal.secret,
        error=error,
    )
    if recorder is not None:
        recorder.write(
            {
                "type": "match_end",
                "winner": winner,
                "reason": reason,
                "interrupted": interrupted,
                "games_played": match.games_played,
                "games_won": [s.games_won for s in match.seats],
                "points": [s.points for s in match.seats],
                "deal_key": revealed,
                **({} if error is None else {"error": error}),
            }
        )
    match.log.info("match over", winner=winner, reason=reason)
    return result


async def _connect_and_run(
    match: MatchGames, recorder: MatchRecorder | None
) -> tuple[int | None, str]:
    await match.connect()
    if recorder is not None:
        recorder.write({"type": "seats", "names": [s.name for s in match.seats]})
    for link in match.links:
        link.start_heartbeat()
    return await match.run()


async def _until_stopped(
    play: Coroutine[None, None, tuple[int | None, str]], abort: asyncio.Event | None
) -> tuple[int | None, str]:
    """Run ``play``; if ``abort`` is set first, cancel it and raise :class:`Aborted`."""
    task = asyncio.ensure_future(play)
    if abort is None:
        return await task
    stopper = asyncio.ensure_future(abort.wait())
    try:
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
        if not task.done():
            task.cancel()
        await asyncio.gather(task, stopper, return_exceptions=True)
    if task.cancelled():
        raise Aborted()
    return task.result()


def _close_aborted(
    match: MatchGames,
    links: tuple[SeatLink, SeatLink],
    recorder: MatchRecorder | None,
    revealed: str | None,
) -> None:
    """Best effort on cancellation: tell the bots and close the record as aborted."""
    a, b = match.seats
    for link in links:
        if not link.finished:
            link.send(error_bytes(ErrorCode.SHUTDOWN, SHUTDOWN_MESSAGE))
            link.send(
                MatchEnd(
                    "draw",
                    (a.games_won, b.games_won),
                    (a.points, b.points),
                    "aborted",
                    None,
                    revealed,
                )
            )
            link.send(Bye("shutting down"))
    if recorder is not None:
        recorder.write(
            {
                "type": "match_end",
                "winner": None,
                "reason": "aborted",
                "interrupted": True,
                "games_played": match.games_played,
                "games_won": [a.games_won, b.games_won],
                "points": [a.points, b.points],
                "deal_key": revealed,
            }
        )
