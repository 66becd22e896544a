"""Inline SVG charts for the report: ratings with their intervals on one Elo axis.

>>> svg = rating_plot([("alpha", 40.0, -10.0, 90.0), ("beta", None, -math.inf, 10.0)])
>>> svg.startswith("<svg") and "alpha" in svg and "n/a" in svg and "</svg>" in svg
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

__all__ = ["Rating", "elo_text", "nice_step", "rating_plot"]

_ROW = 30
_LEFT = 150
_RIGHT = 70
_WIDTH = 720
_TOP = 26
_BOTTOM = 10


def nice_step(span: float, ticks: int = 6) -> float:
    """A round tick spacing (1, 2 or 5 times a power of ten) giving about ``ticks`` ticks.

    >>> nice_step(600), nice_step(30), nice_step(0)
    (100.0, 5.0, 1.0)
    """
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / ticks
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * power:
            return float(factor * power)
    return float(10 * power)  # pragma: no cover - the loop always returns


Rating = tuple[str, float | None, float | None, float | None]
"""``(name, rating, low, high)``: no rating (None) has no dot; an infinite or missing interval
end runs to the edge of the plot and ends in an arrow."""


def elo_text(value: float | None) -> str:
    """An Elo value as text: signed (0 unsigned, never -0), or n/a, or +inf/-inf."""
    if value is None:
        return "n/a"
    if not math.isfinite(value):
        return "+inf" if value > 0 else "-inf"
    text = f"{value:+.0f}"
    return "0" if text in ("+0", "-0") else text


def rating_plot(rows: Sequence[Rating]) -> str:
    """One row per rating: a dot at the rating on a line spanning the interval, against a
    shared axis with a line at 0 (the field's mean)."""
    values = [
        v for _, r, lo, hi in rows for v in (r, lo, hi) if v is not None and math.isfinite(v)
    ] or [0.0]
    low, high = min([*values, 0.0]), max([*values, 0.0])
    step = nice_step(high - low)
    low, high = math.floor(low / step) * step, math.ceil(high / step) * step
    if high <= low:
        low, high = low - step, high + step
    plot = _WIDTH - _LEFT - _RIGHT
    height = _TOP + _ROW * len(rows) + _BOTTOM

    def x(value: float) -> float:
        clipped = min(max(value, low), high)
        return round(_LEFT + plot * (clipped - low) / (high - low), 1)

    parts = [
        f'<svg class="rating-plot" viewBox="0 0 {_WIDTH} {height}" width="100%" role="img" '
        f'aria-label="ratings with 95% intervals" xmlns="http://www.w3.org/2000/svg">'
    ]
    tick = low
    while tick <= high + step / 2:
        tx = x(tick)
        cls = "axis zero" if abs(tick) < step / 1000 else "axis"
        parts.append(
            f'<line class="{cls}" x1="{tx}" x2="{tx}" y1="{_TOP - 6}" y2="{height - _BOTTOM}"/>'
        )
        label = "0" if cls == "axis zero" else f"{tick:+.0f}"
        parts.append(
            f'<text class="tick" x="{tx}" y="{_TOP - 10}" text-anchor="middle">{label}</text>'
        )
        tick += step
    for i, (name, rating, lo, hi) in enumerate(rows):
        y = _TOP + _ROW * i + _ROW / 2
        label = escape(name if len(name) <= 20 else name[:19] + "\u2026")
        x1 = x(lo if lo is not None else -math.inf)
        x2 = x(hi if hi is not None else math.inf)
        row = [
            f'<g class="row"><title>{escape(name)}: {elo_text(rating)} '
            f"[{elo_text(lo)}, {elo_text(hi)}]</title>"
            f'<text class="name" x="{_LEFT - 10}" y="{y + 4}" text-anchor="end">{label}</text>'
        ]
        known = rating is not None or lo is not None or hi is not None
        if known:
            row.append(f'<line class="interval" x1="{x1}" x2="{x2}" y1="{y}" y2="{y}"/>')
        for end, edge, step_x in ((lo, x1, 6), (hi, x2, -6)):
            if known and (end is None or not math.isfinite(end)):
                # An arrow head: the interval has no end on this side.
                row.append(f'<path class="open" d="M{edge} {y}l{step_x} -5v10z"/>')
        if rating is not None:
            row.append(f'<circle class="rating" cx="{x(rating)}" cy="{y}" r="5"/>')
        value_x = _WIDTH - _RIGHT + 8
        row.append(f'<text class="value" x="{value_x}" y="{y + 4}">{elo_text(rating)}</text></g>')
        parts.append("".join(row))
    parts.append("</svg>")
    return "".join(parts)
