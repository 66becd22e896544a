"""Key files and the key ring: the czmq certificate format, private modes, clear errors."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
import zmq.auth

from referee.net.keys import (
    KeyFileError,
    KeyPair,
    KeyRing,
    decode_key,
    default_key_dir,
    load_keypair,
    read_public_key,
    referee_keys,
    write_keypair,
)

pytestmark = pytest.mark.timeout(10)


def test_the_referee_pair_is_created_once_private_and_readable_by_pyzmq(tmp_path: Path) -> None:
    home = tmp_path / "home"
    pair = referee_keys(home)
    assert referee_keys(home) == pair  # loaded, not replaced
    assert home.stat().st_mode & 0o777 == 0o700
    assert (home / "referee.key_secret").stat().st_mode & 0o777 == 0o600
    public, secret = zmq.auth.load_certificate(home / "referee.key_secret")
    assert (public.decode(), secret and secret.decode()) == (pair.public_z85, pair.secret_z85)
    assert zmq.auth.load_certificate(home / "referee.key") == (public, None)
    assert read_public_key(home / "referee.key") == pair.public


def test_a_pair_written_by_pyzmq_loads(tmp_path: Path) -> None:
    _, secret_file = zmq.auth.create_certificates(str(tmp_path), "bot")
    os.chmod(secret_file, 0o600)
    public, _ = zmq.auth.load_certificate(secret_file)
    assert load_keypair(Path(secret_file)).public_z85 == public.decode()


def test_key_files_with_bad_modes_or_content_are_refused_naming_the_file(
    tmp_path: Path,
) -> None:
    write_keypair(tmp_path, "bot")
    secret = tmp_path / "bot.key_secret"
    with pytest.raises(KeyFileError, match=r"bot\.key_secret: already exists"):
        write_keypair(tmp_path, "bot")
    os.chmod(secret, 0o640)
    with pytest.raises(KeyFileError, match=r"bot.key_secret: .*accessible by others \(mode 0640\)"):
        load_keypair(secret)
    os.chmod(secret, 0o600)
    good = secret.read_text()
    other = KeyPair.generate()
    problems = {
        "no secret-key line": good.replace("secret-key", "secrit"),
        "no public-key line": good.replace("public-key", "publik"),
        "does not belong to the public key": good.replace(
            good.split('public-key = "')[1][:40], other.public_z85
        ),
        "expected 40 Z85 characters": good.replace('secret-key = "', 'secret-key = "x'),
    }
    for words, text in problems.items():
        secret.write_text(text)
        with pytest.raises(KeyFileError, match=words) as info:
            load_keypair(secret)
        assert str(secret) in str(info.value)
    with pytest.raises(KeyFileError, match="no such key file"):
        load_keypair(tmp_path / "missing.key_secret")


def test_z85_keys_round_trip_and_bad_ones_say_why() -> None:
    pair = KeyPair.generate()
    assert decode_key(pair.public_z85) == pair.public
    with pytest.raises(KeyFileError, match="alice: expected 40 Z85 characters"):
        decode_key("short", "alice")


def test_the_default_directory_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIN_REFEREE_HOME", str(tmp_path / "a"))
    assert default_key_dir() == tmp_path / "a"
    monkeypatch.delenv("GIN_REFEREE_HOME")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert default_key_dir() == tmp_path / "cfg" / "gin-referee"


def test_the_ring_admits_listed_keys_and_logs_refusals_at_a_bounded_rate(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ring = KeyRing()
    known = KeyPair.generate().public
    ring.add(known, "alice")
    assert ring(known) is None and ring.name(known) == "alice"
    with caplog.at_level(logging.WARNING):
        for _ in range(1000):
            assert ring(b"\x01" * 32) == "unknown key"
    assert ring.refused == 1000
    assert len(caplog.records) == 10  # the 1st, 2nd, 4th ... 512th refusal
    assert "(512 refused so far)" in caplog.records[-1].getMessage()
