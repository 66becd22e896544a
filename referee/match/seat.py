"""One seat's link to its bot: requests with deadlines, clocks, heartbeats and fault capture.

The hub's receive loop calls :meth:`SeatLink.on_payload` synchronously for every frame from the
bound peer and stamps its arrival time there, before any match code runs. A decision is asked
for with :meth:`SeatLink.ask` and a deadline (``move + bank + grace``): the matching reply calls
the asker back from that loop, synchronously (:meth:`SeatLink.decide` is the awaitable form); a
reply that is not the outstanding one is dropped. The stamp is taken when the loop reads the
socket: a stalled referee loop would delay it, which is why bots run at a lower priority than
the referee, spawns are limited, the loop's lag is measured and recorded, and every message
already received is delivered before a deadline is declared missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from protocol.codec import decode_action, decode_bot_message, encode
from protocol.errors import ErrorCode, MalformedMessage, ProtocolError
from protocol.schema import ActionMsg, Bye, Error, Hello, Message, Ping, Pong, Request, WireAction
from referee.match.clock import Clock, TimeControl
from referee.match.faults import BotFault, Fault, FaultKind
from referee.net.process import BotProcess

__all__ = ["SeatLink"]

LOGGER = logging.getLogger(__name__)
_MAX_ERROR_REPLIES = 8
"""Error messages sent back for stale replies before going quiet (no amplification)."""


class SeatLink:
    """The referee's side of one seat. Created by the hub when a token is issued."""

    def __init__(
        self,
        *,
        seat: int,
        token: str,
        send_bytes: Callable[[bytes, bytes], bool],
        control: TimeControl,
        poll: Callable[[], None] | None = None,
    ) -> None:
        self.seat = seat
        self.token = token
        self._send_bytes = send_bytes
        self._poll = poll
        self.control = control
        self.clock = Clock(control)
        self.peer: bytes | None = None
        self.inline_events = False
        """The bot asked for the opponent's moves inside its requests (see :meth:`hold_event`)."""
        self.multi_match = False
        """The welcome granted ``multi_match``: the connection may be kept for another match."""
        self.hello: Hello | None = None
        """The hello this seat was bound with."""
        self.seed: str | None = None
        """The seed offered in ``match_start`` (the bot's ``GIN_BOT_SEED`` when started)."""
        self._held: list[bytes] = []
        self.name = f"seat{seat}"
        self.process: BotProcess | None = None
        loop = asyncio.get_running_loop()
        self._loop = loop
        self.connected: asyncio.Future[None] = loop.create_future()
        self._pending_id: int | None = None
        self._on_reply: Callable[[WireAction, float], None] | None = None
        self._on_fault: Callable[[BotFault], None] | None = None
        self._sent = 0.0
        self._deadline = 0.0
        self._budget = 0.0
        self._watchdog: asyncio.TimerHandle | None = None
        self._next_id = 1
        self._fault: Fault | None = None
        self._fault_event = asyncio.Event()
        self.last_heard = loop.time()
        self.stale_replies = 0
        self.unsolicited = 0
        self._errors_sent = 0
        self._ping_nonce = 0
        self.game = -1
        self.hand = -1
        self.finished = False

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
                at=self._loop.time(),
            )
            self._fault_event.set()
            LOGGER.info("seat %d fault %s: %s", self.seat, kind, detail)
        on_fault = self._on_fault
        if on_fault is not None:
            self.cancel_ask()
            on_fault(BotFault(self._fault))
        return self._fault

    async def wait_for_fault(self) -> Fault:
        """Wait until a fault is recorded on this seat and return it."""
        await self._fault_event.wait()
        assert self._fault is not None
        return self._fault

    def raise_if_faulted(self) -> None:
        """Raise the recorded fault, if any, as a :class:`BotFault`."""
        if self._fault is not None:
            raise BotFault(self._fault)

    def clear_fault(self) -> None:
        """Forget a resolved, non-terminal fault (the bot plays on under the policy)."""
        self._fault = None
        self._fault_event.clear()

    # ------------------------------------------------------------------ sending

    def hold_event(self, event: bytes) -> None:
        """Keep an encoded ``event`` for the bot's next request (``inline_events`` seats); any
        other message sent first flushes it as an ordinary ``event`` message."""
        self._held.append(event)

    def take_held(self) -> list[bytes]:
        """The held events, oldest first, now to be sent inside a request."""
        held, self._held = self._held, []
        return held

    def send(self, msg: Message | bytes) -> bool:
        """Send a message (or its already encoded bytes) to the bot; a vanished peer becomes a
        stall fault. Held events go first, as ``event`` messages, to keep the order."""
        if self.peer is None:
            return False
        if self._held:
            for event in self.take_held():
                if not self.send(event):
                    return False
        ok = self._send_bytes(self.peer, msg if isinstance(msg, bytes) else encode(msg))
        if not ok and not self.finished:
            self.record_fault(FaultKind.STALL, "connection lost (message could not be delivered)")
        return ok

    # ------------------------------------------------------------------ receiving

    def on_payload(self, payload: bytes, malformed_frames: bool, arrived: float) -> None:
        """Handle one frame from the bound peer (called synchronously by the hub)."""
        self.last_heard = arrived
        if malformed_frames:
            self.record_fault(FaultKind.MALFORMED, "a message must be exactly one frame")
            return
        fast = decode_action(payload)
        if fast is not None:
            self._on_action(fast[0], fast[1], arrived)
            return
        try:
            msg = decode_bot_message(payload)
        except MalformedMessage as err:
            self._reply_error(str(err.code), str(err))
            self.record_fault(FaultKind.MALFORMED, str(err))
            return
        except ProtocolError as err:
            self._reply_error(str(err.code), str(err))
            self.record_fault(FaultKind.MALFORMED, str(err))
            return
        match msg:
            case ActionMsg(request_id=rid, action=action):
                self._on_action(rid, action, arrived)
            case Pong():
                pass
            case Hello():
                self.record_fault(FaultKind.PROTOCOL, "hello sent twice")
            case Bye(reason=reason):
                if not self.finished:
                    self.record_fault(FaultKind.STALL, f"bot said bye mid-match ({reason})")

    def _on_action(self, rid: int, action: WireAction, arrived: float) -> None:
        on_reply = self._on_reply
        if rid == self._pending_id and on_reply is not None:
            self.cancel_ask()
            elapsed = arrived - self._sent
            if elapsed < 0.0:
                elapsed = 0.0
            self.clock.charge(elapsed)
            on_reply(action, elapsed)
            return
        self.stale_replies += 1
        LOGGER.debug("seat %d stale reply id %s dropped", self.seat, rid)
        self._reply_error(ErrorCode.STALE_REQUEST, f"no request {rid} is outstanding", rid)
        self._count_unsolicited()

    def _count_unsolicited(self) -> None:
        self.unsolicited += 1
        if self.unsolicited > self.control.flood_limit:
            self.record_fault(
                FaultKind.PROTOCOL,
                f"flooding: more than {self.control.flood_limit} unsolicited messages",
            )

    def _reply_error(self, code: str, message: str, request_id: int | None = None) -> None:
        if self._errors_sent < _MAX_ERROR_REPLIES and self.peer is not None:
            self._errors_sent += 1
            for event in self.take_held():  # held events go first, as everywhere
                self._send_bytes(self.peer, event)
            self._send_bytes(self.peer, encode(Error(code, message[:400], request_id)))

    # ------------------------------------------------------------------ decisions

    def new_request_id(self) -> int:
        """A fresh, increasing request id."""
        rid = self._next_id
        self._next_id += 1
        return rid

    async def decide(
        self,
        request_id: int,
        request: Request | bytes,
        *,
        after_send: Callable[[], None] | None = None,
    ) -> tuple[WireAction, float]:
        """Send ``request`` (a message or its encoded bytes, with id ``request_id``) and await
        the matching reply: ``(action, elapsed_seconds)``. The awaitable form of :meth:`ask`.

        ``after_send`` runs right after the request is sent (the match sends the other seat's
        event there). Raises :class:`BotFault` on timeout or on any fault detected meanwhile.
        """
        future: asyncio.Future[tuple[WireAction, float]] = self._loop.create_future()

        def on_reply(action: WireAction, elapsed: float) -> None:
            if not future.done():
                future.set_result((action, elapsed))

        def on_fault(err: BotFault) -> None:
            if not future.done():
                future.set_exception(err)

        data = request if isinstance(request, bytes) else encode(request)
        try:
            self.ask(request_id, data, on_reply, on_fault, after_send)
            return await future
        finally:
            self.cancel_ask()

    def ask(
        self,
        request_id: int,
        request: bytes,
        on_reply: Callable[[WireAction, float], None],
        on_fault: Callable[[BotFault], None],
        after_send: Callable[[], None] | None = None,
    ) -> None:
        """Send ``request`` (id ``request_id``) and return at once; the match's decision loop
        uses this form (no task is woken per decision).

        The matching reply calls ``on_reply(action, elapsed_seconds)`` synchronously from the
        hub's receive loop, after the clock is charged; a fault recorded before it (timeout,
        crash, a send that fails, anything) calls ``on_fault(BotFault)`` instead, also when
        the seat had faulted already. Exactly one of them is called, once, unless
        :meth:`cancel_ask` comes first. ``after_send`` runs right after the request is sent.
        """
        fault = self._fault
        if fault is not None:
            on_fault(BotFault(fault))
            return
        self._pending_id = request_id
        self._on_reply, self._on_fault = on_reply, on_fault
        budget = self.clock.time_left + self.control.grace
        if not self.send(request) and self._on_fault is None:
            return  # the failed send recorded a fault, which called on_fault
        loop = self._loop
        sent = self._sent = loop.time()
        self._deadline, self._budget = sent + budget, budget
        watchdog = self._watchdog
        if watchdog is None or watchdog.when() > self._deadline:
            if watchdog is not None:
                watchdog.cancel()
            self._watchdog = loop.call_at(self._deadline, self._on_watchdog)
        if after_send is not None:
            after_send()

    def cancel_ask(self) -> None:
        """Forget the outstanding request (its reply becomes stale); no callback runs."""
        self._on_reply = self._on_fault = None
        self._pending_id = None

    def _on_watchdog(self) -> None:
        """The seat's one deadline timer: fail an overdue request with a timeout fault.

        One timer per seat instead of one per request: it is armed for the outstanding
        request's deadline and, when it fires early (that request was answered and a later
        one is outstanding), re-armed for the current deadline. Messages already received are
        delivered first: if the loop was late, a reply that arrived in time still counts.
        """
        self._watchdog = None
        if self._on_reply is None or self.finished:
            return
        if self._loop.time() < self._deadline:
            self._watchdog = self._loop.call_at(self._deadline, self._on_watchdog)
            return
        rid, budget = self._pending_id, self._budget
        if self._poll is not None:
            # A reply delivered here may lead the match to ask this seat again at once (a
            # draw, then the discard): only the request that was overdue may time out.
            self._poll()
        if self._on_reply is not None and self._pending_id == rid:
            self.record_fault(FaultKind.TIMEOUT, f"no reply to request {rid} within {budget:.3f} s")

    def close(self) -> None:
        """The seat is done: no more faults are charged and its deadline timer stops."""
        self.finished = True
        self.cancel_ask()
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None

    async def wait_connected(self) -> None:
        """Wait for the bot's hello; raises if the seat faulted or its process exits first."""
        self.raise_if_faulted()
        if self.process is None:
            await self.connected
            return
        exit_wait = asyncio.ensure_future(self.process.wait())
        try:
            waiters: set[asyncio.Future[Any]] = {self.connected, exit_wait}
            done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            if self.connected not in done:
                raise RuntimeError("bot exited before saying hello")
        finally:
            exit_wait.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await exit_wait

    # ------------------------------------------------------------------ liveness

    async def watch_process(self) -> None:
        """Wait for the bot process to exit; an exit before the match ends is a crash."""
        if self.process is None:
            return
        await self.process.wait()
        if not self.finished:
            detail = self.process.exit_hint()
            tail = self.process.stderr_tail(1024).strip()
            if tail:
                detail += f"; stderr tail: {tail}"
            self.record_fault(FaultKind.CRASH, detail)

    async def heartbeat(self) -> None:
        """Ping the bot while it is idle; five silent intervals make a stall fault."""
        interval = self.control.heartbeat
        while not self.finished and self._fault is None:
            try:
                async with asyncio.timeout(interval):
                    await self._fault_event.wait()
            except TimeoutError:
                pass
            if self.finished or self._fault is not None or self._pending_id is not None:
                continue
            silent = self._loop.time() - self.last_heard
            if silent > 5 * interval:
                self.record_fault(FaultKind.STALL, f"no answer to heartbeats for {silent:.1f} s")
            elif silent > interval:
                self._ping_nonce += 1
                self.send(Ping(self._ping_nonce))
