"""The timing attacker of issue 38 against the ladder's matchmaker: simulated at length, and a
real run of the test's scenario for minutes.

Run: ``python -m bench.ladder_timing [--pairs 20000] [--runs 5] [--minutes 10] [--out DIR]
[--repeat-weight W]``.
Four players: ``greedy`` and ``attacker`` (the same program), ``strong``, and the weak
``rand``. The attacker connects only while ``greedy`` and ``strong`` are in a game with each
other, plays one pair, and leaves. Figures go to docs/performance.md ("The ladder").

1. **Simulated** (:func:`simulate`): two slots, pairs lasting 0.5 to 1.5 time units, one game a
   pair won with the logistic Elo of true strengths (greedy, attacker and strong 400, rand 0),
   rated by the ladder's :class:`~referee.tournament.ladder.SkillModel`. Under the ladder's
   rule (``rounds``: :func:`~referee.tournament.ladder.draw_round`, played in the order of
   :class:`~referee.tournament.ladder.PairQueue`, as :mod:`referee.tournament.ladder.choosing`
   does) and, as a control, under the rule it replaced (``free``: each pair chosen among the
   players free at that moment: the first by ``sigma**2``, its opponent by match quality, as
   the old ``choose_pair`` did, with its defaults). Printed: each one's share of pairs against
   ``rand``; over the rounds that drew both the attacker and greedy, the exact binomial test of
   the test (tests/tournament/test_ladder_timing.py); the final ``mu`` of each.
2. **Real** (``--minutes``): ``gin-referee ladder run`` with the test's configuration and
   players, the attacker as a real CURVE remote bot reading ``/snapshot`` (lag 0), for that
   long; the same figures from the store.
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import free_port, serving_line
from referee.tournament.ladder import (
    Candidate,
    Drawn,
    LadderBook,
    MatchmakingParams,
    Meetings,
    PairQueue,
    RatingParams,
    RoundLedger,
    Skill,
    SkillModel,
    draw_round,
    match_quality,
)

G, S, R, A = "greedy.v1", "strong.v1", "rand.v1", "attacker.v1"
TRUTH = {G: 400.0, A: 400.0, S: 400.0, R: 0.0}
PARAMS = RatingParams()
MM = MatchmakingParams()
OLD = MatchmakingParams(repeat_weight=0.25)
"""The old rule's defaults (``repeat_weight`` was 0.25)."""
PY = sys.executable
ROOT = Path(__file__).resolve().parents[1]


def binomial_p(m: int, k: int) -> float:
    """Two-sided exact binomial test of ``m`` successes in ``k`` at 1/2."""
    if k == 0:
        return 1.0
    tail = sum(math.comb(k, i) for i in range(min(m, k - m) + 1))
    return min(1.0, 2 * tail / (1 << k))  # integers divided: exact up to the float's rounding


def sign_counts(rounds: list[tuple[set[str], list[set[str]]]]) -> tuple[int, int]:
    """``(m1, m2)`` over the rounds (their players, their pairs) that drew A and G both."""
    m1 = sum({A, R} in pairs for names, pairs in rounds if {A, G} <= names)
    m2 = sum({G, R} in pairs for names, pairs in rounds if {A, G} <= names)
    return m1, m2


@dataclass
class Outcome:
    """What a run gave."""

    opponents: dict[str, Counter[str]] = field(default_factory=dict)
    rounds: list[tuple[set[str], list[set[str]]]] = field(default_factory=list)
    skills: dict[str, Skill] = field(default_factory=dict)

    def share(self, player: str) -> tuple[int, int]:
        """(pairs against rand, pairs) of ``player``."""
        got = self.opponents.get(player, Counter())
        return got[R], sum(got.values())


def _old_choice(ready: list[str], skills: dict[str, Skill], last: dict[str, str],
                rng: random.Random, mm: MatchmakingParams) -> tuple[str, str] | None:  # fmt: skip
    """The rule the rounds replaced: a pair among the players free now."""
    if len(ready) < 2:
        return None
    cands = {n: Candidate(n, skills[n].mu, skills[n].sigma) for n in ready}
    if rng.random() < mm.explore:
        first = rng.choice(ready)
    else:
        first = rng.choices(ready, [skills[n].sigma ** 2 for n in ready])[0]
    others = [n for n in ready if n != first]
    if rng.random() < mm.explore:
        return first, rng.choice(others)
    weights = [match_quality(cands[first], cands[n], PARAMS.beta)
               * (mm.repeat_weight if last.get(first) == n or last.get(n) == first else 1.0)
               for n in others]  # fmt: skip
    return first, rng.choices(others, weights)[0]


def simulate(
    rule: str, pairs: int, seed: int, slots: int = 2, mm: MatchmakingParams = MM
) -> Outcome:
    """``pairs`` pairs of the four players under ``rule`` (``rounds`` or ``free``)."""
    rng = random.Random(seed)
    model = SkillModel(PARAMS)
    skills = {n: model.new() for n in TRUTH}
    queue, meetings, number = PairQueue(), Meetings(), 0
    last: dict[str, str] = {}
    busy: set[str] = set()
    connected = False  # the attacker
    out = Outcome(opponents={n: Counter() for n in TRUTH})
    ends: list[tuple[float, int, tuple[str, str]]] = []
    now, played, serial = 0.0, 0, 0

    def present(n: str) -> bool:
        return n != A or connected

    def ready(n: str) -> bool:
        return present(n) and n not in busy

    def start_any() -> bool:
        nonlocal number, serial
        if rule == "free":
            chosen = _old_choice([n for n in TRUTH if ready(n)], skills, last, rng, OLD)
        else:
            chosen = None
            for _ in range(3):
                drawn = queue.next_playable(present, ready)
                if drawn is not None:
                    queue.remove(drawn)
                    chosen = drawn.players
                    break
                if not queue.needs_round(present):
                    break
                cands = [Candidate(n, skills[n].mu, skills[n].sigma) for n in TRUTH
                         if present(n) or not queue.holds(n)]  # fmt: skip
                if len(cands) < 2:
                    break
                number += 1
                draw = draw_round(cands, meetings, rng.randbytes(32), mm, beta=PARAMS.beta)
                out.rounds.append(({c.name for c in cands}, [set(p) for p in draw.pairs]))
                for i, pair in enumerate(draw.pairs):
                    queue.add(Drawn(number, i, pair))
                    meetings.add(*pair)
        if chosen is None:
            return False
        busy.update(chosen)
        serial += 1
        heapq.heappush(ends, (now + rng.uniform(0.5, 1.5), serial, chosen))
        return True

    def fill() -> None:
        """Start pairs while a slot is free; the attacker connects the moment greedy and
        strong are in a game with each other (and plays one pair, then leaves)."""
        nonlocal connected
        while True:
            if not connected and A not in busy and any({G, S} == set(p) for *_, p in ends):
                connected = True
            if len(ends) >= slots or not start_any():
                return

    while played < pairs:
        fill()
        if not ends:
            raise RuntimeError("nothing to play")  # cannot happen: locals are always there
        now, _, (a, b) = heapq.heappop(ends)
        busy.difference_update((a, b))
        p = 1.0 / (1.0 + 10.0 ** ((TRUTH[b] - TRUTH[a]) / 400.0))
        score = 1.0 if rng.random() < p else 0.0
        skills[a], skills[b] = model.rate(skills[a], skills[b], score)
        out.opponents[a][b] += 1
        out.opponents[b][a] += 1
        last[a], last[b] = b, a
        played += 1
        if A in (a, b):
            connected = False
    out.skills = skills
    return out


def report(label: str, out: Outcome) -> None:
    """Print one run's figures."""
    (ka, na), (kg, ng) = out.share(A), out.share(G)
    line = (f"{label}: attacker met rand in {ka}/{na} pairs ({ka / max(na, 1):.0%}), greedy in"
            f" {kg}/{ng} ({kg / max(ng, 1):.0%})")  # fmt: skip
    if out.rounds:
        m1, m2 = sign_counts(out.rounds)
        line += (f"; rounds drawing both: attacker-rand {m1}, greedy-rand {m2}, exact binomial"
                 f" p = {binomial_p(m1, m1 + m2):.3g}")  # fmt: skip
    if out.skills:
        mus = ", ".join(
            f"{n.split('.')[0]} {s.mu:.1f}±{s.sigma:.1f}" for n, s in out.skills.items()
        )
        line += f"; mu: {mus}"
    print(line, flush=True)


def real(minutes: float, out_dir: Path) -> Outcome:
    """The test's scenario with real processes for ``minutes``."""
    from referee.net.keys import write_keypair

    out_dir.chmod(0o755)
    config = out_dir / "ladder.toml"
    config.write_text((ROOT / "tests/tournament/test_ladder_timing.py").read_text()
                      .split('CONFIG = """', 1)[1].split('"""', 1)[0])  # fmt: skip
    ladder_dir = out_dir / "out"
    entry = "import sys\nfrom sample_bots.{} import main\n\nsys.exit(main())\n"
    for name, module in (("greedy", "greedy_bot"), ("rand", "random_bot")):
        (out_dir / name).mkdir()
        (out_dir / name / "bot.py").write_text(entry.format(module))
        _cli("ladder", "add", str(ladder_dir), name, "--bot-dir", str(out_dir / name),
             "--command", f"{PY} bot.py")  # fmt: skip
    _cli(
        "ladder", "add", str(ladder_dir), "strong", "--command", str(ROOT / "sample_bots/c/gin-bot")
    )
    keys = write_keypair(out_dir / "keys", "attacker")
    _cli("ladder", "add", str(ladder_dir), "attacker", "--remote", "--token", "attacker-token-1",
         f"--public-key={keys.public_z85}")  # fmt: skip
    spectate, bind = f"127.0.0.1:{free_port()}", f"tcp://127.0.0.1:{free_port()}"
    ladder = subprocess.Popen(
        [PY, "-m", "referee", "ladder", "run", str(config), "--out", str(ladder_dir), "--bind",
         bind, "--key-dir", str(out_dir / "home"), "--spectate", spectate, "--spectate-lag", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert ladder.stderr is not None
    line = serving_line(ladder.stderr.readline)
    server_key = line.rsplit("referee key ", 1)[1].strip()
    env = dict(os.environ, GIN_REFEREE_SERVER_KEY=server_key, GIN_BOT_PUBLIC_KEY=keys.public_z85,
               GIN_BOT_SECRET_KEY=keys.secret_z85)  # fmt: skip
    attacker = subprocess.Popen(
        [PY, str(ROOT / "tests/bots/timing_attacker.py"), bind, "attacker-token-1", "attacker",
         f"http://{spectate}/snapshot", f"{G},{S}", str(out_dir / "attacker.jsonl"), "100000"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        time.sleep(minutes * 60.0)  # a benchmark's run time, not a wait for an event
    finally:
        ladder.send_signal(signal.SIGINT)
        ladder.communicate(timeout=120)
        attacker.terminate()
        attacker.wait(30)
    with LadderBook.open(ladder_dir / "tournament.sqlite") as book:
        rounds = RoundLedger(book).rounds()
        current = book.current()
        history = book.history()
    result = Outcome(opponents={n: Counter() for n in TRUTH})
    for row in history:
        result.opponents.setdefault(row.player, Counter())[row.opponent] += 1
    result.rounds = [({c.name for c in r.candidates}, [set(d.drawn.players) for d in r.draws])
                     for r in rounds]  # fmt: skip
    result.skills = {n: Skill(mu, sigma) for n, (mu, sigma, _) in current.items()}
    connections = len((out_dir / "attacker.jsonl").read_text().splitlines())
    print(f"real run, {minutes:g} min: {len(rounds)} rounds, {len(history) // 2} pairs rated,"
          f" {connections} attacker connections, each while greedy and strong played each"
          " other", flush=True)  # fmt: skip
    return result


def _cli(*argv: str) -> None:
    done = subprocess.run([PY, "-m", "referee", *argv], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"gin-referee {' '.join(argv)}: {done.stderr}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=20000, help="simulated pairs per run")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--minutes", type=float, default=0.0, help="a real run this long")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--repeat-weight", type=float, default=MM.repeat_weight,
                        help="[matchmaking] repeat_weight of the simulation")  # fmt: skip
    args = parser.parse_args()
    mm = MatchmakingParams(repeat_weight=args.repeat_weight)
    for rule in ("rounds", "free"):
        for run in range(args.runs):
            got = simulate(rule, args.pairs, args.seed + run, mm=mm)
            report(f"simulated, {rule}, run {run + 1}", got)
    if args.minutes > 0:
        with tempfile.TemporaryDirectory() as tmp:
            out = args.out or Path(tmp)
            out.mkdir(parents=True, exist_ok=True)
            report("real", real(args.minutes, out))
            print(json.dumps({"out": str(out)}))


if __name__ == "__main__":
    main()
