"""The person's seat's bot: a ZeroMQ ``DEALER`` on the referee's endpoint, like any bot's.

It says ``hello`` once the page first connects (the match waits for the person), answers
``ping`` itself, and passes every other message to the page as JSON, unchanged but for a
``discard`` request's ``knocks`` (the arrangements each legal knock may declare,
:mod:`referee.play.advice`). The page's answer is sent only if it is one of the request's
``legal`` entries (a knock may add ``melds``, checked first); anything else is answered on the
page's socket with ``{"type": "refused", "reason"}`` and never reaches the referee.

The page may close and open again: each new page is sent the messages so far and goes on. A
second page while one is open is refused. When no page has been open for ``grace`` seconds
during the match, the seat's connection is closed: the referee sees a lost bot, a fault under
the match's policy.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import msgpack
import zmq
import zmq.asyncio

from referee.play.advice import declared_ok, knock_options

__all__ = ["PERSON_NAME", "PersonSeat", "Send"]

LOGGER = logging.getLogger(__name__)
PERSON_NAME = "person"
"""The seat's name in its hello."""
Send = Callable[[dict[str, Any]], Any]
"""Sends one JSON message to the page (an awaitable or None)."""


class PersonSeat:
    """One person's seat: the referee's wire on one side, at most one page on the other."""

    def __init__(self, *, grace: float = 30.0, name: str = PERSON_NAME) -> None:
        self.grace = grace
        self.name = name
        self.history: list[dict[str, Any]] = []
        """Every message the page has been sent (replayed to a page that reconnects)."""
        self.sent: list[dict[str, Any]] = []
        """Every action sent to the referee, in order."""
        self.pending: dict[str, Any] | None = None
        self.page: Send | None = None
        self.ended = asyncio.Event()
        self._opened = asyncio.Event()
        self._socket: zmq.asyncio.Socket | None = None
        self._context: zmq.asyncio.Context | None = None
        self._away: asyncio.TimerHandle | None = None
        self.abandoned = False

    async def attach(self, send: Send) -> bool:
        """A page connected: False if another page holds the seat; else it gets the history."""
        if self.page is not None:
            return False
        self.page = send
        if self._away is not None:
            self._away.cancel()
            self._away = None
        for message in list(self.history):
            await _deliver(send, message)
        self._opened.set()
        return True

    def detach(self, send: Send) -> None:
        """The page ``send`` closed: the seat is abandoned unless a page returns in time."""
        if self.page is not send:
            return
        self.page = None
        if not self.ended.is_set() and self.grace >= 0:
            loop = asyncio.get_running_loop()
            self._away = loop.call_later(self.grace, self._abandon)

    def _abandon(self) -> None:
        """No page came back: drop the connection (the referee sees the bot lost)."""
        self._away = None
        if self.page is None and not self.ended.is_set():
            LOGGER.warning("the person's page stayed closed for %g s: leaving the seat", self.grace)
            self.abandoned = True
            self._close()

    async def run(self, endpoint: str, token: str) -> None:
        """Connect once a page is open, play until ``match_end`` or ``bye``, then close."""
        await self._opened.wait()
        self._context = zmq.asyncio.Context()
        sock = self._socket = self._context.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 1000)
        sock.connect(endpoint)
        hello = {"type": "hello", "protocol_version": 1, "name": self.name, "token": token}
        await sock.send(msgpack.packb(hello))
        try:
            while not self.ended.is_set():
                frame = await sock.recv()
                message = msgpack.unpackb(frame, raw=False)
                if not isinstance(message, dict):
                    continue
                kind = message.get("type")
                if kind == "ping":
                    await sock.send(msgpack.packb({"type": "pong", "nonce": message["nonce"]}))
                    continue
                if kind == "request":
                    message = self._annotated(message)
                    self.pending = message
                await self._to_page(message)
                if kind == "match_end":
                    await sock.send(msgpack.packb({"type": "bye"}))
                if kind in ("match_end", "bye", "reject"):
                    self.ended.set()
        except zmq.ZMQError:  # the socket was closed: the seat was abandoned
            pass
        finally:
            self.ended.set()
            self._close()

    def _close(self) -> None:
        if self._socket is not None:
            self._socket.close(linger=1000 if not self.abandoned else 0)
            self._socket = None
        if self._context is not None:
            self._context.term()
            self._context = None

    def _annotated(self, request: dict[str, Any]) -> dict[str, Any]:
        view = request.get("view") or {}
        knocks = {}
        for action in request.get("legal", []):
            if action.get("kind") == "knock":
                knocks[action["card"]] = knock_options(
                    view.get("hand", []), action["card"], view.get("knock_limit", 10)
                )
        return {**request, "knocks": knocks} if knocks else request

    async def _to_page(self, message: dict[str, Any]) -> None:
        self.history.append(message)
        if self.page is not None:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await _deliver(self.page, message)

    def refusal(self, answer: Any) -> str | None:
        """Why the page's ``answer`` may not be sent, or None when it is a legal action."""
        request = self.pending
        if request is None:
            return "no decision is asked of you now"
        if not isinstance(answer, dict) or answer.get("request_id") != request["request_id"]:
            return "that answers no outstanding request"
        action = answer.get("action")
        if not isinstance(action, dict):
            return "no action"
        if action in request["legal"]:
            return None
        bare = {k: v for k, v in action.items() if k != "melds"}
        if action.get("kind") == "knock" and "melds" in action and bare in request["legal"]:
            view = request["view"]
            return declared_ok(view["hand"], action["card"], action["melds"], view["knock_limit"])
        return "not a legal move"

    async def choose(self, answer: Any) -> str | None:
        """Send the page's ``answer`` (``{"request_id", "action"}``) if legal; else why not."""
        why = self.refusal(answer)
        if why is not None:
            return why
        if self._socket is None:
            return "the seat is not connected"
        self.pending = None
        action = answer["action"]
        self.sent.append(action)
        message = {"type": "action", "request_id": answer["request_id"], "action": action}
        await self._socket.send(msgpack.packb(message))
        return None


async def _deliver(send: Send, message: dict[str, Any]) -> None:
    result = send(message)
    if asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
        await result
