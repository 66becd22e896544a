"""Golden-section search: an independent maximiser for checking the statistics' solvers."""

from __future__ import annotations

import math
from collections.abc import Callable


def argmax(f: Callable[[float], float], lo: float, hi: float, steps: int = 80) -> float:
    """Argmax of a unimodal function on [lo, hi] (to about (hi - lo) 0.618^steps)."""
    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    for _ in range(steps):
        c, d = b - g * (b - a), a + g * (b - a)
        if f(c) > f(d):
            b = d
        else:
            a = c
    return (a + b) / 2
