"""A local bot that plays at random while its helpers flood the referee's endpoint with PINGs.

Usage: ``python pingflood_bot.py SECONDS REPORT [HALF_CLOSE]``. At ``match_start`` it writes
``start`` to the file REPORT and starts ``bench/pingflood.py`` against its own endpoint (the
referee's private ``ipc://`` socket): two processes, and two more every 3 seconds, of 32
connections each, that PING and never read (the attack that grew the referee by a gigabyte in
two minutes); with HALF_CLOSE, each connection ends its side after that many seconds and keeps
its socket, unread (``pingflood --half-close``). The
attack's report (one JSON line) is appended to REPORT when it ends (a file, not stderr: the
referee writes a seat's stderr log when the bot ends). Meanwhile the bot plays any legal
action.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
from pathlib import Path

from protocol.bot import Bot, run_bot_main
from protocol.schema import MatchStart, Request, WireAction

ROOT = Path(__file__).resolve().parents[2]


class PingFlood(Bot):
    """Starts the flood once, then plays at random."""

    def __init__(self, seconds: float, report: Path, half_close: str = "0") -> None:
        self.seconds = seconds
        self.report = report
        self.half_close = half_close
        self.rng = random.Random(5)
        self.flood: subprocess.Popen[bytes] | None = None

    def on_match_start(self, msg: MatchStart) -> None:
        """Start the attack (once)."""
        if self.flood is not None:
            return
        endpoint = os.environ["GIN_REFEREE_ENDPOINT"]
        self.report.write_text("start\n")
        args = [sys.executable, "-m", "bench.pingflood", endpoint, str(self.seconds)]
        self.flood = subprocess.Popen(
            [
                *args,
                "--connections",
                "32",
                "--processes",
                "2",
                "--wave",
                "3",
                "--half-close",
                self.half_close,
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        stdout = self.flood.stdout
        assert stdout is not None

        def report() -> None:
            line = stdout.read().decode().strip()
            with self.report.open("a") as out:
                out.write(line + "\n")

        threading.Thread(target=report, daemon=True).start()

    def act(self, request: Request) -> WireAction:
        """Any legal action."""
        return self.rng.choice(request.legal)


if __name__ == "__main__":
    SECONDS, REPORT = float(sys.argv.pop(1)), Path(sys.argv.pop(1))  # the SDK parses the rest
    HALF_CLOSE = sys.argv.pop(1) if sys.argv[1:2] and sys.argv[1][:1] != "-" else "0"
    sys.exit(run_bot_main(PingFlood(SECONDS, REPORT, HALF_CLOSE), "pingflood"))
