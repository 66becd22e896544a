"""``gin-referee play BOT``: a person plays BOT from a browser (thin: parse, call, print).

The page's address (with its token) is printed on stdout; ``--open`` also opens it in a
browser. Exit codes as for ``match``: 2 for bad input, 3 when the bot could not start, 130 when
interrupted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from referee.cli.inputs import confined, rules_option, with_remote_startup
from referee.match import BotSpec, FaultPolicy, MatchConfig, TimeControl
from referee.net.limits import Limits
from referee.net.sandbox import SANDBOX_CHOICES

__all__ = ["add_play_command", "run_play"]

EXIT_OK, EXIT_USAGE, EXIT_NO_START, EXIT_INTERRUPTED = 0, 2, 3, 130


def add_play_command(sub: Any) -> None:
    """Register ``play``."""
    p = sub.add_parser("play", help="play a bot yourself, in a browser (docs/play.md)")
    p.add_argument("bot", help='the bot\'s command line (e.g. "python3 my_bot.py"), or '
                   "remote:NAME for a bot you start yourself on this machine")  # fmt: skip
    p.add_argument("--games", type=int, default=1, help="games to play (default 1)")
    p.add_argument("--target-points", type=int, default=None, help="end at this many points")
    p.add_argument("--rules", default="standard",
                   help="standard, classic, oklahoma, straight, eaai, or a TOML file")  # fmt: skip
    p.add_argument("--seed", type=int, default=None, help="public deal seed (deals NOT secret)")
    p.add_argument("--max-hands", type=int, default=200, help="hands after which a game is void")
    p.add_argument("--move-time", type=float, default=1.0, help="the bot's seconds per decision")
    p.add_argument("--bank", type=float, default=30.0, help="the bot's per-game bank, seconds")
    p.add_argument("--my-move-time", type=float, default=60.0,
                   help="your free seconds per decision (default 60)")  # fmt: skip
    p.add_argument("--my-bank", type=float, default=600.0,
                   help="your per-game bank beyond that, seconds (default 600)")  # fmt: skip
    p.add_argument("--seat", type=int, choices=(0, 1), default=0, help="your seat (default 0)")
    p.add_argument("--bind", default="tcp://127.0.0.1:0",
                   help="the page's address, tcp://HOST:PORT (0.0.0.0 to host a player on "
                   "another machine; port 0 = any)")  # fmt: skip
    p.add_argument("--grace", type=float, default=30.0,
                   help="seconds a closed page has to return before the seat is lost")  # fmt: skip
    p.add_argument("--linger", type=float, default=600.0,
                   help="seconds the page and the replay stay up after the match")  # fmt: skip
    p.add_argument("--open", action="store_true", help="open the page in a browser")
    p.add_argument("--out", type=Path, default=None, help="output directory (default runs/play)")
    p.add_argument("--sandbox", choices=SANDBOX_CHOICES, default="auto",
                   help="the bot's confinement (docs/security.md)")  # fmt: skip
    p.add_argument("--match-id", default="match", help=argparse.SUPPRESS)


def _address(bind: str) -> tuple[str, int]:
    host, _, port = bind.removeprefix("tcp://").removeprefix("http://").rpartition(":")
    if not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"--bind {bind}: expected tcp://HOST:PORT (PORT a number, 0 for any)")
    return host.strip("[]"), int(port)


def _options(args: argparse.Namespace) -> Any:
    from referee.cli.inputs import free_out
    from referee.play import PlayOptions

    config = MatchConfig(
        rules=rules_option(args.rules),
        games=args.games,
        target_points=args.target_points,
        seed=args.seed,
        time=TimeControl(move=args.move_time, bank=args.bank),
        policy=FaultPolicy.FORFEIT_GAME,
        max_hands_per_game=args.max_hands,
        match_id=args.match_id,
    )
    bot = BotSpec.parse(args.bot)
    if bot.command is None:  # remote:NAME: a bot you start yourself (a debugger, another shell)
        if bot.name == "you":
            raise ValueError("remote:you: the person's seat is called you; name the bot else")
        bot = with_remote_startup((bot, bot))[0]
    else:
        bot = confined((bot, bot), sandbox=args.sandbox, limits=Limits(), pass_env=())[0]
    clock = TimeControl(
        move=args.my_move_time, bank=args.my_bank, grace=0.5, startup=3600.0, heartbeat=1.0
    )
    host, port = _address(args.bind)
    if args.grace < 0 or args.linger < 0:
        raise ValueError("--grace and --linger must not be negative")
    out = args.out if args.out is not None else free_out(Path("runs/play"))
    out.mkdir(parents=True, exist_ok=True)
    return PlayOptions(
        config=config, bot=bot, clock=clock, host=host, port=port, person_seat=args.seat,
        grace=args.grace, linger=args.linger, out_dir=out,
    )  # fmt: skip


def other_urls(url: str, host: str) -> list[str]:
    """The page's address on this host's other addresses, when ``--bind`` is a wildcard (the
    printed ``url`` names 127.0.0.1, which is no address for someone on another machine).

    >>> other_urls("http://127.0.0.1:8765/?t=x", "127.0.0.1")
    []
    """
    if host not in ("0.0.0.0", "", "*"):
        return []
    import socket

    from referee.cli.addresses import host_addresses

    found = [a for a in host_addresses(socket.AF_INET) if not a.startswith("127.")]
    return [url.replace("//127.0.0.1:", f"//{address}:", 1) for address in found]


def run_play(args: argparse.Namespace) -> int:
    """``gin-referee play BOT``."""
    try:
        options = _options(args)
        from referee.cli.logs import configure

        configure(level="warning", json_file=options.out_dir / "referee.log.jsonl")
    except (ValueError, OSError) as err:
        print(f"gin-referee: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    import asyncio  # only now: a match's start-up imports no more than it needs

    return asyncio.run(_play(options, args.open))


async def _play(options: Any, open_browser: bool) -> int:
    from referee.cli.daemon import run_stoppable
    from referee.play import play_session

    def shown(url: str) -> None:
        print(f"play at {url}", flush=True)
        for other in other_urls(url, options.host):
            print(f"  or, from another machine, {other}", flush=True)
        if open_browser:
            import webbrowser

            webbrowser.open(url)

    record = options.out_dir / f"{options.config.match_id}.jsonl"

    def ended(result: Any, replay: str) -> None:
        you = options.person_seat
        won = [seat.games_won for seat in result.seats]
        print(f"match over: you {won[you]} games, the bot {won[1 - you]}; replay at {replay}")
        print(f"record: {record} (the page stays up {options.linger:g} s; Ctrl-C ends it)")
        sys.stdout.flush()

    def remote(name: str, endpoint: str, token: str) -> None:
        print(f"remote bot {name}: start it on this machine with GIN_REFEREE_ENDPOINT={endpoint}"
              f" GIN_REFEREE_TOKEN={token} (loopback only, no CURVE)", flush=True)  # fmt: skip

    import asyncio

    stop = asyncio.Event()
    work = play_session(options, shown, stop=stop, on_end=ended, on_remote=remote)
    result, _ = await run_stoppable(work, stop, notice="interrupted: closing the table")
    if result is None:
        return EXIT_INTERRUPTED
    if any(f.kind == "startup" for seat in result.seats for f in seat.faults):
        return EXIT_NO_START
    return EXIT_OK if result.error is None else 70
