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
busy time before it read them is left out (:mod:`referee.net.turns`), and so is any stall of
the referee's in between (:mod:`referee.net.stalls`: a deadline that falls due across one is
moved on by its length), so a stalled referee loop costs the bot nothing. Every message
already received is delivered before a deadline is declared missed: a reply sitting in the
socket buffer at the deadline is never a timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from protocol.codec import decode_action, decode_bot_message
from protocol.errors import ErrorCode, ProtocolError
from protocol.schema import ActionMsg, Bye, Hello, Pong, WireAction
from referee.match.fairclock import FairClock
from referee.match.faults import BotFault, Fault, FaultKind
from referee.match.seat_base import LOCAL_LOST_GRACE, LOGGER, SeatBase

__all__ = ["LOCAL_LOST_GRACE", "SeatLink"]


class SeatLink(SeatBase):
    """The referee's side of one seat (see the module docstring): what it receives, the
    decisions it asks for and their deadlines; its state and faults are :class:`SeatBase`'s."""

    fair: FairClock | None = None
    """Charges the time the bot could run, not its wait for a core (:mod:`.fairclock`); set
    by the runner for a bot it started; None: wall time."""
    last_excused = 0.0
    """Seconds of the latest reply's wall time not charged (waiting for a CPU)."""

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
            sent = self._sent
            elapsed = arrived - sent
            if self._stalls.last_end > sent:  # the referee stalled since: not the bot's time
                elapsed -= self._stalls.stalled(sent, arrived)
            if elapsed < 0.0:
                elapsed = 0.0
            if self.fair is not None:
                elapsed = self._fair_elapsed(elapsed)
                if elapsed < 0.0:
                    return  # out of time: a timeout fault, recorded
            self._on_reply = self._on_fault = None  # :meth:`cancel_ask`, inline (every decision)
            self._pending_id = None
            self._reply_to_asker(on_reply, on_fault, action, elapsed)
            return
        self.stale_replies += 1
        LOGGER.debug("seat %d stale reply id %s dropped", self.seat, rid)
        self._outbox.refuse(ErrorCode.STALE_REQUEST, f"no request {rid} is outstanding", rid)
        self._unsolicited()

    def _fair_elapsed(self, wall: float) -> float:
        """The time charged for a reply after ``wall`` seconds (:mod:`.fairclock`), or -1
        after recording a timeout: a reply measured over its budget, in wall time and in time
        charged, is late even if it came before the deadline's next check."""
        assert self.fair is not None
        charge = self.fair.on_reply(wall, self._budget)
        if charge is None:
            self.last_excused = 0.0
            return wall
        if wall > self._budget and charge.charged > self._budget:
            self._time_out(charge.describe())
            return -1.0
        self.last_excused = charge.excused
        return charge.charged

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

    def asks_defence(self) -> bool:
        """Whether the seat is asked for its own melds after the opponent's knock now (it was
        granted ``declare_melds``)."""
        return self.declare_melds

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
        if self.fair is not None:
            self.fair.begin()
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
        now = self._timer.time()
        if now >= self._deadline and self._stalls.last_end > self._sent:
            # The referee stalled since the request went out: the deadline moves on by it.
            self._deadline = self._sent + self._budget + self._stalls.stalled(self._sent, now)
        if now < self._deadline:
            self._watchdog = self._timer.call_at(self._deadline, self._on_watchdog)
            self._watch_at = self._deadline
            return
        rid = self._pending_id
        if self._poll is not None:
            # A reply delivered here may lead the match to ask this seat again at once (a
            # draw, then the discard): only the request that was overdue may time out.
            self._poll()
        if self._on_reply is None or self._pending_id != rid:
            return
        why = ""
        if self.fair is not None:  # still under its budget in time charged: check again later
            now = self._timer.time()
            more, charge = self.fair.extension(now - self._sent, self._budget)
            if more is not None:
                self._deadline = self._watch_at = now + more
                self._watchdog = self._timer.call_at(self._deadline, self._on_watchdog)
                return
            why = charge.describe()
        self._time_out(why)

    def _time_out(self, why: str) -> None:
        """Record the outstanding request's timeout (``why``: the fair clock's figures)."""
        detail = f"no reply to request {self._pending_id} within {self._budget * 1000:.0f} ms"
        self.record_fault(FaultKind.TIMEOUT, f"{detail} ({why})" if why else detail)

    # ------------------------------------------------------------------ life cycle

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
