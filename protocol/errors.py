"""Protocol errors and the complete list of error codes used on the wire.

Every failure of the codec is a :class:`ProtocolError` carrying a machine-readable
``code`` (one of :class:`ErrorCode`). The same codes, plus the referee-level ones,
appear on the wire in ``error`` and ``reject`` messages and in ``match_end.fault``.

>>> err = SchemaError(ErrorCode.BAD_CARD, "action.card", "not a card: 'Xx'")
>>> err.code
'bad_card'
>>> str(err)
"bad_card: action.card: not a card: 'Xx'"
>>> isinstance(err, ProtocolError)
True
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "ErrorCode",
    "MalformedMessage",
    "ProtocolError",
    "SchemaError",
    "VersionMismatch",
]


class ErrorCode(StrEnum):
    """Every error code that can appear on the wire (``error.code``, ``reject.code``,
    ``match_end.fault.code``) or in a :class:`ProtocolError`.

    Each member's one-line meaning is :attr:`doc`; ``docs/protocol.md`` carries the
    same table (a test keeps the two in step).
    """

    # Connection and handshake (sent in `reject`).
    BAD_TOKEN = "bad_token"
    TOKEN_IN_USE = "token_in_use"
    VERSION_UNSUPPORTED = "version_unsupported"
    # Conversation state (sent in `error` or as a fault).
    UNEXPECTED_MESSAGE = "unexpected_message"
    UNEXPECTED_TYPE = "unexpected_type"
    STALE_REQUEST = "stale_request"
    ILLEGAL_ACTION = "illegal_action"
    # Bytes that are not a valid message (codec).
    TOO_LARGE = "too_large"
    MALFORMED = "malformed"
    UNKNOWN_TYPE = "unknown_type"
    MISSING_FIELD = "missing_field"
    BAD_TYPE = "bad_type"
    BAD_VALUE = "bad_value"
    BAD_CARD = "bad_card"
    # Faults (match_end.fault.code); `malformed` is a fault code too.
    TIMEOUT = "timeout"
    STARTUP = "startup"
    CRASH = "crash"
    STALL = "stall"
    PROTOCOL = "protocol"
    ILLEGAL = "illegal"
    # The referee itself.
    SHUTDOWN = "shutdown"

    @property
    def doc(self) -> str:
        """One-line meaning of this code (the text of the table in docs/protocol.md)."""
        return _DOCS[self]


_DOCS: dict[ErrorCode, str] = {
    ErrorCode.BAD_TOKEN: "The hello's token is not one the referee expects.",
    ErrorCode.TOKEN_IN_USE: "Another connection has already said hello with this token.",
    ErrorCode.VERSION_UNSUPPORTED: "The hello's protocol_version is not one the referee speaks.",
    ErrorCode.UNEXPECTED_MESSAGE: (
        "A valid message that is not allowed now: anything but `hello` before your `hello`, or "
        "a second `hello` (which is also a `protocol` fault)."
    ),
    ErrorCode.UNEXPECTED_TYPE: "A message type that only the other side may send.",
    ErrorCode.STALE_REQUEST: (
        "An action whose request_id is not the outstanding request (sent for the first 8 only; "
        "each counts toward the flood limit)."
    ),
    ErrorCode.ILLEGAL_ACTION: (
        "An action that is not one of the request's legal actions (also an `illegal` fault)."
    ),
    ErrorCode.TOO_LARGE: "The frame is larger than the maximum message size.",
    ErrorCode.MALFORMED: (
        "Bytes that are not one msgpack value, or that break a decoding limit. As a fault it "
        "also covers every decoding error below (`unknown_type` to `bad_card`), whose code and "
        "field path its detail names."
    ),
    ErrorCode.UNKNOWN_TYPE: "The map's `type` is not a message type of this protocol version.",
    ErrorCode.MISSING_FIELD: (
        "A required field is absent (after your `hello`: a `malformed` fault)."
    ),
    ErrorCode.BAD_TYPE: (
        "A field (or the message itself) has the wrong msgpack type (after your `hello`: a "
        "`malformed` fault)."
    ),
    ErrorCode.BAD_VALUE: (
        "A field has the right type but an invalid value, e.g. a `card` in your `draw_stock`, "
        "melds holding the knock card (after your `hello`: a `malformed` fault)."
    ),
    ErrorCode.BAD_CARD: (
        "A card is not a canonical card string such as `As` or `Td` (after your `hello`: a "
        "`malformed` fault)."
    ),
    ErrorCode.TIMEOUT: "No reply before the decision's deadline (move time + bank + grace).",
    ErrorCode.STARTUP: "The bot could not be started, or did not connect and say hello in time.",
    ErrorCode.CRASH: "The bot's process exited before the match ended.",
    ErrorCode.STALL: "No answer to pings while idle, a lost connection, or a bye mid-match.",
    ErrorCode.PROTOCOL: (
        "A valid message that is wrong at this point: a second `hello`, or flooding: more than "
        "1,000 unsolicited messages in one game (actions to no outstanding request, and pongs "
        "that answer no ping)."
    ),
    ErrorCode.ILLEGAL: "A well-formed action that the rules do not allow.",
    ErrorCode.SHUTDOWN: (
        "The referee is shutting down; the match is aborted (sent just before `match_end`)."
    ),
}


class ProtocolError(Exception):
    """Base of every codec failure; ``code`` is the wire error code (a plain str).

    ``detail`` is the human-readable part; ``str(err)`` is ``"<code>: <detail>"``.
    """

    code: str
    detail: str

    def __init__(self, code: ErrorCode | str, detail: str) -> None:
        self.code = str(code)
        self.detail = detail
        super().__init__(f"{self.code}: {detail}")


class MalformedMessage(ProtocolError):
    """The bytes are not exactly one acceptable msgpack value.

    Covers: not msgpack, truncated, trailing bytes, too large (code ``too_large``),
    ext or bin data, non-string map keys, nesting deeper than the limit, strings or
    containers over the limits (all code ``malformed``).
    """

    reason: str

    def __init__(self, reason: str, *, code: ErrorCode = ErrorCode.MALFORMED) -> None:
        self.reason = reason
        super().__init__(code, reason)

    @classmethod
    def too_large(cls, size: int, limit: int) -> MalformedMessage:
        """The error for a frame of ``size`` bytes when at most ``limit`` are allowed."""
        return cls(f"message is {size} bytes, limit is {limit}", code=ErrorCode.TOO_LARGE)


class SchemaError(ProtocolError):
    """Valid msgpack of the wrong shape: missing field, wrong type, bad value or card,
    unknown or unexpected message type.

    ``field`` is a dotted path such as ``"request.view.hand[3]"`` (``"message"`` for
    the top level); ``problem`` says what is wrong with it.
    """

    field: str
    problem: str

    def __init__(self, code: ErrorCode, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(code, f"{field}: {problem}")


class VersionMismatch(ProtocolError):
    """A peer speaks a protocol version this side does not (code ``version_unsupported``)."""

    offered: int
    supported: tuple[int, ...]

    def __init__(self, offered: int, supported: tuple[int, ...]) -> None:
        self.offered = offered
        self.supported = tuple(supported)
        versions = ", ".join(str(v) for v in self.supported)
        super().__init__(
            ErrorCode.VERSION_UNSUPPORTED,
            f"protocol version {offered} is not supported (supported: {versions})",
        )
