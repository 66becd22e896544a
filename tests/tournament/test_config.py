"""Tournament configuration: valid files load; every error names the key and the problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.tournament.config import ConfigError, load_config, parse_config
from referee.tournament.runner import schedule

ROOT = Path(__file__).resolve().parents[2]
TWO = [{"name": "a", "command": "python3 a.py"}, {"name": "b", "command": "python3 b.py"}]


def test_the_example_loads() -> None:
    config = load_config(ROOT / "examples" / "tournament.toml")
    assert [b.name for b in config.bots] == ["greedy", "random", "node"]
    assert config.games_per_pairing == 10 and config.duplicate and config.seed == 2026
    assert config.out == ROOT / "examples" / "../runs/sample-cup"
    assert len(config.pairings()) == 3


@pytest.mark.parametrize(
    ("data", "key", "words"),
    [
        ({"bots": TWO[:1]}, "bots", "at least two"),
        ({"bots": [*TWO, {"name": "a", "command": "x"}]}, "bots[2].name", "duplicate"),
        ({"bots": [{"name": "a"}, TWO[1]]}, "bots[0].command", "required"),
        ({"bots": [{"name": "a", "command": 3}, TWO[1]]}, "bots[0].command", "expected a string"),
        ({"bots": [{"name": "a", "remote": True}, TWO[1]]}, "bots[0].token", "token"),
        ({"bots": TWO, "tournament": {"format": "swiss"}}, "tournament.format", "must be one of"),
        (
            {"bots": TWO, "tournament": {"games_per_pairing": 3}},
            "tournament.games_per_pairing",
            "even",
        ),
        ({"bots": TWO, "tournament": {"concurency": 2}}, "tournament.concurency", "unknown key"),
        ({"bots": TWO, "tournament": {"candidate": "zed"}}, "tournament.candidate", "no bot named"),
        ({"bots": TWO, "rules": "gin"}, "rules", "unknown rules preset"),
        ({"bots": TWO, "tournament": {"sandbox": "jail"}}, "tournament.sandbox", "must be one of"),
        (
            {"bots": TWO, "tournament": {"limits": {"ram": 1}}},
            "tournament.limits",
            "unknown limit 'ram'",
        ),
        (
            {"bots": [{**TWO[0], "limits": {"address_space": "big"}}, TWO[1]]},
            "bots[0].limits",
            "address_space: expected bytes",
        ),
        ({"bots": [{**TWO[0], "env": ["A=1"]}, TWO[1]]}, "bots[0].env", "variable names"),
        (
            {
                "bots": [
                    {"name": "r", "remote": True, "token": "12345678", "sandbox": "none"},
                    TWO[1],
                ]
            },
            "bots[0].sandbox",
            "a remote bot runs elsewhere",
        ),
        ({"bots": TWO, "rules": {"knock_limit": "ten"}}, "rules", "knock_limit must be int"),
        ({"bots": TWO, "time": {"move": -1}}, "time", "time control move"),
        ({"bots": TWO, "time": {"move": "fast"}}, "time.move", "expected an integer or a number"),
        ({"bots": TWO, "faults": {"policy": "lenient"}}, "faults.policy", "must be one of"),
        ({"bots": TWO, "extra": 1}, "extra", "unknown key"),
        (
            {"bots": TWO, "tournament": {"local_transport": "udp"}},
            "tournament.local_transport",
            "must be one of ipc, tcp",
        ),
        (
            {"bots": TWO, "tournament": {"reuse_bots": "yes"}},
            "tournament.reuse_bots",
            "expected",
        ),
        (
            {"bots": TWO, "tournament": {"max_hands_per_game": 0}},
            "tournament.max_hands_per_game",
            "between 1 and 100000",
        ),
    ],
)
def test_errors_name_the_key(data: dict[str, object], key: str, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(data, source="t.toml")
    assert info.value.key == key
    assert words in str(info.value) and str(info.value).startswith(f"t.toml: {key}:")


def test_unreadable_and_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[tournament\nname=")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)


def test_schedule_plays_duplicate_pairs_with_seats_swapped() -> None:
    config = parse_config({"bots": TWO, "tournament": {"games_per_pairing": 4, "seed": 9}})
    games = schedule(config)
    assert len(games) == 4
    first, second = games[0], games[1]
    assert first.deal_id == second.deal_id and first.pair_index == second.pair_index == 0
    assert (first.seat0, first.seat1) == (second.seat1, second.seat0)
    assert games[2].deal_id != first.deal_id
    unpaired = parse_config(
        {"bots": TWO, "tournament": {"games_per_pairing": 3, "duplicate": False}}
    )
    keys = [g.deal_id for g in schedule(unpaired)]
    assert len(set(keys)) == 3 and all(g.pair_index is None for g in schedule(unpaired))


def test_round_robin_and_gauntlet_pairings() -> None:
    bots = [*TWO, {"name": "c", "command": "python3 c.py"}]
    assert parse_config({"bots": bots}).pairings() == [("a", "b"), ("a", "c"), ("b", "c")]
    gauntlet = parse_config({"bots": bots, "tournament": {"format": "gauntlet", "candidate": "c"}})
    assert gauntlet.pairings() == [("c", "a"), ("c", "b")]


def test_config_hash_ignores_output_directory_but_not_rules() -> None:
    a = parse_config({"bots": TWO, "tournament": {"out": "x"}})
    b = parse_config({"bots": TWO, "tournament": {"out": "y"}})
    c = parse_config({"bots": TWO, "rules": "classic"})
    assert a.config_hash == b.config_hash != c.config_hash


def test_the_hand_cap_is_hashed_only_when_not_the_default() -> None:
    """Stores made before the cap was configurable keep their hash (and can be resumed)."""
    default = parse_config({"bots": TWO})
    explicit = parse_config({"bots": TWO, "tournament": {"max_hands_per_game": 200}})
    short = parse_config({"bots": TWO, "tournament": {"max_hands_per_game": 50}})
    assert default.max_hands_per_game == 200 and "max_hands_per_game" not in default.to_dict()
    assert default.config_hash == explicit.config_hash != short.config_hash
    assert short.to_dict()["max_hands_per_game"] == 50


def test_the_local_transport_is_not_hashed() -> None:
    """It changes how bots connect, never a result: a store resumes across it."""
    ipc = parse_config({"bots": TWO})
    tcp = parse_config({"bots": TWO, "tournament": {"local_transport": "tcp"}})
    assert (ipc.local_transport, tcp.local_transport) == ("ipc", "tcp")
    assert ipc.config_hash == tcp.config_hash


def test_keeping_bot_processes_is_on_by_default_and_not_hashed() -> None:
    """Kept processes change no result of a bot that reseeds per match: a store resumes."""
    kept = parse_config({"bots": TWO})
    fresh = parse_config({"bots": TWO, "tournament": {"reuse_bots": False}})
    assert (kept.reuse_bots, fresh.reuse_bots) == (True, False)
    assert kept.config_hash == fresh.config_hash


def test_sandbox_limits_and_env_per_bot() -> None:
    data = {
        "tournament": {"sandbox": "rlimits", "limits": {"cpu_seconds": 60, "open_files": 99}},
        "bots": [
            {**TWO[0], "sandbox": "none", "limits": {"open_files": 50}, "env": ["JAVA_HOME"]},
            TWO[1],
        ],
    }
    config = parse_config(data)
    first, second = config.bots
    assert (first.sandbox, second.sandbox) == ("none", "rlimits")
    assert (first.limits.cpu_seconds, first.limits.open_files) == (60, 50)
    assert (second.limits.cpu_seconds, second.limits.open_files) == (60, 99)
    command = first.bot_command()
    assert command.argv == ("python3", "a.py") and command.sandbox == "none"
    assert command.pass_env == ("JAVA_HOME",) and command.limits == first.limits
    assert config.config_hash == parse_config({"bots": TWO}).config_hash  # not hashed


def test_exposed_paths_and_bot_uids_are_read_and_not_hashed() -> None:
    data = {
        "tournament": {"bot_uids": "61000-61099"},
        "bots": [{**TWO[0], "expose": ["/srv/models"]}, TWO[1]],
    }
    config = parse_config(data)
    assert config.bot_uids == range(61000, 61100)
    assert config.bots[0].bot_command().expose == ("/srv/models",)
    assert config.bots[1].bot_command().expose == ()
    assert config.config_hash == parse_config({"bots": TWO}).config_hash


@pytest.mark.parametrize(
    ("data", "where", "message"),
    [
        ({"tournament": {"bot_uids": "0-10"}, "bots": TWO}, "tournament.bot_uids", "system uid"),
        ({"tournament": {"bot_uids": "lots"}, "bots": TWO}, "tournament.bot_uids", "FIRST-LAST"),
        ({"bots": [{**TWO[0], "expose": ["models"]}, TWO[1]]}, "bots[0].expose", "absolute"),
        (
            {
                "bots": [
                    {"name": "r", "remote": True, "token": "12345678", "expose": ["/x"]},
                    TWO[1],
                ]
            },
            "bots[0].expose",
            "runs elsewhere",
        ),
    ],
)
def test_bad_exposed_paths_and_bot_uids_are_named(
    data: dict[str, object], where: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_config(data)
    assert where in str(info.value)


def test_sandbox_defaults_to_auto() -> None:
    config = parse_config({"bots": TWO})
    assert all(b.sandbox == "auto" and b.pass_env == () for b in config.bots)


KEY = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
REMOTE = {"name": "r", "remote": True, "token": "12345678"}


def test_a_remote_bots_public_key_is_read_and_not_hashed() -> None:
    keyed = parse_config({"bots": [{**REMOTE, "public_key": KEY}, TWO[1]]})
    plain = parse_config({"bots": [REMOTE, TWO[1]]})
    assert keyed.bots[0].public_key is not None and len(keyed.bots[0].public_key) == 32
    assert plain.bots[0].public_key is None
    assert keyed.config_hash == plain.config_hash  # a key may be replaced between runs


@pytest.mark.parametrize(
    ("bots", "words"),
    [
        (
            [{**REMOTE, "public_key": KEY[:-1]}, TWO[1]],
            "expected 40 Z85 characters (as `gin-referee keygen` prints), got 39",
        ),
        ([{**REMOTE, "public_key": "#" * 40}, TWO[1]], "is not a valid Z85 key"),
        ([{**REMOTE, "public_key": "~" + KEY[1:]}, TWO[1]], "'~' is not a Z85 character"),
        ([{**REMOTE, "public_key": 7}, TWO[1]], "expected a string"),
        ([{**TWO[0], "public_key": KEY}, TWO[1]], "a local bot gets its key from the referee"),
        (
            [
                {**REMOTE, "public_key": KEY},
                {**REMOTE, "name": "s", "token": "abcdefgh", "public_key": KEY},
            ],
            "bot 'r' has the same key",
        ),
    ],
)
def test_bad_public_keys_name_the_bot(bots: list[dict[str, object]], words: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config({"bots": bots}, source="t.toml")
    assert info.value.key.endswith("public_key") and words in str(info.value), info.value
