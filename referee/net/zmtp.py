"""ZMTP 3.x, the server's side of one connection, without I/O: greeting, handshake, frames.

The referee speaks the ZeroMQ wire protocol itself instead of through a libzmq ROUTER socket,
because libzmq cannot be made safe against a hostile peer from the outside: a frame size limit
does not bound a multipart message that never ends (the frames pile up in the pipe, unseen, at
hundreds of MB/s), a peer can claim the routing id libzmq will give the next connection (an
assertion kills the process), and running out of descriptors aborts it.  Here every byte a peer
sends is parsed by this class, so what a connection may hold is bounded by construction: one
frame of at most ``max_message_bytes`` (its size is known from its header, before its body is
read), and nothing of a multipart message (its frames are counted and dropped).

Peers are ordinary ZeroMQ sockets: a bot's DEALER (or REQ, or ROUTER) from libzmq >= 4.0,
zeromq.js, JeroMQ or any other ZMTP 3.0/3.1 implementation.  Supported:

* the 64-byte greeting, ZMTP 3.0 and 3.1 (1.0/2.0 peers, i.e. libzmq 2.x/3.x, are refused);
* the NULL and CURVE (RFC 26, :mod:`referee.net.curve`) mechanisms; the listener's mechanism is
  fixed, a peer offering another one is refused;
* data frames (short and long), PING/PONG heartbeats (a PING is answered with its context), and
  ERROR; other commands (SUBSCRIBE, CANCEL, unknown ones) are ignored.

The routing id a peer asks for (its ``Identity`` property) is ignored: the transport names each
connection itself.  A message is one frame: a multipart message is reported as ``MULTIPART``
once its last frame arrived (or as ``TOO_LARGE`` once its frames add up to more than the
limit), an oversized frame as ``TOO_LARGE``; both leave the connection unusable (the transport
closes it after telling the match layer).

Usage: :meth:`ServerConnection.greeting` is written first; each chunk read goes to
:meth:`~ServerConnection.feed`; :meth:`~ServerConnection.events` parses what is buffered into
``(kind, payload)`` events; bytes to write (handshake replies) collect in
:attr:`~ServerConnection.outgoing`, and the PONG owed to the latest PING (one at most, as in
libzmq) in :attr:`~ServerConnection.pong`, boxed by :meth:`~ServerConnection.take_pong` when
the caller writes it.  Any violation raises :class:`ZmtpError`.

Decisions where peers differ: frame flags with reserved bits (3-7) set are refused (RFC 23
says they SHALL be zero; libzmq masks them, but no ZeroMQ library sets them; a CURVE message's
inner flags likewise, :mod:`referee.net.curve`); a greeting whose major version is above 3 is
taken as 3.1 (RFC 23: a higher version is valid, and its peer talks ours); a greeting claiming
the server role (as-server 1) is refused; metadata with a name RFC 23 does not allow, or a
name given twice, is refused; the TTL of a peer's PING is ignored (how long a silent bot is
waited for is the organiser's heartbeat setting, which decides a stall fault, not the bot's);
a multipart message counts :data:`FRAME_COST` bytes per frame besides its payload, so one of
empty frames ends at the size limit too.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Mapping
from typing import Final, Protocol

__all__ = [
    "MALFORMED",
    "MESSAGE",
    "MULTIPART",
    "NULL",
    "PONG",
    "READY",
    "SIGNATURE",
    "SUPPORTED_VERSIONS",
    "TOO_LARGE",
    "Mechanism",
    "NullMechanism",
    "ServerConnection",
    "ZmtpError",
    "ZmtpVersionError",
    "check_socket_type",
    "command",
    "frame",
    "parse_properties",
    "properties",
]

SIGNATURE: Final = b"\xff" + bytes(8) + b"\x7f"
FLAG_MORE: Final = 1
FLAG_LONG: Final = 2
FLAG_COMMAND: Final = 4
GREETING_SIZE: Final = 64
MAX_COMMAND: Final = 4096  # a handshake command with metadata; PING is 23 bytes at most
PEER_SOCKET_TYPES: Final = frozenset({b"DEALER", b"REQ", b"ROUTER"})

# Event kinds yielded by ServerConnection.events()
READY: Final = 0  # the handshake is complete (payload: empty)
MESSAGE: Final = 1  # one single-frame message (payload: its bytes)
MALFORMED: Final = 2  # a message that is not one frame (payload: MULTIPART or TOO_LARGE)
PONG: Final = 3  # a heartbeat answer arrived (payload: its context)

MULTIPART: Final = b"multipart"
TOO_LARGE: Final = b"too_large"

_PROPERTY_NAME: Final = re.compile(rb"[A-Za-z0-9\-_.+]+")
"""RFC 23's characters of a metadata name."""
FRAME_COST: Final = 2
"""What a frame of a multipart message counts against the size limit besides its payload (its
shortest header): a message of empty frames ends at the limit too."""

_LONG: Final = struct.Struct(">Q")
_U32: Final = struct.Struct(">I")


class ZmtpError(Exception):
    """The peer broke the protocol (or was refused); the connection must be closed.

    The message is short and names no peer data beyond sizes and command names, so it can be
    logged and counted as is.  ``reply`` holds bytes to write before closing (an ERROR
    command telling the peer why), or is empty.
    """

    def __init__(self, message: str, *, reply: bytes = b"") -> None:
        super().__init__(message)
        self.reply = reply


class ZmtpVersionError(ZmtpError):
    """The peer greeted with a ZMTP version the referee does not speak (``version``, as
    ``ZMTP 2.0``); the message says which it speaks."""

    def __init__(self, version: str) -> None:
        super().__init__(f"{version} greeting: the referee speaks {SUPPORTED_VERSIONS} only")
        self.version = version


SUPPORTED_VERSIONS: Final = "ZMTP 3.0 and 3.1"
"""The ZMTP versions a peer may greet with, as faults and docs name them."""


def frame(body: bytes, flags: int = 0) -> bytes:
    """One ZMTP 3 frame: flags, a 1- or 8-byte size, ``body``."""
    size = len(body)
    if size < 256:
        return bytes((flags, size)) + body
    return bytes((flags | FLAG_LONG,)) + _LONG.pack(size) + body


def command(name: bytes, data: bytes = b"") -> bytes:
    """A command frame's body: ``name`` with its length byte, then ``data``."""
    return bytes((len(name),)) + name + data


def properties(props: Mapping[bytes, bytes]) -> bytes:
    """ZMTP metadata: each name with a 1-byte length, each value with a 4-byte length."""
    return b"".join(bytes((len(k),)) + k + _U32.pack(len(v)) + v for k, v in props.items())


def parse_properties(data: bytes) -> dict[bytes, bytes]:
    """The inverse of :func:`properties`; names are case-insensitive (kept as sent).  A name
    with characters RFC 23 does not allow, or one given twice (in any case), is refused."""
    props: dict[bytes, bytes] = {}
    seen: set[bytes] = set()
    pos, end = 0, len(data)
    while pos < end:
        size = data[pos]
        name = data[pos + 1 : pos + 1 + size]
        pos += 1 + size
        if size == 0 or len(name) != size or pos + 4 > end:
            raise ZmtpError("malformed metadata")
        if not _PROPERTY_NAME.fullmatch(name):
            raise ZmtpError("invalid metadata name")
        if name.lower() in seen:
            raise ZmtpError("duplicate metadata name")
        seen.add(name.lower())
        (vsize,) = _U32.unpack_from(data, pos)
        pos += 4
        if pos + vsize > end:
            raise ZmtpError("malformed metadata")
        props[name] = data[pos : pos + vsize]
        pos += vsize
    return props


def check_socket_type(props: Mapping[bytes, bytes]) -> None:
    """Refuse peers whose socket type cannot talk to a ROUTER."""
    kind = next((v for k, v in props.items() if k.lower() == b"socket-type"), None)
    if kind not in PEER_SOCKET_TYPES:
        shown = "none" if kind is None else kind[:16].decode("ascii", "replace")
        raise ZmtpError(f"socket type {shown} cannot talk to a ROUTER (use DEALER)")


class Mechanism(Protocol):
    """A security mechanism's server side (NULL here, CURVE in :mod:`referee.net.curve`)."""

    name: bytes
    """As it appears in the greeting, e.g. ``b"NULL"``."""
    as_server: int
    client_key: bytes | None
    """The authenticated client's long-term public key (CURVE), else None."""

    def handshake(self, body: bytes) -> tuple[bytes, bool]:
        """Process one handshake command body; (bytes to send, handshake complete)."""
        ...

    def wrap(self, payload: bytes, flags: int = 0) -> bytes:
        """The frame (with its header) carrying ``payload`` after the handshake."""
        ...

    def unwrap(self, flags: int, body: bytes) -> tuple[int, bytes]:
        """(inner flags, payload) of a frame received after the handshake."""
        ...


class NullMechanism:
    """The NULL mechanism: READY commands with metadata both ways, then plain frames."""

    name = b"NULL"
    as_server = 0
    client_key: bytes | None = None

    def handshake(self, body: bytes) -> tuple[bytes, bool]:
        """The peer's READY (anything else is refused); answer with ours."""
        if body[:6] != b"\x05READY":
            raise ZmtpError(f"expected READY, got {_name(body)}")
        check_socket_type(parse_properties(body[6:]))
        ready = command(b"READY", properties({b"Socket-Type": b"ROUTER"}))
        return frame(ready, FLAG_COMMAND), True

    def wrap(self, payload: bytes, flags: int = 0) -> bytes:
        """A plain frame."""
        return frame(payload, flags)

    def unwrap(self, flags: int, body: bytes) -> tuple[int, bytes]:
        """Frames are what they say they are."""
        return flags, body


NULL: Final = NullMechanism()


def _name(body: bytes) -> str:
    """A command's name for an error message (bounded, printable)."""
    if not body:
        return "an empty command"
    return repr(body[1 : 1 + min(body[0], 16)].decode("ascii", "replace"))


class ServerConnection:
    """One connection's protocol state; see the module docstring."""

    __slots__ = (
        "_buf",
        "_greeted",
        "_limit",
        "_mech",
        "_multipart",
        "_ready",
        "outgoing",
        "peer_minor",
        "pong",
    )

    def __init__(self, mechanism: Mechanism, *, max_message_bytes: int) -> None:
        self._mech = mechanism
        self._limit = max_message_bytes
        self._buf = bytearray()
        self._greeted = False
        self._ready = False
        self._multipart = -1  # bytes of the multipart message being dropped, -1 when none
        self.outgoing = bytearray()
        """Bytes the connection must write (handshake replies); the caller empties it."""
        self.pong: bytes | None = None
        """The context of the PONG owed to the peer's latest PING, or None: one PONG is
        pending at most (as in libzmq); :meth:`take_pong` boxes it when it is written."""
        self.peer_minor = 0
        """The peer's ZMTP minor version (heartbeats need 1)."""

    @property
    def mechanism(self) -> Mechanism:
        """The security mechanism (its ``client_key`` once ready)."""
        return self._mech

    @property
    def ready(self) -> bool:
        """True once the handshake is complete."""
        return self._ready

    @property
    def mid_greeting(self) -> bool:
        """True between a ZMTP peer's signature and the end of its greeting: where libzmq
        leaves a server whose mechanism is not its own (it checks ours before it sends its)."""
        return not self._greeted and len(self._buf) >= 10

    @property
    def buffered(self) -> int:
        """Bytes received and not yet parsed."""
        return len(self._buf)

    def greeting(self) -> bytes:
        """Our whole greeting (the peer reads it in pieces; we need not wait for it)."""
        mech = self._mech.name.ljust(20, b"\x00")
        return SIGNATURE + b"\x03\x01" + mech + bytes((self._mech.as_server,)) + bytes(31)

    def feed(self, data: bytes | memoryview) -> None:
        """Buffer bytes read from the peer (parse them with :meth:`events`)."""
        self._buf += data

    def wrap(self, payload: bytes) -> bytes:
        """The bytes that send ``payload`` as one message."""
        return self._mech.wrap(payload)

    def take_pong(self) -> bytes:
        """The frame answering the peer's latest PING (empty if none is owed); boxed only now,
        so that under CURVE a PONG never written takes no nonce."""
        context, self.pong = self.pong, None
        if context is None:
            return b""
        return self._mech.wrap(command(b"PONG", context), FLAG_COMMAND)

    def ping(self, ttl_deciseconds: int) -> bytes:
        """A PING command (ZMTP 3.1) asking the peer to drop us after ``ttl`` of silence."""
        return self._mech.wrap(command(b"PING", struct.pack(">H", ttl_deciseconds)), FLAG_COMMAND)

    def events(self, max_frames: int, on_event: Callable[[int, bytes], None]) -> int:
        """Parse up to ``max_frames`` frames from the buffer, calling ``on_event(kind, data)``
        for each event they make; return the number of frames parsed (every frame counts,
        also a dropped part of a multipart message).  Stops early at an incomplete frame."""
        buf = self._buf
        if not self._greeted and not self._greet():
            return 0
        count = pos = 0
        limit = self._limit
        try:
            while count < max_frames:
                end = len(buf)
                if end - pos < 2:
                    break
                flags = buf[pos]
                if flags & FLAG_LONG:
                    if end - pos < 9:
                        break
                    (size,) = _LONG.unpack_from(buf, pos + 1)
                    start = pos + 9
                else:
                    size = buf[pos + 1]
                    start = pos + 2
                if flags & ~(FLAG_MORE | FLAG_LONG | FLAG_COMMAND):
                    raise ZmtpError(f"invalid frame flags 0x{flags:02x}")
                if flags & FLAG_COMMAND or not self._ready:
                    if size > MAX_COMMAND:
                        raise ZmtpError(f"command of {size} bytes")
                elif size > limit + 64:  # a CURVE box adds 33 bytes to the payload
                    self._multipart = -1
                    count += 1
                    on_event(MALFORMED, TOO_LARGE)
                    raise ZmtpError(f"frame of {size} bytes (limit {limit})")
                if end - start < size:
                    break
                body = bytes(buf[start : start + size])
                pos = start + size
                count += 1
                self._frame(flags, body, on_event)
        finally:
            del buf[:pos]
        return count

    def _greet(self) -> bool:
        """Check the peer's greeting once it is all here; True when done."""
        buf = self._buf
        if (buf[:1] and buf[0] != 0xFF) or (len(buf) >= 10 and not buf[9] & 1):
            raise ZmtpError("not a ZMTP 3 peer (no greeting signature)")
        if len(buf) >= 11 and buf[10] < 3:  # ZMTP 2.0 sends its revision 1 here
            raise ZmtpVersionError("ZMTP 2.0" if buf[10] == 1 else f"ZMTP revision {buf[10]}")
        if len(buf) < GREETING_SIZE:
            return False
        if buf[32] != 0:  # the referee is the server; a peer that claims to be one cannot talk
            raise ZmtpError("the peer's greeting says it is a server (as-server must be 0)")
        mechanism = bytes(buf[12:32]).rstrip(b"\x00")
        if mechanism != self._mech.name:
            shown = mechanism[:20].decode("ascii", "replace")
            raise ZmtpError(f"mechanism {shown} offered, {self._mech.name.decode()} required")
        # RFC 23: a higher version is valid and talks ours; 4.x and later is taken as 3.1.
        self.peer_minor = buf[11] if buf[10] == 3 else 1
        del buf[:GREETING_SIZE]
        self._greeted = True
        return True

    def _frame(self, flags: int, body: bytes, on_event: Callable[[int, bytes], None]) -> None:
        """Handle one complete frame."""
        if not self._ready:
            if not flags & FLAG_COMMAND:
                raise ZmtpError("data frame before the handshake completed")
            reply, done = self._mech.handshake(body)
            self.outgoing += reply
            if done:
                self._ready = True
                on_event(READY, b"")
            return
        flags, payload = self._mech.unwrap(flags, body)
        if flags & FLAG_COMMAND:
            self._command(payload, on_event)
            return
        if self._multipart >= 0:
            self._multipart += len(payload) + FRAME_COST
            if self._multipart > self._limit:
                self._multipart = -1
                on_event(MALFORMED, TOO_LARGE)
                raise ZmtpError("multipart message over the size limit")
            if flags & FLAG_MORE:
                return
            self._multipart = -1
            on_event(MALFORMED, MULTIPART)
            return
        if flags & FLAG_MORE:
            self._multipart = len(payload) + FRAME_COST
            return
        if len(payload) > self._limit:
            on_event(MALFORMED, TOO_LARGE)
            raise ZmtpError(f"message of {len(payload)} bytes (limit {self._limit})")
        on_event(MESSAGE, payload)

    def _command(self, body: bytes, on_event: Callable[[int, bytes], None]) -> None:
        """PING is answered (one PONG pending at most: a later PING replaces an unwritten
        one), PONG reported, ERROR ends the connection, others are ignored."""
        if body[:5] == b"\x04PING" and len(body) >= 7:
            self.pong = bytes(body[7:23])
        elif body[:5] == b"\x04PONG":
            on_event(PONG, body[5:])
        elif body[:6] == b"\x05ERROR":
            raise ZmtpError("peer sent ERROR")
