"""Pure Gin Rummy rules: cards, melds, one hand as a state machine, scoring and games.

No I/O, no asyncio, no logging, no wall clock; randomness only through an injected
``random.Random``. Everything here is an immutable value.

>>> import random
>>> from referee.rules import STANDARD, deal, shuffled_deck, legal_actions, apply
>>> rng = random.Random(2026)
>>> state = deal(STANDARD, shuffled_deck(rng), dealer=0)
>>> while not state.is_over:
...     state = apply(state, rng.choice(legal_actions(state)))
>>> state.result.termination in (Termination.WALL, Termination.KNOCK, Termination.GIN,
...                              Termination.UNDERCUT, Termination.BIG_GIN)
True
"""

from referee.rules.actions import (
    BIG_GIN,
    DRAW_STOCK,
    PASS_UPCARD,
    TAKE_DISCARD,
    Action,
    BigGin,
    Discard,
    DrawStock,
    Knock,
    PassUpcard,
    TakeDiscard,
    discard_action,
    knock_action,
    parse_action,
)
from referee.rules.cards import DECK, Card, CardSet, Rank, Suit, parse_cards
from referee.rules.errors import (
    CardParseError,
    IllegalAction,
    InvalidMeld,
    MalformedAction,
    RulesError,
)
from referee.rules.game import GameScore, GameState, final_score, new_game, record_hand
from referee.rules.melds import ALL_MELDS, Meld, MeldKind, best_melds, deadwood, knock_discards
from referee.rules.moves import apply, apply_unchecked, check, is_legal, replay
from referee.rules.ruleset import (
    CLASSIC,
    OKLAHOMA,
    PRESETS,
    STANDARD,
    STRAIGHT,
    NextDealer,
    RuleSet,
)
from referee.rules.scoring import HandResult, HandScore, Termination, score_hand
from referee.rules.state import HandState, Phase, deal, legal_actions, shuffled_deck
from referee.rules.view import PlayerView, observe

__all__ = [
    "ALL_MELDS", "BIG_GIN", "CLASSIC", "DECK", "DRAW_STOCK", "OKLAHOMA", "PASS_UPCARD",
    "PRESETS", "STANDARD", "STRAIGHT", "TAKE_DISCARD", "Action", "BigGin", "Card",
    "CardParseError", "CardSet", "Discard", "DrawStock", "GameScore", "GameState",
    "HandResult", "HandScore", "HandState", "IllegalAction", "InvalidMeld", "Knock",
    "MalformedAction", "Meld", "MeldKind", "NextDealer", "PassUpcard", "Phase", "PlayerView",
    "Rank", "RuleSet", "RulesError", "Suit", "TakeDiscard", "Termination", "apply",
    "apply_unchecked", "best_melds", "check", "deadwood", "deal", "discard_action",
    "final_score", "is_legal", "knock_action", "knock_discards", "legal_actions", "new_game",
    "observe", "parse_action", "parse_cards", "record_hand", "replay", "score_hand",
    "shuffled_deck",
]  # fmt: skip
