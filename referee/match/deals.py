"""Secret deals that can be proved afterwards: the deal key, its commitment, the shuffle.

Every deck order derives from a 256-bit *deal key* through HMAC-SHA256 and a Fisher-Yates
shuffle driven by counter-mode HMAC output with rejection sampling, specified exactly in
docs/protocol.md ("Checking the deal") so that anyone can re-derive a deck in any language:

- ``commitment = hex(SHA-256(b"gin-referee deal commitment v1\\0" + key))``, sent to the bots
  in ``match_start`` before the first deal; the key itself is revealed after the match (or,
  in a tournament, once the tournament has ended);
- hand seed ``H = HMAC-SHA256(key, b"gin-referee deal v1\\0" + deal_id + b"\\0" + game +
  b"\\0" + hand)`` (``game`` and ``hand`` in decimal ASCII, ``deal_id`` in UTF-8);
- the stream is ``HMAC-SHA256(H, uint32_be(0)) || HMAC-SHA256(H, uint32_be(1)) || …``, read
  as big-endian 32-bit words; for ``i`` from 51 down to 1, draw words until one is below
  ``2**32 - 2**32 % (i + 1)``, take it modulo ``i + 1`` as ``j`` and swap positions ``i`` and
  ``j`` of the card indices ``0..51`` (``suit * 13 + rank - 1``, suits ``cdhs``).

The bots' own seeds come from a second, independent secret (``bot_key``), so nothing a bot
receives before the reveal depends on the deal key. ``Deal.from_seed`` derives both secrets
from a small integer for strategy testing: such deals are *not secret* (``secret`` is False).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.rules import Card

__all__ = ["KEY_BYTES", "Deal", "commitment", "deck_order", "parse_key"]

KEY_BYTES = 32
"""Length of a deal key (256 bits)."""

_COMMIT = b"gin-referee deal commitment v1\0"
_HAND = b"gin-referee deal v1\0"
_SEED_KEY = b"gin-referee seed deal key v1\0"
_SEED_BOT = b"gin-referee seed bot key v1\0"
_WORD = 1 << 32
_CARDS = 52
"""Cards in a deck (the rules' ``DECK``, imported only when a deck is dealt)."""


def commitment(key: bytes) -> str:
    """The published commitment to ``key``: lowercase hex SHA-256 of its encoding."""
    return hashlib.sha256(_COMMIT + key).hexdigest()


def deck_order(key: bytes, deal_id: str, game: int, hand: int) -> list[int]:
    """The card indices (0-51) of one hand's deck, in dealing order (see the module doc)."""
    label = _HAND + deal_id.encode() + b"\0" + str(game).encode() + b"\0" + str(hand).encode()
    seed = hmac.digest(key, label, "sha256")
    # The stream's first blocks at once (51 words are drawn unless one is rejected, which
    # happens about once in 10^8 draws); more blocks only if a rejection needs them.
    words = _words(seed, 0, _BLOCKS)
    taken = 0
    cards = list(range(_CARDS))
    for i in range(len(cards) - 1, 0, -1):
        n = i + 1
        limit = _WORD - _WORD % n
        while True:
            if taken == len(words):
                words += _words(seed, len(words) // 8, 1)
            x = words[taken]
            taken += 1
            if x < limit:
                break
        j = x % n
        cards[i], cards[j] = cards[j], cards[i]
    return cards


_BLOCKS = 7
"""HMAC blocks computed up front: 56 words, enough for the 51 draws of a shuffle."""
_EIGHT_WORDS = struct.Struct(">8I")


def _words(seed: bytes, first: int, count: int) -> tuple[int, ...]:
    """Words of blocks ``first`` to ``first + count - 1`` of the stream keyed by ``seed``."""
    words: tuple[int, ...] = ()
    for counter in range(first, first + count):
        words += _EIGHT_WORDS.unpack(hmac.digest(seed, counter.to_bytes(4, "big"), "sha256"))
    return words


def parse_key(text: str) -> bytes:
    """A deal key from its 64-hex-digit form; ValueError naming what is wrong."""
    text = text.strip()
    if len(text) != 2 * KEY_BYTES:
        raise ValueError(f"a deal key is {2 * KEY_BYTES} hex digits, not {len(text)}")
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise ValueError("a deal key is hex digits only (0-9, a-f)") from None


@dataclass(frozen=True, slots=True)
class Deal:
    """The secrets behind a match's (or a tournament's) deals."""

    key: bytes = field(repr=False)
    """The deal key: every deck derives from it."""
    bot_key: bytes = field(repr=False)
    """An independent secret the bots' own seeds derive from."""
    secret: bool = True
    """False when derived from a public seed (strategy testing only)."""

    def __post_init__(self) -> None:
        if len(self.key) != KEY_BYTES or len(self.bot_key) != KEY_BYTES:
            raise ValueError(f"deal secrets are {KEY_BYTES} bytes")

    @classmethod
    def random(cls) -> Deal:
        """Fresh secrets from the operating system's CSPRNG (the default)."""
        return cls(secrets.token_bytes(KEY_BYTES), secrets.token_bytes(KEY_BYTES))

    @classmethod
    def from_seed(cls, seed: int) -> Deal:
        """Secrets derived from ``seed``: reproducible, and NOT secret."""
        text = str(seed).encode()
        return cls(
            hashlib.sha256(_SEED_KEY + text).digest(),
            hashlib.sha256(_SEED_BOT + text).digest(),
            secret=False,
        )

    @property
    def key_hex(self) -> str:
        """The key as revealed (64 lowercase hex digits)."""
        return self.key.hex()

    @property
    def commitment(self) -> str:
        """The commitment sent before the first deal."""
        return commitment(self.key)

    def deck(self, deal_id: str, game: int, hand: int) -> tuple[Card, ...]:
        """The deck order of a hand."""
        from referee.rules import DECK  # the cards' tables: not needed to start a match's bots

        return tuple(map(DECK.__getitem__, deck_order(self.key, deal_id, game, hand)))

    def bot_seed(self, label: str) -> str:
        """A bot's seed for its own randomness (48 bits, decimal), independent of the deals."""
        digest = hmac.new(self.bot_key, label.encode(), hashlib.sha256).digest()
        return str(int.from_bytes(digest[:6], "big"))
