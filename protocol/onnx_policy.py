"""A trained policy exported to ONNX, run as a bot: ``python -m protocol.onnx_policy MODEL.onnx``.

The model is any ONNX graph with an input named ``observation`` (float32, shape ``(N, 331)``:
:mod:`protocol.encoding`'s vector, what the learning environment gives, docs/env.md), an
optional input ``action_mask`` (float32, ``(N, 108)``), and as its first output the logits
(or any scores) of the 108 action numbers, ``(N, 108)``. The bot plays the legal action with
the highest score; the observation it feeds the model is the environment's, built from each
``request`` by :class:`~protocol.policy.PolicyBot`. onnxruntime runs it on the CPU with one
thread (``pip install onnxruntime``, the ``onnx`` extra): a small wheel, no torch, and it
starts in the referee's default sandbox with the default limits.

    python -m protocol.onnx_policy policy.onnx [--name NAME] [--endpoint ... --token ...]

Exporting from PyTorch (Stable-Baselines3, CleanRL...): docs/env.md, "From a trained policy
to a bot".
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from protocol.encoding import NUM_ACTIONS, OBS_SIZE
from protocol.policy import run_policy

__all__ = ["OnnxPolicy", "main"]


class OnnxPolicy:
    """The :data:`~protocol.policy.Policy` of an ONNX model (module docstring); raises
    ValueError naming what is wrong with a model that does not fit."""

    def __init__(self, path: str | Path) -> None:
        try:
            import onnxruntime
        except ImportError as err:
            raise ValueError(
                f"onnxruntime is not installed ({err}): pip install onnxruntime"
                " (or the project's 'onnx' extra)"
            ) from err
        try:
            Path(path).open("rb").close()
        except OSError as err:  # as the system says it (the fault then names a hidden path)
            raise ValueError(f"{path}: {err.strerror}") from err
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        try:
            self.session = onnxruntime.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as err:  # onnxruntime raises its own classes, from C++
            raise ValueError(f"{path}: not an ONNX model onnxruntime can load: {err}") from err
        inputs = {i.name: i.shape for i in self.session.get_inputs()}
        if "observation" not in inputs:
            raise ValueError(f"{path}: the model has no input named 'observation' ({inputs})")
        extra = set(inputs) - {"observation", "action_mask"}
        if extra:
            raise ValueError(f"{path}: inputs other than observation and action_mask: {extra}")
        self.with_mask = "action_mask" in inputs
        self.output = self.session.get_outputs()[0].name
        probe = self.scores(np.zeros(OBS_SIZE, np.int8), np.ones(NUM_ACTIONS, np.int8))
        if probe.shape != (NUM_ACTIONS,):
            raise ValueError(
                f"{path}: the first output must give {NUM_ACTIONS} scores per observation,"
                f" not shape {probe.shape}"
            )

    def scores(self, observation: Any, mask: Any) -> Any:
        """The model's scores of the 108 action numbers for one observation."""
        feed = {"observation": np.asarray(observation, np.float32).reshape(1, OBS_SIZE)}
        if self.with_mask:
            feed["action_mask"] = np.asarray(mask, np.float32).reshape(1, NUM_ACTIONS)
        out = self.session.run([self.output], feed)[0]
        return np.asarray(out, np.float64).reshape(-1)

    def __call__(self, obs: Mapping[str, Any]) -> int:
        mask = obs["action_mask"]
        scores = self.scores(obs["observation"], mask)
        return int(np.argmax(np.where(np.asarray(mask) > 0, scores, -np.inf)))


def main(argv: Sequence[str] | None = None) -> int:
    """Play matches with the model given first; the other options are the SDK's."""
    words = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(prog="python -m protocol.onnx_policy", description=__doc__)
    parser.add_argument("model", help="the ONNX file")
    parser.add_argument("--name", help="the bot's name (default: the file's stem)")
    args, rest = parser.parse_known_args(words)
    try:
        policy = OnnxPolicy(args.model)
    except ValueError as err:
        print(f"onnx_policy: {err}", file=sys.stderr)
        return 2
    return run_policy(policy, args.name or Path(args.model).stem, rest)


if __name__ == "__main__":
    raise SystemExit(main())
