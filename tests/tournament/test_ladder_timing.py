"""A remote entrant cannot choose its opponents by choosing when to connect (issue 38).

The attacker (``tests/bots/timing_attacker.py``, over CURVE) reads the live page's
``/snapshot`` and connects only while the two strong players (``greedy`` and ``strong``) are in
a game with each other; it plays ``greedy``'s program. On a matchmaker that chose among the
players free at that moment, it met the weak ``rand`` 138 times in 138 pairs. The page runs
live here (``--spectate-lag 0``): the attacker sees everything there is to see, the moment it
happens, so the rounds alone must defeat it.

The test (docs/statistics.md, "A timing attacker's opponents"): over the rounds in which the
matchmaker drew both the attacker and the honest ``greedy``, let ``m1`` be those that gave the
attacker ``rand`` and ``m2`` those that gave ``greedy`` ``rand``. Were the draw blind to who is
connected, the two (the same program, rated alike) are exchangeable: given ``k = m1 + m2``,
``m1`` is binomial(``k``, 1/2). The two-sided exact binomial test must not reject at
``ALPHA = 0.001``. The ladder plays until ``k >= 11``, the least ``k`` at which the old
matchmaker's outcome (``m2 = 0``: only the attacker meets ``rand``) would be rejected
(2 * 2**-11 < 0.001): a slow machine makes the test longer, never red. The attacker's pairs are
played in the order they were drawn (none skipped, none re-chosen), every round replays from its
seed (``ladder rounds``), and its rating is its program's: within 3 combined sigmas of
``greedy``'s.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pytest

from bench.common import free_port
from bench.ladder_timing import sign_counts, simulate
from referee.cli import main
from referee.net.keys import write_keypair
from referee.tournament.ladder import LadderBook, RoundLedger
from referee.tournament.store import SqliteStore
from tests.e2e.daemon import text, wait_for
from tests.e2e.helpers import PY
from tests.tournament.test_ladder_e2e import (
    ENTRY,
    RANDOM_ENTRY,
    local,
    processes_mentioning,
    ratings,
)
from tests.tournament.test_ladder_e2e import start as start_ladder
from tests.tournament.test_ladder_e2e import stop as stop_ladder

pytestmark = pytest.mark.timeout(300)
ATTACKER = Path(__file__).resolve().parents[1] / "bots" / "timing_attacker.py"
C_BOT = Path(__file__).resolve().parents[2] / "sample_bots" / "c" / "gin-bot"
"""``strong``: the C starter bot (greedy too; it starts in a millisecond, the test's time)."""
ALPHA = 0.001
K_MIN = 11
"""The least ``k`` at which ``m2 = 0`` is rejected at ``ALPHA`` (2 * 2**-11 = 0.00098)."""
CONFIG = """
[ladder]
name = "timing"
concurrency = 2
duplicate = false
poll = 0.1
max_hands_per_game = 1
[time]
move = 0.5
bank = 3.0
startup = 10.0
"""
G, S, R, A = "greedy.v1", "strong.v1", "rand.v1", "attacker.v1"


def binomial_p(m: int, k: int) -> float:
    """Two-sided exact binomial test of ``m`` successes in ``k`` at 1/2 (twice the smaller
    tail, at most 1)."""
    tail = sum(math.comb(k, i) for i in range(min(m, k - m) + 1))
    return min(1.0, 2 * tail / (1 << k))  # integers divided: exact up to the float's rounding


def test_the_binomial_test_has_the_stated_power() -> None:
    assert binomial_p(K_MIN, K_MIN) < ALPHA <= binomial_p(K_MIN - 1, K_MIN - 1)
    assert binomial_p(5, 10) == 1.0 and binomial_p(0, 4) == binomial_p(4, 4) == 0.125


def test_simulated_the_old_rule_gives_the_attacker_the_weak_player_and_rounds_do_not() -> None:
    """The control the real test cannot run (the old rule is gone): simulated at length
    (bench/ladder_timing.py), the rule that chose among the players free at that moment gives
    the attacker rand in nearly every pair, and rates it above greedy; the rounds give it
    rand as often as greedy in the rounds that drew both."""
    old = simulate("free", 400, seed=1)
    (k, n), (kg, ng) = old.share(A), old.share(G)
    assert k >= 0.95 * n and kg <= 0.05 * ng
    assert old.skills[A].mu > old.skills[G].mu + 2.0
    new = simulate("rounds", 3000, seed=1)
    m1, m2 = sign_counts(new.rounds)
    assert m1 + m2 > 300 and binomial_p(m1, m1 + m2) >= ALPHA, (m1, m2)
    k, n = new.share(A)
    assert 0.25 < k / n < 0.42  # about a third: one of the three matchings of a round


def counts(out: Path) -> tuple[int, int, int]:
    """``(m1, m2, k)`` over the rounds that drew both the attacker and greedy."""
    with LadderBook.open(out / "tournament.sqlite") as book:
        rounds = RoundLedger(book).rounds()
    m1 = m2 = 0
    for row in rounds:
        pairs = [set(d.drawn.players) for d in row.draws]
        names = {c.name for c in row.candidates}
        if {A, G} <= names:
            m1 += {A, R} in pairs
            m2 += {G, R} in pairs
    return m1, m2, m1 + m2


def test_an_entrant_timing_its_connections_meets_whom_an_honest_one_meets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tmp_path.chmod(0o755)
    config = tmp_path / "ladder.toml"
    config.write_text(CONFIG)
    out = tmp_path / "out"
    for name, program in (("greedy", ENTRY), ("rand", RANDOM_ENTRY)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "bot.py").write_text(program)
        assert main(["ladder", "add", str(out), name, *local(tmp_path / name)]) == 0
    assert main(["ladder", "add", str(out), "strong", "--command", str(C_BOT)]) == 0
    keys = write_keypair(tmp_path / "keys", "attacker")
    assert main(["ladder", "add", str(out), "attacker", "--remote", "--token", "attacker-token-1",
                 f"--public-key={keys.public_z85}"]) == 0  # fmt: skip
    spectate = f"127.0.0.1:{free_port()}"
    ladder, line = start_ladder(config, out, "--key-dir", str(tmp_path / "home"), "--spectate",
                                spectate, "--spectate-lag", "0")  # fmt: skip
    endpoint = line.split("serving on ", 1)[1].split(";", 1)[0]
    server_key = line.rsplit("referee key ", 1)[1].strip()
    env = {
        **os.environ,
        "GIN_REFEREE_SERVER_KEY": server_key,
        "GIN_BOT_PUBLIC_KEY": keys.public_z85,
        "GIN_BOT_SECRET_KEY": keys.secret_z85,
    }
    log = tmp_path / "attacker.jsonl"
    attacker = None
    try:
        accepted = "remote player attacker.v1 may connect"
        wait_for("the attacker accepted", lambda: accepted in text(out / "referee.log.jsonl"))
        attacker = subprocess.Popen(
            [PY, str(ATTACKER), endpoint, "attacker-token-1", "attacker",
             f"http://{spectate}/snapshot", f"{G},{S}", str(log), "1000"], env=env,
        )  # fmt: skip
        wait_for("enough rounds for the test's power", lambda: counts(out)[2] >= K_MIN,
                 within=240)  # fmt: skip
    finally:
        stop_ladder(ladder)
        if attacker is not None:
            attacker.terminate()
            attacker.wait(30)
    # The attack happened: every connection was made while the snapshot showed greedy and
    # strong in a game with each other, after watching for that moment.
    connections = [json.loads(x) for x in log.read_text().splitlines()]
    assert connections and all([G, S] in c["saw"] or [S, G] in c["saw"] for c in connections)
    assert any(c["watched"] > 1 for c in connections)  # it waited for its moment
    with SqliteStore.open(out / "tournament.sqlite") as store:
        games = [r for r in store.games() if r.status == "done"]
    played = [r.spec.seat1 if r.spec.seat0 == A else r.spec.seat0
              for r in sorted(games, key=lambda r: r.spec.game_id)
              if A in (r.spec.seat0, r.spec.seat1)]  # fmt: skip
    assert len(played) >= K_MIN // 2 and len(connections) >= len(played)
    # Its pairs were played as drawn, in order: none skipped, none chosen again.
    with LadderBook.open(out / "tournament.sqlite") as book:
        rounds = RoundLedger(book).rounds()
    drawn = [next(p for p in d.drawn.players if p != A) for row in rounds for d in row.draws
             if A in d.drawn.players and d.status != "voided"]  # fmt: skip
    assert played == drawn[: len(played)], (played, drawn)
    # Its opponents are an honest entrant's (the module's test).
    m1, m2, k = counts(out)
    assert k >= K_MIN and binomial_p(m1, k) >= ALPHA, (m1, m2)
    # Every round is what its seed and inputs give (availability is none of them).
    capsys.readouterr()
    assert main(["ladder", "rounds", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["replayed"] and report["seeds_checked"] and len(report["rounds"]) == len(rounds)
    # Its rating is its program's.
    rated = ratings(out)
    (mu_a, sigma_a, _), (mu_g, sigma_g, _) = rated[A], rated[G]
    assert abs(mu_a - mu_g) <= 3.0 * math.hypot(sigma_a, sigma_g), rated
    assert not processes_mentioning(str(tmp_path))
