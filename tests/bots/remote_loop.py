"""A remote bot as an author would run it against ``gin-referee serve``: one connection per
game, in a loop. Usage: ``remote_loop.py ENDPOINT TOKEN NAME GAMES [crash-first|multi]``.

With ``crash-first`` the first connection dies in the middle of its first decision (the
referee sees a bot that went away), then the loop carries on with normal games; a connection
refused (``token_in_use`` while the dead one still holds its seat) is retried every 0.5 s. With
``multi`` the bot asks for ``multi_match`` and plays every game over one connection, until
the referee's ``bye`` (its exit code is then 0).
"""

from __future__ import annotations

import os
import sys
import time

from protocol.bot import ExitCode, run_bot
from protocol.schema import Request, WireAction
from sample_bots.random_bot import RandomBot

RETRIES = 60


class Crasher(RandomBot):
    """Dies on its first decision."""

    def act(self, request: Request) -> WireAction:
        os._exit(9)


def main() -> int:
    """Play up to GAMES games, one connection each; stop when the referee goes quiet."""
    endpoint, token, name, games = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    crash_first = len(sys.argv) > 5 and sys.argv[5] == "crash-first"
    if len(sys.argv) > 5 and sys.argv[5] == "multi":
        return run_bot(
            RandomBot(), name=name, endpoint=endpoint, token=token, recv_timeout_ms=20_000,
            multi_match=True,
        )  # fmt: skip
    for number in range(games):
        if crash_first and number == 0 and os.fork() == 0:
            run_bot(Crasher(seed=1), name=name, endpoint=endpoint, token=token)
            os._exit(0)
        if crash_first and number == 0:
            os.wait()
            continue
        for _attempt in range(RETRIES):
            code = run_bot(
                RandomBot(seed=number), name=name, endpoint=endpoint, token=token,
                recv_timeout_ms=20_000,
            )  # fmt: skip
            if code != ExitCode.REJECTED:
                break
            time.sleep(0.5)  # token_in_use: the previous connection's game has not ended yet
        if code != 0:
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
