"""The Python bot SDK and the random sample bot against a real ZeroMQ ROUTER in the test."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import msgpack
import pytest

from protocol.bot import Bot, ExitCode, run_bot, run_bot_main
from protocol.codec import encode
from protocol.examples import EXAMPLES, TYPICAL_REQUEST
from protocol.schema import (
    ActionMsg,
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
    Reject,
    Request,
    Welcome,
    WireAction,
)
from sample_bots.random_bot import RandomBot
from tests.protocol.fake_referee import WAIT_MS, FakeReferee

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def referee() -> Iterator[FakeReferee]:
    ref = FakeReferee()
    try:
        yield ref
    finally:
        ref.close()


class BotThread:
    """``run_bot`` in a thread; ``join`` returns its exit code."""

    def __init__(self, target: Callable[[], int]) -> None:
        self.result: list[int] = []
        self.thread = threading.Thread(target=lambda: self.result.append(target()), daemon=True)
        self.thread.start()

    def join(self) -> int:
        self.thread.join(timeout=WAIT_MS / 1000)
        assert not self.thread.is_alive(), "run_bot did not return"
        return self.result[0]


@pytest.fixture
def start_bot(referee: FakeReferee) -> Iterator[Callable[..., BotThread]]:
    started: list[BotThread] = []

    def start(bot: Bot, **kwargs: object) -> BotThread:
        options: dict[str, object] = {
            "name": "test-bot",
            "endpoint": referee.endpoint,
            "token": "tok-1",
            "recv_timeout_ms": WAIT_MS,
        }
        options.update(kwargs)
        started.append(BotThread(lambda: run_bot(bot, **options)))  # type: ignore[arg-type]
        return started[-1]

    yield start
    for bot_thread in started:  # a failed test must not leave run_bot waiting
        if bot_thread.thread.is_alive() and referee.peer is not None:
            referee.send(Bye(reason="test over"))
        bot_thread.thread.join(timeout=WAIT_MS / 1000)


class ActLogBot(RandomBot):
    """A random bot that logs each ``act`` call in ``seen``."""

    def __init__(self) -> None:
        super().__init__(seed=7)
        self.seen: list[str] = []

    def act(self, request: Request) -> WireAction:
        self.seen.append(f"act:{request.request_id}")
        return super().act(request)


class RecordingBot(ActLogBot):
    """A random bot that records every hook call."""

    def on_match_start(self, msg: MatchStart) -> None:
        self.seen.append("match_start")

    def on_hand_start(self, msg: HandStart) -> None:
        self.seen.append("hand_start")

    def on_event(self, msg: Event) -> None:
        self.seen.append("event")

    def on_hand_end(self, msg: HandEnd) -> None:
        self.seen.append("hand_end")

    def on_game_end(self, msg: GameEnd) -> None:
        self.seen.append("game_end")

    def on_match_end(self, msg: MatchEnd) -> None:
        self.seen.append("match_end")


def test_full_conversation(referee: FakeReferee, start_bot: Callable[..., BotThread]) -> None:
    bot = RecordingBot()
    running = start_bot(bot, author="tests", version="9")
    hello = referee.handshake()
    assert hello == Hello(1, "test-bot", "tok-1", author="tests", version="9", inline_events=True)
    referee.send(EXAMPLES["match_start"])
    referee.send(EXAMPLES["hand_start"])
    for request_id in (5, 6):
        request = Request(
            request_id,
            TYPICAL_REQUEST.decision,
            TYPICAL_REQUEST.legal,
            TYPICAL_REQUEST.view,
            time_left_ms=1000,
            bank_ms=0,
        )
        referee.send(request)
        reply = referee.recv()
        assert isinstance(reply, ActionMsg)
        assert reply.request_id == request_id
        assert reply.action in request.legal
        referee.send(EXAMPLES["event"])
    referee.send(Ping(nonce=991))
    assert referee.recv() == Pong(nonce=991)
    referee.send(Error("stale_request", "request 4 is no longer outstanding", request_id=4))
    referee.send_raw(msgpack.packb({"type": "from_the_future", "x": 1}))
    referee.send(Ping(nonce=992))
    assert referee.recv() == Pong(nonce=992)
    referee.send(EXAMPLES["hand_end"])
    referee.send(EXAMPLES["game_end"])
    referee.send(EXAMPLES["match_end"])
    assert isinstance(referee.recv(), Bye)
    assert running.join() == ExitCode.OK
    assert bot.seen == [
        "match_start",
        "hand_start",
        "act:5",
        "event",
        "act:6",
        "event",
        "hand_end",
        "game_end",
        "match_end",
    ]


class EventLogBot(ActLogBot):
    """A random bot that logs each event (who did what) and each ``act``, in call order."""

    def on_event(self, msg: Event) -> None:
        self.seen.append(f"event:{msg.seat}:{msg.action.kind}:{msg.action.card}")


def _request(request_id: int, *events: Event) -> Request:
    return replace(TYPICAL_REQUEST, request_id=request_id, events=events)


def _expect_action(referee: FakeReferee, request_id: int) -> None:
    reply = referee.recv()
    assert isinstance(reply, ActionMsg)
    assert reply.request_id == request_id
    assert reply.action in TYPICAL_REQUEST.legal


@pytest.mark.parametrize("inline_events", [True, False])
def test_hello_asks_for_inline_events_unless_told_not_to(
    referee: FakeReferee, start_bot: Callable[..., BotThread], inline_events: bool
) -> None:
    options: dict[str, object] = {} if inline_events else {"inline_events": False}
    running = start_bot(RandomBot(), **options)
    hello = referee.recv()
    assert isinstance(hello, Hello)
    assert hello.inline_events is inline_events
    assert ("inline_events" in msgpack.unpackb(encode(hello))) is inline_events
    referee.send(Welcome(1, "test-referee", 1000, inline_events=inline_events))
    referee.send(EXAMPLES["match_end"])
    assert isinstance(referee.recv(), Bye)
    assert running.join() == ExitCode.OK


def test_events_inside_a_request_reach_on_event_in_order_before_act(
    referee: FakeReferee, start_bot: Callable[..., BotThread]
) -> None:
    bot = EventLogBot()
    running = start_bot(bot)
    assert referee.handshake().inline_events
    took = Event(seat=1, action=WireAction.take_discard("Jc"))
    dropped = Event(seat=1, action=WireAction.discard("7d"))
    drew = Event(seat=1, action=WireAction.draw_stock())
    knocked = Event(seat=1, action=WireAction.knock("Kd"))
    referee.send(_request(5, took, dropped))
    _expect_action(referee, 5)
    referee.send(drew)  # a separate event still reaches on_event
    referee.send(_request(6))
    _expect_action(referee, 6)
    referee.send(_request(7, dropped))
    _expect_action(referee, 7)
    referee.send(knocked)  # held events come as messages before any other message
    referee.send(EXAMPLES["match_end"])
    assert isinstance(referee.recv(), Bye)
    assert running.join() == ExitCode.OK
    assert bot.seen == [
        "event:1:take_discard:Jc",
        "event:1:discard:7d",
        "act:5",
        "event:1:draw_stock:None",
        "act:6",
        "event:1:discard:7d",
        "act:7",
        "event:1:knock:Kd",
    ]


def test_reject_exits_nonzero(
    referee: FakeReferee, start_bot: Callable[..., BotThread], capsys: pytest.CaptureFixture[str]
) -> None:
    running = start_bot(RandomBot())
    assert isinstance(referee.recv(), Hello)
    referee.send(Reject("bad_token", "unknown token", (1,)))
    assert running.join() == ExitCode.REJECTED
    assert "bad_token: unknown token" in capsys.readouterr().err


def test_unsupported_welcome_version(
    referee: FakeReferee, start_bot: Callable[..., BotThread]
) -> None:
    running = start_bot(RandomBot())
    assert isinstance(referee.recv(), Hello)
    referee.send(Welcome(protocol_version=2, referee="future", heartbeat_ms=1000))
    assert isinstance(referee.recv(), Bye)
    assert running.join() == ExitCode.REJECTED


def test_referee_bye_ends_cleanly(
    referee: FakeReferee, start_bot: Callable[..., BotThread]
) -> None:
    running = start_bot(RandomBot())
    referee.handshake()
    referee.send(Bye(reason="shutdown"))
    assert running.join() == ExitCode.OK


def test_silent_referee_times_out(
    referee: FakeReferee, start_bot: Callable[..., BotThread]
) -> None:
    running = start_bot(RandomBot(), recv_timeout_ms=200)
    assert isinstance(referee.recv(), Hello)
    assert running.join() == ExitCode.TIMEOUT


def test_bot_exception_exits_with_bot_error(
    referee: FakeReferee, start_bot: Callable[..., BotThread]
) -> None:
    class Broken(RandomBot):
        def act(self, request: Request) -> WireAction:
            raise RuntimeError("boom")

    running = start_bot(Broken())
    referee.handshake()
    referee.send(TYPICAL_REQUEST)
    bye = referee.recv()
    assert bye == Bye(reason="bot error: RuntimeError")
    assert running.join() == ExitCode.BOT_ERROR


def test_undecodable_referee_message(
    referee: FakeReferee, start_bot: Callable[..., BotThread]
) -> None:
    running = start_bot(RandomBot())
    referee.handshake()
    referee.send_raw(msgpack.packb({"type": "request", "request_id": 1}))
    assert isinstance(referee.recv(), Bye)
    assert running.join() == ExitCode.PROTOCOL


def test_a_multipart_referee_message_is_a_protocol_error(
    referee: FakeReferee,
    start_bot: Callable[..., BotThread],
    capfd: pytest.CaptureFixture[str],
) -> None:
    running = start_bot(RandomBot())
    referee.handshake()
    referee.send_raw(encode(TYPICAL_REQUEST), b"", b"third")
    assert referee.recv() == Bye(reason="protocol error: malformed")
    assert running.join() == ExitCode.PROTOCOL
    assert "expected 1 frame, got 3" in capfd.readouterr().err


def test_missing_endpoint_or_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GIN_REFEREE_ENDPOINT", raising=False)
    monkeypatch.delenv("GIN_REFEREE_TOKEN", raising=False)
    assert run_bot(RandomBot(), name="x") == ExitCode.USAGE
    assert run_bot_main(RandomBot(), "x", ["--endpoint", "tcp://127.0.0.1:1"]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "GIN_REFEREE_ENDPOINT" in err
    assert "GIN_REFEREE_TOKEN" in err


def hello_then_end(referee: FakeReferee, running: BotThread) -> Hello:
    """The bot's hello; then ``match_end``, to which it says ``bye`` and exits cleanly."""
    try:
        hello = referee.handshake()
        referee.send(EXAMPLES["match_end"])
        assert isinstance(referee.recv(), Bye)
    finally:
        if running.thread.is_alive() and referee.peer is not None:
            referee.send(Bye())
        assert running.join() == ExitCode.OK
    return hello


def test_run_bot_main_reads_arguments_and_environment(
    referee: FakeReferee, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIN_REFEREE_TOKEN", "from-env")
    argv = ["--endpoint", referee.endpoint, "--recv-timeout-ms", str(WAIT_MS)]
    hello = hello_then_end(referee, BotThread(lambda: run_bot_main(RandomBot(), "argv-bot", argv)))
    assert (hello.name, hello.token, hello.inline_events) == ("argv-bot", "from-env", True)


def test_run_bot_main_passes_inline_events_on(referee: FakeReferee) -> None:
    argv = ["--endpoint", referee.endpoint, "--token", "t", "--recv-timeout-ms", str(WAIT_MS)]
    running = BotThread(lambda: run_bot_main(RandomBot(), "plain", argv, inline_events=False))
    assert hello_then_end(referee, running).inline_events is False


def test_run_bot_main_without_options_reads_the_environment_only(
    referee: FakeReferee, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIN_REFEREE_ENDPOINT", referee.endpoint)
    monkeypatch.setenv("GIN_REFEREE_TOKEN", "env-token")
    running = BotThread(lambda: run_bot_main(RandomBot(), "env-bot", [], inline_events=False))
    hello = hello_then_end(referee, running)
    assert (hello.name, hello.token, hello.inline_events) == ("env-bot", "env-token", False)


def test_random_bot_is_deterministic(monkeypatch: pytest.MonkeyPatch) -> None:
    def picks(bot: RandomBot) -> list[WireAction]:
        return [bot.act(TYPICAL_REQUEST) for _ in range(30)]

    assert picks(RandomBot(3)) == picks(RandomBot(3))
    assert picks(RandomBot(3)) != picks(RandomBot(4))
    monkeypatch.setenv("GIN_BOT_SEED", "3")
    assert picks(RandomBot()) == picks(RandomBot("3"))
    assert set(picks(RandomBot())) <= set(TYPICAL_REQUEST.legal)


@pytest.mark.parametrize(
    "command",
    [["-m", "sample_bots.random_bot"], ["sample_bots/random_bot.py"]],
    ids=["module", "script"],
)
def test_random_bot_process(referee: FakeReferee, command: list[str]) -> None:
    env = {
        **os.environ,
        "GIN_REFEREE_ENDPOINT": referee.endpoint,
        "GIN_REFEREE_TOKEN": "proc-token",
        "PYTHONPATH": str(REPO),
    }
    proc = subprocess.Popen(
        [sys.executable, *command], cwd=REPO, env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        hello = referee.handshake()
        assert (hello.name, hello.token) == ("random-bot", "proc-token")
        referee.send(EXAMPLES["match_start"])
        referee.send(TYPICAL_REQUEST)
        reply = referee.recv()
        assert isinstance(reply, ActionMsg)
        assert reply.request_id == TYPICAL_REQUEST.request_id
        assert reply.action in TYPICAL_REQUEST.legal
        referee.send(Ping(nonce=5))
        assert referee.recv() == Pong(nonce=5)
        referee.send(EXAMPLES["match_end"])
        assert isinstance(referee.recv(), Bye)
        _, err = proc.communicate(timeout=WAIT_MS / 1000)
        assert proc.returncode == 0, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.mark.parametrize("granted", [True, False])
def test_a_multi_match_bot_waits_for_the_next_match_when_granted(
    referee: FakeReferee, start_bot: Callable[..., BotThread], granted: bool
) -> None:
    bot = RandomBot(seed="env")
    running = start_bot(bot, multi_match=True)
    hello = referee.recv()
    assert isinstance(hello, Hello) and hello.multi_match
    referee.send(Welcome(1, "test-referee", 1000, multi_match=granted))
    example = EXAMPLES["match_start"]
    assert isinstance(example, MatchStart)
    first = replace(example, seed="s-1")
    choices = []
    for match in (first, replace(first, match_id="m-0008")):
        referee.send(match)
        referee.send(_request(1))
        reply = referee.recv()
        assert isinstance(reply, ActionMsg)
        choices.append(reply.action)
        referee.send(EXAMPLES["match_end"])
        if not granted:
            assert isinstance(referee.recv(), Bye)
            assert running.join() == ExitCode.OK
            return
        referee.send(Ping(nonce=7))  # between matches the bot only answers pings
        assert referee.recv() == Pong(nonce=7)
    # Reseeded from the same seed at each match_start: the same choice, the same RNG state.
    expected = random.Random("s-1")
    assert choices == [expected.choice(TYPICAL_REQUEST.legal)] * 2
    assert bot.rng.getstate() == expected.getstate()
    referee.send(Bye(reason="no more matches"))
    assert running.join() == ExitCode.OK
