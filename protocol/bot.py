"""The Python bot SDK: subclass :class:`Bot`, implement ``act``, call :func:`run_bot`.

This is the only module of :mod:`protocol` that imports ZeroMQ. It is deliberately
blocking and simple: one DEALER socket, one loop, one message at a time::

    class MyBot(Bot):
        def act(self, request: Request) -> WireAction:
            return request.legal[0]

    if __name__ == "__main__":
        raise SystemExit(run_bot_main(MyBot(), "my-bot"))

The loop answers ``ping`` with ``pong``, calls ``act`` for each ``request`` and replies
with the echoed ``request_id``, calls the ``on_*`` hooks for the other messages, and
returns after ``match_end`` (sending ``bye``) or when the referee says ``bye``.
Exit codes are :class:`ExitCode`.

With ``run_bot(..., multi_match=True)`` the hello says the bot can play several matches over
one connection; when the welcome grants it, the loop does not return after ``match_end`` but
waits (answering pings) for the next ``match_start`` or the referee's ``bye``. The bot must
then reset itself in :meth:`Bot.on_match_start`, which gets the match's ``seed``.

The hello asks for ``inline_events`` by default (``run_bot(..., inline_events=False)`` does
not): the referee may then deliver the opponent's moves inside the next ``request``
(``Request.events``) instead of as separate ``event`` messages. Either way ``on_event`` is
called once per opponent move, in order, and always before ``act`` sees the request that
follows it.

Over ``tcp://`` the referee requires CURVE: :func:`run_bot` takes the referee's public key and
the bot's key pair from the environment (:mod:`protocol.bot_keys`), or from ``curve``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from abc import ABC, abstractmethod
from collections.abc import Sequence
from enum import IntEnum

import zmq

from protocol.bot_keys import HANDSHAKE_EVENTS, CurveKeys, await_handshake, curve_keys_from_env
from protocol.codec import MAX_MESSAGE_BYTES, decode_referee_message, encode, encode_action
from protocol.errors import ErrorCode, MalformedMessage, ProtocolError
from protocol.schema import (
    LINK_PATIENCE_MS,
    PROTOCOL_VERSION,
    BotMessage,
    Bye,
    Error,
    Event,
    GameEnd,
    HandEnd,
    HandStart,
    Hello,
    MatchEnd,
    MatchStart,
    Ping,
    Pong,
    RefereeMessage,
    Reject,
    Request,
    Welcome,
    WireAction,
    check_version,
)

__all__ = [
    "DEFAULT_RECV_TIMEOUT_MS",
    "ENDPOINT_ENV",
    "TOKEN_ENV",
    "Bot",
    "ExitCode",
    "run_bot",
    "run_bot_main",
]

ENDPOINT_ENV = "GIN_REFEREE_ENDPOINT"
"""Environment variable holding the referee's ZeroMQ endpoint, e.g. ``tcp://127.0.0.1:5555``."""

TOKEN_ENV = "GIN_REFEREE_TOKEN"
"""Environment variable holding the token to present in ``hello``."""

DEFAULT_RECV_TIMEOUT_MS = LINK_PATIENCE_MS
"""Give up when the referee has sent nothing for this long (it pings idle bots)."""

HEARTBEAT_IVL_MS = 1_000
"""ZMTP heartbeat interval set on the bot's socket."""

HEARTBEAT_TIMEOUT_MS = LINK_PATIENCE_MS
"""Drop the connection when a ZMTP heartbeat gets no traffic back for this long: as long as
the receive timeout, so that a referee that stalls (is stopped, swaps) for less keeps the
link, and every game goes on where it was. (3 s made every bot reconnect 3 s into a pause of
the referee, which then charged each a lost connection.)"""

BYE_LINGER_MS = 500
"""How long closing the socket may wait to flush a final ``bye``."""


class ExitCode(IntEnum):
    """What :func:`run_bot` returns (use it as the process exit status)."""

    OK = 0
    """The match ended (``match_end``) or the referee said ``bye``."""
    BOT_ERROR = 1
    """``act`` or a hook raised; the traceback went to stderr."""
    USAGE = 2
    """No endpoint or token was given."""
    REJECTED = 3
    """The referee answered ``reject`` (or speaks an unsupported version), or refused the
    bot's CURVE key during the handshake."""
    TIMEOUT = 4
    """The referee sent nothing for ``recv_timeout_ms`` (or a send could not complete)."""
    PROTOCOL = 5
    """The referee sent something this SDK could not decode."""


class Bot(ABC):
    """Base class of a Python bot: implement :meth:`act`; the hooks are optional."""

    @abstractmethod
    def act(self, request: Request) -> WireAction:
        """Choose one of ``request.legal`` (a knock may add ``melds``)."""

    def on_match_start(self, msg: MatchStart) -> None:  # noqa: B027
        """Called before the first hand of each match: seat, opponent, rules, clock and the
        match's ``seed`` (reset and reseed here if the bot plays several matches)."""

    def on_hand_start(self, msg: HandStart) -> None:  # noqa: B027
        """Called when a hand is dealt."""

    def on_event(self, msg: Event) -> None:  # noqa: B027
        """Called after each of the opponent's moves, in order: for a separate ``event``
        message when it arrives, for the events inside a ``request`` (``inline_events``)
        just before :meth:`act` is called with that request."""

    def on_hand_end(self, msg: HandEnd) -> None:  # noqa: B027
        """Called when a hand is over."""

    def on_game_end(self, msg: GameEnd) -> None:  # noqa: B027
        """Called when a game is over."""

    def on_match_end(self, msg: MatchEnd) -> None:  # noqa: B027
        """Called when the match is over (then :func:`run_bot` returns, unless the
        connection was granted ``multi_match``)."""


class _PeerGone(Exception):
    """The referee stayed silent past the receive timeout, or a send timed out."""


class _Session:
    """One connection's conversation, from hello to match_end."""

    def __init__(self, bot: Bot, sock: zmq.Socket[bytes], name: str, timeout_ms: int) -> None:
        self.bot = bot
        self.sock = sock
        self.name = name
        self.timeout_ms = timeout_ms
        self.sent_bye = False
        self.multi_match = False

    def say(self, text: str) -> None:
        print(f"[{self.name}] {text}", file=sys.stderr, flush=True)

    def send(self, msg: BotMessage) -> None:
        self._send(encode(msg))
        self.sent_bye = self.sent_bye or isinstance(msg, Bye)

    def _send(self, data: bytes) -> None:
        try:
            self.sock.send(data)
        except zmq.Again:
            raise _PeerGone("could not send to the referee") from None

    def recv(self) -> RefereeMessage | None:
        """The next message; ``None`` for one to skip (an unknown type).

        The socket's receive timeout is the session's (``RCVTIMEO``, set by :func:`run_bot`):
        one call per message, where a poll then ``recv_multipart`` took three (about 4 µs
        more at every decision)."""
        try:
            frame = self.sock.recv(copy=False)
        except zmq.Again:
            raise _PeerGone(f"nothing from the referee for {self.timeout_ms} ms") from None
        if frame.more:
            count = 1 + len(self.sock.recv_multipart())  # the rest of this message
            raise MalformedMessage(f"expected 1 frame, got {count}")
        try:
            return decode_referee_message(frame.bytes)
        except ProtocolError as exc:
            if exc.code != ErrorCode.UNKNOWN_TYPE:
                raise
            self.say(f"ignoring a message: {exc}")
            return None

    def run(self, hello: Hello) -> ExitCode:
        self.send(hello)
        while True:
            msg = self.recv()
            if isinstance(msg, Request):
                for event in msg.events:
                    self.bot.on_event(event)
                self._send(encode_action(msg.request_id, self.bot.act(msg)))
            elif isinstance(msg, Ping):
                self.send(Pong(nonce=msg.nonce))
            elif isinstance(msg, Event):
                self.bot.on_event(msg)
            elif isinstance(msg, HandStart):
                self.bot.on_hand_start(msg)
            elif isinstance(msg, HandEnd):
                self.bot.on_hand_end(msg)
            elif isinstance(msg, GameEnd):
                self.bot.on_game_end(msg)
            elif isinstance(msg, MatchStart):
                self.bot.on_match_start(msg)
            elif isinstance(msg, MatchEnd):
                self.bot.on_match_end(msg)
                if not self.multi_match:
                    self.send(Bye(reason="match over"))
                    return ExitCode.OK
            elif isinstance(msg, Welcome):
                check_version(msg.protocol_version)
                self.multi_match = msg.multi_match and hello.multi_match
            elif isinstance(msg, Reject):
                self.say(f"rejected by the referee: {msg.code}: {msg.message}")
                return ExitCode.REJECTED
            elif isinstance(msg, Error):
                self.say(f"referee reports {msg.code}: {msg.message}")
            elif isinstance(msg, Bye):
                self.say(f"the referee said bye ({msg.reason or 'no reason'})")
                return ExitCode.OK

    def run_safely(self, hello: Hello) -> ExitCode:
        """:meth:`run`, turning every failure into an exit code and a line on stderr."""
        try:
            return self.run(hello)
        except _PeerGone as exc:
            self.say(f"giving up: {exc}")
            return ExitCode.TIMEOUT
        except ProtocolError as exc:
            self.say(f"protocol problem: {exc}")
            self._try_send(Bye(reason=f"protocol error: {exc.code}"))
            if exc.code == ErrorCode.VERSION_UNSUPPORTED:
                return ExitCode.REJECTED
            return ExitCode.PROTOCOL
        except MemoryError:
            # A memory limit (the sandbox's RLIMIT_AS): end as a crash whose stderr names it,
            # the way a runtime dies of it, not with a bye the referee would charge as a stall.
            with contextlib.suppress(MemoryError):
                import traceback

                traceback.print_exc()
            with contextlib.suppress(MemoryError):
                self.say("out of memory (MemoryError): the bot hit its memory limit")
            os._exit(ExitCode.BOT_ERROR)
        except Exception as exc:
            import traceback  # only on this path: a bot's start does not pay for it

            traceback.print_exc()
            self._try_send(Bye(reason=f"bot error: {type(exc).__name__}"))
            return ExitCode.BOT_ERROR

    def _try_send(self, msg: BotMessage) -> None:
        with contextlib.suppress(_PeerGone, zmq.ZMQError):
            self.send(msg)


def run_bot(
    bot: Bot,
    *,
    name: str,
    endpoint: str | None = None,
    token: str | None = None,
    author: str | None = None,
    version: str | None = None,
    recv_timeout_ms: int = DEFAULT_RECV_TIMEOUT_MS,
    inline_events: bool = True,
    multi_match: bool = False,
    curve: CurveKeys | None = None,
) -> int:
    """Connect to the referee, play one match with ``bot`` (or several, see
    ``multi_match``), return an :class:`ExitCode`.

    ``endpoint`` and ``token`` default to the ``GIN_REFEREE_ENDPOINT`` and
    ``GIN_REFEREE_TOKEN`` environment variables. ``name`` (1..64 characters),
    ``author``, ``version``, ``inline_events`` (ask for the opponent's moves inside
    requests; the bot sees no difference) and ``multi_match`` (the bot resets itself in
    ``on_match_start`` and may play several matches on this connection) go into the
    ``hello``. The call returns :attr:`ExitCode.TIMEOUT` if the referee sends nothing for
    ``recv_timeout_ms``. ``curve`` (default: from the environment, see
    :mod:`protocol.bot_keys`) makes the connection CURVE; a key the referee refuses returns
    :attr:`ExitCode.REJECTED`.
    """
    endpoint = endpoint or os.environ.get(ENDPOINT_ENV)
    token = token or os.environ.get(TOKEN_ENV)
    if not endpoint or not token:
        missing = " and ".join(
            f"{flag} (or {env})"
            for flag, env, value in (
                ("--endpoint", ENDPOINT_ENV, endpoint),
                ("--token", TOKEN_ENV, token),
            )
            if not value
        )
        print(f"[{name}] missing {missing}", file=sys.stderr, flush=True)
        return ExitCode.USAGE
    try:
        curve = curve or curve_keys_from_env()
    except ValueError as err:
        print(f"[{name}] {err}", file=sys.stderr, flush=True)
        return ExitCode.USAGE
    hello = Hello(
        PROTOCOL_VERSION,
        name,
        token,
        author=author,
        version=version,
        inline_events=inline_events,
        multi_match=multi_match,
    )
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    session = _Session(bot, sock, name, recv_timeout_ms)
    try:
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.SNDTIMEO, recv_timeout_ms)
        sock.setsockopt(zmq.RCVTIMEO, recv_timeout_ms)
        sock.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        sock.setsockopt(zmq.HEARTBEAT_IVL, HEARTBEAT_IVL_MS)
        sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, HEARTBEAT_TIMEOUT_MS)
        sock.setsockopt(zmq.HEARTBEAT_TTL, HEARTBEAT_TIMEOUT_MS)
        if curve is None:
            sock.connect(endpoint)
            return session.run_safely(hello)
        curve.apply(sock)
        monitor = sock.get_monitor_socket(HANDSHAKE_EVENTS)
        try:
            sock.connect(endpoint)
            refused = await_handshake(monitor, recv_timeout_ms)
        finally:
            sock.disable_monitor()
            monitor.close(linger=0)
        if refused is not None:
            session.say(refused[0])
            return ExitCode.REJECTED if refused[1] else ExitCode.TIMEOUT
        return session.run_safely(hello)
    finally:
        sock.close(linger=BYE_LINGER_MS if session.sent_bye else 0)
        ctx.term()


def run_bot_main(
    bot: Bot,
    name: str,
    argv: Sequence[str] | None = None,
    *,
    inline_events: bool = True,
    multi_match: bool = False,
) -> int:
    """:func:`run_bot` with ``--endpoint``, ``--token`` and ``--recv-timeout-ms`` parsed
    from ``argv`` (default ``sys.argv[1:]``); returns the exit code. ``inline_events`` and
    ``multi_match`` are passed on to :func:`run_bot`.
    """
    words = sys.argv[1:] if argv is None else list(argv)
    if not words:  # the usual start (the referee's variables): nothing to parse
        return run_bot(
            bot,
            name=name,
            recv_timeout_ms=DEFAULT_RECV_TIMEOUT_MS,
            inline_events=inline_events,
            multi_match=multi_match,
        )
    import argparse  # imported only when there are options to read

    parser = argparse.ArgumentParser(prog=name, description=f"gin-referee bot {name!r}")
    parser.add_argument("--endpoint", help=f"referee endpoint (default: ${ENDPOINT_ENV})")
    parser.add_argument("--token", help=f"token for the hello (default: ${TOKEN_ENV})")
    parser.add_argument(
        "--recv-timeout-ms",
        type=int,
        default=DEFAULT_RECV_TIMEOUT_MS,
        help="give up after this long without a message from the referee",
    )
    args = parser.parse_args(words)
    return run_bot(
        bot,
        name=name,
        endpoint=args.endpoint,
        token=args.token,
        recv_timeout_ms=args.recv_timeout_ms,
        inline_events=inline_events,
        multi_match=multi_match,
    )
