"""Finished records compressed on disk, and reading a record whichever way it is stored.

A tournament writes each game's record as plain JSON Lines while the game is played (a line
per hand, flushed, so a killed referee loses at most the hand in progress), then, once the game
is over and before its result is stored, replaces it with a gzip file beside it
(:func:`compress_record`: ``gNNNNNN-aK.jsonl`` becomes ``gNNNNNN-aK.jsonl.gz``, 2.6x smaller
for a short game, 4x for a long one). The stored result names the file that is left. The gzip file
is written under a temporary name, flushed to disk and renamed before the plain file is
removed, so at every moment one complete copy exists; a crash in between leaves both, identical.

Every reader goes through :func:`record_lines`, which takes either form (by the gzip magic
number, not the name, so a pipe works too), reads a line at a time, refuses a line longer than
:data:`RECORD_LINE_MAX` and compressed data that would decompress past
:data:`RECORD_MAX_BYTES`: a hostile record passed to ``gin-referee replay`` cannot make the
referee hold more than one line of it.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "GZIP_SUFFIX",
    "RECORD_LINE_MAX",
    "RECORD_MAX_BYTES",
    "compress_record",
    "record_lines",
    "record_stem",
]

GZIP_SUFFIX = ".gz"
RECORD_MAX_BYTES = 256 << 20
"""The most a compressed record may hold once decompressed, 256 MiB: a tournament compresses
one-game records (~30 KB for a long game; ~1 MB for a game stopped at the 200-hand cap); a
record gzipped by hand is bounded the same way."""
RECORD_LINE_MAX = 16 << 20
"""The longest line a record may have, 16 MiB (a hand's line is a few KB): what a reader holds
at once, in either form."""
LEVEL = 1
"""gzip's fastest level. It runs on the loop between a game's end and its stored result, so
speed matters more than the last bytes: on a 500-point game's 168 KB record level 1 takes
1.5 ms for 4.3x, level 6 (gzip's default) 6.4 ms for 6.0x. A file system keeps a record in
whole 4 KiB blocks, which makes the difference smaller still (``bench_records``)."""
_MAGIC = b"\x1f\x8b"


def compress_record(path: Path) -> Path:
    """Replace the finished record ``path`` by ``path.gz`` and return the new path.

    The gzip file (level :data:`LEVEL`, no name or time in its header, so equal records give
    equal bytes) is written as ``path.gz.tmp`` (created anew: whatever had that name, a link
    included, is replaced, not written through), synced, renamed to ``path.gz``, and only then
    is ``path`` removed. An ``OSError`` (disk full, ...) propagates with ``path`` untouched.
    """
    import zlib  # here, not at the top: a match's start-up does not need it

    target = path.with_name(path.name + GZIP_SUFFIX)
    temporary = target.with_name(target.name + ".tmp")
    data = path.read_bytes()
    packer = zlib.compressobj(LEVEL, zlib.DEFLATED, 31)  # wbits 31: a gzip header, mtime 0
    packed = packer.compress(data) + packer.flush()
    try:
        temporary.unlink(missing_ok=True)  # a crash's leftover, or a planted link: never followed
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with open(fd, "wb") as out:
            out.write(packed)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        raise
    path.unlink()
    return target


def record_lines(
    path: Path, limit: int = RECORD_MAX_BYTES, line_limit: int = RECORD_LINE_MAX
) -> Iterator[bytes]:
    """Each line of the record at ``path`` (its newline kept), read as it is needed.

    Gzip data, recognised by its first two bytes (peeked, so a pipe works too), is
    decompressed as it is read, and refused past ``limit`` bytes in all. Either form is read a
    line at a time and a line longer than ``line_limit`` is refused, so what is held at once is
    one line, whatever the file holds. Raises ``OSError`` when the file cannot be read and
    ``ValueError`` naming the problem when compressed data is damaged or cut short, or a limit
    is passed.
    """
    with open(path, "rb") as raw:
        if raw.peek(2)[:2] != _MAGIC:
            yield from _lines(raw, None, line_limit)
            return
        import gzip  # (only for a compressed record)
        import zlib

        try:
            with gzip.GzipFile(fileobj=raw, mode="rb") as unpacked:
                yield from _lines(unpacked, limit, line_limit)
        except EOFError as err:
            raise ValueError("the gzip data is cut short (was the file copied whole?)") from err
        except (gzip.BadGzipFile, zlib.error) as err:
            raise ValueError(f"damaged gzip data ({err})") from err


def _lines(stream: io.BufferedIOBase, limit: int | None, line_limit: int) -> Iterator[bytes]:
    total = 0
    while line := stream.readline(line_limit + 1):
        if len(line) > line_limit:
            raise ValueError(f"a line longer than {line_limit} bytes; refused")
        total += len(line)
        if limit is not None and total > limit:
            raise ValueError(f"decompresses to more than {limit} bytes; refused")
        yield line


def record_stem(name: str) -> str:
    """A record file's name without ``.jsonl`` or ``.jsonl.gz``: ``g000003-a0``."""
    for suffix in (".jsonl" + GZIP_SUFFIX, ".jsonl"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return Path(name).stem
