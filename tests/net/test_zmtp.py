"""The sans-IO ZMTP server state machine: framing, limits and hostile bytes (no sockets)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.net.zmtp import (
    MALFORMED,
    MESSAGE,
    MULTIPART,
    NULL,
    PONG,
    READY,
    SIGNATURE,
    TOO_LARGE,
    ServerConnection,
    ZmtpError,
    command,
    frame,
    parse_properties,
    properties,
)

LIMIT = 1024
CLIENT_GREETING = SIGNATURE + b"\x03\x01" + b"NULL".ljust(20, b"\x00") + bytes(32)
CLIENT_READY = frame(command(b"READY", properties({b"Socket-Type": b"DEALER"})), 4)


def _ready(props: dict[bytes, bytes]) -> bytes:
    return frame(command(b"READY", properties(props)), 4)


def ready_conn() -> tuple[ServerConnection, list[tuple[int, bytes]]]:
    """A connection past the NULL handshake and the events it produced."""
    conn = ServerConnection(NULL, max_message_bytes=LIMIT)
    events: list[tuple[int, bytes]] = []
    conn.feed(CLIENT_GREETING + CLIENT_READY)
    conn.events(100, lambda k, d: events.append((k, d)))
    assert events == [(READY, b"")]
    events.clear()
    return conn, events


def parse(conn: ServerConnection, events: list[tuple[int, bytes]], data: bytes) -> None:
    conn.feed(data)
    conn.events(10_000, lambda k, d: events.append((k, d)))


def test_greeting_and_ready_reply() -> None:
    conn = ServerConnection(NULL, max_message_bytes=LIMIT)
    greeting = conn.greeting()
    assert len(greeting) == 64 and greeting[:10] == SIGNATURE and greeting[10:12] == b"\x03\x01"
    assert greeting[12:32].rstrip(b"\x00") == b"NULL"
    conn.feed(CLIENT_GREETING + CLIENT_READY)
    conn.events(10, lambda k, d: None)
    assert conn.ready and conn.peer_minor == 1
    flags, size = conn.outgoing[0], conn.outgoing[1]
    body = bytes(conn.outgoing[2 : 2 + size])
    assert flags == 4 and body[:6] == b"\x05READY"
    assert parse_properties(body[6:]) == {b"Socket-Type": b"ROUTER"}


def test_byte_by_byte_delivery_gives_the_same_events() -> None:
    conn = ServerConnection(NULL, max_message_bytes=LIMIT)
    events: list[tuple[int, bytes]] = []
    data = CLIENT_GREETING + CLIENT_READY + frame(b"one") + frame(b"x" * 300)
    for i in range(len(data)):
        conn.feed(data[i : i + 1])
        conn.events(10, lambda k, d: events.append((k, d)))
    assert events == [(READY, b""), (MESSAGE, b"one"), (MESSAGE, b"x" * 300)]


def test_ping_is_answered_with_its_context_and_pong_reported() -> None:
    conn, events = ready_conn()
    conn.outgoing.clear()
    parse(conn, events, frame(command(b"PING", b"\x00\x1e" + b"ctx"), 4))
    assert conn.take_pong() == frame(command(b"PONG", b"ctx"), 4)
    assert conn.take_pong() == b""  # owed once
    parse(conn, events, frame(command(b"PONG", b"abc"), 4))
    assert events == [(PONG, b"abc")]


def test_multipart_is_dropped_and_reported_once() -> None:
    conn, events = ready_conn()
    parse(conn, events, frame(b"a", 1) + frame(b"b", 1) + frame(b"c") + frame(b"next"))
    assert events == [(MALFORMED, MULTIPART), (MESSAGE, b"next")]


def test_an_unfinished_multipart_message_holds_nothing_and_ends_at_the_limit() -> None:
    """The attack that grew libzmq's ROUTER by 200-350 MB/s: frames that never end a message."""
    conn, events = ready_conn()
    for _ in range(LIMIT // 100):
        parse(conn, events, frame(b"y" * 100, 1))
        assert conn.buffered == 0 and events == []
    with pytest.raises(ZmtpError, match="multipart message over the size limit"):
        parse(conn, events, frame(b"y" * 100, 1))
    assert events == [(MALFORMED, TOO_LARGE)]


def test_a_multipart_message_of_empty_frames_ends_at_the_limit() -> None:
    """Each frame counts its shortest header (2 bytes): empty frames do not go on forever."""
    conn, events = ready_conn()
    with pytest.raises(ZmtpError, match="multipart message over the size limit"):
        parse(conn, events, frame(b"", 1) * (LIMIT // 2 + 1))
    assert events == [(MALFORMED, TOO_LARGE)]


def test_a_greeting_of_a_later_major_version_talks_zmtp_3_1() -> None:
    """RFC 23: a peer MUST accept higher versions as valid; the higher one talks ours."""
    conn = ServerConnection(NULL, max_message_bytes=LIMIT)
    conn.feed(SIGNATURE + b"\x04\x00" + CLIENT_GREETING[12:] + CLIENT_READY)
    events: list[tuple[int, bytes]] = []
    conn.events(100, lambda k, d: events.append((k, d)))
    assert events == [(READY, b"")] and conn.peer_minor == 1


def test_an_oversized_frame_is_refused_from_its_header_alone() -> None:
    conn, events = ready_conn()
    header = bytes((2,)) + struct.pack(">Q", 1 << 40)  # claims a terabyte; no body follows
    with pytest.raises(ZmtpError, match="frame of 1099511627776 bytes"):
        parse(conn, events, header)
    assert events == [(MALFORMED, TOO_LARGE)]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"GET / HTTP/1.1\r\n", "no greeting signature"),
        (SIGNATURE + b"\x02\x00", "ZMTP revision 2 greeting: the referee speaks ZMTP 3.0 and"),
        (SIGNATURE + b"\x03\x01" + b"CURVE".ljust(20, b"\x00") + bytes(32), "CURVE offered"),
        (CLIENT_GREETING + frame(b"data"), "data frame before the handshake"),
        (CLIENT_GREETING + frame(command(b"HELLO"), 4), "expected READY"),
        (
            CLIENT_GREETING + frame(command(b"READY", properties({b"Socket-Type": b"PUB"})), 4),
            "socket type PUB",
        ),
        (CLIENT_GREETING + frame(b"\x05READY\x00", 4), "malformed metadata"),
        (CLIENT_GREETING[:32] + b"\x01" + bytes(31), "says it is a server"),
        (CLIENT_GREETING + _ready({b"Socket Type": b"DEALER"}), "invalid metadata name"),
        (CLIENT_GREETING + _ready({b"Socket-Type": b"DEALER", b"X-\xff": b""}), "invalid metadata"),
        (
            CLIENT_GREETING
            + frame(
                command(b"READY", properties({b"Socket-Type": b"DEALER"}))
                + properties({b"socket-type": b"ROUTER"}),
                4,
            ),
            "duplicate metadata name",
        ),
        (CLIENT_GREETING + bytes((0x0C, 2)) + b"ab", "invalid frame flags 0x0c"),
        (CLIENT_GREETING + bytes((6,)) + struct.pack(">Q", 5000), "command of 5000 bytes"),
        (CLIENT_GREETING + CLIENT_READY + frame(command(b"ERROR", b"\x03bad"), 4), "peer sent"),
    ],
)
def test_protocol_violations_are_named(data: bytes, message: str) -> None:
    conn = ServerConnection(NULL, max_message_bytes=LIMIT)
    with pytest.raises(ZmtpError, match=message):
        conn.feed(data)
        conn.events(100, lambda k, d: None)


def test_unknown_commands_are_ignored() -> None:
    conn, events = ready_conn()
    parse(conn, events, frame(command(b"SUBSCRIBE", b"x"), 4) + frame(b"after"))
    assert events == [(MESSAGE, b"after")]


def test_events_stop_at_the_frame_budget() -> None:
    conn, events = ready_conn()
    conn.feed(b"".join(frame(str(i).encode()) for i in range(10)))
    assert conn.events(4, lambda k, d: events.append((k, d))) == 4
    assert [d for _, d in events] == [b"0", b"1", b"2", b"3"]
    assert conn.events(100, lambda k, d: events.append((k, d))) == 6


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=600), max_size=30), st.booleans())
def test_any_bytes_raise_only_zmtp_error_and_stay_bounded(chunks: list[bytes], greet: bool) -> None:
    """Whatever a peer sends, the parser raises nothing but ZmtpError and keeps at most one
    frame (limit plus header) plus the last chunk."""
    conn = ServerConnection(NULL, max_message_bytes=LIMIT)
    if greet:
        conn.feed(CLIENT_GREETING + CLIENT_READY)
    try:
        for chunk in chunks:
            conn.feed(chunk)
            conn.events(10_000, lambda k, d: None)
            assert conn.buffered <= LIMIT + 64 + 9 + len(chunk) + 64
    except ZmtpError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=LIMIT), min_size=1, max_size=20), st.data())
def test_messages_survive_any_split(payloads: list[bytes], data: st.DataObject) -> None:
    """Frames cut anywhere arrive whole and in order (the property the parser's fast path
    must keep whatever the read sizes)."""
    stream = CLIENT_GREETING + CLIENT_READY + b"".join(frame(p) for p in payloads)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    conn = ServerConnection(NULL, max_message_bytes=LIMIT)
    got: list[bytes] = []
    start = 0
    for cut in [*cuts, len(stream)]:
        conn.feed(stream[start:cut])
        start = cut
        conn.events(10_000, lambda k, d: got.append(d) if k == MESSAGE else None)
    assert got == payloads
