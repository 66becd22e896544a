"""The spectator server's bounds, over real HTTP on 127.0.0.1: the cap on streams, a spectator
that stops reading (dropped, its stream closed, never buffered without limit), the address."""

from __future__ import annotations

import asyncio
import math
import re
import socket
import zlib
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest

from referee.cli import main
from referee.live import LiveConfig, LiveHub, LiveServer, parse_address
from referee.live.server import SNAPSHOT_TTL
from referee.live.stream import Spectator as Queue
from referee.tournament.store import SqliteStore
from tests.e2e.helpers import GREEDY, RANDOM
from tests.live.spectator import Event, Spectator
from tests.tournament.test_tournament_e2e import write_config

pytestmark = pytest.mark.timeout(60)

STANDINGS = {"games_done": 0, "games_total": 2, "bots": []}


@pytest.mark.asyncio
async def test_streams_over_the_cap_are_refused_and_the_others_served() -> None:
    hub = LiveHub(LiveConfig(max_spectators=2))
    server = LiveServer(hub)
    url = await server.start()
    got = [asyncio.get_running_loop().create_future() for _ in range(2)]

    def waiter(i: int) -> Callable[[Event], None]:
        def on_event(event: Event) -> None:
            if event.kind == "standings" and not got[i].done():
                got[i].set_result(event.data)

        return on_event

    try:
        async with aiohttp.ClientSession() as session:
            spectators = [Spectator(url + "events", on_event=waiter(i)) for i in range(2)]
            tasks = [asyncio.ensure_future(s.run(session)) for s in spectators]
            for s in spectators:
                await asyncio.wait_for(s.connected.wait(), 10)
            async with session.get(url + "events") as refused:
                assert refused.status == 503
                assert "too many spectators (at most 2)" in await refused.text()
            hub.set_standings(STANDINGS)
            assert await asyncio.wait_for(asyncio.gather(*got), 10) == [STANDINGS, STANDINGS]
            assert hub.peak == 2 and hub.dropped == 0
            await server.close()  # ends both streams
            await asyncio.wait_for(asyncio.gather(*tasks), 10)
            assert [s.status for s in spectators] == [200, 200]
            assert all(s.events[0].kind == "config" for s in spectators)
    finally:
        await server.close()


@pytest.mark.asyncio
async def test_a_spectator_that_stops_reading_is_dropped_and_its_stream_closed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    limit = 64 * 1024
    hub = LiveHub(LiveConfig(queue_bytes=limit, standings_seconds=0.0))
    server = LiveServer(hub, write_timeout=1.0)
    url = await server.start()
    host, port = parse_address(url.removeprefix("http://").rstrip("/"))
    loop = asyncio.get_running_loop()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    try:
        await loop.sock_connect(sock, (host, port))
        await loop.sock_sendall(sock, b"GET /events HTTP/1.1\r\nHost: test\r\n\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            head += await asyncio.wait_for(loop.sock_recv(sock, 1), 10)
        assert head.startswith(b"HTTP/1.1 200")
        # From now on the client reads nothing; the referee goes on publishing.
        row = {"name": "x" * 32 * 1024, "games": 0, "wins": 0, "draws": 0, "losses": 0,
               "score": None, "rating": None, "rating_low": None, "rating_high": None,
               "faults": 0}  # fmt: skip
        big = {**STANDINGS, "bots": [row]}
        pushed = 0
        while not hub.dropped and pushed < 2000:
            hub.set_standings(big)
            pushed += 1
            await asyncio.sleep(0)  # let the stream's writer run (and block on the client)
        assert hub.dropped == 1 and not hub.spectators
        dropped = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
        assert len(dropped) == 1 and "(more than 65536) and was dropped" in dropped[0], dropped
        # Its stream is closed by the server: what is left to read is bounded, then EOF.
        left = 0
        while chunk := await asyncio.wait_for(loop.sock_recv(sock, 1 << 16), 30):
            left += len(chunk)
        assert left < pushed * len(str(big))
        # The server goes on: a new spectator gets the current state.
        async with aiohttp.ClientSession() as session:
            fresh = Spectator(url + "events")
            task: asyncio.Future[None] = asyncio.ensure_future(fresh.run(session))

            def on_event(event: Event) -> None:
                if event.kind == "standings":
                    task.cancel()

            fresh.on_event = on_event
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, 10)
            assert [e.kind for e in fresh.events] == ["config", "standings"]
            assert fresh.events[1].data == big
    finally:
        sock.close()
        await server.close()


@pytest.mark.asyncio
async def test_a_stream_is_gzipped_for_a_client_that_accepts_it() -> None:
    hub = LiveHub(LiveConfig())
    rows = [{"name": f"bot{i}", "games": i, "wins": i, "draws": 0, "losses": 0, "score": 0.5,
             "rating": 0.0, "rating_low": -1.0, "rating_high": 1.0, "faults": 0}
            for i in range(200)]  # fmt: skip
    hub.set_standings({**STANDINGS, "bots": rows})
    server = LiveServer(hub)
    url = await server.start()
    try:
        async with aiohttp.ClientSession(auto_decompress=False) as session:
            plain = await session.get(url + "events", headers={"Accept-Encoding": "identity"})
            zipped = await session.get(url + "events", headers={"Accept-Encoding": "br, gzip"})
            refused = await session.get(url + "events", headers={"Accept-Encoding": "gzip;q=0"})
            hub.finish(complete=True)
            await server.close()  # the streams end: the compressed one with its checksum
            bodies = [await r.read() for r in (plain, zipped, refused)]
        assert [r.headers.get("Content-Encoding") for r in (plain, zipped, refused)] == [
            None,
            "gzip",
            None,
        ]
        assert zlib.decompress(bodies[1], 16 + zlib.MAX_WBITS) == bodies[0] == bodies[2]
        assert b"event: over" in bodies[0] and len(bodies[1]) < len(bodies[0]) / 4
    finally:
        await server.close()


@pytest.mark.asyncio
async def test_a_spectator_that_goes_frees_its_slot_at_once() -> None:
    hub = LiveHub(LiveConfig(max_spectators=1))
    server = LiveServer(hub)
    url = await server.start()
    gone = asyncio.Event()
    unsubscribe = hub.unsubscribe

    def left(spectator: Queue) -> None:
        unsubscribe(spectator)
        gone.set()

    hub.unsubscribe = left  # type: ignore[method-assign]
    try:
        async with aiohttp.ClientSession() as session:
            for game in ("g1", "g2"):  # a page that watches one game, then another
                async with session.get(url + "events", params={"game": game}) as resp:
                    assert resp.status == 200  # not 503: the first stream's slot is free
                    assert hub.spectators and next(iter(hub.spectators)).game == game
                await asyncio.wait_for(gone.wait(), 10)  # nothing was published meanwhile
                gone.clear()
                assert not hub.spectators
    finally:
        await server.close()


def test_a_bad_spectator_address_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert parse_address("8080") == ("127.0.0.1", 8080)
    assert parse_address(":8080") == ("127.0.0.1", 8080)
    assert parse_address("0.0.0.0:80") == ("0.0.0.0", 80)
    assert parse_address("[::1]:9000") == ("::1", 9000)
    config = tmp_path / "t.toml"
    config.write_text('[tournament]\nname = "t"\n[[bots]]\nname = "a"\ncommand = "x"\n'
                      '[[bots]]\nname = "b"\ncommand = "y"\n')  # fmt: skip
    for bad, why in [("example.org:80", "'example.org' is not an IP address"),
                     ("127.0.0.1:http", "the port 'http' is not a number"),
                     ("127.0.0.1:70000", "port 70000 is out of range")]:  # fmt: skip
        assert main(["tournament", str(config), "--spectate", bad]) == 2
        assert f"spectator address {bad!r}: {why}" in capsys.readouterr().err
    assert main(["tournament", str(config), "--spectate", "1", "--spectate-delay", "-1"]) == 2
    assert "the spectator delay must be 0 or more seconds" in capsys.readouterr().err


def test_the_tournament_command_serves_the_live_page_while_it_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path / "t.toml", [("greedy", GREEDY), ("random", RANDOM)], games=2)
    out = tmp_path / "out"
    argv = ["tournament", str(config), "--out", str(out), "--spectate", "127.0.0.1:0"]
    assert main([*argv, "--spectate-delay", "0", "--spectate-max", "3"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"^spectators: http://127\.0\.0\.1:\d+/$", err, re.MULTILINE), err
    with SqliteStore.open(out / "tournament.sqlite") as store:
        assert store.counts()["done"] == 2


@pytest.mark.asyncio
async def test_a_flood_of_snapshots_builds_a_page_at_most_twice_a_second() -> None:
    """Each snapshot request used to build the whole page on the referee's loop; now a page
    is built once per SNAPSHOT_TTL for the game it shows, and the rest are served from it."""
    hub = LiveHub(LiveConfig())
    hub.set_standings(STANDINGS)
    server = LiveServer(hub)
    url = await server.start()
    try:
        async with aiohttp.ClientSession() as session:
            start = asyncio.get_running_loop().time()
            bodies = set()
            for _ in range(200):
                async with session.get(url + "snapshot", params={"game": "x" * 40}) as reply:
                    assert reply.status == 200
                    bodies.add(await reply.read())
            elapsed = asyncio.get_running_loop().time() - start
        assert 1 <= server.snapshots_built <= 1 + math.ceil(elapsed / SNAPSHOT_TTL)
        assert len(bodies) <= server.snapshots_built
        assert all(b"games_total" in body for body in bodies)  # the standings are in each
    finally:
        await server.close()
