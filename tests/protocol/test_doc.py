"""docs/protocol.md never goes stale: examples, field tables, error codes, limits, JS bot."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from protocol import codec
from protocol.errors import ErrorCode
from protocol.examples import EXAMPLE_BLOCK, EXAMPLES, render_example, rewrite_doc
from protocol.schema import MESSAGE_CLASSES, ActionMsg, Request, WireView
from tests.protocol.fake_referee import WAIT_MS, FakeReferee

REPO = Path(__file__).resolve().parents[2]
DOC_PATH = REPO / "docs" / "protocol.md"
DOC = DOC_PATH.read_text(encoding="utf-8")
FIX = "run `python -m protocol.examples docs/protocol.md` to regenerate the examples"


def _section(title: str) -> str:
    """The text of the ``## title`` section."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", DOC, re.DOTALL | re.MULTILINE)
    assert match, f"no section {title!r}"
    return match.group(1)


def _table_rows(text: str) -> list[list[str]]:
    """The cells of every markdown table row in ``text`` (header and rule rows skipped)."""
    rows = []
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return [row for row in rows if row[0] not in ("field", "code", "limit", "`type`", "variable")]


def test_every_example_block_matches_the_codec() -> None:
    blocks = EXAMPLE_BLOCK.findall(DOC)
    assert sorted(name for name, _ in blocks) == sorted(EXAMPLES), "one block per example"
    for name, text in blocks:
        assert text == render_example(name), f"example {name!r} is stale: {FIX}"
    assert rewrite_doc(DOC) == DOC, FIX


def test_every_message_type_has_an_example_in_the_doc() -> None:
    shown = {EXAMPLES[name].TYPE for name, _ in EXAMPLE_BLOCK.findall(DOC)}
    assert shown == set(MESSAGE_CLASSES)


def test_message_field_tables_match_the_dataclasses() -> None:
    messages = _section("Messages")
    sections = re.split(r"^### ", messages, flags=re.MULTILINE)[1:]
    documented: set[str] = set()
    for section in sections:
        heading, _, body = section.partition("\n")
        types = re.findall(r"(\w+) \((?:bot|referee|both)", heading)
        fields = {name for row in _table_rows(body) for name in re.findall(r"`(\w+)`", row[0])}
        for msg_type in types:
            cls = MESSAGE_CLASSES[msg_type]
            assert fields == {f.name for f in dataclasses.fields(cls)}, msg_type
            documented.add(msg_type)
    assert documented == set(MESSAGE_CLASSES)
    summary = {row[0].strip("`") for row in _table_rows(messages.split("###")[0])}
    assert summary == set(MESSAGE_CLASSES)


def test_view_table_matches_wire_view() -> None:
    rows = _table_rows(_section("The view map"))
    assert [row[0].strip("`") for row in rows] == [f.name for f in dataclasses.fields(WireView)]


def test_error_code_table_lists_every_code_with_its_doc() -> None:
    rows = _table_rows(_section("Errors"))
    table = {row[0].strip("`"): row[2] for row in rows}
    assert list(table) == [code.value for code in ErrorCode]
    for code in ErrorCode:
        assert table[code.value] == code.doc, code


def test_limits_table_matches_the_codec() -> None:
    rows = _table_rows(_section("Limits"))
    named = {row[0].strip("`"): int(row[1]) for row in rows if row[0].startswith("`MAX_")}
    assert named == {
        name: getattr(codec, name)
        for name in (
            "MAX_MESSAGE_BYTES",
            "MAX_STR_BYTES",
            "MAX_ARRAY_LEN",
            "MAX_MAP_LEN",
            "MAX_DEPTH",
        )
    }


def _node_modules() -> Path | None:
    candidates = [REPO / "sample_bots" / "node" / "node_modules"]
    if os.environ.get("GIN_TEST_NODE_MODULES"):
        candidates.insert(0, Path(os.environ["GIN_TEST_NODE_MODULES"]))
    for path in candidates:
        if (path / "zeromq").is_dir() and (path / "@msgpack" / "msgpack").is_dir():
            return path
    return None


def test_javascript_bot_in_the_doc_plays(tmp_path: Path) -> None:
    # CI installs Node's packages (.ci/run runs `npm ci`): a missing one is a failure, not a
    # skip, so a broken set-up cannot pass unnoticed (as in tests/e2e/test_node_bot.py).
    install = "cd sample_bots/node && npm ci"
    if shutil.which("node") is None:
        pytest.fail(f"`node` is not on PATH: install Node.js >= 18, then run: {install}")
    modules = _node_modules()
    if modules is None:
        pytest.fail(f"zeromq@6 and @msgpack/msgpack are not installed for node; run: {install}")
    match = re.search(
        r"<!-- javascript-bot -->\n```js\n(.*?)```\n<!-- /javascript-bot -->", DOC, re.DOTALL
    )
    assert match, "the doc's JavaScript bot block is missing"
    (tmp_path / "random_bot.mjs").write_text(match.group(1), encoding="utf-8")
    (tmp_path / "node_modules").symlink_to(modules)
    referee = FakeReferee()
    env = {**os.environ, "GIN_REFEREE_ENDPOINT": referee.endpoint, "GIN_REFEREE_TOKEN": "js"}
    proc = subprocess.Popen(["node", "random_bot.mjs"], cwd=tmp_path, env=env)
    try:
        hello = referee.handshake()
        assert (hello.protocol_version, hello.token) == (1, "js")
        referee.send(EXAMPLES["match_start"])
        referee.send(EXAMPLES["hand_start"])
        request = EXAMPLES["request"]
        assert isinstance(request, Request)
        referee.send(request)
        reply = referee.recv()
        assert isinstance(reply, ActionMsg)
        assert reply.request_id == request.request_id
        assert reply.action in request.legal
        referee.send(EXAMPLES["ping"])
        assert referee.recv() == EXAMPLES["pong"]
        referee.send(EXAMPLES["match_end"])
        assert referee.recv().TYPE == "bye"
        assert proc.wait(timeout=WAIT_MS / 1000) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        referee.close()
