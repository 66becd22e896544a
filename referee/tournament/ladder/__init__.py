"""Ladders: a competition that never ends (docs/ladder.md).

Entrants come and go while it runs (:mod:`.book`), the referee chooses who plays whom
(:mod:`.matchmaker`: rounds drawn from the ratings, :mod:`.rounds`, played in order,
:mod:`.queue`), every duplicate pair updates Gaussian skill ratings (:mod:`.skill`), and
the leaderboard (:mod:`.board`) is always current. :class:`LadderRun` plays it, on a
tournament's store and machinery. Modules, lowest first: config, skill, matchmaker and book;
board; queue, roster, pairs and rounds; choosing, run and worker.
"""

from referee.tournament.ladder.board import ladder_board, leaderboard, leaderboard_text
from referee.tournament.ladder.book import (
    LadderBook,
    LadderError,
    Player,
    RatingRow,
    fingerprint_command,
    fingerprint_version,
)
from referee.tournament.ladder.config import (
    LadderConfig,
    MatchmakingParams,
    RatingParams,
    load_ladder,
    parse_ladder,
)
from referee.tournament.ladder.matchmaker import (
    Candidate,
    Draw,
    Meetings,
    draw_round,
    match_quality,
    round_seed,
)
from referee.tournament.ladder.pairs import PairLedger, PairRow, pair_deal
from referee.tournament.ladder.queue import Drawn, PairQueue
from referee.tournament.ladder.rounds import RoundLedger, RoundRow, replay
from referee.tournament.ladder.run import LadderRun, Pair
from referee.tournament.ladder.skill import Skill, SkillModel, pair_score, unplayed
from referee.tournament.ladder.worker import (
    LADDER_KEY,
    LadderWorker,
    ladder_worker_config,
    with_concurrency,
)

__all__ = [
    "LADDER_KEY",
    "Candidate",
    "Draw",
    "Drawn",
    "LadderBook",
    "LadderConfig",
    "LadderError",
    "LadderRun",
    "LadderWorker",
    "MatchmakingParams",
    "Meetings",
    "Pair",
    "PairLedger",
    "PairQueue",
    "PairRow",
    "Player",
    "RatingParams",
    "RatingRow",
    "RoundLedger",
    "RoundRow",
    "Skill",
    "SkillModel",
    "draw_round",
    "fingerprint_command",
    "fingerprint_version",
    "ladder_board",
    "leaderboard",
    "ladder_worker_config",
    "leaderboard_text",
    "load_ladder",
    "match_quality",
    "pair_deal",
    "pair_score",
    "parse_ladder",
    "replay",
    "round_seed",
    "unplayed",
    "with_concurrency",
]
