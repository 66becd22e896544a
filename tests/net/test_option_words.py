"""A file named inside an option word is a path like any other: the namespaces sandbox shows
it to the bot (``referee/net/mounts.py``), with a real bot process."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.net.process import BotCommand, BotProcess
from referee.net.sandbox import SandboxLevel
from tests.net.test_sandbox import require


@pytest.mark.asyncio
async def test_a_file_named_inside_an_option_word_is_visible_like_one_named_alone(
    tmp_path: Path,
) -> None:
    """``--weights=PATH``, ``-Dmodel=PATH`` and ``KEY=PATH`` (a policy's weights, a JVM
    property, a setting) show the bot the file, as ``PATH`` alone would; a file beside them
    that no word names stays hidden (the control: the sandbox does hide what is not named)."""
    python = require(SandboxLevel.NAMESPACES)
    files = {}
    for name in ("weights", "model", "key", "unnamed"):
        (tmp_path / name).mkdir()
        files[name] = tmp_path / name / f"{name}.bin"
        files[name].write_text(f"the {name} file")
    unnamed = str(files["unnamed"])
    code = (  # reads the value of each of its words, then the file no word names
        "import sys\n"
        f"for path in [w.partition(chr(61))[2] for w in sys.argv[1:]] + [{unnamed!r}]:\n"
        "    try: sys.stderr.write(path + ' ' + open(path).read() + chr(10))\n"
        "    except OSError as err: sys.stderr.write(path + ' hidden: ' + err.strerror + chr(10))\n"
    )
    assert "=" not in code
    words = (f"--weights={files['weights']}", f"-Dmodel={files['model']}", f"KEY={files['key']}")
    bot = await BotProcess.start(
        BotCommand((python, "-c", code, *words), sandbox="namespaces"),
        env={"GIN_REFEREE_ENDPOINT": "ipc:///tmp/none/s"},
    )
    assert bot.sandbox is SandboxLevel.NAMESPACES
    assert await bot.wait() == 0, bot.stderr_tail()
    await bot.terminate()
    lines = bot.stderr_tail().splitlines()
    assert lines == [
        f"{files['weights']} the weights file",
        f"{files['model']} the model file",
        f"{files['key']} the key file",
        f"{files['unnamed']} hidden: No such file or directory",
    ], lines
