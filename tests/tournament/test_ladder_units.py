"""The ladder's parts, each alone: its configuration, the ratings and the book (players,
versions, lineage, audit log, rating history); the matchmaker's are in test_ladder_rounds.py."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest

from referee.tournament.config import ConfigError
from referee.tournament.ladder import (
    LadderBook,
    LadderError,
    MatchmakingParams,
    RatingParams,
    RatingRow,
    Skill,
    SkillModel,
    fingerprint_command,
    leaderboard,
    leaderboard_text,
    pair_score,
    parse_ladder,
    unplayed,
)
from referee.tournament.store import GameRow, GameSpec, SqliteStore, StoreError

pytestmark = pytest.mark.timeout(60)
KEY = "rq:rm6^Kbx.W5T)zHkd@)Zp4Y$bD]p*0D4H7:n@="  # a Z85 text of 40 characters


def test_config_defaults_and_errors_name_the_key() -> None:
    config = parse_ladder({"ladder": {"name": "open", "concurrency": 3},
                           "matchmaking": {"explore": 0.2}})  # fmt: skip
    assert config.name == "open" and config.play.concurrency == 3 and config.play.duplicate
    assert config.matchmaking.explore == 0.2 and config.ratings.rank_sigmas == 3.0
    assert config.play.bots == () and config.local.command == "true"
    assert parse_ladder({}).config_hash == parse_ladder({}).config_hash
    assert parse_ladder({}).config_hash != config.config_hash
    bad: list[tuple[dict[str, Any], str]] = [
        ({"bots": []}, "bots: unknown table (entrants are added with `gin-referee ladder add`)"),
        ({"ladder": {"concurrency": 0}}, "ladder.concurrency: must be between 1 and 256"),
        ({"ladder": {"games_per_pairing": 4}}, "ladder.games_per_pairing: unknown key"),
        ({"matchmaking": {"explore": 2}}, "matchmaking.explore: must be between 0 and 1"),
        ({"ratings": {"sigma": "x"}}, "ratings.sigma: expected a number, got str"),
        ({"ratings": {"tau": True}}, "ratings.tau: expected a number, got bool"),
        ({"ladder": {"poll": 0}}, "ladder.poll: must be between 0.05 and 3600"),
        ({"ratings": {"idle_sigma_per_day": -1}}, "ratings.idle_sigma_per_day: must be between"),
        ({"time": {"move": -1}}, "time"),
    ]
    for data, message in bad:
        with pytest.raises(ConfigError, match=re.escape(message)):
            parse_ladder(data, source="l.toml")


def test_ratings_move_towards_the_winner_and_shrink() -> None:
    model = SkillModel(RatingParams())
    a, b = model.new(), model.new()
    wa, lb = model.rate(a, b, 1.0)
    assert wa.mu > a.mu > lb.mu and wa.sigma < a.sigma
    da, _ = model.rate(a, b, 0.5)
    assert da.mu == pytest.approx(a.mu) and da.sigma < a.sigma
    assert wa.rank_value(3.0) == pytest.approx(wa.mu - 3 * wa.sigma)
    with pytest.raises(ValueError, match="between 0 and 1"):
        model.rate(a, b, 1.5)
    sure = Skill(30.0, 1.0)
    assert model.idle(sure, 0.0) == sure and model.idle(sure, -5.0) == sure
    assert model.idle(sure, 86400.0 * 4).sigma == pytest.approx(math.hypot(1.0, 0.5 * 4))
    assert model.idle(sure, 86400.0 * 1e4).sigma == pytest.approx(25 / 3)  # at most a new one's
    assert SkillModel(RatingParams(idle_sigma_per_day=0.0)).idle(sure, 1e9) == sure
    games: list[dict[str, str | None]] = [{"winner": "x"}, {"winner": None}]
    assert pair_score("x", games) == 0.75 and pair_score("y", games) == 0.25
    with pytest.raises(ValueError):
        pair_score("x", [])
    assert unplayed([{"winner": None, "reason": "no_start"}, {"winner": "x", "reason": "normal"}])
    assert not unplayed(
        [{"winner": "x", "reason": "forfeit"}, {"winner": None, "reason": "normal"}]
    )


def test_book_versions_lineage_retire_and_history(tmp_path: Path) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text("print(1)\n")
    command = f"python3 {bot}"
    with LadderBook.open(tmp_path / "t.sqlite") as book:
        start = book.revision()
        first, new = book.add("greedy", now=1.0, command=command,
                              fingerprint=fingerprint_command(command, tmp_path))  # fmt: skip
        assert new and first.player == "greedy.v1" and first.active
        same, new = book.add("greedy", now=2.0, command=command,
                             fingerprint=fingerprint_command(command, tmp_path))  # fmt: skip
        assert not new and same == first and book.revision() == start + 1
        bot.write_text("print(2)\n")  # the program changed: a new version
        second, new = book.add("greedy", now=3.0, command=command,
                               fingerprint=fingerprint_command(command, tmp_path))  # fmt: skip
        assert new and second.player == "greedy.v2" and second.fingerprint != first.fingerprint
        remote, _ = book.add("alice", now=4.0, public_key=KEY)
        assert remote.kind == "remote" and remote.token is not None and len(remote.token) >= 8
        assert book.add("alice", now=5.0, public_key=KEY)[1] is False
        with pytest.raises(LadderError, match="token is taken"):
            book.add("bob", now=5.0, token=remote.token)
        gone = book.retire("alice", now=6.0)
        assert gone.status == "retired" and gone.ended_at == 6.0
        with pytest.raises(LadderError, match="already retired"):
            book.retire("alice", now=7.0)
        with pytest.raises(LadderError, match="not on the ladder"):
            book.retire("nobody", now=7.0)
        for name in ("", "a.v1", "x" * 49, "-x", "a b"):
            with pytest.raises(LadderError, match="entrant name"):
                book.add(name, now=8.0, command="true", fingerprint="f")
        with pytest.raises(LadderError, match="local command or a remote bot"):
            book.add("both", now=8.0, command="true", fingerprint="f", public_key=KEY)
        status = {p.player: p.status for p in book.players()}
        assert status == {"greedy.v1": "superseded", "greedy.v2": "active", "alice.v1": "retired"}
        actions = [(action, entrant) for _, action, entrant, _, _ in book.log()]
        assert actions == [("add", "greedy"), ("add", "greedy"), ("add", "alice"),
                           ("retire", "alice")]  # fmt: skip
        rows = [RatingRow("ladder/0", "greedy.v2", "alice.v1", 1.0, 27.0, 8.0, 9.0),
                RatingRow("ladder/0", "alice.v1", "greedy.v2", 0.0, 23.0, 8.0, 9.0)]  # fmt: skip
        assert book.record_pair(rows)
        assert not book.record_pair(rows)  # a pair is rated once
        assert book.current() == {"greedy.v2": (27.0, 8.0, 1), "alice.v1": (23.0, 8.0, 1)}
        assert book.rated_deals() == {"ladder/0"}
        assert [r.mu for r in book.history("greedy.v2")] == [27.0]
        spec = GameSpec(0, "p", "greedy.v2", "alice.v1", "ladder/0", 0)
        games = [GameRow(spec, "done", {"winner": "greedy.v2"}, 1, 9.0)]
        players, current = book.players(), book.current()
        board = leaderboard("l", players, current, games, RatingParams(), now=10.0)
        assert book.last_played() == {"greedy.v2": 9.0, "alice.v1": 9.0}
    # unrated greedy.v1 ranks at 25 - 3 * 25/3 = 0, above alice.v1 at 23 - 24 = -1
    assert [r["player"] for r in board["players"]] == ["greedy.v2", "greedy.v1", "alice.v1"]
    later = leaderboard("l", players, current, games, RatingParams(), now=9.0 + 86400.0,
                        last_played={"greedy.v2": 9.0, "alice.v1": 9.0})  # fmt: skip
    grown = {r["player"]: r for r in later["players"]}["greedy.v2"]
    assert grown["sigma"] == pytest.approx(math.hypot(8.0, 0.5), abs=1e-3)  # a day idle
    assert grown["rank_value"] < board["players"][0]["rank_value"]
    top = board["players"][0]
    assert top["rank"] == 1 and top["wins"] == 1 and top["rank_value"] == pytest.approx(3.0)
    assert "token" not in top and "command" not in top  # nothing secret is published
    assert board["entrants"][0] == {"entrant": "greedy", "best": "greedy.v2", "best_rank": 1,
                                    "latest": "greedy.v2", "latest_version": 2,
                                    "latest_rank": 1, "status": "active"}  # fmt: skip
    assert "greedy.v2" in leaderboard_text(board)


def test_book_refuses_a_file_that_is_not_a_store(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    path.write_text("not a database at all, but long enough to be read as a header......")
    with pytest.raises(StoreError):
        LadderBook.open(path)
    good = tmp_path / "good.sqlite"
    LadderBook.open(good).close()
    SqliteStore.open(good).close()  # still a tournament store with the ladder's tables added


def test_the_example_ladder_is_the_defaults() -> None:
    from referee.tournament.ladder import load_ladder

    example = load_ladder(Path(__file__).resolve().parents[2] / "examples" / "ladder.toml")
    assert example.name == "open-ladder" and example.play.concurrency == 2
    assert example.matchmaking == MatchmakingParams() and example.ratings == RatingParams()


def test_void_after_is_checked_and_not_hashed() -> None:
    """The grace before an open pair is voided is an operational setting, as ``poll``."""
    default = parse_ladder({})
    assert default.void_after == 86400.0
    shorter = parse_ladder({"ladder": {"void_after": 0.5}})
    assert shorter.void_after == 0.5 and shorter.config_hash == default.config_hash
    for bad in (-1, "soon", math.inf):
        with pytest.raises(ConfigError, match=r"ladder\.void_after"):
            parse_ladder({"ladder": {"void_after": bad}})


def test_each_pair_has_its_own_deal_key_and_the_ledger_keeps_it_until_closed(
    tmp_path: Path,
) -> None:
    """A pair's key derives from the ladder's (documented HMAC); the ledger stores the
    commitment when the pair is scheduled and the key only when it is closed, once."""
    import hashlib
    import hmac

    from referee.match import Deal
    from referee.tournament.ladder import PairLedger, PairRow, pair_deal

    ladder = Deal.random()
    one, two = pair_deal(ladder, "ladder/0"), pair_deal(ladder, "ladder/2")
    label = b"gin-referee ladder pair v1\0ladder/0"
    assert one.key == hmac.digest(ladder.key, label, "sha256")
    assert one.key != two.key and ladder.key not in (one.key, two.key)
    assert one.bot_key == ladder.bot_key  # the bots' seeds: the ladder's, never revealed
    assert (
        one.commitment == hashlib.sha256(b"gin-referee deal commitment v1\0" + one.key).hexdigest()
    )
    with LadderBook.open(tmp_path / "s.sqlite") as book:
        ledger = PairLedger(book)
        ledger.schedule(PairRow("ladder/0", ("a.v1", "b.v1"), (0, 1), True, one.commitment,
                                10.0, None, None, None))  # fmt: skip
        ledger.schedule(PairRow("ladder/2", ("a.v1", "c.v1"), (2, 3), False, two.commitment,
                                11.0, None, None, None))  # fmt: skip
        assert [r.deal_key for r in ledger.rows()] == [None, None]
        assert ledger.not_for_workers() == {2, 3}  # a remote player's pair
        rows = [RatingRow("ladder/0", "a.v1", "b.v1", 1.0, 26.0, 8.0, 12.0),
                RatingRow("ladder/0", "b.v1", "a.v1", 0.0, 24.0, 8.0, 12.0)]  # fmt: skip
        assert book.record_pair(rows, deal_key=one.key_hex)
        assert not book.record_pair(rows, deal_key=one.key_hex)  # rated once
        audit = ("c", "c.v1", "pair ladder/2 voided")
        assert ledger.close("ladder/2", "voided", two.key_hex, now=13.0, audit=audit)
        assert not ledger.close("ladder/2", "voided", two.key_hex, now=14.0, audit=audit)
        closed = {r.deal_id: r for r in ledger.rows()}
        assert closed["ladder/0"].closed == "rated" and closed["ladder/0"].deal_key == one.key_hex
        assert closed["ladder/2"].closed == "voided" and closed["ladder/2"].deal_key == two.key_hex
        assert ledger.not_for_workers() == {2, 3}  # a voided pair's games are never played
        assert [e[1:4] for e in book.log()] == [("void", "c", "c.v1")]
        assert ledger.rows(open_only=True) == []
