"""CurveZMQ (RFC 26), the server's side: the handshake, client authentication, message boxes.

Wire-compatible with libzmq's ``ZMQ_CURVE_SERVER`` (checked against libzmq 4.3 clients in
``tests/net``).  The handshake, for one connection:

1. the client's HELLO proves it knows our long-term public key (a box to it from a transient
   client key ``C'``, which must open to 64 zero bytes; its 72 bytes of padding, which keep
   the HELLO as long as our WELCOME, must be zero);
2. we answer WELCOME: a fresh transient key ``S'`` and a cookie (``C'`` and ``s'`` sealed under
   a key that lives only as long as this connection's handshake);
3. the client's INITIATE carries the cookie back, its long-term public key ``C`` and a vouch (a
   box from ``C`` binding ``C'`` to our long-term key ``S``: both are checked, so a vouch made
   for another server is refused), and its metadata; we open all three, then ask
   ``authorize(C)``: a refusal is answered with an ERROR command and the connection ends, so an
   unknown key never reaches the match layer;
4. we answer READY; every later frame is a MESSAGE box under the ``C'``/``S'`` shared key, with
   strictly increasing nonces in each direction (a replayed or reordered frame is refused).

The crypto is libsodium's, through PyNaCl.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Final

from nacl.bindings import (
    crypto_box,
    crypto_box_afternm,
    crypto_box_beforenm,
    crypto_box_keypair,
    crypto_box_open,
    crypto_box_open_afternm,
    crypto_secretbox,
    crypto_secretbox_open,
    randombytes,
)
from nacl.exceptions import CryptoError

from referee.net.zmtp import (
    FLAG_COMMAND,
    FLAG_MORE,
    ZmtpError,
    check_socket_type,
    command,
    frame,
    parse_properties,
    properties,
)

__all__ = ["Authorizer", "CurveMechanism", "KEY_BYTES"]

KEY_BYTES: Final = 32
_U64: Final = struct.Struct(">Q")
_INNER_FLAGS: Final = FLAG_MORE | 2  # libzmq's inner flags: bit 0 more, bit 1 command
_INNER_COMMAND: Final = 2
_HELLO_PADDING: Final = bytes(72)
_HELLO_SIGNATURE: Final = bytes(64)

Authorizer = Callable[[bytes], str | None]
"""Called with a client's long-term public key: None admits it, a string says why not."""


class CurveMechanism:
    """The CURVE mechanism for one connection (a fresh instance per connection)."""

    name = b"CURVE"
    as_server = 1

    def __init__(self, public_key: bytes, secret_key: bytes, authorize: Authorizer) -> None:
        if len(public_key) != KEY_BYTES or len(secret_key) != KEY_BYTES:
            raise ValueError("CURVE keys are 32 bytes")
        self._public, self._secret = public_key, secret_key
        self._authorize = authorize
        self._state = 0  # 0: expect HELLO, 1: expect INITIATE, 2: ready
        self._client_transient = b""
        self._transient_public = self._transient_secret = b""  # made for a valid HELLO
        self._cookie_key = b""
        self._shared = b""
        self._nonce = 1  # ours, for READY and every message after it
        self._peer_nonce = 0
        self.client_key: bytes | None = None
        """The client's long-term public key, once authenticated."""

    def _next_peer_nonce(self, short: bytes) -> None:
        (nonce,) = _U64.unpack(short)
        if nonce <= self._peer_nonce:
            raise ZmtpError("CURVE nonce not increasing (replayed or reordered frame)")
        self._peer_nonce = nonce

    def handshake(self, body: bytes) -> tuple[bytes, bool]:
        """HELLO → WELCOME, INITIATE → READY (or ERROR and a refusal)."""
        if self._state == 0:
            return self._hello(body), False
        if self._state == 1:
            return self._initiate(body), True
        raise ZmtpError("handshake command after the handshake")  # pragma: no cover

    def _hello(self, body: bytes) -> bytes:
        if body[:6] != b"\x05HELLO":
            raise ZmtpError("expected CURVE HELLO")
        if len(body) != 200 or body[6:8] != b"\x01\x00":
            raise ZmtpError("malformed CURVE HELLO")
        if body[8:80] != _HELLO_PADDING:
            raise ZmtpError("CURVE HELLO padding is not zero")
        self._client_transient = body[80:112]
        self._next_peer_nonce(body[112:120])
        try:
            signature = crypto_box_open(
                body[120:200], b"CurveZMQHELLO---" + body[112:120], body[80:112], self._secret
            )
        except CryptoError:
            raise ZmtpError("CURVE HELLO does not open (wrong server key?)") from None
        if signature != _HELLO_SIGNATURE:
            raise ZmtpError("CURVE HELLO signature is not 64 zero bytes")
        self._transient_public, self._transient_secret = crypto_box_keypair()
        self._cookie_key = randombytes(32)
        cookie_nonce = randombytes(16)
        cookie = crypto_secretbox(
            self._client_transient + self._transient_secret,
            b"COOKIE--" + cookie_nonce,
            self._cookie_key,
        )
        welcome_nonce = randombytes(16)
        box = crypto_box(
            self._transient_public + cookie_nonce + cookie,
            b"WELCOME-" + welcome_nonce,
            self._client_transient,
            self._secret,
        )
        self._state = 1
        return frame(command(b"WELCOME", welcome_nonce + box), FLAG_COMMAND)

    def _initiate(self, body: bytes) -> bytes:
        if body[:9] != b"\x08INITIATE":
            raise ZmtpError("expected CURVE INITIATE")
        if len(body) < 257:
            raise ZmtpError("malformed CURVE INITIATE")
        try:
            cookie = crypto_secretbox_open(body[25:105], b"COOKIE--" + body[9:25], self._cookie_key)
        except CryptoError:
            raise ZmtpError("CURVE cookie does not open") from None
        if cookie != self._client_transient + self._transient_secret:
            raise ZmtpError("CURVE cookie does not match")
        self._next_peer_nonce(body[105:113])
        try:
            plain = crypto_box_open(
                body[113:],
                b"CurveZMQINITIATE" + body[105:113],
                self._client_transient,
                self._transient_secret,
            )
            client_key = plain[:32]
            vouch = crypto_box_open(
                plain[48:128], b"VOUCH---" + plain[32:48], client_key, self._transient_secret
            )
        except CryptoError:
            raise ZmtpError("CURVE INITIATE or vouch does not open") from None
        if vouch[:32] != self._client_transient:
            raise ZmtpError("CURVE vouch does not match the transient key")
        if vouch[32:64] != self._public:
            raise ZmtpError("CURVE vouch names another server key")
        self._cookie_key = b""
        self._shared = crypto_box_beforenm(self._client_transient, self._transient_secret)
        check_socket_type(parse_properties(plain[128:]))
        refusal = self._authorize(client_key)
        if refusal is not None:
            error = frame(command(b"ERROR", b"\x03400"), FLAG_COMMAND)
            raise ZmtpError(f"key refused: {refusal}", reply=error)
        self.client_key = client_key
        self._state = 2
        metadata = properties({b"Socket-Type": b"ROUTER"})
        return frame(command(b"READY", self._box(b"CurveZMQREADY---", metadata)), FLAG_COMMAND)

    def _box(self, prefix: bytes, plain: bytes) -> bytes:
        """Our next nonce's short form, then the box of ``plain`` under the shared key."""
        short = _U64.pack(self._nonce)
        self._nonce += 1
        return short + crypto_box_afternm(plain, prefix + short, self._shared)

    def wrap(self, payload: bytes, flags: int = 0) -> bytes:
        """A MESSAGE box (a data frame on the wire, as libzmq sends it)."""
        inner = (FLAG_MORE if flags & FLAG_MORE else 0) | (
            _INNER_COMMAND if flags & FLAG_COMMAND else 0
        )
        return frame(command(b"MESSAGE", self._box(b"CurveZMQMESSAGES", bytes((inner,)) + payload)))

    def unwrap(self, flags: int, body: bytes) -> tuple[int, bytes]:
        """Open a MESSAGE box; its inner flags say more/command."""
        if body[:8] != b"\x07MESSAGE" or len(body) < 33:
            raise ZmtpError("expected a CURVE MESSAGE")
        self._next_peer_nonce(body[8:16])
        try:
            plain = crypto_box_open_afternm(
                body[16:], b"CurveZMQMESSAGEC" + body[8:16], self._shared
            )
        except CryptoError:
            raise ZmtpError("CURVE MESSAGE does not open") from None
        inner = plain[0]
        if inner & ~_INNER_FLAGS:
            raise ZmtpError(f"invalid CURVE message flags 0x{inner:02x}")
        out = (FLAG_MORE if inner & FLAG_MORE else 0) | (
            FLAG_COMMAND if inner & _INNER_COMMAND else 0
        )
        return out, plain[1:]
