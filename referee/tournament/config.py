"""Tournament configuration: a TOML file, validated with errors that name the key.

See ``examples/tournament.toml`` and docs/tournaments.md for every key. The configuration's
canonical JSON and hash identify the tournament in its store, so a resumed run is checked to
be the same tournament.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from referee.match import DEFAULT_MAX_HANDS, FaultPolicy, TimeControl
from referee.net.botuid import UidRangeError, parse_range
from referee.net.keys import KeyFileError, decode_key
from referee.net.limits import Limits
from referee.net.process import BotCommand
from referee.net.requirement import LEVELS as REQUIRE_LEVELS
from referee.net.sandbox import SANDBOX_CHOICES
from referee.rules import RuleSet
from referee.tournament.commandline import command_problem

__all__ = [
    "BotEntry",
    "ConfigError",
    "TournamentConfig",
    "load_config",
    "parse_config",
    "read_toml",
]

FORMATS = ("round-robin", "gauntlet")
LOCAL_TRANSPORTS = ("ipc", "tcp")


class ConfigError(ValueError):
    """A configuration problem; the message names the file, the key and the problem."""

    def __init__(self, source: str, key: str, problem: str) -> None:
        self.source, self.key, self.problem = source, key, problem
        where = f"{source}: {key}" if key else source
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True, slots=True)
class BotEntry:
    """One bot of a tournament: a command to start per game, or a remote bot's token."""

    name: str
    """Unique name used in standings."""
    command: str | None
    """Command line (shell-style), or None for a remote bot."""
    token: str | None = None
    """The token a remote bot presents in its hello."""
    sandbox: str = "auto"
    """Its sandbox level (``tournament.sandbox`` unless the bot sets its own). Not hashed."""
    limits: Limits = field(default_factory=Limits)
    """Its resource limits (``tournament.limits``, then the bot's ``limits``). Not hashed."""
    pass_env: tuple[str, ...] = ()
    """Names of the referee's environment variables it gets (its ``env``). Not hashed."""
    expose: tuple[str, ...] = ()
    """Host paths it may read besides its own files (its ``expose``). Not hashed."""
    public_key: bytes | None = None
    """A remote bot's CURVE public key (raw; Z85 ``public_key`` in the file): its token is
    accepted only from a connection authenticated with it. Not hashed (keys may be replaced)."""
    dir: str | None = None
    """The directory of a local bot's files (``dir``, absolute once loaded), snapshotted when
    the tournament first runs (:mod:`referee.tournament.botfiles`). Not hashed: the snapshot's
    digest is stored, and the games play it."""
    files: str | None = None
    """The digest of the bot's files (its snapshot), once known; recorded in every game."""
    cwd: str | None = None
    """The directory it runs in here (the snapshot's copy on this machine), once known."""

    def bot_command(self) -> BotCommand:
        """The command to start this (local) bot with its sandbox, limits and variables; one
        with its own files runs in their directory, which it sees whatever hides it."""
        if self.command is None:
            raise ValueError(f"bot {self.name!r} is remote: nothing to start")
        if self.files is not None and self.cwd is None:
            raise ValueError(f"bot {self.name!r}: its files are not on this machine yet")
        command = BotCommand.parse(self.command, cwd=self.cwd)
        return replace(
            command, sandbox=self.sandbox, limits=self.limits, pass_env=self.pass_env,
            expose=self.expose, own_dir=self.cwd if self.files is not None else None,
        )  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class TournamentConfig:
    """A validated tournament configuration."""

    name: str
    """Tournament name."""
    bots: tuple[BotEntry, ...]
    """Participants, in file order."""
    format: str = "round-robin"
    """``round-robin`` (every pairing) or ``gauntlet`` (the candidate against each other bot)."""
    candidate: str | None = None
    """The gauntlet's candidate (default: the first bot)."""
    games_per_pairing: int = 10
    """Games per pairing (an even number when duplicate deals are on)."""
    duplicate: bool = True
    """Play every deal sequence twice with the seats swapped."""
    seed: int | None = None
    """A public seed for every deck order (strategy testing: such deals are NOT secret); None
    (the default) draws a secret deal key, see :mod:`referee.tournament.dealkey`."""
    concurrency: int = 2
    """Games played at once."""
    rules: RuleSet
    """The rule set."""
    time: TimeControl
    """Clocks."""
    policy: FaultPolicy = FaultPolicy.FORFEIT_GAME
    """Fault policy."""
    strikes: int = 3
    """Strikes that forfeit under the strike policy."""
    max_hands_per_game: int = DEFAULT_MAX_HANDS
    """A game still undecided after this many hands ends without a winner."""
    local_transport: str = "ipc"
    """How local bots connect: ``ipc`` (a private unix socket) or ``tcp`` (the bound endpoint).
    Not hashed: it changes no result."""
    reuse_bots: bool = True
    """Keep a bot granted ``multi_match`` between a pairing's games (see
    :mod:`referee.tournament.bots`). Not hashed: it changes no result of a bot that reseeds
    from ``match_start.seed``."""
    out: Path | None = None
    """Output directory (store, records, logs, stderr)."""
    store: str | None = None
    """A PostgreSQL URL for the results store (default: ``tournament.sqlite`` in the output
    directory). Not hashed."""
    require_sandbox: str | None = None
    """The weakest sandbox level its local bots may run at (``require_sandbox``; None: the
    level ``sandbox`` names, or ``namespaces`` for ``auto``: :mod:`referee.net.requirement`).
    Not hashed."""
    bot_uids: range | None = None
    """Host uids for the bots of a root referee (``bot_uids = "FIRST-LAST"``; None: the
    default range, :mod:`referee.net.botuid`). Not hashed."""

    def pairings(self) -> list[tuple[str, str]]:
        """Unordered pairings (first, second) in a stable order."""
        names = [b.name for b in self.bots]
        if self.format == "gauntlet":
            lead = self.candidate or names[0]
            return [(lead, other) for other in names if other != lead]
        return [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]

    def to_dict(self) -> dict[str, Any]:
        """Canonical plain data (what the hash covers; the output directory is not included)."""
        data: dict[str, Any] = {
            "name": self.name,
            "bots": [{"name": b.name, "command": b.command, "remote": b.command is None}
                     for b in self.bots],
            "format": self.format,
            "candidate": self.candidate,
            "games_per_pairing": self.games_per_pairing,
            "duplicate": self.duplicate,
            "seed": self.seed,
            "rules": self.rules.to_dict(),
            "time": self.time.to_wire(),
            "policy": str(self.policy),
            "strikes": self.strikes,
        }  # fmt: skip
        if self.max_hands_per_game != DEFAULT_MAX_HANDS:  # absent by default: old hashes hold
            data["max_hands_per_game"] = self.max_hands_per_game
        return data

    @property
    def config_hash(self) -> str:
        """SHA-256 (16 hex digits) of :meth:`to_dict` as canonical JSON."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _get(table: dict[str, Any], key: str, kind: type | tuple[type, ...], src: str, path: str,
         default: Any = None) -> Any:  # fmt: skip
    if key not in table:
        return default
    value = table[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        raise ConfigError(src, path + key, f"expected {_names(kinds)}, got a boolean")
    if not isinstance(value, kinds):
        raise ConfigError(src, path + key, f"expected {_names(kinds)}, got {type(value).__name__}")
    return value


def _names(kinds: tuple[type, ...]) -> str:
    words = {str: "a string", int: "an integer", float: "a number", bool: "true or false",
             dict: "a table", list: "an array"}  # fmt: skip
    return " or ".join(words.get(k, k.__name__) for k in kinds)


def _check_keys(table: dict[str, Any], allowed: set[str], src: str, path: str) -> None:
    for key in table:
        if key not in allowed:
            known = ", ".join(sorted(allowed))
            raise ConfigError(src, path + key, f"unknown key (known: {known})")


def _confinement(
    table: dict[str, Any], src: str, path: str, sandbox: str, limits: Limits
) -> tuple[str, Limits]:
    """The ``sandbox`` and ``limits`` keys of a table, over the given defaults."""
    sandbox = _get(table, "sandbox", str, src, path, sandbox)
    if sandbox not in SANDBOX_CHOICES:
        raise ConfigError(src, path + "sandbox", f"must be one of {', '.join(SANDBOX_CHOICES)}")
    raw = _get(table, "limits", dict, src, path, {})
    try:
        limits = Limits.from_mapping(raw, limits)
    except ValueError as err:
        raise ConfigError(src, path + "limits", str(err)) from None
    return sandbox, limits


def _expose(table: dict[str, Any], src: str, path: str) -> tuple[str, ...]:
    paths = _get(table, "expose", list, src, path, [])
    for item in paths:
        if not isinstance(item, str) or not item.startswith("/") or "\0" in item:
            raise ConfigError(src, path + "expose", f"expected absolute paths, got {item!r}")
    return tuple(paths)


def _pass_env(table: dict[str, Any], src: str, path: str) -> tuple[str, ...]:
    names = _get(table, "env", list, src, path, [])
    for name in names:
        if not isinstance(name, str) or not name or "=" in name or "\0" in name:
            raise ConfigError(src, path + "env", f"expected variable names, got {name!r}")
    return tuple(names)


def _bots(raw: Any, src: str, sandbox: str, limits: Limits) -> tuple[BotEntry, ...]:
    if not isinstance(raw, list) or len(raw) < 2:
        raise ConfigError(src, "bots", "need an array of at least two [[bots]] tables")
    bots: list[BotEntry] = []
    for i, table in enumerate(raw):
        path = f"bots[{i}]."
        if not isinstance(table, dict):
            raise ConfigError(src, f"bots[{i}]", "expected a table")
        confinement = {"sandbox", "limits", "env", "expose", "dir"}
        allowed = {"name", "command", "remote", "token", "public_key", *confinement}
        _check_keys(table, allowed, src, path)
        name = _get(table, "name", str, src, path)
        if not name or not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
            raise ConfigError(src, path + "name", "required: letters, digits, '-', '_' or '.'")
        if any(b.name == name for b in bots):
            raise ConfigError(src, path + "name", f"duplicate bot name {name!r}")
        remote = _get(table, "remote", bool, src, path, False)
        command = _get(table, "command", str, src, path)
        token = _get(table, "token", str, src, path)
        if remote:
            if command is not None:
                raise ConfigError(src, path + "command", "a remote bot has no command")
            if not token or len(token) < 8:
                raise ConfigError(
                    src, path + "token", "a remote bot needs a token of 8+ characters"
                )
            for key in confinement & set(table):
                raise ConfigError(src, path + key, "a remote bot runs elsewhere: no sandbox")
            public_key = _public_key(table, src, path, bots)
            bots.append(BotEntry(name, None, token, public_key=public_key))
            continue
        if "public_key" in table:
            raise ConfigError(
                src, path + "public_key", "a local bot gets its key from the referee: remove it"
            )
        if command is None:
            raise ConfigError(src, path + "command", "required (or set remote = true)")
        try:
            BotCommand.parse(command)
        except ValueError as err:
            raise ConfigError(src, path + "command", str(err)) from None
        level, bot_limits = _confinement(table, src, path, sandbox, limits)
        pass_env = _pass_env(table, src, path)
        expose = _expose(table, src, path)
        directory = _get(table, "dir", str, src, path)
        if directory is not None and (not directory or "\0" in directory):
            raise ConfigError(src, path + "dir", "expected a directory's path")
        bots.append(BotEntry(name, command, None, level, bot_limits, pass_env, expose,
                             dir=directory))  # fmt: skip
    return tuple(bots)


def _public_key(table: dict[str, Any], src: str, path: str, bots: list[BotEntry]) -> bytes | None:
    """A remote bot's ``public_key`` (Z85), unique among the bots; None if absent."""
    text = _get(table, "public_key", str, src, path)
    if text is None:
        return None
    try:
        key = decode_key(text, "")
    except KeyFileError as err:
        raise ConfigError(src, path + "public_key", str(err)) from None
    for other in bots:
        if other.public_key == key:
            raise ConfigError(src, path + "public_key", f"bot {other.name!r} has the same key")
    return key


def _rules(raw: Any, src: str) -> RuleSet:
    if raw is None:
        return RuleSet.preset("standard")
    if isinstance(raw, str):
        try:
            return RuleSet.preset(raw)
        except ValueError as err:
            raise ConfigError(src, "rules", str(err)) from None
    if not isinstance(raw, dict):
        raise ConfigError(src, "rules", "expected a preset name or a table")
    try:
        return RuleSet.from_table(raw)
    except ValueError as err:
        raise ConfigError(src, "rules", str(err)) from None


def parse_config(data: dict[str, Any], *, source: str = "<config>") -> TournamentConfig:
    """Validate parsed TOML data into a :class:`TournamentConfig`."""
    src = source
    _check_keys(data, {"tournament", "bots", "rules", "time", "faults"}, src, "")
    t = _get(data, "tournament", dict, src, "", {})
    _check_keys(t, {"name", "format", "candidate", "games_per_pairing", "duplicate", "seed",
                    "concurrency", "max_hands_per_game", "local_transport", "reuse_bots",
                    "out", "store", "sandbox", "limits", "bot_uids", "require_sandbox"},
                src, "tournament.")  # fmt: skip
    sandbox, limits = _confinement(t, src, "tournament.", "auto", Limits())
    bots = _bots(data.get("bots"), src, sandbox, limits)
    fmt = _get(t, "format", str, src, "tournament.", "round-robin")
    if fmt not in FORMATS:
        raise ConfigError(src, "tournament.format", f"must be one of {', '.join(FORMATS)}")
    candidate = _get(t, "candidate", str, src, "tournament.")
    if candidate is not None and candidate not in {b.name for b in bots}:
        raise ConfigError(src, "tournament.candidate", f"no bot named {candidate!r}")
    games = _get(t, "games_per_pairing", int, src, "tournament.", 10)
    duplicate = _get(t, "duplicate", bool, src, "tournament.", True)
    if not 1 <= games <= 1_000_000:
        raise ConfigError(src, "tournament.games_per_pairing", "must be between 1 and 1000000")
    if duplicate and games % 2:
        raise ConfigError(src, "tournament.games_per_pairing", "must be even with duplicate deals")
    concurrency = _get(t, "concurrency", int, src, "tournament.", os.cpu_count() or 2)
    if not 1 <= concurrency <= 256:
        raise ConfigError(src, "tournament.concurrency", "must be between 1 and 256")
    max_hands = _get(t, "max_hands_per_game", int, src, "tournament.", DEFAULT_MAX_HANDS)
    if not 1 <= max_hands <= 100_000:
        raise ConfigError(src, "tournament.max_hands_per_game", "must be between 1 and 100000")
    local_transport = _get(t, "local_transport", str, src, "tournament.", "ipc")
    if local_transport not in LOCAL_TRANSPORTS:
        raise ConfigError(src, "tournament.local_transport", "must be one of ipc, tcp")
    time_table = _get(data, "time", dict, src, "", {})
    _check_keys(time_table, {"move", "bank", "grace", "startup", "heartbeat"}, src, "time.")
    times: dict[str, Any] = {
        k: float(_get(time_table, k, (int, float), src, "time.")) for k in time_table
    }
    try:
        clock = replace(TimeControl(), **times)
    except ValueError as err:
        raise ConfigError(src, "time", str(err)) from None
    faults = _get(data, "faults", dict, src, "", {})
    _check_keys(faults, {"policy", "strikes"}, src, "faults.")
    policy_text = _get(faults, "policy", str, src, "faults.", str(FaultPolicy.FORFEIT_GAME))
    try:
        policy = FaultPolicy(policy_text)
    except ValueError:
        choices = ", ".join(p.value for p in FaultPolicy)
        raise ConfigError(src, "faults.policy", f"must be one of {choices}") from None
    strikes = _get(faults, "strikes", int, src, "faults.", 3)
    if not 1 <= strikes <= 1000:
        raise ConfigError(src, "faults.strikes", "must be between 1 and 1000")
    out = _get(t, "out", str, src, "tournament.")
    store = _get(t, "store", str, src, "tournament.")
    if store is not None and not store.startswith(("postgresql://", "postgres://")):
        raise ConfigError(src, "tournament.store", "must be a postgresql:// URL")
    uids_text = _get(t, "bot_uids", str, src, "tournament.")
    try:
        bot_uids = None if uids_text is None else parse_range(uids_text)
    except UidRangeError as err:
        raise ConfigError(src, "tournament.bot_uids", str(err)) from None
    require = _get(t, "require_sandbox", str, src, "tournament.")
    if require is not None and require not in REQUIRE_LEVELS:
        choices = ", ".join(REQUIRE_LEVELS)
        raise ConfigError(src, "tournament.require_sandbox", f"must be one of {choices}")
    return TournamentConfig(
        name=_get(t, "name", str, src, "tournament.", "tournament"),
        bots=bots,
        format=fmt,
        candidate=candidate,
        games_per_pairing=games,
        duplicate=duplicate,
        seed=_get(t, "seed", int, src, "tournament."),
        concurrency=concurrency,
        rules=_rules(data.get("rules"), src),
        time=clock,
        policy=policy,
        strikes=strikes,
        max_hands_per_game=max_hands,
        local_transport=local_transport,
        reuse_bots=_get(t, "reuse_bots", bool, src, "tournament.", True),
        out=None if out is None else Path(out),
        store=store,
        bot_uids=bot_uids,
        require_sandbox=require,
    )


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's data; :class:`ConfigError` if it cannot be read or parsed."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ConfigError(str(path), "", f"cannot read: {err.strerror or err}") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(str(path), "", f"not valid TOML: {err}") from None
    except UnicodeDecodeError:
        raise ConfigError(str(path), "", "not UTF-8 text") from None


def load_config(path: Path) -> TournamentConfig:
    """Read and validate a TOML file (a bot's ``dir`` and ``out`` are relative to it);
    :class:`ConfigError` names what is wrong."""
    config = parse_config(read_toml(path), source=str(path))
    if config.out is not None and not config.out.is_absolute():
        config = replace(config, out=path.parent / config.out)
    bots = list(config.bots)
    for i, bot in enumerate(bots):
        if bot.dir is not None and bot.command is not None:
            directory = (path.parent / bot.dir).absolute()
            if not directory.is_dir():
                raise ConfigError(str(path), f"bots[{i}].dir", f"no such directory: {directory}")
            problem = command_problem(bot.command, directory, expose=bot.expose)
            if problem is not None:
                raise ConfigError(str(path), f"bots[{i}].command", f"{problem} (run in dir)")
            bots[i] = replace(bot, dir=str(directory))
    return replace(config, bots=tuple(bots))
