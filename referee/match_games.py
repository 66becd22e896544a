"""The game and hand loops of one match: decisions, events, fault policy, per-game results.

:class:`MatchGames` is driven by :func:`referee.match.play_match`. Whatever a bot does
becomes :class:`~referee.match_faults.Fault` data resolved by policy (see
docs/design/faults.md): a forfeited game is scored here; a forfeited match surfaces as
:class:`MatchForfeited`, which ``play_match`` turns into a result.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import replace

import structlog

from protocol.codec import encode
from protocol.errors import ErrorCode
from protocol.schema import (
    Error,
    Event,
    GameEnd,
    HandStart,
    MatchStart,
    WireAction,
)
from protocol.schema import TimeControl as WireTimeControl
from referee.match_config import MatchConfig, SeatSummary
from referee.match_faults import (
    TERMINAL_FAULTS,
    BotFault,
    Fault,
    FaultKind,
    FaultPolicy,
    precedence,
)
from referee.match_record import MatchRecorder
from referee.match_request import request_bytes
from referee.match_seat import SeatLink
from referee.match_wire import (
    event_action,
    hand_end_message,
    to_action,
)
from referee.rules import (
    DECK,
    DRAW_STOCK,
    PASS_UPCARD,
    Action,
    Card,
    GameState,
    HandResult,
    HandState,
    Knock,
    Phase,
    RulesError,
    TakeDiscard,
    Termination,
    apply,
    deal,
    discard_action,
    final_score,
    legal_actions,
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


class MatchForfeited(Exception):
    """Internal: a seat lost the match by fault."""

    def __init__(self, fault: Fault) -> None:
        self.fault = fault
        super().__init__(str(fault))


def safe_default(state: HandState) -> Action:
    """The move played for a faulting bot under the strike policy: pass the upcard, draw
    from the stock, discard the highest-value card it may discard; never knock."""
    if state.phase is Phase.FIRST_UPCARD:
        return PASS_UPCARD if state.passes < 2 else DRAW_STOCK
    if state.phase is Phase.DRAW:
        return DRAW_STOCK
    hand = [c for c in state.hand(state.to_act) if c.index != state.taken]
    return discard_action(max(hand, key=lambda c: (c.value, c.index)))


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
        self._last_state: HandState | None = None
        self._event: tuple[SeatLink, bytes] | None = None
        self._done: asyncio.Future[HandState] | None = None
        self._actions: list[tuple[int, str, float]] = []
        self._request_id = 0
        self.base_log = structlog.get_logger("referee.match").bind(match=config.match_id)
        self.log = self.base_log

    # ------------------------------------------------------------ faults

    def _charge(self, fault: Fault) -> None:
        self.seats[fault.seat].faults.append(fault)
        if self.recorder is not None:
            self.recorder.fault(fault)
        self.log.warning("fault", seat=fault.seat, kind=str(fault.kind), detail=fault.detail[:300])

    def _pending_fault(self) -> Fault | None:
        faults = [link.fault for link in self.links if link.fault is not None]
        if not faults:
            return None
        return min(faults, key=lambda f: (precedence(f.kind), f.at))

    # ------------------------------------------------------------ startup

    async def connect(self) -> None:
        """Wait for both hellos within the start-up limit; failures forfeit the match."""
        waits = [asyncio.ensure_future(link.wait_connected()) for link in self.links]
        done, pending = await asyncio.wait(waits, timeout=self.config.time.startup)
        for task in pending:
            task.cancel()
        for task in pending:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        failed = []
        for link, task in zip(self.links, waits, strict=True):
            if task in done and task.exception() is None:
                continue
            if link.fault is None:
                detail = f"no hello within {self.config.time.startup:.1f} s"
                if link.process is not None and link.process.returncode is not None:
                    detail = f"{link.process.exit_hint()} before saying hello"
                link.record_fault(FaultKind.STARTUP, detail)
            assert link.fault is not None
            fault = replace(link.fault, kind=FaultKind.STARTUP)
            self._charge(fault)
            failed.append(fault)
        self.startup_faults = failed
        names = [link.name for link in self.links]
        if names[0] == names[1]:
            names = [f"{names[0]}-A", f"{names[1]}-B"]
        for link, name in zip(self.links, names, strict=True):
            link.name = self.seats[link.seat].name = name
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
                    opponent=other.name,
                    games=config.games if config.target_points is None else 0,
                    rules=config.rules.to_dict(),
                    rules_hash=config.rules.rules_hash,
                    time_control=WireTimeControl(**config.time.to_wire()),
                    seed=link.seed,
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
        for link in self.links:
            link.clock.new_game()
            link.game = game_no
            link.unsolicited = 0
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
        self._last_state = state
        for link in self.links:
            link.hand = hand_no
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
        actions: list[tuple[int, str, float]] = []
        forfeiter: int | None = None
        lost_match: MatchForfeited | None = None
        try:
            state = await self._decisions(state, actions)
            result = state.result
            assert result is not None
        except (BotFault, MatchForfeited) as err:
            if isinstance(err, MatchForfeited):
                lost_match = err
            forfeiter = err.fault.seat
            assert self._last_state is not None
            state = self._last_state
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
                actions=actions,
                result=result,
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

    async def _decisions(
        self, state: HandState, actions: list[tuple[int, str, float]]
    ) -> HandState:
        """Ask for decisions until the hand ends; faults are resolved by policy.

        The event telling the opponent about a move is sent before the next request when the
        opponent is the one to act (a connection's messages stay in order), else just after
        the request, so the bot to act starts thinking one send earlier. A seat that asked for
        ``inline_events`` gets its events inside its next request instead (any other message
        to it flushes them first, see :meth:`SeatLink.hold_event`).
        """
        try:
            return await self._decision_loop(state, actions)
        finally:
            self._flush_event()

    def _flush_event(self) -> None:
        if self._event is not None:
            link, event = self._event
            self._event = None
            link.send(event)

    async def _decision_loop(
        self, state: HandState, actions: list[tuple[int, str, float]]
    ) -> HandState:
        """Run the hand: faults are resolved here; runs of plain decisions in callbacks.

        Each pass asks for a decision with :meth:`SeatLink.ask`; from then on every reply is
        applied and the next request sent by :meth:`_on_reply`, synchronously in the hub's
        receive loop (no task wake per decision). ``done`` resolves when the hand is over or a
        fault needs the policy (it then holds the :class:`BotFault`).
        """
        loop = asyncio.get_running_loop()
        self._actions = actions
        while not state.is_over:
            self._last_state = state
            if self._event is not None and self._event[0].seat == state.to_act:
                self._flush_event()
            pending = self._pending_fault()
            if pending is not None:
                state = self._resolve(pending, state, actions)
                continue
            done: asyncio.Future[HandState] = loop.create_future()
            self._done = done
            try:
                self._ask(state)
                state = await done
            except BotFault as err:
                state = self._resolve(err.fault, self._last_state, actions)
            finally:
                self._done = None
                for link in self.links:
                    link.cancel_ask()
        return state

    def _ask(self, state: HandState) -> None:
        """Send the request for ``state`` to the seat to act (see :meth:`_decision_loop`)."""
        self._last_state = state
        link = self.links[state.to_act]
        request_id = self._request_id = link.new_request_id()
        clock = link.clock
        request = request_bytes(
            state,
            legal_actions(state),
            request_id,
            int(clock.time_left * 1000),
            int(clock.bank * 1000),
            link.take_held() if link.inline_events else (),
        )
        link.ask(request_id, request, self._on_reply, self._on_fault, self._flush_event)

    def _on_reply(self, wire: WireAction, elapsed: float) -> None:
        """A reply to the outstanding request: apply it, then ask for the next decision."""
        done = self._done
        if done is None or done.done():
            return
        try:
            state = self._last_state
            assert state is not None
            seat = state.to_act
            link = self.links[seat]
            try:
                action = to_action(wire)
                after = apply(state, action)
            except RulesError as err:
                request_id = self._request_id
                link.send(Error(ErrorCode.ILLEGAL_ACTION, str(err)[:400], request_id))
                fault = link.record_fault(FaultKind.ILLEGAL, str(err), request_id=request_id)
                done.set_exception(BotFault(fault))
                return
            summary = self.seats[seat]
            summary.decisions += 1
            summary.time_used += elapsed
            self._played(after, seat, action, self._actions, elapsed)
            if not after.is_over:
                if self._event is not None and self._event[0].seat == after.to_act:
                    self._flush_event()
                if self.links[0].fault is None and self.links[1].fault is None:
                    self._ask(after)
                    return
            done.set_result(after)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # a referee bug: fail the match's task, as before
            if not done.done():
                done.set_exception(err)

    def _on_fault(self, err: BotFault) -> None:
        """The asked seat faulted before replying: hand the fault to the loop."""
        done = self._done
        if done is not None and not done.done():
            done.set_exception(err)

    def _played(
        self,
        state: HandState,
        seat: int,
        action: Action,
        actions: list[tuple[int, str, float]],
        elapsed: float,
    ) -> None:
        text = str(action)
        actions.append((seat, text, elapsed * 1000))
        self.log.debug("decision", seat=seat, action=text, seconds=elapsed)
        card = None
        if isinstance(action, TakeDiscard):
            card = DECK[state.taken] if state.taken >= 0 else None
        opponent = self.links[1 - seat]
        event = _event_bytes(seat, action, card)
        if opponent.inline_events:
            opponent.hold_event(event)
        else:
            self._flush_event()
            self._event = (opponent, event)

    def _resolve(
        self, fault: Fault, state: HandState, actions: list[tuple[int, str, float]]
    ) -> HandState:
        """Apply the fault policy: raise to forfeit, or play a default move and go on."""
        self._charge(fault)
        link = self.links[fault.seat]
        if fault.kind in TERMINAL_FAULTS or self.config.policy is FaultPolicy.FORFEIT_MATCH:
            raise MatchForfeited(fault)
        if self.config.policy is FaultPolicy.FORFEIT_GAME:
            link.clear_fault()
            raise BotFault(fault)
        summary = self.seats[fault.seat]
        summary.strikes += 1
        if summary.strikes >= self.config.strikes:
            raise MatchForfeited(fault)
        link.clear_fault()
        if state.to_act != fault.seat:
            return state  # an idle seat's fault: nothing to play for it now
        action = safe_default(state)
        after = apply(state, action)
        self._played(after, fault.seat, action, actions, 0.0)
        return after


_EVENT_BYTES: dict[tuple[int, Action, Card | None], bytes] = {}


def _event_bytes(seat: int, action: Action, card: Card | None) -> bytes:
    """Encoded ``event`` for a move; the finite set of meld-free events is cached."""
    key = (seat, action, card)
    data = _EVENT_BYTES.get(key)
    if data is None:
        data = encode(Event(seat, event_action(action, card)))
        if not (isinstance(action, Knock) and action.melds is not None):
            _EVENT_BYTES[key] = data
    return data


class BothFailed(Exception):
    """Internal: neither bot started."""


class Aborted(Exception):
    """Internal: the stop event was set; the match ends at a hand boundary."""
