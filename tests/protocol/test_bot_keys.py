"""The SDK's CURVE keys from the environment: what is read, and errors naming the variable."""

from __future__ import annotations

from pathlib import Path

import pytest
import zmq
import zmq.auth

from protocol.bot_keys import CurveKeys, curve_keys_from_env

pytestmark = pytest.mark.timeout(10)


def test_no_server_key_means_no_curve_and_a_key_file_or_variables_give_the_pair(
    tmp_path: Path,
) -> None:
    server, _ = zmq.curve_keypair()
    public, secret = zmq.curve_keypair()
    assert curve_keys_from_env({}) is None
    base = {"GIN_REFEREE_SERVER_KEY": server.decode()}
    by_vars = {**base, "GIN_BOT_PUBLIC_KEY": public.decode(), "GIN_BOT_SECRET_KEY": secret.decode()}
    assert curve_keys_from_env(by_vars) == CurveKeys(server, public, secret)
    _, secret_file = zmq.auth.create_certificates(str(tmp_path), "bot")
    from_file = curve_keys_from_env({**base, "GIN_BOT_KEY_FILE": secret_file})
    assert from_file is not None
    assert (from_file.public, from_file.secret) == zmq.auth.load_certificate(secret_file)


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({}, "set GIN_BOT_KEY_FILE (or GIN_BOT_PUBLIC_KEY and GIN_BOT_SECRET_KEY)"),
        ({"GIN_BOT_KEY_FILE": "/nonexistent/bot.key_secret"}, "GIN_BOT_KEY_FILE=/nonexistent"),
        ({"GIN_BOT_PUBLIC_KEY": "short", "GIN_BOT_SECRET_KEY": "x" * 40}, "GIN_BOT_PUBLIC_KEY"),
    ],
)
def test_unusable_keys_name_the_variable(extra: dict[str, str], words: str) -> None:
    server, _ = zmq.curve_keypair()
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        curve_keys_from_env({"GIN_REFEREE_SERVER_KEY": server.decode(), **extra})


def test_a_public_certificate_is_not_a_key_pair(tmp_path: Path) -> None:
    public_file, _ = zmq.auth.create_certificates(str(tmp_path), "bot")
    server, _ = zmq.curve_keypair()
    env = {"GIN_REFEREE_SERVER_KEY": server.decode(), "GIN_BOT_KEY_FILE": public_file}
    with pytest.raises(ValueError, match="no secret key in it"):
        curve_keys_from_env(env)
