"""One seat's link to its bot: identity, requests with deadlines, and the fault register.

A :class:`SeatLink` is made by the hub when a token is issued, with the seat's configured name
and seed; the hub binds it once, with :meth:`SeatLink.bind`, when the bot's hello arrives (the
routing id and what the hello asked for). Its other jobs are each owned by one object: its
messages go out through one :class:`~referee.match.outbox.Outbox`, idle bots are pinged by a
:class:`~referee.match.heartbeat.Heartbeat`, and the decision time is charged to a
:class:`~referee.match.clock.Clock`. Deadlines and arrival stamps come from a
:class:`~referee.match.clock.Timer` (the running loop unless one is injected). The bot's
process, if the referee started one, is watched by the runner, which records a crash here.

The hub's receive loop calls :meth:`SeatLink.on_payload` synchronously for every frame from the
bound peer, stamped with its arrival time before any match code runs. A decision is asked for
with :meth:`SeatLink.ask` and a deadline (``move + bank + grace``): the matching reply calls
the asker back from that loop, synchronously; a reply that is not the outstanding one is
dropped. The time charged runs from the send stamp, taken right after the request was written
to the socket, to the arrival stamp, when the reply's bytes reached the referee: the loop's own
busy time before it read them is left out (:mod:`referee.net.turns`), so a stalled referee
loop costs the bot nothing. Every message already received is delivered before a deadline is
declared missed: a reply sitting in the socket buffer at the deadline is never a timeout.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from protocol.codec import decode_action, decode_bot_message, encode
from protocol.errors import ErrorCode, ProtocolError
from protocol.schema import ActionMsg, Bye, Hello, Message, Ping, Pong, WireAction
from referee.match.clock import Alarm, Clock, TimeControl, Timer
from referee.match.faults import BotFault, Fault, FaultKind
from referee.match.heartbeat import Heartbeat
from referee.match.outbox import Outbox, error_bytes

__all__ = ["SeatLink"]

LOGGER = logging.getLogger(__name__)
LOST_GRACE = 0.25
"""Seconds between a lost connection and its stall fault (a crash seen meanwhile wins); a
seat whose bot process the referee started waits :data:`LOCAL_LOST_GRACE` instead."""
LOCAL_LOST_GRACE = 2.0
_PINGS_KEPT = 8
"""Unanswered pings remembered per seat: a pong to an older one counts as unsolicited."""


class SeatLink:
    """The referee's side of one seat (see the module docstring)."""

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
        self.seed = seed
        """The seed offered in ``match_start`` (the bot's ``GIN_BOT_SEED`` when started)."""
        self.peer: bytes | None = None
        self.hello: Hello | None = None
        """The hello this seat was bound with."""
        self.inline_events = False
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
        self._poll = poll
        self._heartbeat = Heartbeat(self, self._timer, control.heartbeat)
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
        process watcher, which a loaded machine may delay).
        """
        if not self.finished:
            detail = f"connection lost ({reason})"
            when = self._timer.time() + self.lost_grace
            self._timer.call_at(when, lambda: self._lost_for(detail))

    def _lost_for(self, detail: str) -> None:
        try:
            if not self.finished and self._fault is None:
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

    # ------------------------------------------------------------------ receiving

    def on_payload(self, payload: bytes, malformed: str, arrived: float) -> None:
        """Handle one frame from the bound peer (called synchronously by the hub).

        ``malformed`` names what the transport refused instead of a frame (``"multipart"``,
        ``"too_large"``), or is empty.
        """
        self.last_heard = arrived
        if malformed == "too_large":
            self._outbox.refuse(ErrorCode.TOO_LARGE, "message over the size limit")
            self.record_fault(FaultKind.MALFORMED, "too_large: message over the size limit")
            return
        if malformed:
            self.record_fault(FaultKind.MALFORMED, "a message must be exactly one frame")
            return
        fast = decode_action(payload)
        if fast is not None:
            self._on_action(fast[0], fast[1], arrived)
            return
        try:
            msg = decode_bot_message(payload)
        except ProtocolError as err:
            self._outbox.refuse(str(err.code), str(err))
            # The fault's kind already says "malformed": name a finer code (bad_card, ...) only.
            detail = err.detail if err.code == FaultKind.MALFORMED else str(err)
            self.record_fault(FaultKind.MALFORMED, detail)
            return
        match msg:
            case ActionMsg(request_id=rid, action=action):
                self._on_action(rid, action, arrived)
            case Pong(nonce=nonce):
                if nonce in self._pings:
                    self._pings.remove(nonce)
                else:
                    self._unsolicited()
            case Hello():
                message = "hello sent twice: this connection said hello already"
                self._outbox.refuse(ErrorCode.UNEXPECTED_MESSAGE, message)
                self.record_fault(FaultKind.PROTOCOL, message)
            case Bye(reason=reason):
                if not self.finished:
                    self.record_fault(FaultKind.STALL, f"bot said bye mid-match ({reason})")

    def _on_action(self, rid: int, action: WireAction, arrived: float) -> None:
        on_reply = self._on_reply
        if rid == self._pending_id and on_reply is not None:
            on_fault = self._on_fault
            self._on_reply = self._on_fault = None  # :meth:`cancel_ask`, inline (every decision)
            self._pending_id = None
            elapsed = arrived - self._sent
            if elapsed < 0.0:
                elapsed = 0.0
            self._reply_to_asker(on_reply, on_fault, action, elapsed)
            return
        self.stale_replies += 1
        LOGGER.debug("seat %d stale reply id %s dropped", self.seat, rid)
        self._outbox.refuse(ErrorCode.STALE_REQUEST, f"no request {rid} is outstanding", rid)
        self._unsolicited()

    def _reply_to_asker(
        self,
        on_reply: Callable[[WireAction, float], None],
        on_fault: Callable[[Exception], None] | None,
        action: WireAction,
        elapsed: float,
    ) -> None:
        """Charge the clock and hand the reply to the asker (its request already cancelled);
        a referee bug on the way fails the seat (:meth:`fail`): the asker hears of it."""
        try:
            self.clock.charge(elapsed)
            on_reply(action, elapsed)
        except Exception as err:  # a referee bug: the asker must hear of it, not hang
            self._on_fault = on_fault
            self.fail(err)

    def _unsolicited(self) -> None:
        """Count a message nobody asked for; past the flood limit it is a protocol fault."""
        self.unsolicited += 1
        if self.unsolicited > self.control.flood_limit:
            self.record_fault(
                FaultKind.PROTOCOL,
                f"flooding: more than {self.control.flood_limit} unsolicited messages "
                "(stale replies and pongs to no ping) in one game",
            )

    # ------------------------------------------------------------------ decisions

    def new_request_id(self) -> int:
        """A fresh, increasing request id."""
        rid = self._next_id
        self._next_id += 1
        return rid

    def ask(
        self,
        request_id: int,
        request: bytes,
        on_reply: Callable[[WireAction, float], None],
        on_fault: Callable[[Exception], None],
        after_send: Callable[[], None] | None = None,
    ) -> None:
        """Send ``request`` (id ``request_id``) and return at once.

        The matching reply calls ``on_reply(action, elapsed_seconds)`` synchronously from the
        hub's receive loop, after the clock is charged; a fault recorded before it (timeout,
        crash, a send that fails, anything) calls ``on_fault(BotFault)`` instead, also when
        the seat had faulted already; a referee error on the seat (:meth:`fail`) calls
        ``on_fault`` with that exception. Exactly one of them is called, once, unless
        :meth:`cancel_ask` comes first. ``after_send`` runs right after the request is sent.
        """
        if self.error is not None:
            on_fault(self.error)
            return
        fault = self._fault
        if fault is not None:
            on_fault(BotFault(fault))
            return
        self._pending_id = request_id
        self._on_reply, self._on_fault = on_reply, on_fault
        budget = self.clock.time_left + self.control.grace
        if not self.send(request) and self._on_fault is None:
            return  # the failed send recorded a fault, which called on_fault
        timer = self._timer
        sent = self._sent = timer.time()
        deadline = self._deadline = sent + budget
        self._budget = budget
        watchdog = self._watchdog
        if watchdog is None or self._watch_at > deadline:
            if watchdog is not None:
                watchdog.cancel()
            self._watchdog = timer.call_at(deadline, self._on_watchdog)
            self._watch_at = deadline
        if after_send is not None:
            after_send()

    def fail_ask(self, fault: Fault) -> None:
        """Fail the outstanding request with ``fault`` (recorded on another seat): the asker's
        ``on_fault`` runs, as for a fault of this seat."""
        on_fault = self._on_fault
        self.cancel_ask()
        if on_fault is not None:
            on_fault(BotFault(fault))

    def cancel_ask(self) -> None:
        """Forget the outstanding request (its reply becomes stale); no callback runs."""
        self._on_reply = self._on_fault = None
        self._pending_id = None

    def _on_watchdog(self) -> None:
        """The deadline timer's callback: :meth:`_check_deadline`, a bug in it ends the match."""
        try:
            self._check_deadline()
        except Exception as err:  # a referee bug in a timer: end the match, do not hang it
            self.fail(err)

    def _check_deadline(self) -> None:
        """The seat's one deadline timer: fail an overdue request with a timeout fault.

        One timer per seat instead of one per request: it is armed for the outstanding
        request's deadline and, when it fires early (that request was answered and a later
        one is outstanding), re-armed for the current deadline. Messages already received are
        delivered first: if the loop was late, a reply that arrived in time still counts.
        """
        self._watchdog = None
        if self._on_reply is None or self.finished:
            return
        if self._timer.time() < self._deadline:
            self._watchdog = self._timer.call_at(self._deadline, self._on_watchdog)
            self._watch_at = self._deadline
            return
        rid, budget = self._pending_id, self._budget
        if self._poll is not None:
            # A reply delivered here may lead the match to ask this seat again at once (a
            # draw, then the discard): only the request that was overdue may time out.
            self._poll()
        if self._on_reply is not None and self._pending_id == rid:
            detail = f"no reply to request {rid} within {budget * 1000:.0f} ms"
            self.record_fault(FaultKind.TIMEOUT, detail)

    # ------------------------------------------------------------------ life cycle

    @property
    def is_idle(self) -> bool:
        """No request outstanding and no fault recorded (the heartbeat pings only then)."""
        return self._pending_id is None and self._fault is None

    def start_heartbeat(self) -> None:
        """Ping the bot while it is idle, until the seat closes (see :mod:`.heartbeat`)."""
        self._heartbeat.start()

    async def wait_connected(self) -> None:
        """Wait for the bot's hello; raises :class:`BotFault` if the seat faults first."""
        self.raise_if_faulted()
        if self.connected.done():
            return
        faulted = self._faulted = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait({self.connected, faulted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._faulted = None
            faulted.cancel()
        if not self.connected.done():
            self.raise_if_faulted()

    def close(self) -> None:
        """The seat is done: no more faults are charged and its timers stop."""
        self.finished = True
        self.cancel_ask()
        self._heartbeat.stop()
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
