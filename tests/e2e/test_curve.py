"""CURVE end to end: a real ``gin-referee match --bind`` process and real remote bots in
Python, Node and C connecting with their keys; an unknown key is refused during the
handshake; ``--insecure`` needs no keys; local bots over TCP get keys from the referee."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.net.keys import KeyPair, write_keypair
from tests.e2e.helpers import FAST, GREEDY, RANDOM, c_bot, cpp_bot, node_bot, play

pytestmark = pytest.mark.timeout(120)
NOTICE = re.compile(
    r"remote seat (\S+): connect to (\S+) with token ([^;\s]+)(?:; referee key (\S+))?"
)


class Referee:
    """A ``gin-referee match`` subprocess; its remote seats' notices, parsed from stderr."""

    def __init__(self, tmp: Path, *args: str) -> None:
        self.out = tmp / "out"
        env = {**os.environ, "GIN_REFEREE_HOME": str(tmp / "home")}
        time = ["--move-time", str(FAST.move), "--bank", str(FAST.bank), "--startup-time", "60"]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "referee", "match", *args, "--bind", "tcp://127.0.0.1:0",
             "--out", str(self.out), "--json", *time],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        self.seats: dict[str, dict[str, str]] = {}
        self.stderr: list[str] = []

    def wait_for_seats(self, count: int) -> None:
        """Read stderr until ``count`` remote seats were announced."""
        assert self.proc.stderr is not None
        while len(self.seats) < count:
            line = self.proc.stderr.readline()
            assert line, f"the referee exited: {''.join(self.stderr)}"
            self.stderr.append(line)
            found = NOTICE.search(line)
            if found:
                name, endpoint, token, key = found.groups()
                self.seats[name] = {
                    "GIN_REFEREE_ENDPOINT": endpoint,
                    "GIN_REFEREE_TOKEN": token,
                    **({"GIN_REFEREE_SERVER_KEY": key} if key else {}),
                }

    def result(self) -> dict[str, object]:
        """The match's JSON summary (the process must exit 0)."""
        out, err = self.proc.communicate(timeout=90)
        assert self.proc.returncode == 0, "".join(self.stderr) + err
        self.stderr.append(err)
        summary: dict[str, object] = json.loads(out)
        return summary


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test starts; killed if still running at the end."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def start(
    procs: list[subprocess.Popen[str]], command: str, env: dict[str, str]
) -> subprocess.Popen[str]:
    """A bot process with ``env`` added to this one's environment."""
    proc = subprocess.Popen(
        command, shell=True, env={**os.environ, **env}, stderr=subprocess.PIPE, text=True
    )
    procs.append(proc)
    return proc


def seat_faults(summary: dict[str, object]) -> list[object]:
    seats = summary["seats"]
    assert isinstance(seats, list)
    return [fault for seat in seats for fault in seat["faults"]]


def test_node_and_c_bots_play_over_curve_and_an_unknown_key_is_refused(
    tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    node, c = node_bot(), c_bot()
    keys = tmp_path / "keys"
    for name in ("node", "cbot", "mallory"):
        write_keypair(keys, name)
    referee = Referee(
        tmp_path, "remote:node", "remote:cbot", "--games", "2",
        "--remote-key", f"node={keys / 'node.key'}", "--remote-key", f"cbot={keys / 'cbot.key'}",
    )  # fmt: skip
    procs.append(referee.proc)
    referee.wait_for_seats(2)
    seats = referee.seats
    assert seats["node"]["GIN_REFEREE_SERVER_KEY"] == seats["cbot"]["GIN_REFEREE_SERVER_KEY"]
    # mallory has node's token and the referee's key, but a key the referee does not know.
    thief = start(
        procs,
        f"{RANDOM} --recv-timeout-ms 20000",
        {**seats["node"], "GIN_BOT_KEY_FILE": str(keys / "mallory.key_secret")},
    )
    _, thief_err = thief.communicate(timeout=30)
    assert thief.returncode == 3, thief_err  # ExitCode.REJECTED, with no welcome
    assert "refused this bot's key (CURVE status 400)" in thief_err
    bots = [
        start(procs, node, {**seats["node"], "GIN_BOT_KEY_FILE": str(keys / "node.key_secret")}),
        start(procs, c, {**seats["cbot"], "GIN_BOT_KEY_FILE": str(keys / "cbot.key_secret")}),
    ]
    summary = referee.result()
    assert summary["reason"] == "normal" and summary["games_played"] == 2, summary
    named = [(seat["name"], seat["self_name"]) for seat in summary["seats"]]  # type: ignore[attr-defined]
    assert named == [("node", "node-bot"), ("cbot", "c-starter")]  # the command line's; the hello's
    assert not seat_faults(summary)
    for bot in bots:
        assert bot.wait(20) == 0
    log = (referee.out / "referee.log.jsonl").read_text()
    assert "refused a CURVE handshake with an unknown key" in log
    assert (tmp_path / "home" / "referee.key_secret").stat().st_mode & 0o777 == 0o600


def test_a_remote_bot_with_its_key_pair_in_variables_plays_and_insecure_needs_no_keys(
    tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    pair = write_keypair(tmp_path / "keys", "alice")
    secure = Referee(
        tmp_path / "a", GREEDY, "remote:alice", "--remote-key", f"alice={pair.public_z85}"
    )
    procs.append(secure.proc)
    secure.wait_for_seats(1)
    env = {
        **secure.seats["alice"],
        "GIN_BOT_PUBLIC_KEY": pair.public_z85,
        "GIN_BOT_SECRET_KEY": pair.secret_z85,
    }
    start(procs, RANDOM, env)
    summary = secure.result()
    assert summary["reason"] == "normal" and not seat_faults(summary), summary
    insecure = Referee(tmp_path / "b", GREEDY, "remote:alice", "--insecure")
    procs.append(insecure.proc)
    insecure.wait_for_seats(1)
    assert "GIN_REFEREE_SERVER_KEY" not in insecure.seats["alice"]
    start(procs, RANDOM, insecure.seats["alice"])
    summary = insecure.result()
    assert summary["reason"] == "normal" and not seat_faults(summary), summary
    assert "--insecure" in "".join(insecure.stderr)
    assert not (tmp_path / "b" / "home").exists()  # no long-term key pair without CURVE


@pytest.mark.asyncio
async def test_local_bots_over_tcp_get_their_keys_from_the_referee(tmp_path: Path) -> None:
    result = await play(GREEDY, RANDOM, tmp_path, local_ipc=False, curve=KeyPair.generate())
    assert result.reason == "normal" and not any(s.faults for s in result.seats), result


def test_the_cpp_starter_plays_over_curve_with_its_key_file(
    tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    keys = tmp_path / "keys"
    write_keypair(keys, "cpp")
    referee = Referee(
        tmp_path, "remote:cpp", GREEDY, "--games", "2", "--remote-key", f"cpp={keys / 'cpp.key'}"
    )
    procs.append(referee.proc)
    referee.wait_for_seats(1)
    key_file = {"GIN_BOT_KEY_FILE": str(keys / "cpp.key_secret")}
    bot = start(procs, cpp_bot(), {**referee.seats["cpp"], **key_file})
    summary = referee.result()
    assert summary["reason"] == "normal" and summary["games_played"] == 2, summary
    assert summary["seats"][0]["self_name"] == "cpp-starter"  # type: ignore[index]
    assert not seat_faults(summary)
    assert bot.wait(20) == 0
    # Without its key the starter says why and exits 2 before it connects.
    keyless = start(procs, cpp_bot(), {**referee.seats["cpp"], "GIN_BOT_KEY_FILE": "/nonexistent"})
    _, err = keyless.communicate(timeout=30)
    assert keyless.returncode == 2 and "must hold 40-character Z85 keys" in err
