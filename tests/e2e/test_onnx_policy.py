"""A policy file plays as a bot: an ONNX model (built here with the ``onnx`` helpers, no torch)
run by ``python -m protocol.onnx_policy`` in a real match in the default sandbox, and every
move it made is the model's choice at the observation the environment gives for that moment
of the recorded game (so the bot fed the model the environment's observation)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from protocol.encoding import DRAW_STOCK, KNOCK, NUM_ACTIONS, OBS_SIZE, PASS_UPCARD
from protocol.onnx_policy import OnnxPolicy
from referee.env import AGENTS, GinRummyEnv
from referee.match.record import read_record_lines
from tests.e2e.test_policy_bot import number

pytestmark = [pytest.mark.timeout(120)]

PY = sys.executable
REFEREE = str(Path(PY).with_name("gin-referee"))
REPO = Path(__file__).resolve().parents[2]


def linear_model(path: Path, seed: int, *, with_mask: bool = False) -> Path:
    """A linear policy: scores = observation @ W + b (W, b drawn from ``seed``, b favouring
    the stock and knocks, so that hands end); with
    ``with_mask``, the graph also takes the mask and adds 10 to each legal action's score."""
    rng = np.random.default_rng(seed)
    weights = numpy_helper.from_array(
        rng.normal(size=(OBS_SIZE, NUM_ACTIONS)).astype(np.float32), "W"
    )
    b = rng.normal(size=NUM_ACTIONS).astype(np.float32)
    b[[DRAW_STOCK, PASS_UPCARD]] += 100  # never take the discard (a hand then lasts long)
    b[KNOCK:] += 50  # knock (or big gin) whenever it may
    bias = numpy_helper.from_array(b, "b")
    nodes = [helper.make_node("MatMul", ["observation", "W"], ["xw"])]
    inputs = [helper.make_tensor_value_info("observation", TensorProto.FLOAT, [None, OBS_SIZE])]
    initializers = [weights, bias]
    if with_mask:
        ten = numpy_helper.from_array(np.array(10.0, np.float32), "ten")
        initializers.append(ten)
        inputs.append(
            helper.make_tensor_value_info("action_mask", TensorProto.FLOAT, [None, NUM_ACTIONS])
        )
        nodes += [
            helper.make_node("Add", ["xw", "b"], ["raw"]),
            helper.make_node("Mul", ["action_mask", "ten"], ["bonus"]),
            helper.make_node("Add", ["raw", "bonus"], ["logits"]),
        ]
    else:
        nodes.append(helper.make_node("Add", ["xw", "b"], ["logits"]))
    graph = helper.make_graph(
        nodes, "policy", inputs,
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [None, NUM_ACTIONS])],
        initializers,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def match(bot: str, out: Path, games: int = 1) -> dict[str, object]:
    """``gin-referee match BOT random`` in the default sandbox; its JSON summary."""
    done = subprocess.run(
        [REFEREE, "match", bot, f"{PY} -m sample_bots.random_bot", "--games", str(games),
         "--seed", "5", "--out", str(out), "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=100, check=False,
    )  # fmt: skip
    assert done.stdout, done.stderr
    summary: dict[str, object] = json.loads(done.stdout)
    return summary


@pytest.mark.parametrize("with_mask", [False, True], ids=["observation", "observation+mask"])
def test_an_onnx_policy_plays_a_match_as_the_environment_would(
    tmp_path: Path, with_mask: bool
) -> None:
    (tmp_path / "model").mkdir()  # (tmp_path itself is 0700: the bot's uid may not enter it)
    model = linear_model(tmp_path / "model" / "policy.onnx", seed=3, with_mask=with_mask)
    summary = match(f"{PY} -m protocol.onnx_policy {model}", tmp_path / "out")
    assert str(summary["sandbox"]).startswith("namespaces"), summary["sandbox"]
    assert summary["reason"] == "normal", (tmp_path / "out" / "match.seat0.stderr").read_text()
    seats = summary["seats"]
    assert isinstance(seats, list)
    assert [s["faults"] for s in seats] == [[], []], seats
    # every move of the model's seat is the model's choice on the environment's observation
    policy = OnnxPolicy(model)
    env = GinRummyEnv()
    moves = 0
    for _, line in read_record_lines(tmp_path / "out" / "match.jsonl"):
        if line["type"] != "hand":
            continue
        env.reset(options={"deck": line["deck"], "dealer": line["dealer"],
                           "scores": line["scores_before"]})  # fmt: skip
        for who, text, _ in line["actions"]:
            if who == 0:
                assert policy(env.observe(AGENTS[0])) == number(text), (line["hand"], text)
                moves += 1
            env.step(number(text))
    assert moves > 10


def test_a_model_that_does_not_fit_is_refused_with_what_is_wrong(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])], "wrong",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, OBS_SIZE])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, OBS_SIZE])],
    )  # fmt: skip
    wrong = tmp_path / "wrong.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), wrong)
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    for path, says in (
        (wrong, "no input named 'observation'"),
        (tmp_path / "junk.onnx", "not an ONNX model"),
    ):
        done = subprocess.run(
            [PY, "-m", "protocol.onnx_policy", str(path)], cwd=REPO,
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 2 and says in done.stderr, done.stderr
