"""Seats for the bot author's tools (``gin-referee check`` and ``replay --feed``).

:class:`ProbeLink` is a real bot's seat (the hub makes it with ``open_seat(link_type=...)``)
that also writes down what the bot does: every request it was sent with the reply and its time,
every request id it got wrong, the pings it was sent and the pongs it returned, whether it said
``bye``. It can send one deliberate ``error`` (a ``stale_request`` naming the bot's previous
request) just before a chosen game's first request, to see that the bot reads it and goes on.

:class:`PuppetLink` is a seat with no bot behind it: it answers each request itself, in the
hub's loop, with what its ``policy`` decides (a scripted opponent, or a record's moves), after
an optional delay. :class:`LearnerLink` is the seat of a learner in training
(:mod:`referee.toolkit.opponent`): it hands each request to another thread and plays the
action that comes back, without a deadline. The match machinery cannot tell any of them from
an ordinary :class:`SeatLink`.
"""

from __future__ import annotations

import asyncio
import queue
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from protocol.codec import decode, decode_bot_message
from protocol.errors import ErrorCode, ProtocolError
from protocol.schema import (
    Bye,
    GameEnd,
    HandEnd,
    Hello,
    MatchEnd,
    Message,
    Ping,
    Pong,
    Request,
    WireAction,
)
from referee.match.clock import TimeControl
from referee.match.outbox import error_bytes
from referee.match.seat import SeatLink

__all__ = ["Decision", "LearnerLink", "ProbeLink", "PuppetLink", "PuppetPolicy"]


@dataclass(slots=True)
class Decision:
    """One request sent to a probed bot, and what came back."""

    request: Request
    """The request as sent."""
    game: int
    """Game of the request (from 0)."""
    hand: int
    """Hand of the request (from 0)."""
    reply: WireAction | None = None
    """The action the bot answered with (None: no accepted answer)."""
    elapsed: float | None = None
    """Seconds from sending the request to receiving the reply."""


class ProbeLink(SeatLink):
    """A bot's seat that records what the bot does (see the module docstring)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.decisions: list[Decision] = []
        """Every request sent, in order, with its reply."""
        self.id_problems: list[str] = []
        """Each reply that named a request id other than the outstanding one."""
        self.pings: list[int] = []
        """Nonces of the pings sent."""
        self.pongs: list[int] = []
        """Nonces of the pongs received."""
        self.said_bye = False
        """The bot sent ``bye``."""
        self.error_game: int | None = None
        """Send one ``error`` before this game's first request (None: never)."""
        self.error_sent: tuple[int, int] | None = None
        """(stale id named, id of the request that followed) once the error was sent."""
        self._answered: set[int] = set()

    def send(self, msg: Message | bytes) -> bool:
        """Send, remembering ping nonces."""
        if isinstance(msg, Ping):
            self.pings.append(msg.nonce)
        return super().send(msg)

    def ask(
        self,
        request_id: int,
        request: bytes,
        on_reply: Callable[[WireAction, float], None],
        on_fault: Callable[[Exception], None],
        after_send: Callable[[], None] | None = None,
    ) -> None:
        """Ask as a seat does, recording the request and the reply."""
        if self.error_game == self.game and self.error_sent is None and self.decisions:
            stale = self.decisions[-1].request.request_id
            text = f"request {stale} is no longer outstanding (a deliberate check: read on)"
            self.send(error_bytes(ErrorCode.STALE_REQUEST, text, stale))
            self.error_sent = (stale, request_id)
        sent = decode(request)
        assert isinstance(sent, Request)
        decision = Decision(sent, self.game, self.hand)
        self.decisions.append(decision)

        def replied(action: WireAction, elapsed: float) -> None:
            decision.reply, decision.elapsed = action, elapsed
            on_reply(action, elapsed)

        super().ask(request_id, request, replied, on_fault, after_send)

    def on_payload(self, payload: bytes, malformed: str, arrived: float) -> None:
        """Handle a frame as a seat does, noting pongs and byes."""
        if not malformed:
            try:
                msg = decode_bot_message(payload)
            except ProtocolError:
                msg = None
            if isinstance(msg, Pong):
                self.pongs.append(msg.nonce)
            elif isinstance(msg, Bye):
                self.said_bye = True
        super().on_payload(payload, malformed, arrived)

    def _on_action(self, rid: int, action: WireAction, arrived: float) -> None:
        if rid == self._pending_id and self._on_reply is not None:
            self._answered.add(rid)
        elif rid in self._answered:
            self.id_problems.append(f"answered request {rid} a second time")
        elif any(d.request.request_id == rid for d in self.decisions):
            self.id_problems.append(f"answered request {rid} after it was no longer outstanding")
        else:
            self.id_problems.append(f"answered request {rid}, which was never sent")
        super()._on_action(rid, action, arrived)


PuppetPolicy = Callable[["PuppetLink", Request], WireAction | None]
"""A puppet's move for a request; None when it recorded a fault on a seat instead."""


def _drop(peer: bytes, data: bytes) -> bool:
    return True


class InProcessLink(SeatLink):
    """A seat with no bot process and no connection behind it: bound at once, never pinged."""

    def bind_here(self, peer: bytes, name: str) -> None:
        """Bind the seat as if ``name`` had said hello from ``peer``, now."""
        loop = asyncio.get_running_loop()
        self.bind(peer, Hello(1, name, self.token), multi_match=False, arrived=loop.time())

    def start_heartbeat(self) -> None:
        """No pings: no connection is behind this seat."""


class PuppetLink(InProcessLink):
    """A seat that plays itself (see the module docstring)."""

    def __init__(
        self,
        *,
        seat: int,
        control: TimeControl,
        name: str,
        policy: PuppetPolicy,
        delay: Callable[[PuppetLink, Request], float] | None = None,
        seed: str | None = None,
    ) -> None:
        super().__init__(
            seat=seat, token=f"puppet-{seat}", send_bytes=_drop, control=control, name=name,
            seed=seed,
        )  # fmt: skip
        self.policy = policy
        self.delay = delay
        self.requests = 0
        """Requests answered so far."""
        self._handle: asyncio.TimerHandle | None = None
        self.bind_here(b"puppet", name)

    def ask(
        self,
        request_id: int,
        request: bytes,
        on_reply: Callable[[WireAction, float], None],
        on_fault: Callable[[Exception], None],
        after_send: Callable[[], None] | None = None,
    ) -> None:
        """Take the request and answer it from the loop (never from inside this call)."""
        super().ask(request_id, request, on_reply, on_fault, after_send)
        sent = decode(request)
        assert isinstance(sent, Request)
        wait = 0.0 if self.delay is None else self.delay(self, sent)
        loop = asyncio.get_running_loop()
        self._handle = loop.call_later(wait, self._answer, request_id, sent)

    def _answer(self, request_id: int, request: Request) -> None:
        self._handle = None
        if self._pending_id != request_id or self.finished:
            return
        self.requests += 1
        try:
            action = self.policy(self, request)
        except Exception as err:  # a bug in the puppet: the match ends, it does not hang
            self.fail(err)
            return
        if action is not None and self._pending_id == request_id:
            self._on_action(request_id, action, self._timer.time())

    def close(self) -> None:
        """Close the seat and forget an answer not yet given."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        super().close()


class LearnerLink(InProcessLink):
    """The learner's seat (see the module docstring): no bot process, no pings, no deadline.

    Every request sent to it, and every ``hand_end``, ``game_end`` and ``match_end``, is put
    on ``inbox`` for the environment's thread; :meth:`answer` plays the learner's action.
    """

    def __init__(self, *, seat: int, control: TimeControl, name: str, inbox: queue.Queue[Any]):
        self.inbox = inbox
        super().__init__(
            seat=seat, token=f"learner-{seat}", send_bytes=self._receive, control=control,
            name=name,
        )  # fmt: skip
        self.bind_here(b"learner", name)

    def _receive(self, peer: bytes, data: bytes) -> bool:
        msg = decode(data)
        if isinstance(msg, HandEnd | GameEnd | MatchEnd):
            self.inbox.put(msg)
        return True

    def ask(
        self,
        request_id: int,
        request: bytes,
        on_reply: Callable[[WireAction, float], None],
        on_fault: Callable[[Exception], None],
        after_send: Callable[[], None] | None = None,
    ) -> None:
        """Take the request as a seat does, without its deadline, and hand it on."""
        super().ask(request_id, request, on_reply, on_fault, after_send)
        if self._watchdog is not None:  # the learner may think as long as it likes
            self._watchdog.cancel()
            self._watchdog = None
        sent = decode(request)
        assert isinstance(sent, Request)
        self.inbox.put(sent)

    def answer(self, request_id: int, action: WireAction) -> None:
        """The learner's action for request ``request_id`` (run in the match's loop)."""
        if self._pending_id == request_id and not self.finished:
            self._on_action(request_id, action, self._timer.time())
