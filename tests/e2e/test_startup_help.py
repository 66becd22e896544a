"""What a bot that cannot start is told, in any language: its stdout before its hello is kept
with its stderr (a JVM that dies before ``main`` says why there; after the hello stdout is read
and dropped, as ``/dev/null`` would), and a peer greeting with an old ZMTP version hears which
versions the referee speaks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from referee.rules import STANDARD
from tests.e2e.helpers import BOTS, FAST, PY, RANDOM, play

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]


def write_bot(path: Path, text: str) -> None:
    """A bot's script, readable by a root referee's bot (a uid of its own)."""
    path.write_text(text)
    path.chmod(0o644)
    path.parent.chmod(0o755)


CHATTY = """\
import sys
from protocol.schema import MatchStart
from sample_bots.random_bot import RandomBot
from protocol.bot import run_bot_main

class Chatty(RandomBot):
    def on_match_start(self, msg: MatchStart) -> None:
        print("after-hello-" * 1000, flush=True)  # dropped
        super().on_match_start(msg)

print("before-hello on stdout", flush=True)
sys.exit(run_bot_main(Chatty(), "chatty"))
"""


async def test_stdout_before_hello_is_quoted_in_the_startup_fault(tmp_path: Path) -> None:
    bot = f"{PY} -c 'import sys; print(\"the reason, on stdout\"); sys.exit(3)'"
    result = await play(bot, RANDOM, tmp_path)
    (fault,) = result.seats[0].faults
    assert fault.kind == "startup"
    assert "exited with code 3 before saying hello" in fault.detail
    assert "; last stderr and stdout: the reason, on stdout" in fault.detail
    kept = (tmp_path / "match.seat0.stderr").read_text()
    assert "the reason, on stdout" in kept


async def test_stdout_after_hello_is_dropped(tmp_path: Path) -> None:
    script = tmp_path / "chatty.py"
    write_bot(script, CHATTY)
    out = tmp_path / "out"
    result = await play(f"{PY} {script}", RANDOM, out, rules=replace(STANDARD, target=10))
    assert not result.seats[0].faults and result.reason == "normal"
    kept = (out / "match.seat0.stderr").read_text()
    assert "before-hello on stdout" in kept
    assert "after-hello" not in kept
    assert result.seats[0].decisions > 0  # it played, so it did print after its hello


FLOOD = """\
import sys
from sample_bots.random_bot import RandomBot
from protocol.bot import run_bot_main

class Flood(RandomBot):
    def act(self, request):
        sys.stdout.write("y" * 65536)  # after the hello: read and dropped
        sys.stdout.flush()
        return super().act(request)

for _ in range(64):  # 4 MiB before the hello, 4 times the log's cap
    sys.stdout.write("x" * 65536)
sys.stdout.flush()
sys.exit(run_bot_main(Flood(), "flood"))
"""


async def test_a_stdout_flood_is_bounded_like_a_stderr_flood(tmp_path: Path) -> None:
    script = tmp_path / "flood.py"
    write_bot(script, FLOOD)
    out = tmp_path / "out"
    result = await play(f"{PY} {script}", RANDOM, out, rules=replace(STANDARD, target=10))
    assert not result.seats[0].faults and result.reason == "normal"
    log = (out / "match.seat0.stderr").read_bytes()
    assert log.endswith(b"[gin-referee: stderr log truncated]\n")  # the flood reached the cap
    assert len(log) < (1 << 20) + 100
    assert b"y" not in log and result.seats[0].decisions > 0


async def test_a_zmtp_2_peer_is_told_which_versions_the_referee_speaks(tmp_path: Path) -> None:
    result = await play(
        f"{PY} {BOTS / 'zmtp2.py'}", RANDOM, tmp_path, time=replace(FAST, startup=1.5)
    )
    (fault,) = result.seats[0].faults
    stderr = (tmp_path / "match.seat0.stderr").read_text()
    assert "zmtp2: greeted 1 time(s)" in stderr  # its greeting reached the referee
    assert fault.kind == "startup" and fault.detail.startswith("no hello within 1.5 s"), fault
    assert "connection(s) greeted with ZMTP 2.0: the referee speaks ZMTP 3.0 and 3.1 only" in (
        fault.detail
    )
