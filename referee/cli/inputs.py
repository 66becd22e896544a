"""The ``match`` command's inputs from the command line: its configuration, its two bots
(with the sandbox, limits and remote keys asked for) and, with a remote seat, the referee's
CURVE pair, all checked before anything is written to ``--out`` (a ValueError names what is
wrong: exit 2)."""

from __future__ import annotations

import argparse
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from referee.cli.keys import remote_keys, server_keys
from referee.match import REMOTE_STARTUP, BotSpec, FaultPolicy, MatchConfig, TimeControl
from referee.net.botuid import parse_range, set_range
from referee.net.limits import Limits
from referee.rules import PRESETS, RuleSet

if TYPE_CHECKING:
    from referee.net.keys import KeyPair

__all__ = ["check_bind", "check_fresh_out", "free_out", "match_inputs"]


def confined(
    specs: tuple[BotSpec, BotSpec],
    *,
    sandbox: str,
    limits: Limits,
    pass_env: tuple[str, ...],
    expose: tuple[str, ...] = (),
) -> tuple[BotSpec, BotSpec]:
    """The specs with the command line's sandbox level, limits, passed variables and
    exposed paths."""
    out = [
        spec
        if spec.command is None
        else replace(
            spec,
            command=replace(
                spec.command, sandbox=sandbox, limits=limits, pass_env=pass_env, expose=expose
            ),
        )
        for spec in specs
    ]
    return out[0], out[1]


def with_remote_startup(specs: tuple[BotSpec, BotSpec]) -> tuple[BotSpec, BotSpec]:
    """The specs with a remote seat's own start-up limit, :data:`REMOTE_STARTUP`."""
    out = [spec if spec.command is not None else replace(spec, startup=REMOTE_STARTUP)
           for spec in specs]  # fmt: skip
    return out[0], out[1]


def with_keys(args: argparse.Namespace, specs: tuple[BotSpec, BotSpec]) -> tuple[BotSpec, ...]:
    """The remote specs with their ``--remote-key``; every remote seat needs one under CURVE
    (a ``tcp://`` bind without ``--insecure``)."""
    keys = remote_keys(args.remote_key)
    remote = [spec.name for spec in specs if spec.command is None]
    for name in keys:
        if name not in remote:
            raise ValueError(f"--remote-key {name}: no remote seat of that name (remote:NAME)")
    if not args.insecure and str(args.bind).startswith("tcp://"):
        for name in remote:
            if name not in keys:
                raise ValueError(
                    f"remote seat {name!r} needs --remote-key {name}=KEY (the public key from "
                    f"`gin-referee keygen --bot {name}`), or --insecure for plain TCP"
                )
    return tuple(replace(spec, public_key=keys.get(spec.name)) for spec in specs)


def rules_option(text: str) -> RuleSet:
    """``--rules``: a preset's name, or a TOML file holding a ``[rules]`` table (or the table's
    keys at its top level): ``preset`` and the fields that differ from it (docs/rules.md).
    ValueError names what is wrong."""
    if text in PRESETS:
        return PRESETS[text]
    path = Path(text)
    if path.suffix != ".toml" and not path.exists():
        known = ", ".join(sorted(PRESETS))
        raise ValueError(f"unknown rules preset {text!r} (known: {known}; or a TOML file)")
    import tomllib  # only for a file: a match's start-up imports no more than it needs

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ValueError(f"--rules {text}: cannot read it ({err.strerror or err})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"--rules {text}: not TOML ({err})") from None
    table = data.get("rules", data)
    if not isinstance(table, dict) or (set(data) - {"rules"} and "rules" in data):
        raise ValueError(f"--rules {text}: expected a [rules] table and nothing else")
    try:
        return RuleSet.from_table(table)
    except ValueError as err:
        raise ValueError(f"--rules {text}: {err}") from None


def match_inputs(
    args: argparse.Namespace,
) -> tuple[MatchConfig, tuple[BotSpec, BotSpec], KeyPair | None]:
    """The match's configuration, bots and, with a remote seat, the referee's long-term CURVE
    pair (:func:`server_keys`) from the command line (ValueError: bad usage, found before
    anything is written to ``--out``). Without one the pair is None: a match of local bots
    makes a throw-away pair only if it binds a TCP endpoint, once its bots are started
    (``binds_endpoint``)."""
    config = MatchConfig(
        rules=rules_option(args.rules),
        games=args.games,
        target_points=args.target_points,
        seed=args.seed,
        time=TimeControl(
            move=args.move_time,
            bank=args.bank,
            grace=args.grace,
            startup=TimeControl().startup if args.startup_time is None else args.startup_time,
        ),
        policy=FaultPolicy(args.fault_policy),
        strikes=args.strikes,
        match_id=args.match_id,
    )
    specs = confined(
        (BotSpec.parse(args.bot_a), BotSpec.parse(args.bot_b)),
        sandbox=args.sandbox,
        limits=Limits.parse_items(args.limit),
        pass_env=tuple(args.pass_env),
        expose=tuple(os.path.abspath(path) for path in args.expose),
    )
    if args.bot_uids is not None:
        set_range(parse_range(args.bot_uids))
    if specs[0].name == specs[1].name:
        specs = (
            BotSpec(f"{specs[0].name}-A", specs[0].command),
            BotSpec(f"{specs[1].name}-B", specs[1].command),
        )
    if args.startup_time is None:  # a person starts a remote seat's bot: longer by default
        specs = with_remote_startup(specs)
    keyed = with_keys(args, specs)
    check_bind(args.bind)
    if args.out is not None:
        check_fresh_out(args.out, config.match_id)
    remote = any(spec.command is None for spec in specs)
    curve = server_keys(args, remote=True, warn=False) if remote else None
    return config, (keyed[0], keyed[1]), curve


def check_bind(bind: str) -> None:
    """Refuse a ``--bind`` that cannot be an endpoint, whether or not anything binds it (a
    port in use is found only when binding, and is a usage error then too): ``tcp://HOST:PORT``
    with HOST an IPv4 address, ``[IPv6]``, ``*`` or a host or interface name, or ``ipc://PATH``.

    >>> check_bind("tcp://999.1.1.1:5")
    Traceback (most recent call last):
    ValueError: --bind tcp://999.1.1.1:5: 999.1.1.1 is not an IPv4 address
    """
    if bind.startswith("ipc://") and len(bind) > len("ipc://"):
        return
    host, _, port = bind.removeprefix("tcp://").rpartition(":")
    if not (
        bind.startswith("tcp://")
        and host
        and (port == "*" or (port.isascii() and port.isdigit() and int(port) < 65536))
    ):
        raise ValueError(
            f"--bind {bind}: expected tcp://HOST:PORT (PORT a number, 0 for any free one) or "
            "ipc://PATH"
        )
    problem = _host_problem(host)
    if problem is not None:
        raise ValueError(f"--bind {bind}: {problem}")


def _host_problem(host: str) -> str | None:
    """Why ``host`` cannot be a TCP endpoint's address, or None."""
    import ipaddress
    import re

    if host.startswith("[") and host.endswith("]"):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return f"{host[1:-1]} is not an IPv6 address"
        return None
    if re.fullmatch(r"[0-9.]+", host):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            return f"{host} is not an IPv4 address"
        return None
    if host == "*" or re.fullmatch(r"[A-Za-z0-9_]([A-Za-z0-9_.-]{0,252})", host):
        return None  # a wildcard, a host name or an interface name (eth0)
    return f"{host!r} is not an address, a host name or an interface name ([IPv6] in brackets)"


def check_fresh_out(out: Path, match_id: str) -> None:
    """Refuse an output directory that holds an earlier run's files (a record, a log or a
    bot's stderr would otherwise mix two runs)."""
    names = [f"{match_id}.jsonl", "referee.log.jsonl"] + [
        f"{match_id}.seat{seat}.stderr" for seat in (0, 1)
    ]
    found = [name for name in names if (out / name).exists()]
    if found:
        raise ValueError(
            f"--out {out} already holds an earlier run ({', '.join(found)}): give another "
            "--out directory, or delete those files first"
        )


def free_out(base: Path) -> Path:
    """``base``, or ``base-2``, ``base-3``... : the first that holds no earlier run."""
    candidate, n = base, 1
    while (candidate / "match.jsonl").exists() or (candidate / "referee.log.jsonl").exists():
        n += 1
        candidate = base.with_name(f"{base.name}-{n}")
    return candidate
