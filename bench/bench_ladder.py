"""The ladder's matchmaker and ratings, simulated: how fast the leaderboard finds the true
order, how fast a new entrant finds its rank, and what matchmaking costs per pair.

Run: ``python -m bench.bench_ladder [--runs 20] [--seed 2026]``. The simulation drives the
ladder's own :func:`~referee.tournament.ladder.draw_round` (a round pairs every player once)
and :class:`~referee.tournament.ladder.SkillModel` with its default parameters (docs/ladder.md);
only the games are simulated: players of known true strength (logistic Elo, 20 players 30 Elo
apart, 0 to 570), each game won by A with probability ``1 / (1 + 10 ** ((b - a) / 400))``,
2% of games drawn, a pair being two such games (the duplicate pair's correlation is not
modelled: real pairs carry less luck). Every player is always available; a round's pairs are
played and rated in the order drawn. Figures go to docs/performance.md ("The ladder").

1. **Convergence**: pairs are played until the leaderboard's order (by ``mu - 3 sigma``)
   matches the true order with Spearman's rho >= 0.95 and stays there for the next 200
   pairs; the games this took, per run: median and 90th percentile, with the matchmaker and
   with uniformly random pairing (``explore = 1``) for comparison.
2. **A new entrant**: after 1,000 pairs, a 21st player of true rank 8 (of 21) joins; the
   games it plays until its leaderboard rank is within 2 of 8 and stays so for 10 more of its
   pairs, and the games the whole ladder played meanwhile.
3. **Overhead** with 1,000 registered players (all available): the time per pair of building
   the candidates and drawing the round (a round's time over its 500 pairs), and of rating a
   pair (median of the pairs), and of storing the ratings (the book's SQLite transaction, with
   fsync); and the time to compute the leaderboard (with its Elo check over the best 100)
   from 1,000 players and 50,000 games, as the live page does after each pair (in a worker
   thread).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from referee.tournament.ladder import (
    Candidate,
    LadderBook,
    MatchmakingParams,
    Meetings,
    Player,
    RatingParams,
    RatingRow,
    Skill,
    SkillModel,
    draw_round,
    leaderboard,
)
from referee.tournament.store import GameRow, GameSpec

PARAMS = RatingParams()
DRAWS = 0.02


def game(rng: random.Random, a: float, b: float) -> float:
    """A's score in one simulated game (1, 0.5 or 0)."""
    if rng.random() < DRAWS:
        return 0.5
    return 1.0 if rng.random() < 1.0 / (1.0 + 10.0 ** ((b - a) / 400.0)) else 0.0


class Ladder:
    """A simulated ladder: true strengths, ratings, the matchmaker's rounds."""

    def __init__(self, truth: dict[str, float], rng: random.Random, mm: MatchmakingParams):
        self.truth = truth
        self.rng = rng
        self.mm = mm
        self.model = SkillModel(PARAMS)
        self.skills: dict[str, Skill] = {name: self.model.new() for name in truth}
        self.meetings = Meetings()
        self.games: dict[str, int] = dict.fromkeys(truth, 0)
        self.total = 0
        self._drawn: list[tuple[str, str]] = []

    def add(self, name: str, strength: float) -> None:
        self.truth[name] = strength
        self.skills[name] = self.model.new()
        self.games[name] = 0

    def pair(self) -> tuple[str, str]:
        """Play and rate the next pair of the round (a round is drawn when the last is played)."""
        if not self._drawn:
            candidates = [Candidate(n, s.mu, s.sigma) for n, s in self.skills.items()]
            seed = self.rng.randbytes(32)
            draw = draw_round(candidates, self.meetings, seed, self.mm, beta=PARAMS.beta)
            self._drawn = list(draw.pairs)
            for a, b in draw.pairs:
                self.meetings.add(a, b)
        a, b = self._drawn.pop(0)
        score = (game(self.rng, self.truth[a], self.truth[b])
                 + 1.0 - game(self.rng, self.truth[b], self.truth[a])) / 2.0  # fmt: skip
        self.skills[a], self.skills[b] = self.model.rate(self.skills[a], self.skills[b], score)
        self.games[a] += 2
        self.games[b] += 2
        self.total += 2
        return a, b

    def board(self) -> list[str]:
        """Names by rank value, best first."""
        return sorted(self.skills, key=lambda n: -self.skills[n].rank_value(PARAMS.rank_sigmas))

    def spearman(self) -> float:
        """Spearman's rho of the leaderboard's order against the true order (no ties)."""
        true = sorted(self.truth, key=lambda n: -self.truth[n])
        where = {name: i for i, name in enumerate(self.board())}
        n = len(true)
        d2 = sum((i - where[name]) ** 2 for i, name in enumerate(true))
        return 1.0 - 6.0 * d2 / (n * (n * n - 1))


def field(n: int = 20) -> dict[str, float]:
    return {f"p{i:02d}": 30.0 * i for i in range(n)}


def convergence(seed: int, mm: MatchmakingParams, limit: int = 20000) -> int | None:
    """Games until rho >= 0.95 for good (200 more pairs), or None within ``limit`` pairs."""
    ladder = Ladder(field(), random.Random(seed), mm)
    reached: int | None = None
    held = 0
    for _ in range(limit):
        ladder.pair()
        if ladder.spearman() >= 0.95:
            if reached is None:
                reached = ladder.total
            held += 1
            if held >= 200:
                return reached
        else:
            reached, held = None, 0
    return None


def newcomer(seed: int) -> tuple[int, int] | None:
    """(its games, the ladder's games) until the new entrant's rank is within 2 of its true
    rank for good (10 more of its pairs); None if not within 20,000 pairs."""
    ladder = Ladder(field(), random.Random(seed), MatchmakingParams())
    for _ in range(1000):
        ladder.pair()
    true_rank = 8  # 1-based, of 21: between p13 (390) and p12 (360)
    ladder.add("new", 375.0)
    start = ladder.total
    reached: tuple[int, int] | None = None
    held = 0
    for _ in range(20000):
        a, b = ladder.pair()
        if "new" not in (a, b):
            continue
        if abs(ladder.board().index("new") + 1 - true_rank) <= 2:
            if reached is None:
                reached = (ladder.games["new"], ladder.total - start)
            held += 1
            if held >= 10:
                return reached
        else:
            reached, held = None, 0
    return None


def overhead(players: int, rounds: int, seed: int) -> dict[str, float]:
    """Microseconds per pair (medians) with ``players`` registered and available."""
    rng = random.Random(seed)
    model = SkillModel(PARAMS)
    skills = {f"p{i:04d}": Skill(25.0 + rng.gauss(0, 5), 1.0 + 7 * rng.random())
              for i in range(players)}  # fmt: skip
    meetings = Meetings()
    build, choose, rate = [], [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        candidates = [Candidate(n, s.mu, s.sigma) for n, s in skills.items()]
        t1 = time.perf_counter()
        draw = draw_round(candidates, meetings, rng.randbytes(32), MatchmakingParams(),
                          beta=PARAMS.beta)  # fmt: skip
        t2 = time.perf_counter()
        build.append((t1 - t0) / len(draw.pairs))
        choose.append((t2 - t1) / len(draw.pairs))
        for a, b in draw.pairs:
            t3 = time.perf_counter()
            skills[a], skills[b] = model.rate(skills[a], skills[b], rng.choice((0.0, 0.5, 1.0)))
            rate.append(time.perf_counter() - t3)
            meetings.add(a, b)
    with tempfile.TemporaryDirectory() as tmp, LadderBook.open(Path(tmp) / "l.sqlite") as book:
        names = list(skills)[:50]
        for name in names:
            book.add(name.replace("p", "e"), now=0.0, command="true", fingerprint=name)
        store = []
        for i in range(200):
            a, b = f"e{names[i % 50][1:]}.v1", f"e{names[(i + 1) % 50][1:]}.v1"
            t0 = time.perf_counter()
            book.record_pair([RatingRow(f"d{i}", a, b, 1.0, 26.0, 8.0, 1.0),
                              RatingRow(f"d{i}", b, a, 0.0, 24.0, 8.0, 1.0)])  # fmt: skip
            store.append(time.perf_counter() - t0)
    parts = {"candidates": build, "choose": choose, "rate": rate, "store": store}
    return {key: statistics.median(values) * 1e6 for key, values in parts.items()}


def board_seconds(players: int, games: int, seed: int) -> tuple[float, str]:
    """Seconds to compute the leaderboard of ``players`` and ``games`` (in memory), and how
    its Elo check's fit went."""
    rng = random.Random(seed)
    roster = [Player(f"e{i}.v1", f"e{i}", 1, "local", "true", "f" * 64, None, None, 0.0, None,
                     None) for i in range(players)]  # fmt: skip
    current = {p.player: (25.0 + rng.gauss(0, 5), 1.0 + rng.random(), 10) for p in roster}
    rows = []
    for g in range(games):
        a, b = rng.sample(roster, 2)
        spec = GameSpec(g, f"{a.player}-vs-{b.player}", a.player, b.player, f"ladder/{g}", g)
        winner = a.player if rng.random() < 0.5 else b.player
        rows.append(GameRow(spec, "done", {"winner": winner}, 1, 1.0))
    start = time.perf_counter()
    board = leaderboard("bench", roster, current, rows, PARAMS, now=0.0)
    return time.perf_counter() - start, board["elo_check"]["status"]


def quantiles(values: list[int]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return f"median {statistics.median(ordered):.0f}, p90 {p90}, max {ordered[-1]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--players", type=int, default=1000, help="for the overhead")
    args = parser.parse_args()
    for label, mm in (("matchmaker (defaults)", MatchmakingParams()),
                      ("uniform random pairs", MatchmakingParams(explore=1.0))):  # fmt: skip
        start = time.perf_counter()
        found = [convergence(args.seed + r, mm) for r in range(args.runs)]
        done = [f for f in found if f is not None]
        print(f"20 players, games to Spearman >= 0.95 for good, {label}: {quantiles(done)}"
              f" ({len(done)}/{args.runs} runs; {time.perf_counter() - start:.0f} s)",
              flush=True)  # fmt: skip
    joins = [newcomer(args.seed + r) for r in range(args.runs)]
    got = [j for j in joins if j is not None]
    print(f"new entrant to true rank ±2 for good: its games {quantiles([g[0] for g in got])};"
          f" the ladder's games meanwhile {quantiles([g[1] for g in got])}"
          f" ({len(got)}/{args.runs} runs)", flush=True)  # fmt: skip
    cost = overhead(args.players, 20, args.seed)
    print(f"{args.players} players registered, per pair (median, us): building the candidates"
          f" {cost['candidates']:.0f}, drawing the round {cost['choose']:.0f}, rating"
          f" {cost['rate']:.0f}, storing the ratings {cost['store']:.0f}")  # fmt: skip
    for count in (100, args.players):
        took, status = board_seconds(count, 50_000, args.seed)
        print(f"the leaderboard of {count} players and 50,000 games: {took:.2f} s"
              f" (Elo check: {status})")  # fmt: skip


if __name__ == "__main__":
    main()
