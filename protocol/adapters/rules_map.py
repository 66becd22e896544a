"""Which of the referee's rule sets another library's game can play, and how.

The rules come in ``match_start`` (the referee's ``RuleSet.to_dict()``, docs/rules.md). An
adapter plays only rules it can map: :func:`openspiel_params` gives the parameters of
OpenSpiel's ``gin_rummy`` game for them, :func:`check_rlcard` accepts what RLCard's agents
can follow; both raise :class:`RulesMismatch`, naming the field, for the others.

>>> openspiel_params({"knock_limit": 10, "gin_bonus": 25, "undercut_bonus": 25})
{'knock_card': 10, 'oklahoma': False, 'gin_bonus': 25, 'undercut_bonus': 25}
>>> openspiel_params({"knock_limit": 12})
Traceback (most recent call last):
...
protocol.adapters.rules_map.RulesMismatch: knock_limit = 12: OpenSpiel's gin_rummy takes a \
knock card of 0 to 10
"""

from __future__ import annotations

from collections.abc import Mapping

from protocol.values import RuleValue

__all__ = ["RULE_FIELDS", "RulesMismatch", "check_rlcard", "openspiel_params"]

RULE_FIELDS = frozenset(
    {
        "name", "knock_limit", "oklahoma", "spade_doubles", "gin_bonus", "big_gin_bonus",
        "undercut_bonus", "target", "game_bonus", "box_bonus", "shutout_bonus", "next_dealer",
        "turn_cap", "knock_hindsight",
    }
)  # fmt: skip
"""Every rule field this package knows (docs/rules.md). A field added to the referee later is
refused until an adapter has been told what it means for its library."""

OPENSPIEL_MAX_KNOCK = 10
"""OpenSpiel's ``knock_card`` parameter is 0 to 10."""


class RulesMismatch(ValueError):
    """The match's rules ask for something the library's game cannot play."""


def _unknown(rules: Mapping[str, RuleValue]) -> None:
    unknown = sorted(set(rules) - RULE_FIELDS)
    if unknown:
        raise RulesMismatch(
            f"rule field(s) {', '.join(unknown)} unknown to this adapter (it knows "
            f"{', '.join(sorted(RULE_FIELDS))}): update gin-referee"
        )


def _int(rules: Mapping[str, RuleValue], key: str, default: int) -> int:
    value = rules.get(key, default)
    if type(value) is not int:
        raise RulesMismatch(f"{key} = {value!r}: expected an integer")
    return value


def openspiel_params(rules: Mapping[str, RuleValue]) -> dict[str, int | bool]:
    """The ``gin_rummy`` parameters (``pyspiel.load_game("gin_rummy", params)``) that play a
    hand as ``rules`` do; :class:`RulesMismatch` for rules OpenSpiel's game cannot express.

    Mapped: ``knock_limit`` (OpenSpiel's ``knock_card``, at most 10), ``oklahoma`` (OpenSpiel
    sets the knock card to the first upcard's value, an ace 0, as the referee does under a
    knock limit of 10; below 10 it has no cap, so that is refused), ``gin_bonus`` and
    ``undercut_bonus``. Everything else plays as it is, documented in docs/existing-bots.md:
    OpenSpiel's game is one hand, so the game's fields (``target``, ``game_bonus``,
    ``box_bonus``, ``shutout_bonus``, ``next_dealer``) do not reach its bots;
    ``spade_doubles`` multiplies every outcome of the hand alike; a bot never declares big gin
    (OpenSpiel has none), and the referee's turn cap and wall end the hand where OpenSpiel's
    would too, or earlier.
    """
    _unknown(rules)
    knock = _int(rules, "knock_limit", 10)
    if not 0 <= knock <= OPENSPIEL_MAX_KNOCK:
        raise RulesMismatch(
            f"knock_limit = {knock}: OpenSpiel's gin_rummy takes a knock card of 0 to "
            f"{OPENSPIEL_MAX_KNOCK}"
        )
    oklahoma = rules.get("oklahoma", False) is True
    if oklahoma and knock != OPENSPIEL_MAX_KNOCK:
        raise RulesMismatch(
            f"oklahoma with knock_limit = {knock}: OpenSpiel's Oklahoma takes the upcard's "
            f"value as the knock card with no cap below {OPENSPIEL_MAX_KNOCK}"
        )
    return {
        "knock_card": knock,
        "oklahoma": oklahoma,
        "gin_bonus": _int(rules, "gin_bonus", 25),
        "undercut_bonus": _int(rules, "undercut_bonus", 25),
    }


def check_rlcard(rules: Mapping[str, RuleValue]) -> None:
    """Accept ``rules`` for an RLCard agent, or raise :class:`RulesMismatch`.

    An RLCard agent chooses among the legal actions its state holds, and the adapter builds
    that list from the referee's own (knocks at the hand's knock limit, Oklahoma's included);
    its observation holds no score. So every rule set this package knows plays: only a field
    it does not know is refused.
    """
    _unknown(rules)
