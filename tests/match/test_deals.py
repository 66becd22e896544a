"""The deal derivation: a pinned test vector, the docs' Python and JavaScript snippets agree
with it, decks are permutations and look uniform, seeds are public, bot seeds independent."""

from __future__ import annotations

import hmac
import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.match import deals
from referee.match.config import MatchConfig
from referee.match.deals import Deal, commitment, deck_order, parse_key
from referee.rules import DECK

DOC = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text(encoding="utf-8")
SECTION = DOC.split("## Checking the deal\n", 1)[1].split("\n## ", 1)[0]
VECTOR_KEY = bytes(range(32))
CASES = [(VECTOR_KEY, "m-0007", 0, 0), (bytes([255] * 32), "alpha-vs-beta/pair3", 0, 17),
         (bytes(range(100, 132)), "ünïcode/game9", 2, 0)]  # fmt: skip


def _texts(key: bytes, deal_id: str, game: int, hand: int) -> list[str]:
    return [str(DECK[i]) for i in deck_order(key, deal_id, game, hand)]


def _block(language: str) -> str:
    match = re.search(rf"```{language}\n(.*?)```", SECTION, re.DOTALL)
    assert match, f"no {language} block in 'Checking the deal'"
    return match.group(1)


def test_the_documented_test_vector() -> None:
    vector = " ".join(SECTION.split("`deal_id` `m-0007` is `", 1)[1].split("`", 1)[0].split())
    assert " ".join(_texts(VECTOR_KEY, "m-0007", 0, 0)) == vector
    assert commitment(VECTOR_KEY) in SECTION


def test_the_python_snippet_of_the_docs_derives_the_same_decks() -> None:
    scope: dict[str, Any] = {}
    exec(compile(_block("python"), "protocol.md", "exec"), scope)
    for key, deal_id, game, hand in CASES:
        assert scope["deck"](key.hex(), deal_id, game, hand) == _texts(key, deal_id, game, hand)
        assert scope["commitment"](key.hex()) == commitment(key)


def _reference(key: bytes, label: bytes, digest: Any) -> list[int]:
    """The shuffle as specified, one word at a time (what ``deck_order`` computes in blocks)."""
    seed = digest(key, label, "sha256")
    stream = (
        int.from_bytes(block[k : k + 4], "big")
        for counter in range(1 << 32)
        for block in [digest(seed, counter.to_bytes(4, "big"), "sha256")]
        for k in range(0, 32, 4)
    )
    cards = list(range(52))
    for i in range(51, 0, -1):
        n = i + 1
        x = next(stream)
        while x >= (1 << 32) - (1 << 32) % n:
            x = next(stream)
        j = x % n
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def _rejecting(key: bytes, msg: bytes, name: str) -> bytes:
    """HMAC whose stream blocks start with 0xFFFFFFFF: rejected for every n but a power of 2."""
    mac = hmac.digest(key, msg, name)
    return mac if len(msg) != 4 else b"\xff" * 4 + mac[4:]


@settings(max_examples=60, deadline=None)
@given(
    key=st.binary(min_size=32, max_size=32),
    deal_id=st.text(max_size=12),
    game=st.integers(0, 999),
    hand=st.integers(0, 999),
    blocks=st.sampled_from([1, 7]),
    reject=st.booleans(),
)
def test_the_block_wise_shuffle_is_the_specified_one(
    key: bytes,
    deal_id: str,
    game: int,
    hand: int,
    blocks: int,
    reject: bool,
) -> None:
    """Against the word-by-word specification, with the stream extended block by block and
    with words rejected (a forged HMAC), paths a real deal almost never takes."""
    digest = _rejecting if reject else hmac.digest
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(deals, "_BLOCKS", blocks)
        patch.setattr(deals, "hmac", type("H", (), {"digest": staticmethod(digest)}))
        got = deck_order(key, deal_id, game, hand)
    label = b"gin-referee deal v1\0" + f"{deal_id}\0{game}\0{hand}".encode()
    assert got == _reference(key, label, digest)
    assert sorted(got) == list(range(52))


def test_the_javascript_snippet_of_the_docs_derives_the_same_decks(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("`node` is not on PATH: install Node.js >= 18 to check the JS snippet")
    calls = [[k.hex(), d, g, h] for k, d, g, h in CASES]
    script = tmp_path / "deal.js"
    show = "calls.map(([k, d, g, h]) => [commitment(k), deck(k, d, g, h)])"
    script.write_text(
        _block("js") + f"\nconst calls = {json.dumps(calls)};\n"
        f"console.log(JSON.stringify({show}));\n"
    )  # fmt: skip
    done = subprocess.run(
        [node, str(script)], check=False, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got == [[commitment(k), _texts(k, d, g, h)] for k, d, g, h in CASES]


def test_decks_are_permutations_and_each_position_looks_uniform() -> None:
    key = Deal.random().key
    firsts: Counter[int] = Counter()
    for hand in range(5200):
        order = deck_order(key, "uniform", 0, hand)
        assert sorted(order) == list(range(52))
        firsts[order[0]] += 1
    # 100 expected per card; a bound 8 standard deviations wide only fails for a broken shuffle.
    assert len(firsts) == 52 and max(firsts.values()) < 180 and min(firsts.values()) > 20


def test_every_hand_game_and_deal_id_gets_its_own_deck() -> None:
    key = Deal.random().key
    decks = {tuple(deck_order(key, d, g, h)) for d in ("a", "b") for g in (0, 1) for h in (0, 1)}
    assert len(decks) == 8
    assert deck_order(key, "a", 0, 0) != deck_order(Deal.random().key, "a", 0, 0)


def test_a_seed_gives_the_same_public_deals_and_the_default_is_secret() -> None:
    seeded = MatchConfig(seed=7)
    assert seeded.deal == MatchConfig(seed=7).deal and not seeded.deal.secret
    fresh, other = MatchConfig(), MatchConfig()
    assert fresh.deal.secret and fresh.deal.key != other.deal.key
    assert len(fresh.deal.key) == 32 and fresh.deal_label == "match"


def test_bot_seeds_come_from_a_secret_of_their_own() -> None:
    deal = Deal.random()
    # The key alone (all a bot could ever learn from the reveal) does not give the bot seeds.
    with_other_bot_key = Deal(deal.key, Deal.random().bot_key)
    assert deal.bot_seed("m/0") != with_other_bot_key.bot_seed("m/0")
    assert deal.bot_seed("m/0") != deal.bot_seed("m/1")


@pytest.mark.parametrize(
    ("text", "message"),
    [("abc", "64 hex digits, not 3"), ("zz" * 32, "hex digits only")],
)
def test_a_bad_key_is_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_key(text)
