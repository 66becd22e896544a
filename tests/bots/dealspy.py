"""A cheating test bot: it tries to rebuild every deck from everything the referee gives it.

At each deal it tries the attacks that worked before deals were secret (inverting
``match_start.seed`` into the referee's seed and re-running the old ``random.Random`` deck) and
every derivation it can think of with the published algorithm: keys from its seed, the
commitment, the token, the match and deal ids, and a brute force of public seeds 0..199. An
attack *hits* when the deck it builds deals this bot exactly its own hand and upcard; the bot
then predicts the opponent's ten cards from that deck, else it guesses ten unseen cards at
random. At ``match_end`` it checks the revealed key against the commitment and re-derives the
decks of its own hands with its own implementation of docs/protocol.md's algorithm.

Everything goes to stderr as JSON lines (``start``, ``predict``, ``verify``) for the tests; a
random ``proc`` id names the process (pids are not unique across PID namespaces). Plays at
random; asks for ``multi_match``; ignores SIGTERM (so that the check at ``match_end`` is not
cut short by the teardown that follows it).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import random
import signal
import sys
from typing import Any

from protocol.bot import Bot, run_bot_main
from protocol.schema import HandStart, MatchEnd, MatchStart, Request, WireAction
from referee.rules import DECK, shuffled_deck

PROC = os.urandom(8).hex()
CARD = [str(card) for card in DECK]
INDEX = {text: i for i, text in enumerate(CARD)}


def seed_key(seed: int) -> bytes:
    """The deal key ``--seed`` gives (docs/records.md): public, so worth a brute force."""
    return hashlib.sha256(b"gin-referee seed deal key v1\0" + str(seed).encode()).digest()


def say(**fields: Any) -> None:
    print(json.dumps({"proc": PROC, **fields}), file=sys.stderr, flush=True)


def old_deck(seed: int, game: int, hand: int) -> list[int]:
    """The deck of the referee before secret deals (``seeded_deck``)."""
    digest = hashlib.sha256(f"gin-referee/deck/{seed}/{game}/{hand}".encode()).digest()
    return [c.index for c in shuffled_deck(random.Random(int.from_bytes(digest[:16], "big")))]


def dealt(deck: list[int], dealer: int) -> tuple[frozenset[int], frozenset[int], int]:
    """(non-dealer's hand, dealer's hand, upcard) of a deck order."""
    return frozenset(deck[0:20:2]), frozenset(deck[1:20:2]), deck[20]


def verify_key(key_hex: str, commitment_hex: str) -> bool:
    """docs/protocol.md: the commitment is SHA-256 of a domain-separated key encoding."""
    key = bytes.fromhex(key_hex)
    return hashlib.sha256(b"gin-referee deal commitment v1\0" + key).hexdigest() == commitment_hex


def rederive(key: bytes, deal_id: str, game: int, hand: int) -> list[int]:
    """docs/protocol.md's shuffle, written again here (not the referee's code)."""
    label = b"gin-referee deal v1\0%s\0%d\0%d" % (deal_id.encode(), game, hand)
    seed = hmac.new(key, label, hashlib.sha256).digest()
    blocks = (hmac.new(seed, i.to_bytes(4, "big"), hashlib.sha256).digest() for i in range(99))
    words = (int.from_bytes(block[k : k + 4], "big") for block in blocks for k in range(0, 32, 4))
    cards = list(range(52))
    for i in range(51, 0, -1):
        n = i + 1
        x = next(words)
        while x >= 2**32 - 2**32 % n:
            x = next(words)
        j = x % n
        cards[i], cards[j] = cards[j], cards[i]
    return cards


class DealSpy(Bot):
    """Random play; every attack on the deal it can think of."""

    def __init__(self) -> None:
        self.rng = random.Random(os.urandom(8))
        self.start: MatchStart | None = None
        self.hands: list[tuple[int, int, int, frozenset[int], int]] = []
        self.found: list[tuple[str, Any]] = []

    def on_match_start(self, msg: MatchStart) -> None:
        self.start = msg
        self.rng = random.Random(msg.seed)
        self.hands = []
        self.found = []
        say(kind="start", match_id=msg.match_id, deal_id=msg.deal_id, seat=msg.seat,
            commitment=msg.deal_commitment)  # fmt: skip

    def _attacks(self, msg: MatchStart) -> list[tuple[str, Any]]:
        """Candidate deck builders: (name, function of (game, hand) -> deck)."""
        deal_id = msg.deal_id or msg.match_id
        found: list[tuple[str, Any]] = []
        seeds: set[int] = set(range(200))
        if msg.seed is not None and msg.seed.isdigit():
            mine = int(msg.seed)
            seeds |= {mine, (mine - msg.seat) // 2, mine // 2}
            found.append(
                ("old-seed-inversion", lambda g, h: old_deck((mine - msg.seat) // 2, g, h))
            )
        texts = [msg.seed, msg.deal_commitment, msg.match_id, msg.deal_id]
        texts += [os.environ.get(k) for k in ("GIN_BOT_SEED", "GIN_REFEREE_TOKEN")]
        keys = []
        for text in filter(None, texts):
            raw = text.encode()
            keys += [hashlib.sha256(raw).digest(), raw]
            if len(text) == 64:
                keys.append(bytes.fromhex(text))
        for key in keys:
            found.append((f"key:{key[:8]!r}", lambda g, h, k=key: rederive(k, deal_id, g, h)))
        for seed in sorted(seeds):
            key = seed_key(seed)
            found.append((f"public-seed:{seed}", lambda g, h, k=key: rederive(k, deal_id, g, h)))
        return found

    def on_hand_start(self, msg: HandStart) -> None:
        assert self.start is not None
        seat = self.start.seat
        mine = frozenset(INDEX[c] for c in msg.hand_cards)
        upcard = INDEX[msg.upcard]
        self.hands.append((msg.game, msg.hand, msg.dealer, mine, upcard))
        candidates = self.found or self._attacks(self.start)
        hits = []
        for name, build in candidates:
            deck = build(msg.game, msg.hand)
            non_dealer, dealer, up = dealt(deck, msg.dealer)
            own, other = (non_dealer, dealer) if seat != msg.dealer else (dealer, non_dealer)
            if own == mine and up == upcard:
                hits.append((name, build, other))
        if hits:
            self.found = [(name, build) for name, build, _ in hits]
            predicted = sorted(hits[0][2])
        else:
            unseen = sorted(set(range(52)) - mine - {upcard})
            predicted = sorted(self.rng.sample(unseen, 10))
        say(kind="predict", match_id=self.start.match_id, game=msg.game, hand=msg.hand,
            seat=seat, attacks=[name for name, _, _ in hits],
            opponent=[CARD[i] for i in predicted])  # fmt: skip

    def on_match_end(self, msg: MatchEnd) -> None:
        assert self.start is not None
        if msg.deal_key is None or self.start.deal_commitment is None:
            say(kind="verify", sealed=True)
            return
        key = bytes.fromhex(msg.deal_key)
        deal_id = self.start.deal_id or self.start.match_id
        good = 0
        for game, hand, dealer, mine, upcard in self.hands:
            non_dealer, dealer_cards, up = dealt(rederive(key, deal_id, game, hand), dealer)
            own = non_dealer if self.start.seat != dealer else dealer_cards
            good += own == mine and up == upcard
        say(kind="verify", sealed=False, hands=len(self.hands), decks_ok=good,
            commitment_ok=verify_key(msg.deal_key, self.start.deal_commitment),
            commitment=self.start.deal_commitment, key=msg.deal_key)  # fmt: skip

    def act(self, request: Request) -> WireAction:
        return self.rng.choice(request.legal)


if __name__ == "__main__":
    # The referee sends SIGTERM right after match_end: finish the check first (it takes
    # milliseconds; SIGKILL follows the grace period anyway).
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.exit(run_bot_main(DealSpy(), "dealspy", multi_match=True))
