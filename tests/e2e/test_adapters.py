"""OpenSpiel's and RLCard's bots play real matches through the adapters (protocol.adapters):
OpenSpiel's simple bot, its IS-MCTS and a user's own ``pyspiel.Bot`` from a file, RLCard's
novice rule agent and a user's own agent, each against a sample bot in the default sandbox
with no fault; rules OpenSpiel cannot express are refused at ``match_start`` with a line
naming the rule and exit status 2. Few games, few hands: CPU-light."""

from __future__ import annotations

import asyncio
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from referee.match.result import MatchResult
from referee.rules import EAAI, STANDARD, RuleSet
from tests.e2e.helpers import BOTS, GREEDY, PY, RANDOM, play

pytestmark = [pytest.mark.timeout(120)]

OPENSPIEL = f"{PY} -m protocol.adapters.openspiel"
RLCARD = f"{PY} -m protocol.adapters.rlcard"
REPO = Path(__file__).resolve().parents[2]


def _match(bot: str, other: str, out: Path, rules: RuleSet = EAAI, **more: object) -> MatchResult:
    config: dict[str, object] = {"games": 2, "max_hands_per_game": 4, "seed": 7, "rules": rules}
    return asyncio.run(play(bot, other, out, **(config | more)))


def _clean(result: MatchResult, out: Path) -> str:
    """The adapter's stderr, once the match is checked normal and fault-free."""
    stderr = (out / "match.seat0.stderr").read_text()
    assert result.reason == "normal", stderr
    assert [s.faults for s in result.seats] == [[], []], stderr
    assert str(result.sandbox).startswith("namespaces"), result.sandbox
    assert result.seats[0].decisions > 5
    return stderr


@pytest.mark.parametrize(
    ("bot", "other", "rules"),
    [
        (f"{OPENSPIEL} simple", RANDOM, EAAI),
        (f"{OPENSPIEL} simple", GREEDY, STANDARD),  # big gin: the bot never declares it
        (f"{OPENSPIEL} simple", RANDOM, RuleSet.preset("oklahoma")),
        (f"{OPENSPIEL} ismcts --simulations 8", GREEDY, EAAI),
        (f"{RLCARD} novice", GREEDY, EAAI),
        (f"{RLCARD} novice", RANDOM, RuleSet.preset("oklahoma")),
    ],
    ids=["simple-random", "simple-greedy-standard", "simple-random-oklahoma", "ismcts-greedy",
         "novice-greedy",
         "novice-random-oklahoma"],
)  # fmt: skip
def test_a_library_bot_plays_a_match(tmp_path: Path, bot: str, other: str, rules: RuleSet) -> None:
    result = _match(bot, other, tmp_path, rules, games=1 if "ismcts" in bot else 2)
    _clean(result, tmp_path)


def test_an_openspiel_users_own_bot_plays_unchanged(tmp_path: Path) -> None:
    bot = f"{OPENSPIEL} {BOTS / 'openspiel_user.py'}:make"
    stderr = _clean(_match(bot, RANDOM, tmp_path), tmp_path)
    # restart() is called at each hand: the bot was stepped and told the opponent's moves
    counts = [line for line in stderr.splitlines() if " steps, " in line]
    assert counts, stderr
    assert any(not line.endswith(" 0 steps, 0 informed") for line in counts), counts


def test_an_rlcard_users_own_agent_plays_unchanged(tmp_path: Path) -> None:
    bot = f"{RLCARD} {BOTS / 'rlcard_user.py'}:HighestAgent"
    _clean(_match(bot, GREEDY, tmp_path, STANDARD), tmp_path)


def test_rules_openspiel_cannot_express_are_refused_at_match_start(tmp_path: Path) -> None:
    rules = replace(EAAI, name="eaai-knock-12", knock_limit=12)
    result = _match(f"{OPENSPIEL} simple", GREEDY, tmp_path, rules)
    (fault,) = result.seats[0].faults
    assert fault.kind == "crash" and fault.game == 0, fault
    assert "exited with code 2" in fault.detail, fault.detail
    assert "cannot play these rules: knock_limit = 12: OpenSpiel's gin_rummy takes a knock " \
        "card of 0 to 10" in fault.detail, fault.detail  # fmt: skip
    assert result.seats[1].faults == []


@pytest.mark.parametrize(
    ("command", "says"),
    [
        (["protocol.adapters.openspiel", "alphazero"], "expected simple, ismcts, MODULE:FACTORY"),
        (["protocol.adapters.openspiel", "no_such_module:make"], "cannot import no_such_module"),
        (["protocol.adapters.rlcard", "no-such-model"], "not an RLCard model"),
        (["protocol.adapters.rlcard", "tests/bots/rlcard_user.py:Nothing"], "has no Nothing"),
    ],
)
def test_a_bot_that_cannot_be_made_says_why(command: list[str], says: str) -> None:
    done = subprocess.run(
        [PY, "-m", *command], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2 and says in done.stderr, done.stderr
