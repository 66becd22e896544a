"""Root pytest configuration: names every doctest may use without importing them."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace: dict[str, Any]) -> None:
    """Expose the card helpers to doctests, as the README examples assume."""
    from referee.rules.cards import Card, CardSet, parse_cards

    doctest_namespace.update(Card=Card, CardSet=CardSet, parse_cards=parse_cards)
