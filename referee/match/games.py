"""The game and hand loops of one match: start-up, deals, per-game results.

:class:`MatchGames` is driven by :func:`referee.match.play.play_match`; each hand's decisions are
played by :class:`~referee.match.hand.HandPlay`. Whatever a bot does becomes
:class:`~referee.match.faults.Fault` data resolved by policy (see docs/design/faults.md): a
forfeited game is scored here; a forfeited match surfaces as :class:`MatchForfeited`, which
``play_match`` turns into a result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import structlog

from protocol.schema import GameEnd, HandStart, MatchStart
from protocol.schema import TimeControl as WireTimeControl
from referee.match.config import MatchConfig
from referee.match.fairclock import wait_for_hellos
from referee.match.faults import BotFault, Fault, FaultKind
from referee.match.hand import HandPlay, MatchForfeited, safe_default
from referee.match.record import MatchRecorder, Observer
from referee.match.result import SeatSummary
from referee.match.seat import SeatLink
from referee.match.wire import hand_end_message
from referee.rules import (
    Card,
    GameState,
    HandResult,
    HandState,
    Termination,
    deal,
    final_score,
    new_game,
    record_hand,
)

__all__ = [
    "Aborted",
    "BothFailed",
    "DeckSource",
    "MatchForfeited",
    "MatchGames",
    "safe_default",
]

DeckSource = Callable[[int, int], tuple[Card, ...]]
"""Deck order for (game, hand)."""


class MatchGames:
    """The running state of one match's games."""

    def __init__(
        self,
        config: MatchConfig,
        links: tuple[SeatLink, SeatLink],
        recorder: MatchRecorder | None,
        deck_source: DeckSource,
        stop: asyncio.Event | None,
    ) -> None:
        self.config = config
        self.stop = stop
        self.links = links
        self.recorder = recorder
        self.deck_source = deck_source
        self.seats = (SeatSummary(links[0].name), SeatSummary(links[1].name))
        self.games_played = 0
        self.startup_faults: list[Fault] = []
        self.base_log = structlog.get_logger("referee.match.play").bind(match=config.match_id)
        self.log = self.base_log

    # ------------------------------------------------------------ faults

    def _charge(self, fault: Fault) -> None:
        self.seats[fault.seat].faults.append(fault)
        if self.recorder is not None:
            self.recorder.fault(fault)
        self.log.warning("fault", seat=fault.seat, kind=str(fault.kind), detail=fault.detail[:300])

    # ------------------------------------------------------------ startup

    async def connect(self) -> None:
        """Wait for both hellos within the start-up limit (extended by the referee's own
        stalls meanwhile, :mod:`referee.net.stalls`); failures forfeit the match."""
        waits = [asyncio.ensure_future(link.wait_connected()) for link in self.links]
        limits = [link.startup or self.config.time.startup for link in self.links]
        try:  # the limit counts the time each bot could run (:mod:`.fairclock`)
            done, charges = await wait_for_hellos(waits, [x.fair for x in self.links], limits)
        finally:  # also when the match is aborted while it waits: no task left behind
            for task in waits:
                task.cancel()  # (a finished one keeps its outcome, read below)
            await asyncio.gather(*waits, return_exceptions=True)
        for link in self.links:
            if link.error is not None:
                raise link.error
        failed = []
        for link, task, charge, limit in zip(self.links, waits, charges, limits, strict=True):
            if task in done and task.exception() is None:
                continue
            if link.fault is None:
                why = "" if charge is None else f" ({charge.describe()})"
                detail = f"no hello within {limit:.1f} s{why}{link.no_hello_hint()}"
                link.record_fault(FaultKind.STARTUP, detail)
            assert link.fault is not None
            fault = replace(link.fault, kind=FaultKind.STARTUP)
            self._charge(fault)
            failed.append(fault)
        self.startup_faults = failed
        names = [link.name for link in self.links]
        if names[0] == names[1]:
            names = [f"{names[0]}-A", f"{names[1]}-B"]
        for summary, name in zip(self.seats, names, strict=True):
            summary.name = name
        if len(failed) == 2:
            raise BothFailed()
        if failed:
            raise MatchForfeited(failed[0])

    # ------------------------------------------------------------ the match

    async def run(self) -> tuple[int | None, str]:
        """Play every game; return (winner, reason)."""
        config = self.config
        for link in self.links:
            other = self.links[1 - link.seat]
            link.send(
                MatchStart(
                    match_id=config.match_id,
                    seat=link.seat,
                    opponent=self.seats[other.seat].name,
                    games=config.games if config.target_points is None else 0,
                    rules=config.rules.to_dict(),
                    rules_hash=config.rules.rules_hash,
                    time_control=WireTimeControl(**config.time.to_wire()),
                    seed=link.seed,
                    deal_commitment=config.deal.commitment,
                    deal_id=config.deal_label,
                )
            )
        for game_no in range(config.games):
            await self.play_game(game_no)
            if (
                config.target_points is not None
                and max(s.points for s in self.seats) >= config.target_points
            ):
                break
        return self._decide(), "normal"

    def _decide(self) -> int | None:
        a, b = self.seats
        if (a.games_won, a.points) == (b.games_won, b.points):
            return None
        return 0 if (a.games_won, a.points) > (b.games_won, b.points) else 1

    async def play_game(self, game_no: int) -> None:
        """Play one game to its end (or its forfeit)."""
        game = new_game(self.config.rules, first_dealer=game_no % 2)
        hand_no = 0
        how = "target"
        while not game.is_over:
            if self.stop is not None and self.stop.is_set():
                raise Aborted()
            if hand_no >= self.config.max_hands_per_game:
                how = "hand_cap"
                break
            try:
                forfeiter, game = await self.play_hand(game, game_no, hand_no)
            except MatchForfeited as err:
                self._finish_game(replace(game, winner=1 - err.fault.seat), game_no, "forfeit")
                raise
            hand_no += 1
            if forfeiter is not None:
                game = replace(game, winner=1 - forfeiter)
                how = "forfeit"
        self._finish_game(game, game_no, how)

    def _finish_game(self, game: GameState, game_no: int, how: str) -> None:
        self.games_played += 1
        if game.winner is None:
            totals, winner = game.scores, None
        else:
            final = final_score(game)
            totals, winner = final.totals, final.winner
            self.seats[winner].games_won += 1
        for seat in (0, 1):
            self.seats[seat].points += totals[seat]
        if self.recorder is not None:
            self.recorder.write(
                {
                    "type": "game",
                    "game": game_no,
                    "winner": winner,
                    "how": how,
                    "forfeit": how == "forfeit",
                    "scores": list(game.scores),
                    "hands_won": list(game.hands_won),
                    "totals": list(totals),
                }
            )
        for link in self.links:
            link.send(GameEnd(game_no, winner, totals, game.hands_won))
        self.log.info("game over", game=game_no, winner=winner, totals=totals, how=how)

    async def play_hand(
        self, game: GameState, game_no: int, hand_no: int
    ) -> tuple[int | None, GameState]:
        """Deal and play one hand; return (forfeiting seat or None, updated game)."""
        deck = self.deck_source(game_no, hand_no)
        self.log = self.base_log.bind(game=game_no, hand=hand_no)
        state = deal(self.config.rules, deck, dealer=game.dealer, scores=game.scores)
        observer = None if self.recorder is None else self.recorder.observer
        on_action = None if observer is None else _action_events(observer, game_no, hand_no)
        hand = HandPlay(
            self.config, self.links, self.seats, self._charge, self.log, state, on_action
        )
        if observer is not None:
            observer(
                {
                    "type": "deal",
                    "game": game_no,
                    "hand": hand_no,
                    "dealer": state.dealer,
                    "upcard": str(state.upcard),
                    "scores": list(game.scores),
                    "knock_limit": state.knock_limit,
                    "multiplier": state.multiplier,
                    **_public(state),
                }
            )
        for link in self.links:
            link.enter(game_no, hand_no)
            link.send(
                HandStart(
                    game=game_no,
                    hand=hand_no,
                    dealer=state.dealer,
                    hand_cards=tuple(str(c) for c in state.hand(link.seat)),
                    upcard=str(state.upcard),
                    scores=game.scores,
                )
            )
        forfeiter: int | None = None
        lost_match: MatchForfeited | None = None
        try:
            state = await hand.run()
            result = state.result
            assert result is not None
        except (BotFault, MatchForfeited) as err:
            if isinstance(err, MatchForfeited):
                lost_match = err
            forfeiter = err.fault.seat
            state = hand.last_state
            result = HandResult(
                Termination.FORFEIT,
                winner=1 - forfeiter,
                points=0,
                hands=(state.hand(0), state.hand(1)),
            )
        if self.recorder is not None:
            self.recorder.hand(
                game=game_no,
                hand=hand_no,
                dealer=state.dealer,
                deck=deck,
                scores=game.scores,
                actions=hand.actions,
                result=result,
                excused=hand.excused,
            )
        if forfeiter is None:
            game = record_hand(game, result)
            if result.winner is not None:
                self.seats[result.winner].hands_won += 1
        scores = game.scores
        message = hand_end_message(game=game_no, hand=hand_no, result=result, scores=scores)
        for link in self.links:
            link.send(message)
        if lost_match is not None:
            raise lost_match
        return forfeiter, game


def _public(state: HandState) -> dict[str, Any]:
    """What both seats see of where a hand is: whose turn, the phase, the stock's size."""
    return {
        "to_act": None if state.is_over else state.to_act,
        "phase": str(state.phase),
        "stock": state.stock_size,
    }


def _action_events(
    observer: Observer, game: int, hand: int
) -> Callable[[int, str, float, HandState], None]:
    """The observer's ``action`` event for every decision of one hand."""

    def played(seat: int, text: str, ms: float, after: HandState) -> None:
        observer(
            {
                "type": "action",
                "game": game,
                "hand": hand,
                "seat": seat,
                "action": text,
                "ms": round(ms, 3),
                **_public(after),
            }
        )

    return played


class BothFailed(Exception):
    """Internal: neither bot started."""


class Aborted(Exception):
    """Internal: the stop event was set; the match ends at a hand boundary."""
