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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from referee.rules.actions import (
        BIG_GIN,
        DRAW_STOCK,
        PASS_UPCARD,
        TAKE_DISCARD,
        Action,
        BigGin,
        Defend,
        Discard,
        DrawStock,
        Knock,
        PassUpcard,
        TakeDiscard,
        discard_action,
        knock_action,
        parse_action,
    )
    from referee.rules.arrangement import knock_arrangement
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
        EAAI,
        OKLAHOMA,
        PRESETS,
        STANDARD,
        STRAIGHT,
        NextDealer,
        RuleSet,
    )
    from referee.rules.scoring import HandResult, HandScore, Termination, score_hand
    from referee.rules.state import (
        HandState,
        Phase,
        deal,
        discard_options,
        legal_actions,
        shuffled_deck,
    )
    from referee.rules.view import PlayerView, observe

_HOME = {
    "ALL_MELDS": "melds",
    "Action": "actions",
    "BIG_GIN": "actions",
    "BigGin": "actions",
    "Defend": "actions",
    "CLASSIC": "ruleset",
    "Card": "cards",
    "CardParseError": "errors",
    "CardSet": "cards",
    "DECK": "cards",
    "DRAW_STOCK": "actions",
    "Discard": "actions",
    "DrawStock": "actions",
    "GameScore": "game",
    "GameState": "game",
    "HandResult": "scoring",
    "HandScore": "scoring",
    "HandState": "state",
    "IllegalAction": "errors",
    "InvalidMeld": "errors",
    "Knock": "actions",
    "MalformedAction": "errors",
    "Meld": "melds",
    "MeldKind": "melds",
    "NextDealer": "ruleset",
    "OKLAHOMA": "ruleset",
    "PASS_UPCARD": "actions",
    "PRESETS": "ruleset",
    "EAAI": "ruleset",
    "PassUpcard": "actions",
    "Phase": "state",
    "PlayerView": "view",
    "Rank": "cards",
    "RuleSet": "ruleset",
    "RulesError": "errors",
    "STANDARD": "ruleset",
    "STRAIGHT": "ruleset",
    "Suit": "cards",
    "TAKE_DISCARD": "actions",
    "TakeDiscard": "actions",
    "Termination": "scoring",
    "apply": "moves",
    "apply_unchecked": "moves",
    "best_melds": "melds",
    "check": "moves",
    "deadwood": "melds",
    "deal": "state",
    "discard_options": "state",
    "discard_action": "actions",
    "final_score": "game",
    "is_legal": "moves",
    "knock_action": "actions",
    "knock_arrangement": "arrangement",
    "knock_discards": "melds",
    "legal_actions": "state",
    "new_game": "game",
    "observe": "view",
    "parse_action": "actions",
    "parse_cards": "cards",
    "record_hand": "game",
    "replay": "moves",
    "score_hand": "scoring",
    "shuffled_deck": "state",
}
"""Each public name's module. They are imported when first asked for, so that a program
imports only the modules it uses: a bot that counts deadwood loads the cards and the melds,
and the referee's command line loads the rule sets before it starts its bots, the rest after
(docs/performance.md, "Start-up")."""


def __getattr__(name: str) -> Any:
    """A public name, imported from its module (:data:`_HOME`) when first asked for."""
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names (:data:`__all__`), imported or not."""
    return sorted(__all__)


__all__ = [
    "ALL_MELDS", "BIG_GIN", "CLASSIC", "DECK", "DRAW_STOCK", "EAAI", "OKLAHOMA", "PASS_UPCARD",
    "PRESETS", "STANDARD", "STRAIGHT", "TAKE_DISCARD", "Action", "BigGin", "Card", "Defend",
    "CardParseError", "CardSet", "Discard", "DrawStock", "GameScore", "GameState",
    "HandResult", "HandScore", "HandState", "IllegalAction", "InvalidMeld", "Knock",
    "MalformedAction", "Meld", "MeldKind", "NextDealer", "PassUpcard", "Phase", "PlayerView",
    "Rank", "RuleSet", "RulesError", "Suit", "TakeDiscard", "Termination", "apply",
    "apply_unchecked", "best_melds", "check", "deadwood", "deal", "discard_action",
    "discard_options", "final_score", "is_legal", "knock_action", "knock_arrangement",
    "knock_discards", "legal_actions", "new_game", "observe", "parse_action", "parse_cards",
    "record_hand", "replay", "score_hand", "shuffled_deck",
]  # fmt: skip
