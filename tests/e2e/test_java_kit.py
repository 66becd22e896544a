"""The Java kit (``sample_bots/java``) in real matches: its starter bot, and its bridge running
an EAAI-style player that asserts the framework's call order at every call.

The player and the two ``ginrummy`` classes it is built against are this test's own
(``tests/e2e/java``, written from the framework's documented method list; an entrant supplies
the framework's classes): they are compiled with one ``javac`` run and put in a jar, which the
bridge loads with ``--classes``. A JDK is needed (``.ci/run`` installs default-jdk-headless);
without one the tests fail, naming the package.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from referee.match.record import replay_record
from tests.e2e.helpers import GREEDY, RANDOM, play

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]

KIT = Path(__file__).resolve().parents[2] / "sample_bots" / "java"
PLAYER_SOURCES = Path(__file__).resolve().parent / "java"
INSTALL = "apt-get install -y default-jdk-headless make"


@pytest.fixture(scope="module")
def kit() -> Path:
    """The kit's classes, built with its Makefile (a no-op when up to date)."""
    if shutil.which("javac") is None or shutil.which("make") is None:
        pytest.fail(f"no javac or make here; run: {INSTALL}")
    make = ["make", "-s", "-C", str(KIT)]
    built = subprocess.run(make, check=False, capture_output=True, text=True)
    if built.returncode != 0:
        pytest.fail(f"the Java kit does not build: {built.stderr[-600:]}")
    return KIT / "build"


@pytest.fixture(scope="module")
def entry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test player and its ``ginrummy`` classes, as an entrant ships them: one jar."""
    out = tmp_path_factory.mktemp("eaai")
    classes = out / "classes"
    sources = sorted(str(p) for p in PLAYER_SOURCES.rglob("*.java"))
    subprocess.run(["javac", "-Xlint:all", "-Werror", "-d", str(classes), *sources], check=True)
    jar = out / "entry.jar"
    with zipfile.ZipFile(jar, "w") as z:
        for path in sorted(classes.rglob("*.class")):
            z.write(path, path.relative_to(classes).as_posix())
    out.chmod(0o755)  # a root referee's bot reads it as a uid of its own
    jar.chmod(0o644)
    return jar


def java(kit: Path, *args: str) -> str:
    return " ".join(["java", "-cp", str(kit), *args])


async def test_the_java_starter_bot_plays_a_clean_match(tmp_path: Path, kit: Path) -> None:
    result = await play(java(kit, "gin.StarterBot"), RANDOM, tmp_path, games=2, seed=5)
    stderr = (tmp_path / "match.seat0.stderr").read_text(errors="replace")
    me = result.seats[0]
    assert result.reason == "normal" and result.games_played == 2, (result, stderr)
    assert not me.faults, (me, stderr)
    assert me.decisions > 20 and me.stale_replies == 0
    assert me.games_won == 2  # more than legal: it beats the random bot
    assert "java-starter: match over: win" in stderr  # it left by itself after match_end


async def test_the_bridge_plays_an_eaai_player_in_the_framework_order(
    tmp_path: Path, kit: Path, entry: Path
) -> None:
    """Every call the player got was in the framework's order (it throws otherwise: a crash
    fault), and the hands it played had knocks of its own, defences and layoffs: each kind
    of check really ran."""
    bridge = java(kit, "gin.eaai.Bridge", "--classes", str(entry), "--player", "OrderPlayer")
    result = await play(bridge, GREEDY, tmp_path, games=1, seed=1)
    stderr = (tmp_path / "match.seat0.stderr").read_text(errors="replace")
    assert result.reason == "normal" and result.games_played == 1, (result, stderr)
    me = result.seats[0]
    assert not me.faults, (me.faults, stderr)
    last = stderr.strip().splitlines()[-2]  # then its "match over" line
    counts = re.search(
        r"hand (\d+) in order \((\d+) calls, (\d+) knocks, (\d+) defences, (\d+) layoffs, "
        r"(\d+) face-up and (\d+) stock draws\)",
        last,
    )
    assert counts is not None, stderr[-800:]
    hands, calls, knocks, defences, layoffs, face_up, stock = map(int, counts.groups())
    assert hands >= me.hands_won + result.seats[1].hands_won
    assert calls > 200 and knocks > 0 and defences > 0 and layoffs > 0, last
    assert face_up > 0 and stock > 0, last
    record = (tmp_path / "match.jsonl").read_text()
    assert '"defend melds ' in record  # the defences were its getFinalMelds, as declared
    assert replay_record(tmp_path / "match.jsonl").complete


async def test_the_bridge_names_a_player_it_cannot_load(
    tmp_path: Path, kit: Path, entry: Path
) -> None:
    bridge = java(kit, "gin.eaai.Bridge", "--classes", str(entry), "--player", "NoSuchPlayer")
    result = await play(bridge, RANDOM, tmp_path, games=1, seed=1)
    (fault,) = result.seats[0].faults
    assert fault.kind == "startup", fault
    assert "exited with code 2 before saying hello" in fault.detail
    assert "eaai-bridge: cannot load NoSuchPlayer from" in fault.detail
