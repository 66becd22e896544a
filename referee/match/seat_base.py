"""The state of one seat, and what every part of the match may do with it.

:class:`SeatBase` is the first half of :class:`~referee.match.seat.SeatLink`: the seat's
identity (token, name, the bound routing id and hello), its fault register (the first fault
sticks; a referee bug met on the seat is kept apart from bot faults, :meth:`SeatBase.fail`),
and its messages out (through one :class:`~referee.match.outbox.Outbox`, a connection lost on
the way being a stall fault). It also holds the state of the outstanding request, which
:class:`~referee.match.seat.SeatLink` drives: the request id, the asker's callbacks, the send
stamp and the deadline. Nothing here runs per reply except :meth:`SeatBase.send`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from protocol.codec import encode
from protocol.schema import Hello, Message, Ping, WireAction
from referee.match.clock import Alarm, Clock, TimeControl, Timer, stalls_of
from referee.match.faults import BotFault, Fault, FaultKind
from referee.match.heartbeat import Heartbeat
from referee.match.outbox import Outbox, error_bytes

__all__ = ["LOCAL_LOST_GRACE", "LOST_GRACE", "SeatBase"]

LOGGER = logging.getLogger("referee.match.seat")
LOST_GRACE = 0.25
"""Seconds between a lost connection and its stall fault (a crash seen meanwhile wins); a
seat whose bot process the referee started waits :data:`LOCAL_LOST_GRACE` instead."""
LOCAL_LOST_GRACE = 2.0
_PINGS_KEPT = 8
"""Unanswered pings remembered per seat: a pong to an older one counts as unsolicited."""


class SeatBase:
    """A seat's identity, fault register and messages out (see the module docstring)."""

    def __init__(
        self,
        *,
        seat: int,
        token: str,
        send_bytes: Callable[[bytes, bytes], bool],
        control: TimeControl,
        name: str | None = None,
        seed: str | None = None,
        timer: Timer | None = None,
        poll: Callable[[], None] | None = None,
    ) -> None:
        self.seat = seat
        self.token = token
        self.control = control
        self.clock = Clock(control)
        self.name = f"seat{seat}" if name is None else name
        """The configured name until the bot's hello names it."""
        self.startup: float | None = None
        """This seat's own start-up limit, seconds (a remote seat of ``match``, whose bot a
        person starts by hand); None: the match's (``TimeControl.startup``)."""
        self.given_name = self.name
        """The name the seat was opened with, the organiser's, kept whatever the hello says:
        the record's header and the pages name the seat by it (a kept bot's seat is bound to
        its earlier hello before the header is written)."""
        self.seed = seed
        """The seed offered in ``match_start`` (the bot's ``GIN_BOT_SEED`` when started)."""
        self.peer: bytes | None = None
        self.no_hello_hint: Callable[[], str] = str
        """What a start-up fault adds when the bot never said hello (the hub's: a connection
        that offered no CURVE); empty by default."""
        self.hello: Hello | None = None
        """The hello this seat was bound with."""
        self.inline_events = False
        self.declare_melds = False
        """Granted: after the opponent's knocks the seat declares its own melds."""
        """The bot asked for the opponent's moves inside its requests."""
        self.multi_match = False
        """The welcome granted ``multi_match``: the connection may be kept for another match."""
        self._outbox = outbox = Outbox(send_bytes)
        # The outbox's own methods, not wrappers: both run on every decision.
        self.hold_event: Callable[[bytes], None] = outbox.hold
        """Keep an encoded ``event`` for the bot's next request or message."""
        self.take_held: Callable[[], list[bytes]] = outbox.take_held
        """The held events, oldest first, now to be sent inside a request."""
        self._timer: Timer = asyncio.get_running_loop() if timer is None else timer
        self._stalls = stalls_of(self._timer)
        """The referee's own stalls, left out of every time charged here."""
        self._poll = poll
        self._heartbeat = Heartbeat(self, self._timer, control.heartbeat, self._stalls)
        self.connected: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        """Resolved by :meth:`bind`."""
        self._faulted: asyncio.Future[None] | None = None
        self._pending_id: int | None = None
        self._on_reply: Callable[[WireAction, float], None] | None = None
        self._on_fault: Callable[[Exception], None] | None = None
        self._sent = 0.0
        self._deadline = 0.0
        self._budget = 0.0
        self._watchdog: Alarm | None = None
        self._watch_at = 0.0
        """When :attr:`_watchdog` fires (its ``when()``, kept here: read at every request)."""
        self._next_id = 1
        self._fault: Fault | None = None
        self.error: Exception | None = None
        """A referee bug met while handling this seat (see :meth:`fail`); never a bot fault."""
        self.last_heard = self._timer.time()
        self.stale_replies = 0
        self.unsolicited = 0
        """Unsolicited messages this game (stale replies, pongs to no ping): past the
        control's ``flood_limit`` they are a protocol fault."""
        self._pings: list[int] = []
        """Nonces of the latest pings not yet answered (at most :data:`_PINGS_KEPT`)."""
        self.game = -1
        self.hand = -1
        self.finished = False
        self.lost_grace = LOST_GRACE
        """Seconds from a lost connection to its stall fault (see :meth:`on_connection_lost`)."""

    # ------------------------------------------------------------------ identity, position

    def bind(self, peer: bytes, hello: Hello, *, multi_match: bool, arrived: float) -> None:
        """Bind the bot that said ``hello`` from routing id ``peer`` (once; the hub's job)."""
        if self.peer is not None:
            raise RuntimeError(f"seat {self.seat} is bound already")
        self.peer = self._outbox.peer = peer
        self.hello = hello
        self.name = hello.name
        self.inline_events = hello.inline_events
        self.declare_melds = hello.declare_melds
        self.multi_match = multi_match
        self.last_heard = arrived
        if not self.connected.done():
            self.connected.set_result(None)

    def enter(self, game: int, hand: int) -> None:
        """The match moves on to ``hand`` of ``game``; a new game refills the clock's bank
        and forgets the unsolicited messages counted so far."""
        if game != self.game:
            self.clock.new_game()
            self.unsolicited = 0
        self.game, self.hand = game, hand

    # ------------------------------------------------------------------ faults

    @property
    def fault(self) -> Fault | None:
        """The first fault detected on this seat, if any."""
        return self._fault

    def record_fault(self, kind: FaultKind, detail: str, *, request_id: int | None = None) -> Fault:
        """Record a fault (the first one sticks) and fail the outstanding request with it."""
        if self._fault is None:
            self._fault = Fault(
                seat=self.seat,
                kind=kind,
                detail=detail,
                game=self.game,
                hand=self.hand,
                request_id=self._pending_id if request_id is None else request_id,
                at=self._timer.time(),
            )
            if self._faulted is not None and not self._faulted.done():
                self._faulted.set_result(None)
            LOGGER.info("seat %d fault %s: %s", self.seat, kind, detail)
        on_fault = self._on_fault
        if on_fault is not None:
            self.cancel_ask()
            on_fault(BotFault(self._fault))
        return self._fault

    def fail(self, error: Exception) -> None:
        """A referee bug surfaced while handling this seat (an exception in the decision
        path, a timer or a callback): it is no fault of the bot. The outstanding request, if
        any, fails with ``error`` (its asker raises it), and so does every later
        :meth:`raise_if_faulted` and :meth:`wait_connected`: the match ends as an
        infrastructure error instead of waiting for a reply that will never be handled."""
        LOGGER.error("seat %d: referee error: %r", self.seat, error, exc_info=error)
        if self.error is None:
            self.error = error
        if self._faulted is not None and not self._faulted.done():
            self._faulted.set_result(None)
        on_fault = self._on_fault
        self.cancel_ask()
        if on_fault is not None:
            on_fault(error)

    def raise_if_faulted(self) -> None:
        """Raise a referee error met on this seat (:meth:`fail`), else the recorded fault,
        if any, as a :class:`BotFault`."""
        if self.error is not None:
            raise self.error
        if self._fault is not None:
            raise BotFault(self._fault)

    def clear_fault(self) -> None:
        """Forget a resolved, non-terminal fault (the bot plays on under the policy)."""
        self._fault = None

    # ------------------------------------------------------------------ sending

    def send(self, msg: Message | bytes) -> bool:
        """Send a message (or its encoded bytes) after any held events; a message that cannot
        be delivered to a bound bot is a stall fault."""
        if self.peer is None:
            return False
        if not isinstance(msg, bytes):  # (a request comes encoded: one check on its way)
            if type(msg) is Ping:
                self._pings = [*self._pings[1 - _PINGS_KEPT :], msg.nonce]
            msg = encode(msg)
        ok = self._outbox.send(msg)
        if not ok:
            self._lost()
        return ok

    def _lost(self) -> None:
        if not self.finished:
            self.record_fault(FaultKind.STALL, "connection lost (message could not be delivered)")

    def on_connection_lost(self, reason: str) -> None:
        """The bot's connection ended (closed, reset, silent past the heartbeat timeout).

        A stall fault follows after :attr:`lost_grace` seconds unless another fault came first:
        a local bot's connection closes as its process dies, and that is a crash (seen by the
        process watcher, which a loaded machine may delay). A referee stall meanwhile extends
        the grace by its length.
        """
        if not self.finished:
            detail = f"connection lost ({reason})"
            lost = self._timer.time()
            self._timer.call_at(lost + self.lost_grace, lambda: self._lost_for(detail, lost))

    def _lost_for(self, detail: str, lost: float) -> None:
        try:
            if self.finished or self._fault is not None:
                return
            due = lost + self.lost_grace + self._stalls.stalled(lost)
            if self._timer.time() < due:  # the referee stalled meanwhile: the grace is longer
                self._timer.call_at(due, lambda: self._lost_for(detail, lost))
                return
            self.record_fault(FaultKind.STALL, detail)
        except Exception as err:  # a referee bug in a timer: end the match, do not hang it
            self.fail(err)

    def release_events(self) -> None:
        """Send the held events now, unless the bot takes them inside its requests."""
        if not self.inline_events and self.peer is not None and not self._outbox.flush():
            self._lost()

    def reply_error(self, code: str, message: str, request_id: int) -> None:
        """Answer the outstanding request ``request_id`` with an ``error`` message."""
        self.send(error_bytes(code, message, request_id))

    # ------------------------------------------------------------------ the outstanding request

    def cancel_ask(self) -> None:
        """Forget the outstanding request (its reply becomes stale); no callback runs."""
        self._on_reply = self._on_fault = None
        self._pending_id = None

    @property
    def is_idle(self) -> bool:
        """No request outstanding and no fault recorded (the heartbeat pings only then)."""
        return self._pending_id is None and self._fault is None
