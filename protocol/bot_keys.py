"""CURVE for the Python bot SDK: the keys a bot connects with, from its environment.

A referee's ``tcp://`` endpoint requires CURVE (docs/protocol.md, "Connecting over the
network"). A bot needs the referee's public key and its own key pair:

* ``GIN_REFEREE_SERVER_KEY``: the referee's public key (40 Z85 characters, as
  ``gin-referee keygen`` prints it);
* ``GIN_BOT_KEY_FILE``: the bot's secret certificate (``NAME.key_secret`` from
  ``gin-referee keygen --bot NAME``), or ``GIN_BOT_PUBLIC_KEY`` and ``GIN_BOT_SECRET_KEY``
  (Z85; the referee sets these for the bots it starts when they connect over TCP).

Without ``GIN_REFEREE_SERVER_KEY`` the bot connects without CURVE (``ipc://``, or a referee
run with ``--insecure``). During the handshake the SDK watches the socket's monitor, so a key
the referee refuses is reported at once instead of as a silent timeout. pyzmq's helpers for
key files and the monitor import asyncio: they are imported only when CURVE is used, so a bot
that connects over ``ipc://`` starts without them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import NamedTuple

import zmq

__all__ = [
    "BOT_KEY_FILE_ENV",
    "BOT_PUBLIC_KEY_ENV",
    "BOT_SECRET_KEY_ENV",
    "SERVER_KEY_ENV",
    "HANDSHAKE_EVENTS",
    "CurveKeys",
    "await_handshake",
    "curve_keys_from_env",
]

SERVER_KEY_ENV = "GIN_REFEREE_SERVER_KEY"
BOT_KEY_FILE_ENV = "GIN_BOT_KEY_FILE"
BOT_PUBLIC_KEY_ENV = "GIN_BOT_PUBLIC_KEY"
BOT_SECRET_KEY_ENV = "GIN_BOT_SECRET_KEY"

HANDSHAKE_EVENTS = (
    zmq.EVENT_HANDSHAKE_SUCCEEDED
    | zmq.EVENT_HANDSHAKE_FAILED_AUTH
    | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_DISCONNECTED
)


class CurveKeys(NamedTuple):
    """Z85 keys (40 bytes each) for ``curve_serverkey``, ``curve_publickey``,
    ``curve_secretkey``."""

    server: bytes
    public: bytes
    secret: bytes

    def apply(self, sock: zmq.Socket[bytes]) -> None:
        """Make ``sock`` a CURVE client of the referee (before ``connect``)."""
        sock.curve_serverkey = self.server
        sock.curve_publickey = self.public
        sock.curve_secretkey = self.secret


def _z85(value: str, name: str) -> bytes:
    raw = value.strip().encode("ascii", "replace")
    if len(raw) != 40:
        raise ValueError(f"{name}: expected a 40-character Z85 key, got {len(raw)} characters")
    return raw


def curve_keys_from_env(environ: Mapping[str, str] | None = None) -> CurveKeys | None:
    """The keys named in the module docstring (None without ``GIN_REFEREE_SERVER_KEY``);
    ValueError names the variable or file that is wrong."""
    env = os.environ if environ is None else environ
    server = env.get(SERVER_KEY_ENV)
    if not server:
        return None
    key_file = env.get(BOT_KEY_FILE_ENV)
    if key_file:
        import zmq.auth  # only for a key file: it imports asyncio (start-up)

        try:
            public, secret = zmq.auth.load_certificate(key_file)
        except (OSError, ValueError) as err:
            raise ValueError(f"{BOT_KEY_FILE_ENV}={key_file}: not a key pair: {err}") from None
        if secret is None:
            raise ValueError(
                f"{BOT_KEY_FILE_ENV}={key_file}: no secret key in it (use NAME.key_secret)"
            )
        pair = (public, secret)
    else:
        public_text, secret_text = env.get(BOT_PUBLIC_KEY_ENV), env.get(BOT_SECRET_KEY_ENV)
        if not public_text or not secret_text:
            raise ValueError(
                f"{SERVER_KEY_ENV} is set, so the bot needs its own key pair: set "
                f"{BOT_KEY_FILE_ENV} (or {BOT_PUBLIC_KEY_ENV} and {BOT_SECRET_KEY_ENV})"
            )
        pair = (public_text.encode(), secret_text.encode())
    return CurveKeys(
        _z85(server, SERVER_KEY_ENV),
        _z85(pair[0].decode("ascii", "replace"), f"{BOT_PUBLIC_KEY_ENV} (or key file)"),
        _z85(pair[1].decode("ascii", "replace"), f"{BOT_SECRET_KEY_ENV} (or key file)"),
    )


def await_handshake(monitor: zmq.Socket[bytes], timeout_ms: int) -> tuple[str, bool] | None:
    """Wait on a socket's monitor (of :data:`HANDSHAKE_EVENTS`) for the CURVE handshake: None
    once it succeeded, else why not and whether the referee refused the key (True) or no
    handshake happened within ``timeout_ms`` (False)."""
    from zmq.utils.monitor import recv_monitor_message  # CURVE only: it imports asyncio

    deadline = time.monotonic() + timeout_ms / 1000
    failures = 0
    while (left := deadline - time.monotonic()) > 0:
        if not monitor.poll(int(left * 1000) + 1, zmq.POLLIN):
            break
        event = recv_monitor_message(monitor)
        kind = event["event"]
        if kind == zmq.EVENT_HANDSHAKE_SUCCEEDED:
            return None
        if kind == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
            why = (
                f"the referee refused this bot's key (CURVE status {event['value']}): "
                "it is not registered, or another connection with it is live"
            )
            return why, True
        failures += 1  # a failed attempt: libzmq retries; say so if it never succeeds
    hint = f" ({failures} failed attempt(s): is {SERVER_KEY_ENV} the referee's key?)"
    why = f"no CURVE handshake with the referee within {timeout_ms} ms"
    return why + (hint if failures else ""), False
