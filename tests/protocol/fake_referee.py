"""A minimal referee for tests: a ROUTER on a random loopback port talking to one bot."""

from __future__ import annotations

import dataclasses

import zmq

from protocol.codec import decode_bot_message, encode
from protocol.schema import BotMessage, Hello, Message, Welcome

__all__ = ["WAIT_MS", "WELCOME", "FakeReferee"]

WAIT_MS = 10_000
"""Upper bound for any single wait; a healthy test never comes close."""

WELCOME = Welcome(protocol_version=1, referee="test-referee", heartbeat_ms=1000)


class FakeReferee:
    """A ROUTER bound on a random loopback port, speaking to a single bot."""

    def __init__(self) -> None:
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.bind("tcp://127.0.0.1:*")
        self.endpoint: str = self.sock.getsockopt_string(zmq.LAST_ENDPOINT)
        self.peer: bytes | None = None

    def recv(self) -> BotMessage:
        """The bot's next message (fails the test if none comes within WAIT_MS)."""
        assert self.sock.poll(WAIT_MS, zmq.POLLIN), "the bot sent nothing"
        frames = self.sock.recv_multipart()
        assert len(frames) == 2, "a DEALER message is one frame behind the routing id"
        self.peer = frames[0]
        return decode_bot_message(frames[1])

    def send(self, msg: Message) -> None:
        """Send ``msg`` to the bot that spoke last."""
        self.send_raw(encode(msg))

    def send_raw(self, *frames: bytes) -> None:
        """Send raw frames (normally exactly one) to the bot that spoke last."""
        assert self.peer is not None
        self.sock.send_multipart([self.peer, *frames])

    def handshake(self) -> Hello:
        """Receive the bot's hello and answer welcome, granting ``inline_events`` if asked
        (as the real referee does)."""
        hello = self.recv()
        assert isinstance(hello, Hello)
        self.send(dataclasses.replace(WELCOME, inline_events=hello.inline_events))
        return hello

    def close(self) -> None:
        """Close the socket at once and terminate the context."""
        self.sock.close(linger=0)
        self.ctx.term()
