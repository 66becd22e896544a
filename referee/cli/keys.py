"""CURVE keys on the command line: ``gin-referee keygen`` and the ``--key-dir``,
``--insecure`` and ``--remote-key`` options of the commands that bind a TCP endpoint.

Every ``tcp://`` endpoint requires CURVE unless ``--insecure`` is given. The referee's
long-term key pair (docs/security.md, "Network boundary") is loaded, or created on first use,
only when remote bots must know it in advance; a run whose TCP endpoint serves only bots the
referee starts itself uses a throw-away pair (and a ``match`` of local bots on its private
``ipc://`` socket binds no TCP endpoint, and asks for no pair).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Collection, Sequence
from pathlib import Path

from referee.net.keys import (
    KeyFileError,
    KeyPair,
    decode_key,
    default_key_dir,
    read_public_key,
    referee_keys,
    write_keypair,
)

__all__ = [
    "add_commands",
    "add_security_options",
    "glue_keys",
    "remote_keys",
    "run_keygen",
    "server_keys",
    "warn_insecure",
]

LOGGER = logging.getLogger(__name__)
EXIT_OK, EXIT_USAGE = 0, 2
KEY_OPTIONS = frozenset({"--public-key", "--remote-key", "--server-key", "--client-secret"})
"""Options whose value may be a Z85 key (``ladder add``'s, ``match``'s, the benchmarks')."""
_Z85_KEY = 40
"""The length of a Z85 key (32 bytes)."""


def glue_keys(words: Sequence[str], options: Collection[str] = KEY_OPTIONS) -> list[str]:
    """``words`` with each Z85 key that begins with ``-`` joined to its option, as
    ``--public-key=KEY``: argparse would take a separate ``-...`` word for an option and say
    "expected one argument" (one key in 85 begins with ``-``). Nothing after ``--`` changes.

    >>> glue_keys(["add", "--public-key", "-" * 40, "--json"])
    ['add', '--public-key=----------------------------------------', '--json']
    >>> glue_keys(["--public-key", "--json"])
    ['--public-key', '--json']
    """
    out: list[str] = []
    at = 0
    while at < len(words):
        word = words[at]
        if word == "--":
            return [*out, *words[at:]]
        value = words[at + 1] if at + 1 < len(words) else ""
        if word in options and value.startswith("-") and len(value) == _Z85_KEY:
            out.append(f"{word}={value}")
            at += 2
            continue
        out.append(word)
        at += 1
    return out


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``keygen``."""
    k = sub.add_parser(
        "keygen",
        help="print the referee's CURVE public key (creating its key pair if needed), "
        "or make a bot's key pair with --bot",
    )
    _key_dir_option(k)
    k.add_argument("--bot", metavar="NAME", help="write NAME.key and NAME.key_secret for a bot")
    k.add_argument(
        "--out", type=Path, default=Path("."), help="directory for --bot's files (default: .)"
    )


def _key_dir_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--key-dir",
        type=Path,
        default=None,
        help="directory of the referee's key pair (default: $GIN_REFEREE_HOME, else "
        f"~/.config/gin-referee; now {default_key_dir()})",
    )


def add_security_options(parser: argparse.ArgumentParser, *, remote_key: bool = False) -> None:
    """``--key-dir`` and ``--insecure`` (and ``match``'s ``--remote-key``)."""
    _key_dir_option(parser)
    parser.add_argument(
        "--insecure",
        action="store_true",
        help="plain TCP without CURVE: tokens travel in clear (tests on loopback only)",
    )
    if remote_key:
        parser.add_argument(
            "--remote-key",
            action="append",
            default=[],
            metavar="NAME=KEY",
            help="the CURVE public key of the bot that plays remote:NAME (Z85, or a .key "
            "file from `gin-referee keygen --bot NAME`); required for each remote seat",
        )


def run_keygen(args: argparse.Namespace) -> int:
    """``gin-referee keygen [--bot NAME [--out DIR]]``."""
    try:
        if args.bot is None:
            pair = referee_keys(args.key_dir)
            print(pair.public_z85)
            return EXIT_OK
        name = args.bot
        if not name or not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
            print(f"gin-referee: --bot: {name!r}: use letters, digits, '-', '_' or '.'",
                  file=sys.stderr)  # fmt: skip
            return EXIT_USAGE
        try:
            pair = write_keypair(args.out, name)
        except KeyFileError as err:
            print(f"gin-referee: --out: {err}", file=sys.stderr)
            return EXIT_USAGE
    except KeyFileError as err:
        print(f"gin-referee: {err}", file=sys.stderr)
        return EXIT_USAGE
    secret = args.out / f"{name}.key_secret"
    print(pair.public_z85)
    print(
        f"# {name}'s public key; its secret pair is in {secret} (keep it private).\n"
        f"# In the tournament config, under the [[bots]] table of {name!r}:\n"
        f'public_key = "{pair.public_z85}"',
        file=sys.stderr,
    )
    return EXIT_OK


def warn_insecure() -> None:
    """Log what ``--insecure`` gives up (once the command's log is configured)."""
    LOGGER.warning(
        "--insecure: the TCP endpoint uses no CURVE; tokens travel in clear and anyone "
        "who can reach it may connect"
    )


def server_keys(args: argparse.Namespace, *, remote: bool, warn: bool = True) -> KeyPair | None:
    """The referee's pair for a command's TCP endpoint: None with ``--insecure`` (warned
    unless ``warn`` is False) or an ``ipc://`` bind; the long-term pair when ``remote`` bots
    connect; else a throw-away one. Raises ValueError (naming the file) for an unusable key
    file."""
    if args.insecure:
        if warn:
            warn_insecure()
        return None
    if str(args.bind).startswith("ipc://"):
        return None
    if not remote:
        return KeyPair.generate()
    try:
        return referee_keys(args.key_dir)
    except KeyFileError as err:
        raise ValueError(str(err)) from None


def remote_keys(items: list[str]) -> dict[str, bytes]:
    """``--remote-key NAME=KEY`` values: KEY is Z85 or the path of a certificate file."""
    found: dict[str, bytes] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise ValueError(f"--remote-key: expected NAME=KEY, got {item!r}")
        try:
            path = Path(value)
            found[name] = read_public_key(path) if path.is_file() else decode_key(value, "")
        except KeyFileError as err:
            raise ValueError(f"--remote-key {name}: {err}") from None
    return found
