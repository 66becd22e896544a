"""The replay page of one match record: ``gin-referee view RECORD``.

One self-contained HTML file: the viewer's stylesheet and script inline, and the snapshots of
:func:`referee.view.replay_data.match_data` embedded as JSON. The script only draws them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from referee.view.page import asset, embed_json, page, write_page
from referee.view.replay_data import match_data

__all__ = ["render_viewer", "viewer_html", "write_viewer"]

_BODY = """<div id="app"><noscript>This replay needs JavaScript to draw the hands; the data
is in the page source (element gin-data).</noscript></div>"""


def viewer_html(data: dict[str, Any]) -> str:
    """The page for already built match data (see :func:`match_data`)."""
    names = data.get("names") or ["?", "?"]
    return page(
        title=f"{names[0]} vs {names[1]} - gin-referee",
        styles=[asset("viewer.css")],
        body=_BODY + "\n" + embed_json(data, "gin-data"),
        scripts=[asset("viewer.js")],
    )


def render_viewer(record: Path) -> str:
    """The replay page of a record; :class:`referee.match.record.RecordError` if it is bad."""
    return viewer_html(match_data(record))


def write_viewer(record: Path, out: Path) -> Path:
    """Write the replay page of ``record`` to ``out``; returns ``out``."""
    write_page(out, render_viewer(record))
    return out
