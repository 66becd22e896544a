"""Rules actions from wire actions: the cache of interned ones gives what the mapping gives."""

from __future__ import annotations

import pytest

from protocol.cards import ALL_CARDS
from protocol.parse import interned_action
from protocol.schema import ACTION_KINDS, WireAction
from referee.match.wire import to_action, to_wire_action
from referee.rules import RulesError


@pytest.mark.parametrize("kind", sorted(ACTION_KINDS))
def test_interned_and_equal_wire_actions_map_to_the_same_rules_action(kind: str) -> None:
    if kind == "defend":  # no rules action without melds: referee.match.defence reads it
        assert interned_action(kind, None) is None
        return
    interned_seen = 0
    for card in (None, *ALL_CARDS):
        interned = interned_action(kind, card)
        if interned is None:
            continue  # not what a bot's reply decodes to: nothing cached
        interned_seen += 1
        expected = to_action(WireAction(kind, card))  # equal to the interned one, not cached
        assert to_action(interned) is expected  # the first call caches it
        assert to_action(interned) is expected  # the second reads the cache
        if card is None or kind in ("discard", "knock"):  # (events may name a drawn card)
            assert to_wire_action(expected) == interned
    assert interned_seen >= 1


def test_a_refused_wire_action_is_refused_every_time() -> None:
    for _ in range(2):
        with pytest.raises(RulesError, match="a discard declares no melds"):
            to_action(WireAction("discard", "As", (("2c", "3c", "4c"),)))
