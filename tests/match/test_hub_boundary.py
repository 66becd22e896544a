"""The hub at the network boundary: one connection per token, shutdown, and refusals that are
counted and logged at a bounded rate (in-memory transport, virtual clock)."""

from __future__ import annotations

import logging
import re

import pytest

from protocol.schema import Bye, Error, Pong, Reject, Welcome
from referee.match.hub import Hub
from referee.match.rejects import REPLIES_PER_PEER, ReplyQuota
from tests.match.fakes import FAST, PEER, FakeTransport, VirtualTimer

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(20)]

TOKEN = "alice-token-123"


async def test_a_token_holds_one_lobby_connection_and_the_first_keeps_it() -> None:
    fake = FakeTransport()
    hub = Hub(fake)
    hub.register_remote(TOKEN, "alice")
    fake.hello(PEER, TOKEN)
    for n in range(50):
        fake.hello(b"again%d" % n, TOKEN)
    assert hub.lobby_size == 1
    (reply,) = fake.messages(b"again7")
    assert isinstance(reply, Reject) and reply.code == "token_in_use"
    assert "waiting in the lobby" in reply.message and "the first keeps it" in reply.message
    link = hub.open_seat(0, FAST, TOKEN, reusable=True)
    assert link.peer == PEER  # the first connection is seated, never a later one


async def test_a_second_hello_cannot_take_over_a_seat_in_play() -> None:
    fake = FakeTransport()
    hub = Hub(fake)
    hub.register_remote(TOKEN, "alice")
    link = hub.open_seat(0, FAST, TOKEN, reusable=True)
    fake.hello(PEER, TOKEN)
    await link.connected
    fake.hello(b"thief", TOKEN)
    (reply,) = fake.messages(b"thief")
    assert isinstance(reply, Reject) and reply.code == "token_in_use"
    assert "playing a game" in reply.message
    assert link.peer == PEER and hub.lobby_size == 0 and not hub.is_available(TOKEN)
    hub.close_seat(link)  # the game is over: the token may connect again
    fake.hello(b"next", TOKEN)
    assert isinstance(fake.messages(b"next")[0], Welcome) and hub.is_available(TOKEN)


async def test_shutdown_tells_the_lobby_and_refuses_later_hellos() -> None:
    fake = FakeTransport()
    hub = Hub(fake)
    for n, token in enumerate(("tok-a-12345", "tok-b-12345")):
        hub.register_remote(token, f"bot{n}")
        fake.hello(b"p%d" % n, token)
    assert hub.shutdown() == 2
    for peer in (b"p0", b"p1"):
        _welcome, error, bye = fake.messages(peer)
        assert isinstance(error, Error) and error.code == "shutdown"
        assert isinstance(bye, Bye)
    assert hub.lobby_size == 0
    fake.hello(b"late", "tok-a-12345")
    (reply,) = fake.messages(b"late")
    assert isinstance(reply, Reject) and reply.code == "shutdown"


def _counts(lines: list[str], kind: str) -> int:
    """The refusals of ``kind`` the log lines account for."""
    total = 0
    for line in lines:
        if not line.startswith(f"refused {kind}:"):
            continue
        more = re.search(r": (\d+) more not logged one by one", line)
        total += int(more.group(1)) if more else 1
    return total


async def test_refusals_are_counted_logged_at_a_bounded_rate_and_answered_a_few_times(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="referee.match.hub")
    fake = FakeTransport()
    timer = VirtualTimer()
    hub = Hub(fake, timer=timer, reject_log_interval=10.0)
    guesses, garbage = 10_000, 3_000
    for n in range(guesses):
        if n % 250 == 0:
            timer.advance(1.0)  # 40 virtual seconds in all
            if n % 3000 == 0:  # the lobby's heartbeat flushes every second; here rarely
                hub.rejects.flush()
        fake.hello(b"guesser", f"guess-{n:08d}")
    for _ in range(garbage):
        fake.deliver(b"chatty", Pong(1))
    hub.farewell("over")  # writes the last summaries
    lines = [r.getMessage() for r in caplog.records if r.name == "referee.match.hub"]
    refused = [line for line in lines if line.startswith("refused")]
    # one line at once, then at most one per 10 s interval (+1 for the final summary)
    assert len([x for x in refused if "bad_token" in x]) <= 1 + 40 // 10 + 1
    assert len([x for x in refused if "message before hello" in x]) <= 2
    # one line tells the first refusal; every later one summarises an interval's refusals
    singles = [x for x in refused if "bad_token" in x and "more not logged" not in x]
    assert len(singles) == 1, refused
    assert _counts(refused, "hello (bad_token)") == guesses
    assert _counts(refused, "message before hello") == garbage
    assert f"{guesses} refused so far" in refused[-2] + refused[-1]
    assert hub.rejects.counts["hello (bad_token)"] == guesses and hub.rejected == guesses + garbage
    # No reply amplification: each peer hears about its first few refusals only.
    assert len(fake.messages(b"guesser")) == REPLIES_PER_PEER
    assert len(fake.messages(b"chatty")) == REPLIES_PER_PEER


async def test_the_reply_quota_stays_bounded_under_a_reconnect_storm() -> None:
    quota = ReplyQuota(replies=1, peers=100)
    assert all(quota.take(b"%d" % n) for n in range(10_000))  # every new peer: one reply
    assert not quota.take(b"9999")  # a recent peer has had its reply
    assert len(quota) <= 100
