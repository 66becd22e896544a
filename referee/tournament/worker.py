"""Workers: more referee processes playing one tournament from its shared store.

``gin-referee tournament X.toml --workers N`` plays in its own process and starts ``N - 1``
``gin-referee worker`` processes on this machine; ``gin-referee worker --store URL`` joins from
anywhere. A worker reads the tournament's configuration from the store (its TOML source, stored
by the ``tournament`` command), checks that it is the stored configuration (same hash) and that
its bots are the same programs (:func:`bot_files`: the SHA-256 of every file a bot's command
names by path), then claims and plays games with its own local bots.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import signal
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

from referee.tournament.config import ConfigError, TournamentConfig, parse_config
from referee.tournament.defaults import STORE_ENV
from referee.tournament.store import Store

__all__ = [
    "BOT_FILES_KEY",
    "CONFIG_KEY",
    "STORE_ENV",
    "WorkerError",
    "bot_files",
    "check_joinable",
    "default_workers",
    "stop_workers",
    "start_workers",
    "stored_config",
    "worker_config",
]

CONFIG_KEY = "config_toml"
"""Store metadata key of the tournament's TOML source."""
BOT_FILES_KEY = "bot_files"
"""Store metadata key of :func:`bot_files` as JSON."""


class WorkerError(Exception):
    """A worker cannot join this tournament; the message says why and what to do."""


def default_workers(config: TournamentConfig) -> int:
    """``--workers auto``: one per core, at most one per concurrent game."""
    return max(1, min(os.cpu_count() or 1, config.concurrency))


def bot_files(config: TournamentConfig, cwd: Path | None = None) -> dict[str, dict[str, str]]:
    """For every local bot, the SHA-256 of each file its command names by a path (a word with a
    ``/``, relative to ``cwd``): ``{bot: {path: digest}}``. Programs found on ``PATH`` (an
    interpreter such as ``python3``) differ between machines and are not compared."""
    base = cwd or Path.cwd()
    found: dict[str, dict[str, str]] = {}
    for bot in config.bots:
        if bot.command is None or bot.dir is not None:  # a directory's bot: stored snapshot
            continue
        digests: dict[str, str] = {}
        for word in shlex.split(bot.command):
            path = base / word
            if "/" in word and path.is_file():
                digests[word] = hashlib.sha256(path.read_bytes()).hexdigest()
        found[bot.name] = digests
    return found


class _Hashed(Protocol):
    @property
    def config_hash(self) -> str: ...


Parsed = TypeVar("Parsed", bound=_Hashed)


def stored_config(
    store: Store, parse: Callable[..., Parsed], *, missing: str, whose: str
) -> tuple[Parsed, str]:
    """The configuration stored with a tournament or a ladder (its TOML source, read by
    ``parse(data, source=...)``) and that source: :class:`WorkerError` if there is none
    (``missing`` says what to do), if it cannot be read, or if this version computes another
    hash than the stored one."""
    stored = store.config()
    text = store.get_meta(CONFIG_KEY)
    if stored is None or text is None:
        raise WorkerError(f"{store.location}: {missing}")
    try:
        config = parse(tomllib.loads(text), source=f"{store.location} (stored config)")
    except (tomllib.TOMLDecodeError, ConfigError) as err:
        raise WorkerError(f"cannot read the stored configuration: {err}") from err
    if config.config_hash != stored[1]:
        raise WorkerError(
            f"{store.location}: the stored configuration hashes to {config.config_hash} here,"
            f" not {stored[1]}: run the same gin-referee version as the {whose}'s machine"
        )
    return config, text


def worker_config(store: Store) -> tuple[TournamentConfig, str]:
    """The stored tournament's configuration (and TOML source), checked against this machine:
    :class:`WorkerError` if it cannot be read, if this version computes another hash, or if a
    bot's files differ from the ones the tournament started with."""
    missing = ("no tournament to join (start it with `gin-referee tournament CONFIG.toml --store"
               " ...` first; an sprt run takes no workers)")  # fmt: skip
    config, text = stored_config(store, parse_config, missing=missing, whose="tournament")
    if any(bot.command is None for bot in config.bots):
        raise WorkerError("this tournament has remote bots, which connect to one referee: it"
                          " takes no workers")  # fmt: skip
    expected = json.loads(store.get_meta(BOT_FILES_KEY) or "{}")
    mine = bot_files(config)
    for name, files in sorted(expected.items()):
        for path, digest in sorted(files.items()):
            have = mine.get(name, {}).get(path)
            if have != digest:
                what = "is missing" if have is None else f"differs (sha256 {have[:12]}…)"
                raise WorkerError(
                    f"bot {name!r}: {path} {what} on this machine; the tournament was started"
                    f" with sha256 {digest[:12]}…: install the same bot, from the same directory"
                    f" ({Path.cwd()} here)"
                )
    return config, text


def start_workers(
    count: int, *, store: str, out: Path, concurrency: int, lease: float,
    require_sandbox: str | None = None,
) -> list[subprocess.Popen[bytes]]:  # fmt: skip
    """Start ``count`` ``gin-referee worker`` processes on this machine (they stop by
    themselves when this process dies), each requiring ``require_sandbox`` when given (the
    parent's ``--require-sandbox``). The store's location goes in their environment
    (:data:`STORE_ENV`), not on their command line, where any user could read a password."""
    argv = [sys.executable, "-m", "referee", "worker", "--out", str(out),
            "--concurrency", str(concurrency), "--lease", repr(lease),
            "--parent", str(os.getpid()), "--log-level", "warning"]  # fmt: skip
    if require_sandbox is not None:
        argv += ["--require-sandbox", require_sandbox]
    env = {**os.environ, STORE_ENV: store}
    return [subprocess.Popen(argv, stdin=subprocess.DEVNULL, env=env) for _ in range(count)]


def stop_workers(workers: list[subprocess.Popen[bytes]], *, signum: int = signal.SIGTERM) -> None:
    """Ask the workers still running to finish their hands and stop."""
    for proc in workers:
        if proc.poll() is None:
            proc.send_signal(signum)


def check_joinable(store: Store, out: Path, seed: int | None) -> None:
    """:class:`WorkerError` if this machine lacks the deal key a secret-deal tournament needs."""
    if seed is None and not (out / "deal.key").is_file() and store.deal_commitment() is not None:
        raise WorkerError(
            f"{out / 'deal.key'} is missing: copy deal.key from the tournament's output directory"
            " on the machine that started it (keep it mode 0600) into this worker's --out"
        )
