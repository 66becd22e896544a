"""The fault taxonomy: what a bot can do wrong, as data, and the policy that resolves it.

A fault is never an exception that escapes a match: the seat layer raises a :class:`BotFault`
carrying a :class:`Fault`, the match records it and ends the game or match by policy.
Infrastructure errors (a dead socket, a full disk, a referee bug) are *not* faults; they
propagate and abort the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["TERMINAL_FAULTS", "BotFault", "Fault", "FaultKind", "FaultPolicy", "precedence"]


class FaultKind(StrEnum):
    """Every way a bot can fail; the value is the wire/record code."""

    STARTUP = "startup"
    """The program could not be started, or did not connect and say hello in time."""
    TIMEOUT = "timeout"
    """No reply before the decision's deadline (move time + bank + grace)."""
    CRASH = "crash"
    """The process exited (exit code or signal) before the match ended."""
    STALL = "stall"
    """No answer to heartbeats while idle, the connection vanished, or the bot said bye."""
    MALFORMED = "malformed"
    """Bytes that are not a valid message (not msgpack, too large, wrong shape)."""
    PROTOCOL = "protocol"
    """A valid message that is wrong at this point (e.g. a second hello, flooding)."""
    ILLEGAL = "illegal"
    """A well-formed action the rules do not allow."""


TERMINAL_FAULTS = frozenset({FaultKind.STARTUP, FaultKind.CRASH, FaultKind.STALL})
"""Faults after which the bot cannot go on: they forfeit the match whatever the policy."""

_PRECEDENCE = (
    FaultKind.STARTUP,
    FaultKind.CRASH,
    FaultKind.STALL,
    FaultKind.MALFORMED,
    FaultKind.PROTOCOL,
    FaultKind.ILLEGAL,
    FaultKind.TIMEOUT,
)


def precedence(kind: FaultKind) -> int:
    """Rank of a fault kind when several are detected at once (lower wins).

    A process that died is reported as a crash even if its decision also timed out.
    """
    return _PRECEDENCE.index(kind)


class FaultPolicy(StrEnum):
    """How a (non-terminal) fault is resolved."""

    FORFEIT_GAME = "forfeit-game"
    """The faulting bot loses the current game; the match goes on (default)."""
    FORFEIT_MATCH = "forfeit-match"
    """The faulting bot loses the match."""
    STRIKE = "strike"
    """A safe default move is played for the bot and a strike counted; K strikes forfeit."""


@dataclass(frozen=True, slots=True)
class Fault:
    """One recorded fault."""

    seat: int
    """Seat (0/1) at fault."""
    kind: FaultKind
    """What went wrong."""
    detail: str
    """Human-readable detail (exit hint, stderr tail, the error message...)."""
    game: int = -1
    """Game number (0-based), -1 before the first game."""
    hand: int = -1
    """Hand number within the game, -1 outside a hand."""
    request_id: int | None = None
    """The decision request outstanding when it happened, if any."""
    at: float = 0.0
    """Referee monotonic time of detection (orders simultaneous faults)."""

    def to_dict(self) -> dict[str, object]:
        """Plain-data form for records and summaries."""
        return {
            "seat": self.seat,
            "kind": str(self.kind),
            "detail": self.detail,
            "game": self.game,
            "hand": self.hand,
            "request_id": self.request_id,
        }


class BotFault(Exception):
    """Raised by the seat layer when its bot faults; carries the :class:`Fault`."""

    def __init__(self, fault: Fault) -> None:
        self.fault = fault
        super().__init__(f"seat {fault.seat} {fault.kind}: {fault.detail}")
