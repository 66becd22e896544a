"""A synthetic host load: CPU hogs at nice 0, outside the referee, bounded in time.

:func:`hogs` starts ``count`` processes (default: twice the cores) that each spin a core for at
most ``seconds`` and then exit by themselves, so a benchmark or test killed midway leaves no
load behind for longer than that; leaving the ``with`` block kills them at once. They run at
nice 0, the referee's own priority (the bots run at +10), in the starting process's cgroups:
the same contention a shared machine's other work gives, not the bots' own.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator

__all__ = ["hogs", "main"]

_SPIN = (
    "import sys, time\nend = time.monotonic() + float(sys.argv[1])\n"
    "while time.monotonic() < end: pass\n"
)


@contextlib.contextmanager
def hogs(count: int | None = None, *, seconds: float = 600.0) -> Iterator[int]:
    """Run ``count`` CPU hogs (default ``2 * os.cpu_count()``) for at most ``seconds``; yields
    the count. They are killed and reaped when the block is left."""
    count = 2 * (os.cpu_count() or 1) if count is None else count
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _SPIN, str(seconds)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            preexec_fn=lambda: os.setpriority(os.PRIO_PROCESS, 0, 0),  # noqa: PLW1509
        )
        for _ in range(count)
    ]
    try:
        yield count
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.hogs [--count N] [--seconds S] -- COMMAND...``: run COMMAND under
    the load (CI's loaded step); returns its exit status."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.hogs", description=main.__doc__)
    parser.add_argument("--count", type=int, default=None, help="hogs (default: 2 per core)")
    parser.add_argument("--seconds", type=float, default=1800.0, help="at most this long")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("a command to run under the load is needed")
    with hogs(args.count, seconds=args.seconds) as count:
        print(f"hogs: {count} at nice 0 for at most {args.seconds:.0f} s", flush=True)
        return subprocess.run(command, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
