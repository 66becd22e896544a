"""A match starts its bots before it binds its TCP endpoint and imports the game (start-up):
whatever fails after that start, the bots are gone, and a bot that connects while the referee
is still getting ready waits for it in the socket's backlog; a match of local bots binds no
TCP endpoint at all (tests/e2e/test_local_endpoint.py checks it from a real process). (A bot
that cannot start is its seat's startup fault: tests/e2e/test_misbehaving.py.)"""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile
from pathlib import Path
from typing import Any

import pytest

from referee.cli.main import main
from referee.match import early
from referee.match.bots import BotSpec
from referee.match.config import MatchConfig
from referee.match.runner import run_match
from referee.net import ipc
from referee.net.ipc import PrivateIpc
from referee.net.keys import KeyPair
from referee.net.spawn import Spawned, spawn
from referee.net.transport import RouterTransport
from referee.net.types import TransportError
from tests.conftest import live_children
from tests.e2e.helpers import FAST, GREEDY, RANDOM, play

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(90)]

SLEEPER = "python3 -c 'import time; time.sleep(60)'"


def gone(path: str) -> bool:
    """True if nothing is at ``path`` any more."""
    return not os.path.exists(path)


def noted_sockets(monkeypatch: pytest.MonkeyPatch) -> list[PrivateIpc]:
    """Every private ipc socket a match opens from now on."""
    opened: list[PrivateIpc] = []
    open_ipc = PrivateIpc.open

    def noted() -> PrivateIpc | None:
        ipc = open_ipc()
        if ipc is not None:
            opened.append(ipc)
        return ipc

    monkeypatch.setattr(PrivateIpc, "open", noted)
    return opened


def held_port() -> socket.socket:
    """A listening TCP socket on 127.0.0.1: its port cannot be bound again."""
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen()
    return held


async def test_a_bot_started_before_a_failed_bind_is_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sockets = noted_sockets(monkeypatch)
    held = held_port()
    port = held.getsockname()[1]
    specs = (BotSpec.parse(SLEEPER), BotSpec.parse("remote:carol"))  # carol needs the port
    children = set(live_children())
    try:
        with pytest.raises(TransportError, match=f"cannot bind tcp://127.0.0.1:{port}"):
            await run_match(
                MatchConfig(games=1, time=FAST, seed=1),
                specs,
                bind=f"tcp://127.0.0.1:{port}",
                out_dir=tmp_path,
                kill_grace=0.2,
            )
    finally:
        held.close()
    # the local bot was started (its stderr file is made at the spawn); no process, no endpoint
    assert (tmp_path / "match.seat0.stderr").is_file()
    assert set(live_children()) - children == set()
    assert len(sockets) == 1 and gone(sockets[0].directory)


async def test_a_match_of_local_bots_binds_no_tcp_endpoint(tmp_path: Path) -> None:
    held = held_port()  # given as --bind: a match that bound it would fail
    try:
        result = await run_match(
            MatchConfig(games=1, time=FAST, seed=1),
            (BotSpec.parse(GREEDY), BotSpec.parse(RANDOM)),
            bind=f"tcp://127.0.0.1:{held.getsockname()[1]}",
            out_dir=tmp_path,
            kill_grace=0.5,
            curve=KeyPair.generate(),
        )
    finally:
        held.close()
    assert result.error is None and result.games_played == 1
    assert all(not seat.faults and seat.decisions > 0 for seat in result.seats)


async def test_a_bot_that_connects_before_the_endpoint_is_served_plays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = RouterTransport.start
    waited: list[bool] = []

    async def start_once_a_bot_waits(self: RouterTransport) -> str:
        """Serve the endpoint only once a bot's connection waits in its backlog (a listening
        socket is readable then)."""
        ipc = self._ipc
        assert ipc is not None
        loop = asyncio.get_running_loop()
        pending: asyncio.Future[None] = loop.create_future()
        fd = ipc.socket.fileno()
        loop.add_reader(fd, _settle, pending)
        try:
            await pending
        finally:
            loop.remove_reader(fd)
        waited.append(True)
        return await start(self)

    monkeypatch.setattr(RouterTransport, "start", start_once_a_bot_waits)
    result = await play(GREEDY, RANDOM, tmp_path)
    assert waited == [True]
    assert result.error is None and result.games_played == 1
    assert all(not seat.faults and seat.decisions > 0 for seat in result.seats)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def test_bots_the_command_line_started_are_ended_when_its_log_cannot_be_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    started: list[Spawned] = []

    def noted(*args: Any, **kwargs: Any) -> Spawned:
        spawned = spawn(*args, **kwargs)
        started.append(spawned)
        return spawned

    monkeypatch.setattr(early, "spawn", noted)
    out = tmp_path / "out"
    out.mkdir()
    (out / "referee.log.jsonl").symlink_to(tmp_path / "missing" / "log")  # cannot be opened
    argv = ["match", SLEEPER, SLEEPER, "--out", str(out), "--seed", "1", "--sandbox", "none"]
    assert await asyncio.to_thread(main, argv) == 2
    assert "referee.log.jsonl" in capsys.readouterr().err
    assert len(started) == 2  # both started before the log was configured...
    assert [s.popen.returncode for s in started] == [-9, -9]  # ...and killed and reaped


async def test_where_no_ipc_socket_can_be_bound_local_bots_play_over_tcp_warned_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    deep = tmp_path / ("d" * 110)  # a unix socket's path holds at most 107 bytes
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    ipc._warn_once.cache_clear()
    sockets = noted_sockets(monkeypatch)
    result = await play(GREEDY, RANDOM, tmp_path / "out")
    assert result.error is None and result.games_played == 1
    assert all(not seat.faults for seat in result.seats)
    assert sockets == []  # none could be bound: the bots were sent to the TCP endpoint
    warned = [r.getMessage() for r in caplog.records if "local bots use TCP" in r.getMessage()]
    assert len(warned) == 1 and "AF_UNIX path too long" in warned[0]
