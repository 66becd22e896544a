"""The standings page of a tournament run: ``gin-referee report RUN_DIR``.

One static HTML file (no script): the standings table beside an SVG plot of the ratings and
their intervals, the pairing matrix and head-to-head estimates, each bot's faults with the tail
of its stderr, and every game with a link to its replay page. The replay pages are generated
beside the report, in ``viewer/`` next to it, so the report and its pages can be copied or
served as one folder; a page newer than its record is kept. A page takes 5-60 ms and 60-500 KB,
so a run of more than :data:`~referee.tournament.defaults.REPORT_PAGES` games gets pages for
that many of them only (the games with faults first, then the latest), unless asked for all.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from referee.match import RecordError
from referee.match.record_gzip import GZIP_SUFFIX, record_stem
from referee.tournament.defaults import REPORT_PAGES
from referee.tournament.report import estimate_text
from referee.view.ladder_html import ladder_section
from referee.view.page import asset, page, write_page
from referee.view.replay_html import write_viewer
from referee.view.run_dir import RunData, load_run, stderr_tail
from referee.view.svg import elo_text, rating_plot

__all__ = ["ReportSummary", "paged_games", "render_report", "write_report"]

VIEWER_DIR = "viewer"


@dataclass(slots=True)
class ReportSummary:
    """What :func:`write_report` wrote."""

    report: Path
    pages_written: int = 0
    pages_kept: int = 0
    problems: dict[int, str] = field(default_factory=dict)
    """Games whose replay page could not be made, with the reason."""
    pages_over: int = 0
    """Recorded games left without a page by the ``pages`` limit."""


def _e(value: object) -> str:
    return escape(str(value))


def _standings(run: RunData) -> str:
    head = ("#", "bot", "games", "W-D-L", "score", "pts/game", "rating", "95% interval", "faults")
    rows = []
    for b in run.standings.bots:
        interval = f"[{elo_text(b.rating_low)}, {elo_text(b.rating_high)}]"
        score = "-" if b.score is None else f"{b.score:.3f}"
        ppg = "-" if b.points_per_game is None else f"{b.points_per_game:.1f}"
        cells = (b.rank_text, b.name, b.games, f"{b.wins}-{b.draws}-{b.losses}", score, ppg,
                 elo_text(b.rating),
                 "" if b.rating is None else interval, b.faults)  # fmt: skip
        tds = "".join(f'<td class="{"name" if i == 1 else "num"}">{_e(c)}</td>'
                      for i, c in enumerate(cells))  # fmt: skip
        rows.append(f"<tr>{tds}</tr>")
    ths = "".join(f"<th>{_e(h)}</th>" for h in head)
    note = run.standings.rating_note
    note_html = f"<p class='note' id='rating-note'>Ratings: {_e(note)}</p>" if note else ""
    return (
        f'<section><h2>Standings</h2><div class="scroll"><table class="standings" id="standings">'
        f"<thead><tr>{ths}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>{note_html}"
        f"{_rating_figure(run)}</section>"
    )


def _rating_figure(run: RunData) -> str:
    """The plot of the ratings, or, when no bot has one, why in words (an empty axis says
    nothing); the caption mentions arrows only when one is drawn, dots only when one is not."""
    bots = run.standings.bots
    if all(b.rating is None for b in bots):
        if not any(b.games for b in bots):
            why = "no game has been played yet."
        else:
            why = (
                "when a bot (or a group of bots) took every point against the others, their "
                "ratings could be any distance apart, so no finite rating fits the games. The "
                "head-to-head estimates below say what the games do show (a bound). To rank "
                f"such a field anyway, <code>gin-referee results {_e(str(run.directory))} "
                "--prior-draws 2</code> adds 2 virtual draws to every pairing played "
                "(docs/statistics.md)."
            )
            if run.standings.rating_hint.startswith("games between"):
                why = f"{_e(run.standings.rating_hint)}."
        return f"<p class='note' id='no-rating-plot'>No rating plot: {why}</p>"
    rows = [(b.name, b.rating, b.rating_low, b.rating_high) for b in bots]
    open_end = any(
        r is not None and any(end is None or not math.isfinite(end) for end in (lo, hi))
        for _, r, lo, hi in rows
    )
    notes = " An arrow marks an interval without an end on that side." if open_end else ""
    if any(r is None for _, r, _, _ in rows):
        notes += " A bot without a rating (n/a) has no dot."
    return (
        f'<figure class="plot">{rating_plot(rows)}<figcaption>Rating (Elo, 0 is the field\'s '
        f"mean) with its 95% interval.{notes}</figcaption></figure>"
    )


def _matrix(run: RunData) -> str:
    names = [b.name for b in run.standings.bots]
    games: dict[tuple[str, str], int] = {}
    for p in run.standings.pairings:
        games[(p.first, p.second)] = games[(p.second, p.first)] = p.games
    head = "".join(f'<th class="col" title="{_e(n)}">{_e(n)}</th>' for n in names)
    rows = []
    for a in names:
        cells = []
        for b in names:
            n = games.get((a, b), 0)
            if a == b or n == 0:
                cells.append('<td class="none">\u2014</td>' if a == b else '<td class="none"></td>')
                continue
            score = run.standings.matrix.get(a, {}).get(b, 0.0)
            share = score / n
            tone = "win" if share > 0.5 else "loss" if share < 0.5 else "even"
            cells.append(f'<td class="{tone}" style="--share:{share:.3f}">{score:g}/{n}</td>')
        rows.append(f'<tr><th class="name">{_e(a)}</th>{"".join(cells)}</tr>')
    pairs = "".join(
        f"<tr><td class='name'>{_e(p.first)}</td><td class='name'>{_e(p.second)}</td>"
        f"<td class='num'>{p.games}</td>"
        f"<td class='num'>{'-' if p.score is None else format(p.score, '.3f')}</td>"
        f"<td class='estimate'>{_e(estimate_text(p.elo, p.paired))}</td></tr>"
        for p in run.standings.pairings
    )
    return (
        "<section><h2>Pairings</h2><p class='note'>Row's score against column (wins 1, draws "
        "\u00bd) out of the games they played.</p><div class='scroll'>"
        f"<table class='matrix' id='matrix'><thead><tr><th></th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div><h3>Head to head</h3><div class='scroll'>"
        "<table class='pairs'><thead><tr><th>first</th><th>second</th><th>games</th>"
        "<th>first's score</th><th>Elo difference (95% interval), LOS</th></tr></thead>"
        f"<tbody>{pairs}</tbody></table></div></section>"
    )


def _game_link(run: RunData, game_id: int, links: dict[int, str], text: str) -> str:
    href = links.get(game_id)
    return f'<a href="{_e(href)}">{_e(text)}</a>' if href else _e(text)


def _faults(run: RunData, links: dict[int, str]) -> str:
    by_bot: dict[str, list[dict[str, Any]]] = {}
    for fault in run.faults:
        bot = run.bot_of(int(fault.get("game_id", -1)), fault.get("seat"))
        by_bot.setdefault(bot or "(no seat)", []).append(fault)
    if not by_bot:
        return "<section id='faults'><h2>Faults</h2><p>No bot faulted.</p></section>"
    parts = ["<section id='faults'><h2>Faults</h2>"]
    for bot in sorted(by_bot, key=lambda name: (-len(by_bot[name]), name)):
        faults = by_bot[bot]
        kinds = ", ".join(f"{k} \u00d7{n}" for k, n in Counter(f["kind"] for f in faults).items())
        count = f"{len(faults)} fault{'s' * (len(faults) != 1)}"
        parts.append(
            f"<details class='bot-faults' open><summary><strong>{_e(bot)}</strong>: "
            f"{count} ({_e(kinds)})</summary><ul>"
        )
        for f in faults:
            game_id = int(f.get("game_id", -1))
            hand = f.get("hand")
            where = _game_link(run, game_id, links, f"game {game_id + 1}")
            if isinstance(hand, int) and hand >= 0:
                where += f", hand {hand + 1}"
            detail = str(f.get("detail") or "")
            tail = ""
            path = run.stderr_file(bot, game_id)
            if path is not None:
                text = stderr_tail(path) or "(empty)"
                tail = (f"<details class='stderr'><summary>stderr tail ({_e(path.name)})</summary>"
                        f"<pre>{_e(text)}</pre></details>")  # fmt: skip
            parts.append(f"<li><span class='kind'>{_e(f['kind'])}</span> in {where}: "
                         f"<span class='detail'>{_e(detail[:600])}</span>{tail}</li>")  # fmt: skip
        parts.append("</ul></details>")
    parts.append("</section>")
    return "".join(parts)


def paged_games(run: RunData, pages: int | None) -> list[int]:
    """The recorded games that get a replay page: all of them when ``pages`` is None or not
    fewer than the records, else ``pages`` of them, the games with faults first (in game order),
    then the latest."""
    recorded = sorted(run.records)
    if pages is None or len(recorded) <= pages:
        return recorded
    faulted = {int(f.get("game_id", -1)) for f in run.faults}
    first = [gid for gid in recorded if gid in faulted]
    rest = [gid for gid in reversed(recorded) if gid not in faulted]
    return sorted((first + rest)[:pages])


def _games(run: RunData, links: dict[int, str], problems: dict[int, str], over: int) -> str:
    rows = []
    for row in run.rows:
        gid, spec, result = row.spec.game_id, row.spec, row.result or {}
        totals = result.get("totals")
        score = "\u2013".join(str(t) for t in totals) if totals else ""
        winner = result.get("winner") if row.status == "done" else None
        faults = len(result.get("faults", []))
        view = _game_link(run, gid, links, "replay") if gid in links else ""
        if gid in problems:
            view = f"<span class='problem' title='{_e(problems[gid])}'>no replay</span>"
        rows.append(
            f"<tr id='game-{gid}'><td class='num' title='record g{gid:06d}'>{gid + 1}</td>"
            f"<td class='name'>{_e(spec.seat0)}</td>"
            f"<td class='name'>{_e(spec.seat1)}</td><td>{_e(row.status)}</td>"
            f"<td class='name'>{_e(winner or ('draw' if row.status == 'done' else ''))}</td>"
            f"<td class='num'>{_e(score)}</td><td>{_e(result.get('reason', ''))}</td>"
            f"<td class='num'>{faults or ''}</td><td>{view}</td></tr>"
        )
    note = ""
    if over:
        total = len(run.records)
        note = (f"<p class='meta' id='pages-note'>Replay pages for {total - over} of "
                f"{total} recorded games (the games with faults first, then the "
                "latest): <code>gin-referee report --pages all</code> writes every one, "
                "<code>gin-referee view</code> any single record.</p>")  # fmt: skip
    return (
        f"<section><h2>Games</h2>{note}"
        "<div class='scroll'><table class='games' id='games'><thead><tr>"
        "<th>game</th><th>seat 0</th><th>seat 1</th><th>status</th><th>winner</th>"
        "<th>totals</th><th>end</th><th>faults</th><th></th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div></section>"
    )


def render_report(
    run: RunData, links: dict[int, str], problems: dict[int, str] | None = None, over: int = 0
) -> str:
    """The report page; ``links`` maps game ids to their replay pages (relative URLs), ``over``
    counts the recorded games left without one by the page limit."""
    config, s = run.config, run.standings
    ladder = isinstance(config.get("ladder"), dict)  # a ladder's stored configuration
    if ladder:
        config = config["ladder"]
    name = str(config.get("name", run.directory.name))
    rules = config.get("rules", {}).get("name", "?")
    time_wire = config.get("time") or {}
    if ladder:
        meta = [f"a ladder: {s.done} games played", "pairs chosen by its matchmaker"]
    else:
        meta = [f"{s.done}/{s.total} games played", f"{config.get('format', '?')}",
                f"{config.get('games_per_pairing', '?')} games a pairing"]  # fmt: skip
    meta += ["duplicate deals" if config.get("duplicate") else "independent deals",
             f"{rules} rules"]  # fmt: skip
    seed = config.get("seed")
    meta.append("secret deals" if seed is None else f"seed {seed}")
    if "move_ms" in time_wire:
        meta.append(
            f"{time_wire['move_ms'] / 1000:g} s a move + {time_wire['bank_ms'] / 1000:g} s bank"
        )
    generated = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    body = (
        f"<main id='report'><header><h1>{_e(name)}</h1><p class='meta'>{_e(' · '.join(meta))}"
        f"</p><p class='meta'>Generated {generated} from {_e(run.directory)}.</p></header>"
        f"{ladder_section(run.directory)}{_standings(run)}{_matrix(run)}{_faults(run, links)}"
        f"{_games(run, links, problems or {}, over)}</main>"
    )
    return page(title=f"{name} - standings", styles=[asset("report.css")], body=body)


def write_report(
    directory: Path,
    out: Path | None = None,
    *,
    pages: int | None = REPORT_PAGES,
    rebuild: bool = False,
) -> ReportSummary:
    """Write the report of run ``directory`` (default ``DIRECTORY/report.html``) and the replay
    pages of its recorded games in ``viewer/`` beside it: all of them (``pages`` None), or at
    most ``pages`` (:func:`paged_games`; 0: none). A page newer than its record is kept unless
    ``rebuild``."""
    run = load_run(directory)
    out = out or directory / "report.html"
    summary = ReportSummary(out)
    links: dict[int, str] = {}
    if pages != 0:
        chosen = paged_games(run, pages)
        summary.pages_over = len(run.records) - len(chosen)
        viewer = out.parent / VIEWER_DIR
        for game_id in chosen:
            record = run.records[game_id]
            target = viewer / (record_stem(record.name) + ".html")
            links[game_id] = f"{VIEWER_DIR}/{target.name}"
            try:
                try:
                    written = _write_page(record, target, rebuild)
                except (RecordError, OSError):
                    if record.exists():
                        raise
                    # The game ended while the report was made: its record is compressed now.
                    written = _write_page(
                        record.with_name(record.name + GZIP_SUFFIX), target, rebuild
                    )
            except (RecordError, OSError) as err:
                del links[game_id]
                summary.problems[game_id] = str(err)
                continue
            summary.pages_written += written
            summary.pages_kept += not written
    write_page(out, render_report(run, links, summary.problems, summary.pages_over))
    return summary


def _write_page(record: Path, target: Path, rebuild: bool) -> bool:
    """Write ``record``'s replay page at ``target``; False when a page newer than the record is
    kept (unless ``rebuild``)."""
    if not rebuild and target.is_file() and target.stat().st_mtime >= record.stat().st_mtime:
        return False
    write_viewer(record, target)
    return True
