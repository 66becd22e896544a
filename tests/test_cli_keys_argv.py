"""A Z85 key that begins with ``-`` (one in 85) is still a key on the command line, given as
its own word after its option: argparse would take it for an option ("expected one
argument"), so the command line joins it to its option first (``referee.cli.keys``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.net.keys import KeyPair
from tests.cli_helpers import gin

pytestmark = pytest.mark.timeout(120)


def dashed() -> KeyPair:
    """A key pair whose public key (Z85) begins with ``-``."""
    while not (pair := KeyPair.generate()).public_z85.startswith("-"):
        pass
    return pair


def test_a_public_key_beginning_with_a_dash_is_taken_as_its_own_word(tmp_path: Path) -> None:
    pair = dashed()
    done = gin("ladder", "add", str(tmp_path), "alice", "--remote", "--public-key",
               pair.public_z85, "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "expected one argument" not in done.stderr
    assert '"kind": "remote"' in done.stdout and "alice.v1" in done.stdout, done.stdout
    again = gin("ladder", "add", str(tmp_path), "alice", "--remote", "--public-key",
                pair.public_z85)  # fmt: skip
    assert again.returncode == 0 and again.stdout.startswith("unchanged: alice.v1"), again
