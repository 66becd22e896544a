"""Tournament statistics: Elo estimates, ratings, and the SPRT for Gin Rummy bot matches.

The standard engine-testing model (fishtest, fastchess, Ordo) adapted to Gin. Modules, lowest
first: :mod:`.elo` (counting, Elo, intervals, LOS), :mod:`.ratings` (a maximum-likelihood
rating list over every game), :mod:`.sprt` (the exact GSPRT), :mod:`.simulate` (simulated
tests and fishtest's prediction of their length). Pure: no I/O, no clock. See
``docs/statistics.md``.
"""

from referee.tournament.defaults import ELO_MODELS, EloModel
from referee.tournament.stats.elo import (
    MAX_ELO,
    REGULARIZATION,
    SCORE_EPSILON,
    SMALL_SAMPLE,
    TAIL,
    Z95,
    EloEstimate,
    Pentanomial,
    Trinomial,
    elo_bound,
    elo_from_score,
    estimate_games,
    estimate_pairs,
    logistic,
    pair_scores,
    perfect_units_needed,
)
from referee.tournament.stats.ratings import Rating, RatingFit, fit_ratings
from referee.tournament.stats.simulate import (
    SprtPrediction,
    SprtSimulation,
    fishtest_prediction,
    pentanomial_probabilities,
    simulate_sprt,
)
from referee.tournament.stats.sprt import (
    MIN_SPRT_UNITS,
    NELO_PER_T,
    SprtResult,
    Verdict,
    llr_logistic,
    llr_normalized,
    sprt_pairs,
)

__all__ = [
    "ELO_MODELS",
    "MAX_ELO",
    "MIN_SPRT_UNITS",
    "NELO_PER_T",
    "REGULARIZATION",
    "SCORE_EPSILON",
    "SMALL_SAMPLE",
    "TAIL",
    "Z95",
    "EloEstimate",
    "EloModel",
    "Pentanomial",
    "Rating",
    "RatingFit",
    "SprtPrediction",
    "SprtResult",
    "SprtSimulation",
    "Trinomial",
    "Verdict",
    "elo_bound",
    "elo_from_score",
    "estimate_games",
    "estimate_pairs",
    "fishtest_prediction",
    "fit_ratings",
    "llr_logistic",
    "llr_normalized",
    "logistic",
    "pair_scores",
    "pentanomial_probabilities",
    "perfect_units_needed",
    "simulate_sprt",
    "sprt_pairs",
]
