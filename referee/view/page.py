"""Self-contained HTML pages: the package's static assets inlined, data embedded as JSON.

Nothing a page needs is fetched: styles and scripts are inline, and the data sits in a
``<script type="application/json">`` element with ``<``, ``>`` and ``&`` escaped, so text from
a record (a bot's name, a fault's detail) can never close the element or become markup.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

from referee.net.private import private_dir

__all__ = ["asset", "embed_json", "page", "write_page"]


def asset(name: str) -> str:
    """The text of ``referee/view/static/NAME`` (installed as package data)."""
    return resources.files("referee.view").joinpath("static", name).read_text(encoding="utf-8")


def embed_json(data: Any, element_id: str) -> str:
    """A JSON data element that is safe inside HTML whatever the strings hold."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    return f'<script type="application/json" id="{escape(element_id)}">{text}</script>'


def page(*, title: str, styles: Sequence[str], body: str, scripts: Sequence[str] = ()) -> str:
    """A complete HTML document; ``styles`` and ``scripts`` are inlined, in order."""
    css = "\n".join(styles)
    js = "".join(f"<script>{script}</script>\n" for script in scripts)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="gin-referee">\n'
        f"<title>{escape(title)}</title>\n<style>\n{css}\n</style>\n</head>\n"
        f"<body>\n{body}\n{js}</body>\n</html>\n"
    )


def write_page(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a reader never sees half a page)."""
    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
