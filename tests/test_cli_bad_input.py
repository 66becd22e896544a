"""Bad input is found up front and named (exit 2): a ``--bind`` that cannot be an address,
whether or not anything would bind it, and an ``--out`` that cannot be made, with its flag and
its path (README, "Exit status")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import REPO, gin
from tests.e2e.helpers import GREEDY, RANDOM

pytestmark = pytest.mark.timeout(120)

CUP = REPO / "examples" / "tournament.toml"
LADDER = REPO / "examples" / "ladder.toml"


@pytest.mark.parametrize(
    ("bind", "problem"),
    [
        ("tcp://999.1.1.1:5", "999.1.1.1 is not an IPv4 address"),
        ("tcp://1.2.3:5", "1.2.3 is not an IPv4 address"),
        ("tcp://[zz::q]:5", "zz::q is not an IPv6 address"),
        ("tcp://a b:5", "'a b' is not an address, a host name or an interface name"),
        ("tcp://127.0.0.1:70000", "expected tcp://HOST:PORT"),
    ],
)
def test_a_bad_bind_is_refused_even_when_no_remote_seat_would_use_it(
    tmp_path: Path, bind: str, problem: str
) -> None:
    out = tmp_path / "out"
    for command in (
        ["match", GREEDY, RANDOM, "--games", "1"],  # local bots on ipc: nothing binds it
        ["tournament", str(CUP)],
        ["ladder", "run", str(LADDER)],
    ):
        done = gin(*command, "--bind", bind, "--out", str(out))
        assert done.returncode == 2, (command, done.stderr)
        assert f"--bind {bind}: {problem}" in done.stderr, done.stderr
        assert not out.exists()


def test_wildcard_ipv6_and_names_are_endpoints(tmp_path: Path) -> None:
    done = gin("match", GREEDY, RANDOM, "--games", "1", "--bind", "tcp://[::1]:0")
    assert done.returncode == 0, done.stderr
    done = gin("match", GREEDY, RANDOM, "--games", "1", "--bind", "tcp://localhost:0",
               "--local-transport", "tcp")  # fmt: skip
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    "command",
    [
        ["match", GREEDY, RANDOM, "--games", "1"],
        ["sprt", "--candidate", GREEDY, "--baseline", RANDOM],
        ["tournament", str(CUP)],
        ["ladder", "run", str(LADDER)],
    ],
)
def test_an_out_that_cannot_be_made_is_named_with_its_flag(command: list[str]) -> None:
    done = gin(*command, "--out", "/proc/x")
    assert done.returncode == 2, done.stderr
    assert "--out /proc/x: cannot make or write this directory: No such file or directory" in (
        done.stderr
    ), done.stderr
    assert "[Errno" not in done.stderr


def test_view_and_keygen_name_their_out(tmp_path: Path) -> None:
    done = gin("match", GREEDY, RANDOM, "--games", "1", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    done = gin("view", str(tmp_path / "match.jsonl"), "--out", "/proc/x/page.html")
    assert done.returncode == 2
    assert "--out /proc/x/page.html: cannot write the page: No such file or directory" in (
        done.stderr
    ), done.stderr
    done = gin("keygen", "--bot", "alice", "--out", "/proc/x")
    assert done.returncode == 2
    assert "--out: /proc/x: cannot write the key files: No such file or directory" in (
        done.stderr
    ), done.stderr


def test_report_names_its_out(tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(
        '[tournament]\nname = "r"\ngames_per_pairing = 2\nseed = 2\nconcurrency = 1\n'
        f'[[bots]]\nname = "greedy"\ncommand = "{GREEDY}"\n'
        f'[[bots]]\nname = "random"\ncommand = "{RANDOM}"\n'
    )
    done = gin("tournament", str(config), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    done = gin("report", str(tmp_path / "out"), "--out", "/proc/x/report.html")
    assert done.returncode == 2
    assert "--out /proc/x/report.html: cannot write the report: No such file or directory" in (
        done.stderr
    ), done.stderr


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("nope", "unknown rules preset 'nope' (known: classic, eaai, oklahoma, standard, straight"),
        ("{dir}/missing.toml", "missing.toml: cannot read it"),
        ("{dir}/bad.toml", "bad.toml: not TOML"),
        ("{dir}/field.toml", "field.toml: unknown rule field(s): knock_limt"),
        ("{dir}/value.toml", "value.toml: invalid rule set: target must be 1..100000"),
    ],
)
def test_a_bad_rules_option_is_named(tmp_path: Path, text: str, problem: str) -> None:
    (tmp_path / "bad.toml").write_text("[rules\n")
    (tmp_path / "field.toml").write_text('[rules]\npreset = "eaai"\nknock_limt = 5\n')
    (tmp_path / "value.toml").write_text("target = 0\n")
    done = gin("match", GREEDY, RANDOM, "--games", "1", "--rules", text.format(dir=tmp_path))
    assert done.returncode == 2, done.stderr
    assert problem in done.stderr, done.stderr


def test_a_rules_file_names_the_variant_played(tmp_path: Path) -> None:
    rules = tmp_path / "short.toml"
    rules.write_text('[rules]\npreset = "eaai"\ntarget = 10\n')
    out = tmp_path / "out"
    done = gin("match", GREEDY, RANDOM, "--games", "1", "--rules", str(rules), "--out", str(out))
    assert done.returncode == 0, done.stderr
    header = json.loads((out / "match.jsonl").read_text().splitlines()[0])
    assert header["rules"]["name"] == "eaai-custom" and header["rules"]["target"] == 10, header
    assert header["rules"]["next_dealer"] == "alternate" and header["rules"]["box_bonus"] == 0
