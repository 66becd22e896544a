"""``gin-referee replay RECORD --seat N --feed CMD``: a recorded match's messages played back to
a real bot, offline, with the recorded replies beside the new ones."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from referee.cli import main
from referee.match.record import RecordError, read_record_lines
from referee.net.process import BotCommand
from referee.rules import STANDARD, apply, deal, legal_actions, parse_action, parse_cards
from referee.toolkit.feed import feed_record
from tests.e2e.helpers import BOTS, GREEDY, PY, RANDOM, bad, play

pytestmark = [pytest.mark.timeout(120)]

FIRST_LEGAL = f"{PY} {BOTS / 'sloppy.py'} plain"


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-game match, greedy (seat 0) against random (seat 1)."""
    out = tmp_path_factory.mktemp("feed")
    result = asyncio.run(play(GREEDY, RANDOM, out, games=2, seed=7))
    assert result.reason == "normal" and not any(s.faults for s in result.seats)
    return out / "match.jsonl"


def hands(path: Path) -> list[dict[str, object]]:
    return [line for _, line in read_record_lines(path) if line["type"] == "hand"]


def seat_moves(path: Path, seat: int) -> list[tuple[int, int, str]]:
    """(game, hand, action) of every decision of ``seat``, in order."""
    return [
        (int(h["game"]), int(h["hand"]), str(a[1]))  # type: ignore[call-overload]
        for h in hands(path)
        for a in h["actions"]  # type: ignore[attr-defined]
        if a[0] == seat
    ]


def first_legal_divergence(path: Path, seat: int) -> int:
    """The request id (per seat, from 1) where a first-legal bot first differs from ``seat``'s
    recorded move, found with the rules engine alone."""
    rid = 0
    for h in hands(path):
        state = deal(STANDARD, tuple(parse_cards(" ".join(h["deck"]))), dealer=h["dealer"])  # type: ignore[arg-type]
        for who, text, _ in h["actions"]:  # type: ignore[attr-defined]
            action = parse_action(text)
            if who == seat:
                rid += 1
                if legal_actions(state)[0] != action:
                    return rid
            state = apply(state, action)
    raise AssertionError("a first-legal bot would play the whole record the same way")


@pytest.mark.asyncio
@pytest.mark.parametrize(("seat", "bot"), [(0, GREEDY), (1, RANDOM)], ids=["greedy", "random"])
async def test_the_same_bot_does_not_diverge(record: Path, seat: int, bot: str) -> None:
    """The bot that played the seat answers every request as recorded (the random bot too:
    it reseeds from match_start.seed, which the record keeps)."""
    report = await feed_record(record, seat, BotCommand.parse(bot), kill_grace=0.5)
    assert report.complete and not report.problem, report.lines()
    assert report.divergence is None, report.lines()
    moves = seat_moves(record, seat)
    assert [(d.game, d.hand, d.new) for d in report.decisions] == moves
    assert [d.request_id for d in report.decisions] == list(range(1, len(moves) + 1))
    assert f"no divergence in {len(moves)} request(s)" in report.lines()


@pytest.mark.asyncio
async def test_another_bot_diverges_at_the_right_request(record: Path) -> None:
    expected = first_legal_divergence(record, 0)
    report = await feed_record(record, 0, BotCommand.parse(FIRST_LEGAL), kill_grace=0.5)
    first = report.divergence
    assert first is not None and report.complete, report.lines()
    d = report.decisions[first]
    assert d.request_id == expected
    assert d.new != d.recorded
    # Every reply before it matched; the feed went on to the end with the recorded moves.
    assert all(e.new == e.recorded for e in report.decisions[:first])
    assert len(report.decisions) == len(seat_moves(record, 0))
    marked = [line for line in report.lines() if line.startswith(">>")]
    assert len(marked) == 1 and f"#{expected} " in marked[0]


@pytest.mark.asyncio
async def test_one_hand_only(record: Path) -> None:
    """Only game 1 hand 0 reaches the bot (greedy: its moves depend on the hand alone; a
    random bot's would also depend on the numbers it drew in the hands it did not see)."""
    report = await feed_record(record, 0, BotCommand.parse(GREEDY), game=1, hand=0, kill_grace=0.5)
    expected = [m for m in seat_moves(record, 0) if m[:2] == (1, 0)]
    assert [(d.game, d.hand, d.new) for d in report.decisions] == expected
    before = sum(1 for m in seat_moves(record, 0) if m[0] == 0)
    assert report.decisions[0].request_id == before + 1  # the recorded request ids
    assert report.divergence is None and report.complete


def test_cli(record: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["replay", str(record), "--seat", "0", "--feed", FIRST_LEGAL, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["first_divergence"] == first_legal_divergence(record, 0)
    code = main(["replay", str(record), "--seat", "0", "--feed", GREEDY, "--game", "2"])
    text = capsys.readouterr().out
    assert code == 0 and "no divergence" in text, text
    # --game counts from 1, as replay prints: the second game is the record's game 1
    fed = [line for line in text.splitlines() if line.startswith("   g")]
    assert fed and all(line.startswith("   g2 h") for line in fed), text
    assert main(["replay", str(record), "--seat", "0", "--feed", GREEDY, "--game", "0"]) == 2
    assert "--game and --hand count from 1, as replay prints them" in capsys.readouterr().err
    args = ["replay", str(record), "--seat", "0", "--feed", GREEDY, "--game", "1", "--hand", "0"]
    assert main(args) == 2
    code = main(["replay", str(record), "--seat", "0", "--feed", FIRST_LEGAL, "--game", "1"])
    text = capsys.readouterr().out
    assert code == 1 and "first divergence: game 1 hand " in text, text
    assert main(["replay", str(record), "--feed", GREEDY]) == 2
    assert "--feed needs --seat" in capsys.readouterr().err
    assert main(["replay", str(record), "--seat", "0", "--feed", GREEDY, "--game", "9"]) == 2
    assert "the record has no game 9" in capsys.readouterr().err
    args = ["replay", str(record), "--seat", "0", "--feed", GREEDY, "--game", "1", "--hand", "99"]
    assert main(args) == 2
    assert "the record has no game 1 hand 99" in capsys.readouterr().err
    assert main(["replay", str(record), "--seat", "0", "--feed", "remote:x"]) == 2
    assert "not remote:NAME" in capsys.readouterr().err


def test_a_record_that_does_not_verify_is_refused(record: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text(record.read_text().replace('"discard ', '"discarded ', 1))
    with pytest.raises(RecordError):
        asyncio.run(feed_record(broken, 0, BotCommand.parse(GREEDY)))


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["illegal", "sleep"])
async def test_a_record_with_faults_is_fed_through_them(tmp_path: Path, mode: str) -> None:
    """The opponent's recorded fault (an illegal move, a timeout) ends its hand again, under
    the recorded policy, and the fed bot plays on as it did in the match."""
    result = await play(GREEDY, bad(mode, 4), tmp_path, games=2, seed=5)
    assert result.seats[1].faults
    record = tmp_path / "match.jsonl"
    report = await feed_record(record, 0, BotCommand.parse(GREEDY), kill_grace=0.5)
    assert report.complete and report.divergence is None, report.lines()
    assert [(d.game, d.hand, d.new) for d in report.decisions] == seat_moves(record, 0)


@pytest.mark.asyncio
async def test_the_faulting_seat_is_shown_its_fault(tmp_path: Path) -> None:
    """Fed to the bot that made it, an illegal move shows beside the recorded fault (marked
    ``!!``, not a divergence); the bot gets the same error and plays on as it did."""
    result = await play(GREEDY, bad("illegal", 4), tmp_path, games=2, seed=5)
    assert [f.kind for f in result.seats[1].faults] == ["illegal"]
    record = tmp_path / "match.jsonl"
    report = await feed_record(record, 1, BotCommand.parse(bad("illegal", 4)), kill_grace=0.5)
    assert report.complete and report.divergence is None, report.lines()
    faults = [d for d in report.decisions if d.fault]
    assert len(faults) == 1 and faults[0].recorded.startswith("fault illegal: ")
    assert faults[0].new is not None and faults[0].new.startswith("discard ")
    assert sum(line.startswith("!!") for line in report.lines()) == 1
    moves = seat_moves(record, 1)
    assert [(d.game, d.hand, d.new) for d in report.decisions if not d.fault] == moves
