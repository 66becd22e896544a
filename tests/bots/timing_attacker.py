"""A remote ladder entrant that chooses when to connect (issue 38, "steered pairings"): it reads
the live page's ``/snapshot`` and connects only while the two strong players are in a game
with each other, so that, were the matchmaker to choose among the players free at that moment,
only the weak one would be left for it. It plays the greedy sample bot's strategy, one game per
connection, then goes back to watching.

Usage: ``timing_attacker.py ENDPOINT TOKEN NAME SNAPSHOT_URL STRONG_A,STRONG_B LOG GAMES``.
The CURVE keys come from the environment (``GIN_REFEREE_SERVER_KEY``, ``GIN_BOT_PUBLIC_KEY``,
``GIN_BOT_SECRET_KEY``). It stops after GAMES connections, or when the ladder is gone. LOG gets
a JSON line per connection: when it connected, the games the snapshot showed in play then,
the snapshots it read since the last connection, and the bot's exit code.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.error
import urllib.request

from protocol.bot import ExitCode, run_bot
from sample_bots.greedy_bot import GreedyBot

MARK = 'id="gin-live-snapshot">'
GIVE_UP = 60.0
"""Seconds without a readable snapshot after which the ladder is taken to be gone."""


def in_play(url: str) -> list[list[str]]:
    """The seat names of every game the snapshot shows in play."""
    with urllib.request.urlopen(url, timeout=5) as reply:
        page = reply.read().decode()
    start = page.index(MARK) + len(MARK)
    events = json.loads(page[start : page.index("</script>", start)])
    playing = []
    for block in events.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if lines.get("event") != "match":
            continue
        meta = json.loads(lines["data"])["data"]
        if meta.get("status") == "playing" and "names" in meta:
            playing.append(list(meta["names"]))
    return playing


def main() -> int:
    endpoint, token, name, url = sys.argv[1:5]
    strong = set(sys.argv[5].split(","))
    log, games = sys.argv[6], int(sys.argv[7])
    watched, seen_ok = 0, time.monotonic()
    for _ in range(games):
        while True:
            try:
                playing = in_play(url)
            except (OSError, ValueError, urllib.error.URLError):
                if time.monotonic() - seen_ok > GIVE_UP:
                    return 0  # the ladder is gone
                time.sleep(0.05)
                continue
            seen_ok = time.monotonic()
            watched += 1
            if any(set(names) == strong for names in playing):
                break  # the strong two are busy with each other: now
            time.sleep(0.01)
        at = time.time()
        code = run_bot(GreedyBot(), name=name, endpoint=endpoint, token=token,
                       recv_timeout_ms=30_000)  # fmt: skip
        with open(log, "a", encoding="utf-8") as out:
            out.write(json.dumps({"at": at, "saw": playing, "watched": watched, "code": code,
                                  "ended": time.time()}) + "\n")  # fmt: skip
        watched = 0
        if code not in (ExitCode.OK, ExitCode.REJECTED):
            return 0  # the referee went away (or never answered): the attack is over
    return 0


if __name__ == "__main__":
    sys.exit(main())
