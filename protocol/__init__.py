"""gin-referee wire protocol v1: message dataclasses, msgpack codec, errors, bot SDK.

The package never imports the referee. Only :mod:`protocol.bot` (the Python bot SDK)
imports ZeroMQ; importing :mod:`protocol` itself needs just msgpack.

The specification for bot authors in any language is ``docs/protocol.md``.

>>> from protocol import Pong, decode, encode
>>> decode(encode(Pong(nonce=3)))
Pong(nonce=3)
"""

from __future__ import annotations

from protocol.cards import ALL_CARDS, is_card
from protocol.codec import (
    MAX_DEPTH,
    MAX_MESSAGE_BYTES,
    decode,
    decode_bot_message,
    decode_referee_message,
    encode,
)
from protocol.errors import (
    ErrorCode,
    MalformedMessage,
    ProtocolError,
    SchemaError,
    VersionMismatch,
)
from protocol.schema import (
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    ActionMsg,
    BotMessage,
    Bye,
    Error,
    Event,
    Fault,
    GameEnd,
    HandEnd,
    HandStart,
    Hello,
    MatchEnd,
    MatchStart,
    Message,
    Ping,
    Pong,
    RefereeMessage,
    Reject,
    Request,
    TimeControl,
    Welcome,
    WireAction,
    WireView,
    check_version,
)

__all__ = [
    "ALL_CARDS",
    "MAX_DEPTH",
    "MAX_MESSAGE_BYTES",
    "PROTOCOL_VERSION",
    "SUPPORTED_VERSIONS",
    "ActionMsg",
    "BotMessage",
    "Bye",
    "Error",
    "ErrorCode",
    "Event",
    "Fault",
    "GameEnd",
    "HandEnd",
    "HandStart",
    "Hello",
    "MalformedMessage",
    "MatchEnd",
    "MatchStart",
    "Message",
    "Ping",
    "Pong",
    "ProtocolError",
    "RefereeMessage",
    "Reject",
    "Request",
    "SchemaError",
    "TimeControl",
    "VersionMismatch",
    "Welcome",
    "WireAction",
    "WireView",
    "check_version",
    "decode",
    "decode_bot_message",
    "decode_referee_message",
    "encode",
    "is_card",
]
