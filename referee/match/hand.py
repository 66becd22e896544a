"""The decisions of one hand: requests, replies in callbacks, events, the fault policy.

:class:`HandPlay` is created by :class:`~referee.match.games.MatchGames` for every hand. Its
decision loop asks the seat to act with :meth:`SeatLink.ask`; each reply is applied and the
next request sent by :meth:`HandPlay._on_reply`, synchronously in the hub's receive loop, so a
run of plain decisions wakes no asyncio task. The loop's coroutine wakes when the hand is over
or a fault needs the policy (docs/design/faults.md): a forfeited game surfaces as
:class:`~referee.match.faults.BotFault`, a forfeited match as :class:`MatchForfeited`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from protocol.codec import encode
from protocol.errors import ErrorCode
from protocol.schema import Event, WireAction
from referee.match.config import MatchConfig
from referee.match.defence import defend_action, defend_request
from referee.match.faults import (
    TERMINAL_FAULTS,
    BotFault,
    Fault,
    FaultKind,
    FaultPolicy,
    precedence,
)
from referee.match.request import request_bytes
from referee.match.result import SeatSummary
from referee.match.seat import SeatLink
from referee.match.wire import event_action, to_action
from referee.rules import (
    DECK,
    DRAW_STOCK,
    PASS_UPCARD,
    Action,
    Card,
    HandState,
    Knock,
    Phase,
    RulesError,
    TakeDiscard,
    apply,
    discard_action,
    legal_actions,
)

__all__ = ["HandPlay", "MatchForfeited", "safe_default"]


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


class HandPlay:
    """One hand's decisions, from its first request to its end (or a forfeit)."""

    def __init__(
        self,
        config: MatchConfig,
        links: tuple[SeatLink, SeatLink],
        seats: tuple[SeatSummary, SeatSummary],
        charge: Callable[[Fault], None],
        log: Any,
        state: HandState,
        on_action: Callable[[int, str, float, HandState], None] | None = None,
    ) -> None:
        self.config = config
        self.on_action = on_action
        """Told (seat, action text, milliseconds, state after) of every decision played."""
        self.links = links
        self.seats = seats
        self._charge = charge
        self.log = log
        self.last_state = state
        """The state before the latest decision (a forfeited hand is scored from it)."""
        self.actions: list[tuple[int, str, float]] = []
        """(seat, action, milliseconds) of every decision played, for the record."""
        self.excused: list[tuple[int, float]] = []
        """(index in :attr:`actions`, milliseconds) of every decision whose wall time was
        longer than its time charged (the bot waited for a CPU: :mod:`.fairclock`)."""
        self._done: asyncio.Future[HandState] | None = None
        self._request_id = 0
        # Bound once, not at every request: the seat calls them back on every decision.
        self._reply_cb = self._on_reply
        self._fault_cb = self._on_fault
        self._release: tuple[Callable[[], None] | None, ...] = tuple(
            None if link.inline_events else link.release_events for link in links
        )
        """Per seat, what sends its held events once a request to its opponent is out (None
        when it takes them inside its own requests: nothing to do)."""
        is_enabled_for = getattr(log, "is_enabled_for", None)
        self._log_decisions = is_enabled_for is None or bool(is_enabled_for(logging.DEBUG))
        """Whether the per-decision DEBUG line is logged (its call skipped when not)."""

    def _pending_fault(self) -> Fault | None:
        for link in self.links:
            if link.error is not None:
                raise link.error  # a referee bug met on a seat: the match fails
        faults = [link.fault for link in self.links if link.fault is not None]
        if not faults:
            return None
        return min(faults, key=lambda f: (precedence(f.kind), f.at))

    async def run(self) -> HandState:
        """Ask for decisions until the hand ends; faults are resolved by policy.

        The event telling the opponent about a move is held in the opponent's outbox: it goes
        out before the next request when the opponent is the one to act (a connection's
        messages stay in order), else just after the request, so the bot to act starts
        thinking one send earlier. A seat that asked for ``inline_events`` gets its events
        inside its next request instead (any other message to it flushes them first).
        """
        try:
            return await self._decision_loop(self.last_state, self.actions)
        finally:
            for link in self.links:
                link.release_events()

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
        while not state.is_over:
            self.last_state = state
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
                state = self._resolve(err.fault, self.last_state, actions)
            finally:
                self._done = None
                for link in self.links:
                    link.cancel_ask()
        return await self._defend(state)

    async def _defend(self, state: HandState) -> HandState:
        """After a knock, ask a defender granted ``declare_melds`` for its melds (the
        referee's arrangement stands when it declares none); its fault is resolved by policy
        (under strikes the referee's arrangement stands)."""
        result = state.result
        if result is None or result.knocker is None:
            return state
        defender = 1 - result.knocker
        link = self.links[defender]
        if not link.asks_defence() or link.fault is not None or link.error is not None:
            return state
        loop = asyncio.get_running_loop()
        done: asyncio.Future[HandState] = loop.create_future()
        request_id = link.new_request_id()
        clock = link.clock

        def on_reply(wire: WireAction, elapsed: float) -> None:
            if done.done():
                return
            try:
                action = defend_action(wire)
                after = state if action is None else apply(state, action)
            except RulesError as err:
                link.reply_error(ErrorCode.ILLEGAL_ACTION, str(err), request_id)
                fault = link.record_fault(FaultKind.ILLEGAL, str(err), request_id=request_id)
                done.set_exception(BotFault(fault))
                return
            summary = self.seats[defender]
            summary.decisions += 1
            summary.time_used += elapsed
            if action is not None:
                self.actions.append((defender, str(action), elapsed * 1000))
            done.set_result(after)

        def on_fault(err: Exception) -> None:
            if not done.done():
                done.set_exception(err)

        link.release_events()  # the knock's event goes out first, as a message of its own
        request = defend_request(
            state, request_id, int(clock.time_left * 1000), int(clock.bank * 1000)
        )
        link.ask(request_id, request, on_reply, on_fault)
        try:
            return await done
        except BotFault as err:
            return self._resolve(err.fault, state, self.actions)
        finally:
            link.cancel_ask()

    def _ask(self, state: HandState) -> None:
        """Send the request for ``state`` to the seat to act (see :meth:`_decision_loop`)."""
        self.last_state = state
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
        link.ask(
            request_id, request, self._reply_cb, self._fault_cb, self._release[1 - state.to_act]
        )

    def _on_reply(self, wire: WireAction, elapsed: float) -> None:
        """A reply to the outstanding request: apply it, then ask for the next decision."""
        done = self._done
        if done is None or done.done():
            return
        try:
            state = self.last_state
            seat = state.to_act
            link = self.links[seat]
            try:
                action = to_action(wire)
                after = apply(state, action)
            except RulesError as err:
                request_id = self._request_id
                link.reply_error(ErrorCode.ILLEGAL_ACTION, str(err), request_id)
                fault = link.record_fault(FaultKind.ILLEGAL, str(err), request_id=request_id)
                done.set_exception(BotFault(fault))
                return
            summary = self.seats[seat]
            summary.decisions += 1
            summary.time_used += elapsed
            excused = link.last_excused
            if excused:
                summary.time_excused += excused
                self.excused.append((len(self.actions), excused * 1000))
            self._played(after, seat, action, self.actions, elapsed)
            links = self.links
            if not after.is_over and links[0].fault is None and links[1].fault is None:
                self._ask(after)
                return
            done.set_result(after)
        except Exception as err:  # a referee bug: the match fails as an infrastructure error
            if not done.done():
                done.set_exception(err)

    def _on_fault(self, err: Exception) -> None:
        """The asked seat faulted before replying (a :class:`BotFault`), or a referee error
        surfaced on it: hand it to the loop."""
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
        played = _PLAYED.get(id(action))
        if played is None:
            played = _played_info(action)
        text = played[1]
        ms = elapsed * 1000
        actions.append((seat, text, ms))
        if self._log_decisions:
            self.log.debug("decision", seat=seat, action=text, seconds=elapsed)
        if self.on_action is not None:
            self.on_action(seat, text, ms, state)
        event = played[3] if seat else played[2]
        if event is None:  # a taken discard names its card; a knock's melds are not cached
            card = None
            if isinstance(action, TakeDiscard):
                card = DECK[state.taken] if state.taken >= 0 else None
            event = _event_bytes(seat, action, card)
        self.links[1 - seat].hold_event(event)

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
        if state.to_act != fault.seat or state.is_over:
            return state  # an idle seat's, or a defender's: nothing to play for it now
        action = safe_default(state)
        after = apply(state, action)
        self._played(after, fault.seat, action, actions, 0.0)
        return after


_EVENT_BYTES: dict[tuple[int, Action, Card | None], bytes] = {}
_PLAYED: dict[int, tuple[Action, str, bytes | None, bytes | None]] = {}
"""Per action, by identity: the action itself (kept, so that its id is not reused while
cached), its text in the record, and the encoded events telling seat 0's and seat 1's
opponent about it (None: built per move). Only meld-free actions, at most 512 of them: the
rules intern those, so in play they are the same ~108 objects."""


def _played_info(action: Action) -> tuple[Action, str, bytes | None, bytes | None]:
    """What :data:`_PLAYED` holds for ``action`` (added there when it may be cached)."""
    if isinstance(action, Knock) and action.melds is not None:
        return action, str(action), None, None
    if isinstance(action, TakeDiscard):
        info: tuple[Action, str, bytes | None, bytes | None] = (action, str(action), None, None)
    else:
        info = (action, str(action), _event_bytes(0, action, None), _event_bytes(1, action, None))
    if len(_PLAYED) < 512:
        _PLAYED[id(action)] = info
    return info


def _event_bytes(seat: int, action: Action, card: Card | None) -> bytes:
    """Encoded ``event`` for a move; the finite set of meld-free events is cached."""
    key = (seat, action, card)
    data = _EVENT_BYTES.get(key)
    if data is None:
        data = encode(Event(seat, event_action(action, card)))
        if not (isinstance(action, Knock) and action.melds is not None):
            _EVENT_BYTES[key] = data
    return data
