"""A seat's token: the secret a bot names in its hello to take its seat (docs/protocol.md).

The hub makes one for every seat it opens without one; a match whose bots start before its hub
exists (:mod:`referee.match.early`) makes its local seats' tokens here first.
"""

from __future__ import annotations

import secrets

__all__ = ["TOKEN_BYTES", "new_token"]

TOKEN_BYTES = 18
"""Random bytes in a token (144 bits)."""


def new_token() -> str:
    """A fresh, unguessable token: :data:`TOKEN_BYTES` random bytes as URL-safe text."""
    return secrets.token_urlsafe(TOKEN_BYTES)
