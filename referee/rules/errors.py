"""Errors raised by the rules engine; each formats its own message from structured fields."""

from __future__ import annotations

__all__ = ["CardParseError", "IllegalAction", "InvalidMeld", "MalformedAction", "RulesError"]


class RulesError(ValueError):
    """Base class of every error the rules engine raises."""


class CardParseError(RulesError):
    """A card's text could not be parsed."""

    def __init__(self, token: str, reason: str) -> None:
        self.token = token
        self.reason = reason
        super().__init__(f"bad card {token!r}: {reason}")


class InvalidMeld(RulesError):
    """Cards that do not form a set or a run."""

    def __init__(self, cards: str, reason: str) -> None:
        self.cards = cards
        self.reason = reason
        super().__init__(f"invalid meld [{cards}]: {reason}")


class MalformedAction(RulesError):
    """An action that is not well formed (e.g. a knock declaring overlapping melds)."""

    def __init__(self, action: str, reason: str) -> None:
        self.action = action
        self.reason = reason
        super().__init__(f"malformed action {action}: {reason}")


class IllegalAction(RulesError):
    """A well-formed action the rules do not allow in this state."""

    def __init__(self, action: str, phase: str, reason: str) -> None:
        self.action = action
        self.phase = phase
        self.reason = reason
        super().__init__(f"illegal action {action} in phase {phase}: {reason}")
