"""A bare ZMTP 3.1 DEALER client (NULL or CURVE) over asyncio streams, for attacks and soaks.

libzmq will not send what a hostile peer sends (a multipart message that never ends, a frame
whose header lies, a replayed CURVE box), so the tests in ``tests/net`` and ``bench/soak.py``
use this client instead: it completes a real handshake, then writes any bytes it is told to.
It is deliberately small and trusts the server it talks to (a test fixture, never a peer).
"""

from __future__ import annotations

import asyncio
import contextlib
import struct

from nacl.bindings import (
    crypto_box,
    crypto_box_afternm,
    crypto_box_beforenm,
    crypto_box_keypair,
    crypto_box_open,
    crypto_box_open_afternm,
)

__all__ = ["ZmtpClient", "frame"]

SIGNATURE = b"\xff" + bytes(8) + b"\x7f"


def frame(body: bytes, flags: int = 0) -> bytes:
    """One ZMTP 3 frame (flags: 1 more, 4 command; the long flag is added when needed)."""
    if len(body) < 256:
        return bytes((flags, len(body))) + body
    return bytes((flags | 2,)) + struct.pack(">Q", len(body)) + body


def _props(props: dict[bytes, bytes]) -> bytes:
    return b"".join(bytes((len(k),)) + k + struct.pack(">I", len(v)) + v for k, v in props.items())


class ZmtpClient:
    """One connection; ``await ZmtpClient.connect(...)`` returns it ready to send."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.shared = b""
        self.nonce = 1

    @classmethod
    async def connect(
        cls,
        endpoint: str,
        *,
        server_key: bytes | None = None,
        keys: tuple[bytes, bytes] | None = None,
        socket_type: bytes = b"DEALER",
        source: str | None = None,
    ) -> ZmtpClient:
        """Connect and handshake: CURVE when ``server_key`` (raw 32 bytes) is given, with the
        client's long-term ``keys`` (public, secret; fresh ones if None), else NULL; over TCP
        from the address ``source`` if given."""
        if endpoint.startswith("ipc://"):
            reader, writer = await asyncio.open_unix_connection(endpoint[6:])
        else:
            host, port = endpoint[6:].rsplit(":", 1)
            local = None if source is None else (source, 0)
            reader, writer = await asyncio.open_connection(host, int(port), local_addr=local)
        client = cls(reader, writer)
        mech = b"NULL" if server_key is None else b"CURVE"
        writer.write(SIGNATURE + b"\x03\x01" + mech.ljust(20, b"\x00") + bytes(32))
        greeting = await reader.readexactly(64)
        if greeting[12:32].rstrip(b"\x00") != mech:
            raise ConnectionError("server mechanism differs")
        meta = _props({b"Socket-Type": socket_type})
        if server_key is None:
            writer.write(frame(b"\x05READY" + meta, 4))
            await client.read_frame()
        else:
            await client._curve(server_key, keys or crypto_box_keypair(), meta)
        return client

    async def _curve(self, server: bytes, keys: tuple[bytes, bytes], meta: bytes) -> None:
        public, secret = keys
        cpub, csec = crypto_box_keypair()
        short = struct.pack(">Q", self._next())
        box = crypto_box(bytes(64), b"CurveZMQHELLO---" + short, server, csec)
        self.writer.write(frame(b"\x05HELLO\x01\x00" + bytes(72) + cpub + short + box, 4))
        _, welcome = await self.read_frame()
        if welcome[:8] != b"\x07WELCOME":
            raise ConnectionError(f"expected WELCOME, got {welcome[:9]!r}")
        plain = crypto_box_open(welcome[24:], b"WELCOME-" + welcome[8:24], server, csec)
        spub, cookie = plain[:32], plain[32:128]
        vouch_nonce = bytes(16)
        vouch = crypto_box(cpub + server, b"VOUCH---" + vouch_nonce, spub, secret)
        short = struct.pack(">Q", self._next())
        inner = public + vouch_nonce + vouch + meta
        box = crypto_box(inner, b"CurveZMQINITIATE" + short, spub, csec)
        self.writer.write(frame(b"\x08INITIATE" + cookie + short + box, 4))
        _, ready = await self.read_frame()
        if ready[:6] != b"\x05READY":
            raise ConnectionError(f"handshake refused: {ready[:16]!r}")
        self.shared = crypto_box_beforenm(spub, csec)

    def _next(self) -> int:
        self.nonce += 1
        return self.nonce - 1

    def box(self, payload: bytes, flags: int = 0, *, nonce: int | None = None) -> bytes:
        """The frame that carries ``payload`` (boxed under CURVE; inner flags 1 more, 2 command)."""
        if not self.shared:
            return frame(payload, (1 if flags & 1 else 0) | (4 if flags & 2 else 0))
        short = struct.pack(">Q", self._next() if nonce is None else nonce)
        sealed = crypto_box_afternm(
            bytes((flags,)) + payload, b"CurveZMQMESSAGEC" + short, self.shared
        )
        return frame(b"\x07MESSAGE" + short + sealed)

    def send(self, payload: bytes, *, more: bool = False) -> None:
        """Write one frame of a message."""
        self.writer.write(self.box(payload, 1 if more else 0))

    def send_raw(self, data: bytes) -> None:
        """Write bytes as they are."""
        self.writer.write(data)

    def stop_reading(self) -> None:
        """Read nothing more from the server (a peer that never reads what it is sent)."""
        transport = self.writer.transport
        assert isinstance(transport, asyncio.Transport)
        transport.pause_reading()

    async def read_frame(self) -> tuple[int, bytes]:
        """The next frame's (flags, body) as sent."""
        flags, size = await self.reader.readexactly(2)
        if flags & 2:
            size = struct.unpack(">Q", bytes((size,)) + await self.reader.readexactly(7))[0]
        return flags, await self.reader.readexactly(size)

    async def recv(self) -> bytes:
        """The next message's payload (PINGs from the server are answered on the way)."""
        while True:
            flags, body = await self.read_frame()
            if self.shared:
                plain = crypto_box_open_afternm(
                    body[16:], b"CurveZMQMESSAGES" + body[8:16], self.shared
                )
                flags, body = (4 if plain[0] & 2 else 0), plain[1:]
            if flags & 4:
                if body[:5] == b"\x04PING":
                    self.writer.write(self.box(b"\x04PONG" + body[7:], 2))
                continue
            return body

    async def close(self) -> None:
        """Close the connection."""
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.wait_closed()
