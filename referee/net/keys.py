"""CURVE keys: the referee's long-term key pair, bots' key pairs, and who may connect.

Key files use the ZeroMQ certificate format (czmq's ``zcert``, read by pyzmq's
``zmq.auth.load_certificate``): ``NAME.key`` holds the Z85 public key and may be shared;
``NAME.key_secret`` holds both keys and must stay private (mode 0600, in a directory of mode
0700). A secret file that others can read, or that is not a valid certificate, is refused
with an error naming the file.

The referee's pair lives in :func:`default_key_dir` (``$GIN_REFEREE_HOME``, else
``$XDG_CONFIG_HOME/gin-referee``, else ``~/.config/gin-referee``) as ``referee.key`` and
``referee.key_secret``, created on first use (:func:`referee_keys`).

:class:`KeyRing` is the transport's authorizer: the public keys allowed to connect, each with
the bot it belongs to; refusals are counted and logged at a bounded rate.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import struct
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "KeyFileError",
    "KeyPair",
    "KeyRing",
    "decode_key",
    "default_key_dir",
    "encode_key",
    "load_keypair",
    "read_public_key",
    "referee_keys",
    "secret_dirs",
    "write_keypair",
]

LOGGER = logging.getLogger(__name__)

HOME_ENV = "GIN_REFEREE_HOME"
REFEREE_CERT = "referee"
_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
"""The Z85 alphabet (ZeroMQ RFC 32), by value."""
_Z85_CHARS = re.escape(_Z85)
_LINE = re.compile(r'^\s*(public-key|secret-key)\s*=\s*"([^"]*)"\s*$')
_KEY = re.compile(f"^[{_Z85_CHARS}]{{40}}$")
_KEY_CHAR = re.compile(f"[{_Z85_CHARS}]")


class KeyFileError(ValueError):
    """A key or key file is unusable; the message names the file (or the value) and why."""


@dataclass(frozen=True, slots=True)
class KeyPair:
    """A CURVE key pair (raw 32-byte keys)."""

    public: bytes
    secret: bytes = field(repr=False)

    @staticmethod
    def generate() -> KeyPair:
        """A fresh random pair."""
        from nacl.bindings import crypto_box_keypair  # libsodium: only once a key is needed

        public, secret = crypto_box_keypair()
        return KeyPair(public, secret)

    @property
    def public_z85(self) -> str:
        """The public key as the 40 Z85 characters ZeroMQ options and configs use."""
        return encode_key(self.public)

    @property
    def secret_z85(self) -> str:
        """The secret key in Z85 (for a bot's environment; never log it)."""
        return encode_key(self.secret)


_Z85_VALUE = {char: value for value, char in enumerate(_Z85)}


def encode_key(key: bytes) -> str:
    """A raw key (32 bytes, any multiple of 4) in Z85, the ZeroMQ RFC 32 encoding (without
    importing pyzmq: the referee itself does not need libzmq).

    >>> encode_key(bytes.fromhex("864FD26FB559F75B"))
    'HelloWorld'
    """
    if len(key) % 4:
        raise ValueError(f"Z85 encodes a multiple of 4 bytes, not {len(key)}")
    out: list[str] = []
    for (word,) in struct.iter_unpack(">I", key):
        rest, chunk = word, list[str]()
        for _ in range(5):
            rest, digit = divmod(rest, 85)
            chunk.append(_Z85[digit])
        out.extend(reversed(chunk))
    return "".join(out)


def _z85_decode(text: str) -> bytes:
    """Z85 text (a multiple of 5 characters from the Z85 alphabet) as bytes; ValueError for a
    group above 2**32 - 1."""
    words = []
    for start in range(0, len(text), 5):
        word = 0
        for char in text[start : start + 5]:
            word = word * 85 + _Z85_VALUE[char]
        if word >= 1 << 32:
            raise ValueError(f"Z85 group {text[start : start + 5]!r} is above 2**32")
        words.append(word)
    return struct.pack(f">{len(words)}I", *words)


def decode_key(text: str, what: str = "public key") -> bytes:
    """A Z85 key (40 characters) as raw bytes; :class:`KeyFileError` names ``what`` (if not
    empty) and the problem."""
    text = text.strip()
    prefix = f"{what}: " if what else ""
    if len(text) != 40:
        raise KeyFileError(
            f"{prefix}expected 40 Z85 characters (as `gin-referee keygen` prints), "
            f"got {len(text)} character(s) {text[:48]!r}"
        )
    if not _KEY.match(text):
        bad = next(c for c in text if not _KEY_CHAR.match(c))
        raise KeyFileError(f"{prefix}{bad!r} is not a Z85 character (in {text!r})")
    try:
        return _z85_decode(text)
    except ValueError:  # a 5-character group above 2**32
        raise KeyFileError(f"{prefix}{text!r} is not a valid Z85 key") from None


def default_key_dir() -> Path:
    """Where the referee keeps its key pair unless told (see the module docstring)."""
    home = os.environ.get(HOME_ENV)
    if home:
        return Path(home)
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "gin-referee"


def _read_cert(path: Path) -> dict[str, str]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise KeyFileError(f"{path}: no such key file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise KeyFileError(f"{path}: cannot read the key file: {err}") from None
    found: dict[str, str] = {}
    for line in text.splitlines():
        match = _LINE.match(line)
        if match:
            found[match.group(1)] = match.group(2)
    return found


def read_public_key(path: Path) -> bytes:
    """The public key of a certificate file (``NAME.key`` or ``NAME.key_secret``)."""
    found = _read_cert(path)
    if "public-key" not in found:
        raise KeyFileError(f"{path}: not a ZeroMQ certificate (no public-key line)")
    return decode_key(found["public-key"], f"{path}: public-key")


def load_keypair(path: Path) -> KeyPair:
    """The pair in a secret certificate file, checked: private to its owner, both keys valid
    and matching. :class:`KeyFileError` names the file and the problem."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise KeyFileError(f"{path}: no such key file") from None
    except OSError as err:
        raise KeyFileError(f"{path}: cannot read the key file: {err}") from None
    if info.st_mode & 0o077:
        raise KeyFileError(
            f"{path}: the secret key file is accessible by others "
            f"(mode {stat.S_IMODE(info.st_mode):04o}); run: chmod 600 {path}"
        )
    found = _read_cert(path)
    if "secret-key" not in found:
        raise KeyFileError(f"{path}: not a secret certificate (no secret-key line)")
    public = read_public_key(path)
    secret = decode_key(found["secret-key"], f"{path}: secret-key")
    from nacl.bindings import crypto_scalarmult_base

    if crypto_scalarmult_base(secret) != public:
        raise KeyFileError(f"{path}: the secret key does not belong to the public key")
    return KeyPair(public, secret)


def _cert_text(pair: KeyPair, *, secret: bool) -> str:
    kind = "Secret" if secret else "Public"
    lines = [
        f"#   ****  Generated on {time.strftime('%Y-%m-%d %H:%M:%S')} by gin-referee  ****",
        f"#   ZeroMQ CURVE **{kind}** Certificate",
        "#   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions."
        if secret
        else "#   Exchange securely, or use a secure mechanism to verify the contents",
        "",
        "metadata",
        "curve",
        f'    public-key = "{pair.public_z85}"',
    ]
    if secret:
        lines.append(f'    secret-key = "{pair.secret_z85}"')
    return "\n".join(lines) + "\n"


def _write_new(path: Path, text: str, mode: int) -> None:
    """Write ``path`` atomically; FileExistsError if it already exists."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.link(tmp, path)  # fails if another process created it meanwhile
    finally:
        os.unlink(tmp)


def write_keypair(directory: Path, name: str, pair: KeyPair | None = None) -> KeyPair:
    """Write ``NAME.key`` and ``NAME.key_secret`` (mode 0600) in ``directory`` (created with
    mode 0700); refuses to overwrite an existing secret file."""
    pair = pair or KeyPair.generate()
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        _write_new(directory / f"{name}.key_secret", _cert_text(pair, secret=True), 0o600)
    except FileExistsError:
        raise KeyFileError(f"{directory / (name + '.key_secret')}: already exists") from None
    except OSError as err:
        raise KeyFileError(
            f"{directory}: cannot write the key files: {err.strerror or err}"
        ) from None
    public = directory / f"{name}.key"
    try:
        public.unlink(missing_ok=True)
        _write_new(public, _cert_text(pair, secret=False), 0o644)
    except OSError as err:
        raise KeyFileError(f"{public}: cannot write the public key file: {err}") from None
    return pair


_USED_DIRS: set[str] = set()


def secret_dirs() -> list[str]:
    """Directories that hold the referee's secret key: every one it loaded a pair from, and
    the default one if it exists. The sandbox hides them from bots (their whole filesystem is
    otherwise readable, and the secret file is the referee's own uid's)."""
    found = set(_USED_DIRS)
    default = default_key_dir()
    if default.is_dir():
        found.add(str(default.resolve()))
    return sorted(found)


def referee_keys(directory: Path | None = None) -> KeyPair:
    """The referee's long-term pair from ``directory`` (default :func:`default_key_dir`),
    created there on first use."""
    directory = directory or default_key_dir()
    _USED_DIRS.add(str(directory.resolve()))
    path = directory / f"{REFEREE_CERT}.key_secret"
    if not path.exists():
        try:
            pair = write_keypair(directory, REFEREE_CERT)
        except KeyFileError:
            if not path.exists():
                raise
        else:
            LOGGER.info("created the referee's key pair in %s", directory)
            return pair
    return load_keypair(path)


class KeyRing:
    """The public keys allowed to connect over CURVE (a transport's ``authorize``).

    Calling it with a client's key returns None for a listed key, else the refusal. Refusals
    are counted (:attr:`refused`) and logged at WARNING for the 1st, 2nd, 4th, 8th... one, so
    a client trying keys in a loop cannot flood the log.
    """

    def __init__(self) -> None:
        self._names: dict[bytes, str] = {}
        self.refused = 0

    def add(self, key: bytes, name: str) -> None:
        """Allow ``key`` (the bot ``name``'s)."""
        self._names[key] = name

    def discard(self, key: bytes) -> None:
        """Stop allowing ``key``."""
        self._names.pop(key, None)

    def name(self, key: bytes) -> str | None:
        """Whose key this is (None: not listed)."""
        return self._names.get(key)

    def __len__(self) -> int:
        return len(self._names)

    def __call__(self, key: bytes) -> str | None:
        if key in self._names:
            return None
        self.refused += 1
        if self.refused & (self.refused - 1) == 0:
            LOGGER.warning(
                "refused a CURVE handshake with an unknown key %s (%d refused so far)",
                encode_key(key),
                self.refused,
            )
        return "unknown key"
