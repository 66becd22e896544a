"""Log discipline with a real ``serve`` process: clients guessing tokens as fast as they can
(a connection per guess, since a refused hello ends its connection) cost a bounded number of
log lines that state the counts, and the log file rotates."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from pathlib import Path

import pytest

from bench.zmtp_client import ZmtpClient
from protocol.codec import encode
from protocol.schema import Hello
from referee.cli.logs import configure
from tests.e2e.daemon import Procs, start_referee, text, wait_for

pytestmark = pytest.mark.timeout(300)

GUESSES = 50_000
CLIENTS = 8


async def guess(endpoint: str, first: int, count: int) -> None:
    """``count`` hellos with wrong tokens, one connection each (a refused hello ends its
    connection), as a token-guessing client does; each from a loopback address of its own, as
    from many machines (from one address the referee would close all but the first 32
    connections and 4 a second at accept: ``TransportConfig.connect_rate``)."""
    for n in range(first, first + count):
        source = f"127.1.{n // 250}.{2 + n % 250}"
        client = await ZmtpClient.connect(endpoint, source=source)
        client.send(encode(Hello(1, "guesser", f"guess-{n:010d}")))
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            await client.recv()  # the reject; then the referee closes the connection
        await client.close()


async def flood(endpoint: str) -> None:
    per = GUESSES // CLIENTS
    await asyncio.gather(*(guess(endpoint, c * per, per) for c in range(CLIENTS)))
    last = await ZmtpClient.connect(endpoint)  # after every guess: a registered bot
    last.send(encode(Hello(1, "alice", "alice-token-123")))
    await last.recv()  # its welcome
    await last.close()


def test_50000_bad_hellos_cost_a_few_log_lines_that_state_the_counts(
    tmp_path: Path, procs: Procs
) -> None:
    config = tmp_path / "serve.toml"
    config.write_text(
        '[tournament]\nname = "flood"\ngames_per_pairing = 2\n'
        '[[bots]]\nname = "alice"\nremote = true\ntoken = "alice-token-123"\n'
        '[[bots]]\nname = "bob"\nremote = true\ntoken = "bob-token-4567"\n'
    )
    serve, endpoint, out = start_referee("serve", config, procs)
    log = out / "referee.log.jsonl"
    started = time.monotonic()
    asyncio.run(flood(endpoint))
    elapsed = time.monotonic() - started
    wait_for("the last hello", lambda: "'alice' waits in the lobby" in text(log))
    serve.terminate()
    serve.communicate(timeout=30)
    assert serve.returncode == 130
    lines = [json.loads(line)["event"] for line in log.read_text().splitlines()]
    refused = [line for line in lines if line.startswith("refused hello (bad_token)")]
    print(f"{GUESSES} guesses in {elapsed:.1f} s: {len(lines)} log lines, {len(refused)} on them")
    # the first refusal, one summary per 10 s interval, and the last summary at shutdown
    assert 2 <= len(refused) <= 2 + elapsed / 10
    assert len(lines) < 30 + elapsed / 10, lines
    stated = [int(m[1]) for m in (re.search(r"(\d+) more not logged", x) for x in refused) if m]
    assert 1 + sum(stated) == GUESSES
    assert f"{GUESSES} refused so far" in refused[-1]


def test_the_json_log_rotates_at_its_size_limit(tmp_path: Path) -> None:
    log = tmp_path / "referee.log.jsonl"
    configure(level="info", json_file=log, console=False, max_bytes=4096, backups=2)
    logger = logging.getLogger("referee.test")
    try:
        for n in range(2000):
            logger.info("line %d of a long-running daemon", n)
    finally:
        configure(level="warning", console=False)  # closes the file
    files = sorted(tmp_path.glob("referee.log.jsonl*"))
    assert [f.name for f in files] == [
        "referee.log.jsonl",
        "referee.log.jsonl.1",
        "referee.log.jsonl.2",
    ]
    assert all(f.stat().st_size <= 4096 for f in files)
    last = json.loads(log.read_text().splitlines()[-1])
    assert last["event"] == "line 1999 of a long-running daemon"
