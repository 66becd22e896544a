"""Bots as entrants ship them start as written, in the default sandbox.

Each test builds a bot's directory in ``tmp_path`` the way an entrant or an organiser would (a
``run.sh`` beside the bot, a virtual environment or ``node_modules`` inside it, a binary with
its shared library beside it, a Java class path) and runs ``gin-referee match`` as a
subprocess against the random sample bot: the bot plays a clean game in the ``namespaces``
sandbox, which shows it its directory whole, with the symlinks inside it resolved
(docs/security.md, "Bots as entrants ship them"). A bot that execs a file outside its
directory gets a start-up fault naming that file and ``--expose``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import C_DIR, C_INSTALL, NODE_DIR, node_bot

pytestmark = pytest.mark.timeout(600)  # a loaded machine: 10 times as long as a quiet one

REPO = Path(__file__).resolve().parents[2]
PY = sys.executable
REFEREE = str(Path(PY).with_name("gin-referee"))  # not ``-m referee``: its cwd is not on sys.path
OPPONENT = f"{PY} {REPO / 'sample_bots' / 'greedy_bot.py'}"
RUN_SH = '#!/bin/sh\ncd "$(dirname "$0")"\nexec {interpreter} bot.py\n'
BOT_PY = """\
import os, runpy, sys
print(f"shipped bot on {sys.prefix}", file=sys.stderr, flush=True)
runpy.run_path(os.path.join(os.path.dirname(__file__), "random_bot.py"), run_name="__main__")
"""


def match(
    bot: str,
    cwd: Path,
    *extra: str,
    path: str | None = None,
    out: Path | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``gin-referee match BOT random --json`` run in ``cwd`` (the bots' working directory),
    with ``PATH`` set to ``path`` when given and ``env`` besides, into ``out`` (default: a new
    directory beside ``cwd``); its summary, with seat 0's stderr as ``stderr0``. The bot is
    seat 0."""
    out = out or cwd.parent / f"out-{cwd.name}-{len(list(cwd.parent.glob('out-*')))}"
    env = {**os.environ, **({"PATH": path} if path else {}), **(env or {})}
    done = subprocess.run(
        [REFEREE, "match", bot, OPPONENT, "--games", "1", "--target-points", "10", "--seed", "3",
         "--move-time", "2", "--bank", "4", "--startup-time", "60", "--out", str(out), "--json",
         *extra],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert done.stdout, done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)
    summary["stderr0"] = (out / "match.seat0.stderr").read_text(errors="replace")
    if "--sandbox" not in extra:
        assert summary["sandbox"].startswith("namespaces"), summary["sandbox"]  # the default's
    return summary


def assert_played(summary: dict[str, Any]) -> None:
    """The match ran to its end with no fault on either side."""
    faults = [seat["faults"] for seat in summary["seats"]]
    assert summary["reason"] == "normal", (faults, summary["stderr0"])
    assert summary["games_played"] == 1
    assert faults == [[], []], summary["stderr0"]
    assert summary["seats"][0]["decisions"] > 0


def python_bot(folder: Path, interpreter: str | None = None) -> Path:
    """A Python bot in ``folder``: ``bot.py`` (says which installation runs it, then plays
    randomly), the SDK copied beside it, and a ``run.sh`` that execs ``interpreter``."""
    folder.mkdir(parents=True)
    shutil.copytree(REPO / "protocol", folder / "protocol")
    shutil.copy(REPO / "sample_bots" / "random_bot.py", folder)
    (folder / "bot.py").write_text(BOT_PY)
    if interpreter is not None:
        (folder / "run.sh").write_text(RUN_SH.format(interpreter=interpreter))
        (folder / "run.sh").chmod(0o755)
    return folder


def test_a_run_sh_that_execs_the_python_on_path_plays(tmp_path: Path) -> None:
    """``exec python3 bot.py`` finds the first ``python3`` of the referee's PATH, here this
    test's virtual environment, whose ``python3`` links to an installation elsewhere: that
    is the one that runs the bot, as on the host."""
    python_bot(tmp_path / "bots" / "x", "python3")
    (tmp_path / "run").mkdir()
    path = f"{Path(PY).parent}:/usr/bin:/bin"
    summary = match("../bots/x/run.sh", tmp_path / "run", path=path)
    assert_played(summary)
    assert f"shipped bot on {sys.prefix}\n" in summary["stderr0"]


def test_a_command_word_with_dot_dot_is_started_as_written(tmp_path: Path) -> None:
    """``bots/y/../x/run.sh``: the kernel walks ``bots/y`` (another entrant's directory: made,
    empty, never shown) and the script's ``$0`` keeps the word."""
    python_bot(tmp_path / "bots" / "x", "python3")
    (tmp_path / "bots" / "y").mkdir()
    (tmp_path / "bots" / "y" / "secret.txt").write_text("y's own")
    (tmp_path / "run").mkdir()
    assert_played(match("../bots/y/../x/run.sh", tmp_path / "run"))
    assert_played(match(f"{tmp_path}/bots/y/../x/run.sh", tmp_path / "run"))


def venv_bot(folder: Path) -> Path:
    """A Python bot with a virtual environment of its own in ``folder/.venv``, made from this
    test's interpreter (its ``bin/python`` links to the base installation, outside ``folder``),
    with this installation's packages (pyzmq, msgpack) importable through a ``.pth`` file."""
    python_bot(folder, ".venv/bin/python")
    subprocess.run([PY, "-m", "venv", "--without-pip", str(folder / ".venv")], check=True)
    venv_python = folder / ".venv" / "bin" / "python"
    site = subprocess.run(
        [str(venv_python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    Path(site, "referee-packages.pth").write_text(sysconfig.get_path("purelib") + "\n")
    assert venv_python.is_symlink()
    return folder


@pytest.mark.parametrize("form", ["venv python", "run.sh"])
def test_a_python_bot_with_its_own_venv_plays(tmp_path: Path, form: str) -> None:
    folder = venv_bot(tmp_path / "bots" / "v")
    (tmp_path / "run").mkdir()
    command = f"{folder}/.venv/bin/python {folder}/bot.py" if form == "venv python" else ""
    summary = match(command or f"{folder}/run.sh", tmp_path / "run")
    assert_played(summary)
    assert f"shipped bot on {folder / '.venv'}\n" in summary["stderr0"]


def test_a_node_bot_with_its_node_modules_plays(tmp_path: Path) -> None:
    node_bot()  # fails, naming what to install, when Node or the packages are missing
    folder = tmp_path / "bots" / "node"
    shutil.copytree(NODE_DIR, folder, symlinks=True)
    assert (folder / "node_modules" / "zeromq").is_dir()
    assert_played(match("node bot.js", folder))


def test_a_binary_with_its_shared_library_beside_it_plays(tmp_path: Path) -> None:
    """The C starter bot built as ``libginbot.so`` and a ``bot`` that calls it, found
    through the rpath ``$ORIGIN``."""
    gcc, pkg = shutil.which("gcc"), shutil.which("pkg-config")
    if gcc is None or pkg is None:
        pytest.fail(f"gcc and pkg-config are needed; run: {C_INSTALL}")
    folder = tmp_path / "bots" / "c"
    folder.mkdir(parents=True)
    flags = subprocess.run(
        [pkg, "--cflags", "--libs", "libzmq", "msgpack"], check=True, capture_output=True,
        text=True,
    ).stdout.split()  # fmt: skip
    cflags = ["-O1", "-std=c11", "-D_POSIX_C_SOURCE=200809L"]
    subprocess.run(
        [gcc, *cflags, "-fPIC", "-shared", "-Dmain=gin_bot_main", "-o",
         str(folder / "libginbot.so"), str(C_DIR / "bot.c"), *flags],
        check=True,
    )  # fmt: skip
    (folder / "main.c").write_text(
        "int gin_bot_main(int, char **);\n"
        "int main(int argc, char **argv) { return gin_bot_main(argc, argv); }\n"
    )
    subprocess.run(
        [gcc, "-o", str(folder / "bot"), str(folder / "main.c"), f"-L{folder}", "-lginbot",
         "-Wl,-rpath,$ORIGIN"],
        check=True,
    )  # fmt: skip
    (tmp_path / "run").mkdir()
    assert_played(match(str(folder / "bot"), tmp_path / "run"))


JAVA_MAIN = """\
public class Main {
    public static void main(String[] args) throws Exception {
        String random = java.security.SecureRandom.getInstanceStrong().getAlgorithm();
        System.err.println("jvm up: " + Helper.greeting() + " " + random + " "
            + System.getenv("GIN_REFEREE_ENDPOINT"));
        System.exit(3);
    }
}
"""
JAVA_HELPER = 'public class Helper { static String greeting() { return "lib/*"; } }\n'


def test_a_java_bot_starts_its_jvm_in_the_sandbox(tmp_path: Path) -> None:
    """``java -cp bot.jar:lib/* Main``: the JVM fits the default address space, reads
    ``java.security`` (under ``/etc`` on Debian), loads a class from ``lib/*`` and runs
    ``main``, which prints and exits 3: a start-up fault quoting it, not a JVM that died
    before ``main``. (No Java ZeroMQ library speaks ZMTP 3 from Debian's packages: the bot
    stops there.)"""
    javac, jar = shutil.which("javac"), shutil.which("jar")
    if javac is None or jar is None or shutil.which("java") is None:
        pytest.skip("no JDK here (.ci/run installs default-jdk-headless)")
    folder = tmp_path / "bots" / "java"
    (folder / "lib").mkdir(parents=True)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "Main.java").write_text(JAVA_MAIN)
    (tmp_path / "src" / "Helper.java").write_text(JAVA_HELPER)
    classes = tmp_path / "classes"
    subprocess.run([javac, "-d", str(classes), *map(str, (tmp_path / "src").iterdir())], check=True)
    for archive, cls in (("bot.jar", "Main.class"), ("lib/helper.jar", "Helper.class")):
        subprocess.run([jar, "cf", str(folder / archive), "-C", str(classes), cls], check=True)
    summary = match("java -cp bot.jar:lib/* Main", folder)
    (fault,) = summary["seats"][0]["faults"]
    assert fault["kind"] == "startup"
    assert fault["detail"].startswith("exited with code 3 before saying hello"), fault
    assert "jvm up: lib/* " in summary["stderr0"], summary["stderr0"]
    assert "ipc://" in summary["stderr0"]


def test_a_bot_that_execs_a_hidden_file_is_told_which_and_how_to_expose_it(
    tmp_path: Path,
) -> None:
    """``run.sh`` execs a bot kept outside its directory: the start-up fault names that file
    and ``--expose``; with ``--expose FILE``, as it says, the bot plays."""
    elsewhere = tmp_path / "elsewhere" / "engine"
    elsewhere.parent.mkdir()
    source = (REPO / "sample_bots" / "random_bot.py").read_text()
    elsewhere.write_text(f"#!/usr/bin/env python3\n{source}")
    elsewhere.chmod(0o755)
    folder = tmp_path / "bots" / "h"
    folder.mkdir(parents=True)
    (folder / "run.sh").write_text(f'#!/bin/sh\ncd "$(dirname "$0")"\nexec {elsewhere}\n')
    (folder / "run.sh").chmod(0o755)
    (tmp_path / "run").mkdir()
    path = f"{Path(PY).parent}:/usr/bin:/bin"  # python3: this installation's, with the SDK
    summary = match(f"{folder}/run.sh", tmp_path / "run", path=path)
    (fault,) = summary["seats"][0]["faults"]
    assert fault["kind"] == "startup"
    assert "not found" in fault["detail"], fault
    assert f"the sandbox hides {elsewhere} " in fault["detail"], fault
    assert f"--expose {elsewhere} " in fault["detail"], fault
    exposed = match(f"{folder}/run.sh", tmp_path / "run", "--expose", str(elsewhere), path=path)
    assert_played(exposed)
    checked = subprocess.run(
        [REFEREE, "check", f"{folder}/run.sh", "--expose", str(elsewhere), "--json"],
        cwd=tmp_path / "run", env={**os.environ, "PATH": path}, capture_output=True, text=True,
        timeout=240, check=False,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr  # check takes it too


def attack_report(stderr: str) -> dict[str, Any]:
    """The report of ``tests/bots/attacker.py`` in a seat's stderr."""
    lines = [line for line in stderr.splitlines() if line.startswith("ATTACK ")]
    assert lines, stderr  # the attack ran
    report: dict[str, Any] = json.loads(lines[0].removeprefix("ATTACK "))
    return report


def test_the_links_a_bot_ships_do_not_open_the_host(tmp_path: Path) -> None:
    """An entrant's directory with links to a world-connectable unix socket, to ``/etc/passwd``,
    into the referee's own output directory and to a (world-readable) file in its key
    directory: none is followed (a socket is never, ``/etc`` only its allowlist, the referee's
    directories stay hidden), so each path is missing in the sandbox, where the same bot
    without a sandbox connects and reads."""
    folder = tmp_path / "bots" / "a"
    folder.mkdir(parents=True)
    shutil.copy(REPO / "tests" / "bots" / "attacker.py", folder)
    (tmp_path / "sockets").mkdir()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(tmp_path / "sockets" / "s"))
    listener.listen(8)  # connections wait in the backlog: nothing to accept
    (tmp_path / "sockets" / "s").chmod(0o777)
    home = tmp_path / "home"  # the referee's GIN_REFEREE_HOME: a key directory
    home.mkdir()
    (home / "secret").write_text("the referee's")
    (home / "secret").chmod(0o644)
    links = {
        "sock": tmp_path / "sockets" / "s",
        "passwd": Path("/etc/passwd"),
        "key": home / "secret",
    }
    for name, target in links.items():
        (folder / name).symlink_to(target)
    for sandbox in ("none", "auto"):  # a link to each run's output directory, made before it
        (tmp_path / "outs" / sandbox).mkdir(parents=True, mode=0o700)
        (folder / f"out-{sandbox}").symlink_to(tmp_path / "outs" / sandbox)
    (tmp_path / "run").mkdir()
    attacker = f"{PY} {folder / 'attacker.py'}"
    try:
        for sandbox in ("none", "auto"):
            extra = ("--sandbox", "none") if sandbox == "none" else ()
            summary = match(f"{attacker} connect @{folder}/sock", tmp_path / "run", *extra,
                            env={"GIN_REFEREE_HOME": str(home)})  # fmt: skip
            connected = attack_report(summary["stderr0"])["connect"]
            assert connected == {f"{folder}/sock": "connected" if extra else "FileNotFoundError"}
            record = f"{folder}/out-{sandbox}/match.jsonl"
            summary = match(
                f"{attacker} read-late @{folder}/passwd @{folder}/key @{record}", tmp_path / "run",
                *extra, out=tmp_path / "outs" / sandbox, env={"GIN_REFEREE_HOME": str(home)},
            )  # fmt: skip
            reads = attack_report(summary["stderr0"])["reads"]
            assert set(reads) == {f"{folder}/passwd", f"{folder}/key", record}, reads
            for path, got in reads.items():
                if extra:
                    assert got != "No such file or directory", (path, got)  # the control
                else:
                    assert got == "No such file or directory", (path, got)
    finally:
        listener.close()
