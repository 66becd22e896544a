"""Start-up: ``gin-referee match`` of one short game between the two Python sample bots,
wall time from the command to its exit, and where that time goes.

Run: ``python -m bench.bench_startup [--rounds 5]``. Each round runs, in an order that
rotates from round to round, each of these commands once and times it from ``exec`` to exit:

* ``match`` — ``gin-referee match "python sample_bots/greedy_bot.py" "python
  sample_bots/random_bot.py" --games 1 --target-points 10 --seed 1`` (the sandbox ``auto``);
* ``match_nosandbox`` — the same with ``--sandbox none`` (the difference is the sandbox);
* ``match_traced`` — ``match`` with ``--log-level debug``: its JSON log's time stamps give the
  phases below (debug logging adds a few ms: these phases are read from this run only);
* ``python`` — ``python -c pass``: the interpreter's own start, the floor of any Python step;
* ``python_nosite`` — ``python -S -c pass``: the same without ``site`` (the ``.pth`` files:
  an editable install's import finder);
* ``referee_imports`` — ``python -c "import referee.cli.main"``: what the command line
  imports before it starts a match's bots;
* ``referee_all_imports`` — the same and what a match imports once its bots are started
  (:data:`ALL_IMPORTS`);
* ``bot_imports`` — ``python -c "import protocol.bot"``: a Python bot's SDK imports;
* ``greedy_imports`` — ``python -c "import sample_bots.greedy_bot"``: the SDK and the rules;
* ``sandboxed_bot_imports`` — ``bot_imports`` started the way the referee starts a bot (its
  sandbox level, ``nice``, ``prlimit``): what one bot costs before it can connect.

The phases of ``match_traced`` (seconds from the command's ``exec``, each phase ending at a
line of ``referee.log.jsonl``):

* ``bots_started`` — to the last bot's start (its ``started bot pid N T ms ago`` line, less
  T): the interpreter, the imports a match needs to start its bots, the parsing, the ipc
  socket, the sandbox probe, two spawns;
* ``referee_ready`` — to the first log line: the log's set-up (structlog's import);
* ``bots_hello`` — to the last ``seat ... bound``: the rest of the referee's imports, the
  transport and the hub, and meanwhile the bots' interpreters, imports and hellos;
* ``game`` — to ``match over``;
* ``teardown`` — to ``transport ... closed``: the bots read ``match_end``, say ``bye`` and
  exit (the referee waits for that exit, an event, never a fixed time), then their process
  groups are killed and the endpoint closed;
* ``exit`` — to the command's exit: the summary, asyncio's and the interpreter's shutdown.

Prints the median [min-max] of each over the rounds as JSON. ``python -X importtime -c "import
referee.cli.main"`` shows the imports one by one.

``--against VENV:CHECKOUT`` (e.g. ``/var/tmp/venv-main:/tmp/main``, a venv with that checkout
installed by ``pip install -e``) times only ``match``, this checkout's and that one's, in
alternate order every round, and prints each one's median [min-max] wall time and CPU time
(the command and its bots) and the ratio of the two within each round: an A/B comparison of
two versions on the same machine at the same time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

PY = sys.executable
GIN = str(Path(PY).with_name("gin-referee"))
BOTS = [f"{PY} sample_bots/greedy_bot.py", f"{PY} sample_bots/random_bot.py"]
SHORT = ["--games", "1", "--target-points", "10", "--seed", "1"]
ALL_IMPORTS = (
    "import referee.cli.main, referee.cli.daemon, referee.match.runner, referee.match.play, "
    "referee.net.transport, structlog"
)
"""Everything a match imports: the command line's part, then what it imports once its bots
are started (the log's structlog, the event loop, the runner, the game, the endpoint)."""
PHASES = ("bots_started", "referee_ready", "bots_hello", "game", "teardown", "exit")


def sandboxed(argv: list[str]) -> list[str]:
    """``argv`` wrapped the way the referee wraps a bot it starts (``--sandbox auto``)."""
    from referee.net.limits import Limits
    from referee.net.sandbox import bot_env, command_line, resolve

    level = resolve("auto")
    env = bot_env(os.environ, level=level)
    line = command_line(argv, cwd=os.getcwd(), env=env, level=level, limits=Limits(), nice=10)
    for fd in line.pass_fds:
        os.close(fd)
    return list(line.argv)


def commands(out: str) -> dict[str, list[str]]:
    """The timed commands (``out``: a scratch directory)."""
    match = [GIN, "match", *BOTS, *SHORT, "--out"]
    return {
        "match": [*match, f"{out}/a"],
        "match_nosandbox": [*match, f"{out}/b", "--sandbox", "none"],
        "match_traced": [*match, f"{out}/c", "--log-level", "debug"],
        "python": [PY, "-c", "pass"],
        "python_nosite": [PY, "-S", "-c", "pass"],
        "referee_imports": [PY, "-c", "import referee.cli.main"],
        "referee_all_imports": [PY, "-c", ALL_IMPORTS],
        "bot_imports": [PY, "-c", "import protocol.bot"],
        "greedy_imports": [PY, "-c", "import sample_bots.greedy_bot"],
        "sandboxed_bot_imports": sandboxed([PY, "-c", "import protocol.bot"]),
    }


def wall(argv: list[str]) -> tuple[float, float, float]:
    """(wall clock at exec, at exit, seconds between); the command must succeed."""
    at, start = time.time(), time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return at, time.time(), time.perf_counter() - start


def phases(log: Path, started: float, ended: float) -> dict[str, float]:
    """Each phase's seconds (see the module docstring) from a debug-level JSON log."""
    marks: dict[str, float] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        stamp = datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00")).timestamp()
        event = str(entry["event"])
        marks.setdefault("referee_ready", stamp)
        if event.startswith("started bot pid"):
            ago = float(event.split(" ms ago", maxsplit=1)[0].rsplit(" ", 1)[1])
            marks["bots_started"] = max(marks.get("bots_started", 0.0), stamp - ago / 1000)
        elif event.startswith("seat ") and " bound to " in event:
            marks["bots_hello"] = stamp
        elif event == "match over":
            marks["game"] = stamp
        elif event.startswith("transport ") and event.endswith(" closed"):
            marks["teardown"] = stamp
    marks["exit"] = ended
    out, before = {}, started
    for name in PHASES:
        out[name] = marks[name] - before
        before = marks[name]
    return out


def shown(values: list[float]) -> str:
    """Median [min-max] in seconds."""
    return f"{statistics.median(values):.3f} s [{min(values):.3f}-{max(values):.3f}]"


def timed(argv: list[str], cwd: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and the children it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return seconds, cpu


THIS, OTHER = "this checkout", "--against"


def compare(rounds: int, against: str) -> dict[str, object]:
    """``match`` of this checkout and of ``against`` (``VENV:CHECKOUT``), in turn."""
    venv, _, checkout = against.partition(":")
    sides = {THIS: (str(Path(PY).parent.parent), os.getcwd()), OTHER: (venv, checkout)}
    walls: dict[str, list[float]] = {name: [] for name in sides}
    cpus: dict[str, list[float]] = {name: [] for name in sides}
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(rounds):
            for name in list(sides)[:: 1 if number % 2 == 0 else -1]:
                home, cwd = sides[name]
                py = f"{home}/bin/python"
                bots = [f"{py} sample_bots/greedy_bot.py", f"{py} sample_bots/random_bot.py"]
                argv = [f"{home}/bin/gin-referee", "match", *bots, *SHORT]
                seconds, cpu = timed([*argv, "--out", f"{tmp}/{name}{number}"], cwd)
                walls[name].append(seconds)
                cpus[name].append(cpu)
        load.append(os.getloadavg()[0])
    ratios = [a / b for a, b in zip(walls[THIS], walls[OTHER], strict=True)]
    report: dict[str, object] = {name: shown(walls[name]) for name in sides}
    report |= {f"{name}, CPU": shown(cpus[name]) for name in sides}
    report[f"{THIS} / {OTHER}, per round"] = (
        f"{statistics.median(ratios):.3f} [{min(ratios):.3f}-{max(ratios):.3f}]"
    )
    report["load average (1 min), start and end"] = f"{load[0]:.2f}, {load[1]:.2f}"
    return report


def main() -> None:
    """Interleaved rounds; medians and ranges as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--against", metavar="VENV:CHECKOUT", default=None)
    args = parser.parse_args()
    if args.against is not None:
        print(json.dumps(compare(args.rounds, args.against), indent=2))
        return
    times: dict[str, list[float]] = {}
    parts: dict[str, list[float]] = {}
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(args.rounds):
            cmds = commands(f"{tmp}/{number}")
            names = list(cmds)
            shift = number % len(names)
            for name in names[shift:] + names[:shift]:
                at, end, seconds = wall(cmds[name])
                times.setdefault(name, []).append(seconds)
                if name == "match_traced":
                    log = Path(f"{tmp}/{number}/c/referee.log.jsonl")
                    for phase, value in phases(log, at, end).items():
                        parts.setdefault(phase, []).append(value)
        load.append(os.getloadavg()[0])
    report: dict[str, object] = {name: shown(v) for name, v in times.items()}
    report["phases of match_traced"] = {name: shown(v) for name, v in parts.items()}
    report["load average (1 min), start and end"] = f"{load[0]:.2f}, {load[1]:.2f}"
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
