"""The spectator port under a flood of idle connections, at a low descriptor limit: a real
``serve --spectate`` process whose hard limit is 256 (its cap is then 64 connections), and 400
connections that send nothing. The attack is real (every one connects, and past the cap the
server answers them 503 and closes); the referee stays up, logs one line for the whole burst,
and serves the page again once the flood goes away. Without the cap, 1,100 such connections
at a 1,024 limit ended a ladder with ``OSError(24)``."""

from __future__ import annotations

import select
import shutil
import socket
import urllib.request
from pathlib import Path

import pytest

from bench.common import free_port
from tests.e2e.daemon import Procs, start_referee, text, wait_for
from tests.e2e.helpers import PY

pytestmark = pytest.mark.timeout(120)

FLOOD = 400
LIMIT = 256


def answers(socks: list[socket.socket], quiet: float = 1.0) -> list[bytes]:
    """What the server sent each socket before closing it (b"" for one it keeps open), read
    together until none has said anything for ``quiet`` seconds."""
    got = {sock: b"" for sock in socks}
    open_ = set(socks)
    for sock in socks:
        sock.setblocking(False)
    while open_:
        ready, _, _ = select.select(list(open_), [], [], quiet)
        if not ready:
            break
        for sock in ready:
            try:
                chunk = sock.recv(4096)
            except (BlockingIOError, ConnectionError):
                chunk = b""
            got[sock] += chunk
            if not chunk:
                open_.discard(sock)  # closed by the server: a refused one
    return [got[sock] for sock in socks]


def test_an_idle_connection_flood_is_capped_and_the_server_stays_up(
    tmp_path: Path, procs: Procs
) -> None:
    if shutil.which("prlimit") is None:
        pytest.skip("NO UTIL-LINUX PRLIMIT HERE")
    config = tmp_path / "serve.toml"
    config.write_text(
        '[tournament]\nname = "cap"\ngames_per_pairing = 2\n'
        '[[bots]]\nname = "alice"\nremote = true\ntoken = "alice-token-123"\n'
        '[[bots]]\nname = "bob"\nremote = true\ntoken = "bob-token-4567"\n'
    )
    port = free_port()
    low = ("prlimit", f"--nofile={LIMIT}:{LIMIT}", PY)
    serve, _, out = start_referee(
        "serve", config, procs, "--spectate", f"127.0.0.1:{port}", python=low
    )
    url = f"http://127.0.0.1:{port}/snapshot"
    with urllib.request.urlopen(url, timeout=10) as page:
        assert page.status == 200
    flood = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(FLOOD)]
    try:
        with pytest.raises(urllib.error.HTTPError) as busy:  # politely refused while full
            urllib.request.urlopen(url, timeout=10)
        assert busy.value.code == 503 and busy.value.headers["Retry-After"] == "30"
        said = answers(flood)
        refused = [a for a in said if a.startswith(b"HTTP/1.1 503 Service Unavailable")]
        held = said.count(b"")  # kept open (until aiohttp's 15 s idle timeout)
        assert len(refused) + held == FLOOD, {a[:40] for a in said}
        assert held <= LIMIT // 4 + 64 and len(refused) >= FLOOD - LIMIT // 4 - 64, held
        assert serve.poll() is None  # still up
    finally:
        for sock in flood:
            sock.close()

    def serves_again() -> bool:
        try:
            with urllib.request.urlopen(url, timeout=10) as page:
                return bool(page.status == 200)
        except urllib.error.HTTPError:
            return False

    wait_for("the page served again", serves_again)
    log = out / "referee.log.jsonl"
    wait_for("the burst's closing line", lambda: "served again" in text(log))
    lines = [line for line in text(log).splitlines() if "spectator connections" in line]
    assert len(lines) == 2, lines  # one when it started refusing, one when it served again
    assert "Traceback" not in text(log) and "Too many open files" not in text(log)
    assert serve.poll() is None
    serve.terminate()
    serve.communicate(timeout=30)
