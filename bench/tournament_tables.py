"""The tournament benchmark's figures: per-level medians over rounds, the memory growth per
added game, and the readable tables it prints on stderr (:mod:`bench.bench_tournament`)."""

from __future__ import annotations

import statistics
from typing import Any


def median_rows(per_round: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per level, the median over the rounds of every figure (memory figures from the first
    round: later rounds start with the high-water mark already reached), plus each round's
    decisions/s."""
    if not per_round or not per_round[0]:
        return []
    out = []
    for i, first in enumerate(per_round[0]):
        samples = [rows[i] for rows in per_round]
        row: dict[str, Any] = {}
        for key, value in first.items():
            if key.startswith("rss") or not isinstance(value, int | float) or value is None:
                row[key] = value
            elif any(sample[key] is None for sample in samples):
                row[key] = None
            else:
                median = statistics.median(sample[key] for sample in samples)
                row[key] = round(median, 3) if isinstance(value, float) else round(median)
        row["decisions_per_s_rounds"] = [sample["decisions_per_s"] for sample in samples]
        out.append(row)
    return out


def add_marginal(rows: list[dict[str, Any]]) -> None:
    """Add ``rss_marginal_per_game_kib``: peak RSS growth per added game since the last level."""
    previous: dict[str, Any] | None = None
    for row in rows:
        marginal = None
        if previous is not None and row["concurrency"] > previous["concurrency"]:
            growth = row["rss_peak_kib"] - previous["rss_peak_kib"]
            marginal = round(growth / (row["concurrency"] - previous["concurrency"]))
        row["rss_marginal_per_game_kib"] = marginal
        previous = row


def table(label: str, rows: list[dict[str, Any]]) -> str:
    """A small readable table of one series."""
    columns = (  # (heading, key, format, scale)
        ("conc", "concurrency", "d", 1),
        ("games", "games", "d", 1),
        ("decisions", "decisions", "d", 1),
        ("secs", "seconds", ".2f", 1),
        ("dec/s", "decisions_per_s", "d", 1),
        ("ref%", "referee_cpu_share", ".1f", 100),
        ("ref us", "referee_us_per_decision", ".0f", 1),
        ("bots us", "bots_us_per_decision", ".0f", 1),
        ("cores", "cores_used", ".2f", 1),
        ("refcore", "referee_cores", ".2f", 1),
        ("machine", "machine_busy_cores", ".2f", 1),
        ("idle%", "machine_idle", ".1f", 100),
        ("steal%", "machine_steal", ".1f", 100),
        ("KiB/game", "rss_per_game_kib", "d", 1),
        ("marginal", "rss_marginal_per_game_kib", "d", 1),
        ("lag ms", "lag_max_ms", ".1f", 1),
    )
    widths = [max(6, len(head)) for head, *_ in columns]
    lines = [f"[{label}]", " ".join(f"{c[0]:>{w}}" for c, w in zip(columns, widths, strict=True))]
    for row in rows:
        cells = []
        for (_head, key, fmt, scale), width in zip(columns, widths, strict=True):
            value = row[key]
            cells.append(f"{'-' if value is None else format(value * scale, fmt):>{width}}")
        lines.append(" ".join(cells))
    return "\n".join(lines)


def control_table(
    control: list[dict[str, Any]], floor: list[dict[str, Any]], referee: list[dict[str, Any]]
) -> str:
    """The control and floor series next to the amortised one: rates, the referee/control
    ratio, the three CPU shares and the referee side's CPU per decision, per level."""
    lines = [
        "[control: the same bots driven by bench.raw_referee (no rules; floor = on the "
        "referee's transport), vs amortised]",
        f"{'conc':>6} {'ctl dec/s':>10} {'ref dec/s':>10} {'ratio':>6} {'ctl ref%':>8} "
        f"{'floor%':>7} {'ref%':>6} {'ctl us':>7} {'floor us':>8} {'ref us':>7} "
        f"{'ctl bots':>8} {'bots us':>8}  ratio per round",
    ]
    by_level = {row["concurrency"]: row for row in referee}
    floor_by_level = {row["concurrency"]: row for row in floor}
    for row in control:
        ref, low = by_level.get(row["concurrency"]), floor_by_level.get(row["concurrency"])
        if ref is None or low is None:
            continue
        lines.append(
            f"{row['concurrency']:>6} {row['decisions_per_s']:>10} {ref['decisions_per_s']:>10} "
            f"{ref['decisions_per_s'] / row['decisions_per_s']:>6.2f} "
            f"{100 * row['referee_cpu_share']:>8.1f} {100 * low['referee_cpu_share']:>7.1f} "
            f"{100 * ref['referee_cpu_share']:>6.1f} "
            f"{row['referee_us_per_decision']:>7.0f} {low['referee_us_per_decision']:>8.0f} "
            f"{ref['referee_us_per_decision']:>7.0f} "
            f"{row['bots_us_per_decision']:>8.0f} {ref['bots_us_per_decision']:>8.0f}  "
            f"{round_ratios(ref, row)}"
        )
    return "\n".join(lines)


def round_ratios(referee: dict[str, Any], control: dict[str, Any]) -> str:
    """The referee/control ratio of each round (both series ran in the same round, one after
    the other), as ``median [min-max]``."""
    ratios = [
        ref / ctl
        for ref, ctl in zip(
            referee["decisions_per_s_rounds"], control["decisions_per_s_rounds"], strict=True
        )
    ]
    return f"{statistics.median(ratios):.2f} [{min(ratios):.2f}-{max(ratios):.2f}]"
