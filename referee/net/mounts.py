"""What a bot sees of the host's filesystem in the ``namespaces`` sandbox: an allowlist.

The sandbox's root is an empty tmpfs; :func:`filesystem_args` gives the bubblewrap options that
fill it, read-only, with only:

* the system's program and library trees (:data:`SYSTEM_TREES`: ``/usr`` and the ``/bin``,
  ``/lib``... beside it, as the host has them: a symlink stays a symlink);
* a minimal ``/etc`` (:data:`ETC_ALLOWLIST`: what the dynamic linker, a locale, the time zone
  and a lookup of ``localhost`` read; :data:`ETC_PATTERNS`: a Java runtime's configuration);
  no ``passwd`` or ``group`` (the bot's uid has no name);
* what the bot's command needs (:func:`command_paths`): its working directory, the directory
  of its program (found on its ``PATH`` when named without one) and of every file its
  arguments name (also as ``--option=FILE`` or in a ``:`` list), with what the symlinks in
  them lead to (:mod:`referee.net.links`), the interpreter of a ``#!`` script, a Python
  virtual environment any of them lies in and the installation its interpreter comes from,
  the directory of this installation's Python SDK (:mod:`protocol`), and what the symlinks
  of a visible ``PATH`` directory lead to (a script's ``exec python3``);
* for a command word with ``..``: each directory the kernel walks before a ``..``, made empty
  (the word is started as given);
* what the operator names (``--expose PATH``, a bot's ``expose`` list);
* the directory of the bot's own files when it has one (a version's snapshot,
  ``BotCommand.own_dir``), bound last, so even inside the referee's hidden output; nothing in
  it makes another host path visible (:func:`command_paths`);
* a private ``/tmp`` (a tmpfs of ``tmp_size``, also ``HOME`` and ``TMPDIR``), its own
  ``/proc``, and a ``/dev`` of ``null``, ``zero``, ``full``, ``random``, ``urandom`` and the
  ``fd``/``stdin``/``stdout``/``stderr`` links, itself read-only; ``/dev/shm`` is a link to
  ``/tmp``, so what a bot puts there counts against ``tmp_size``.

So no host unix socket (``/run``, ``/var``, ``/tmp``), no home directory, no other entrant's
directory and no ``/sys`` is there unless one of the paths above contains it. A directory that
leads to a visible path is made by bubblewrap (mode 0755) rather than bound, so a bot's files
under a 0700 home are reachable (when the referee is root, bubblewrap runs as root and makes
the mounts; the bot then reads through its own uid's permissions on the files themselves).

Limits: the paths are bound whole: a bot whose working directory is a parent of other
entrants' directories sees them (give each bot a directory of its own); what a bot loads at
run time from a path not named in its command (a plugin directory, a model file) needs
``--expose``.

Without namespaces (``rlimits``) there are no mounts: a root referee's bot walks the host's own
paths as a stranger, and :func:`check_reachable` says, before it starts, which directory on
the way would refuse it.
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import os
import shutil
import stat
from collections.abc import Iterable, Sequence

from referee.net import links

__all__ = [
    "ETC_ALLOWLIST",
    "ETC_PATTERNS",
    "SYSTEM_TREES",
    "UnreachableError",
    "check_reachable",
    "command_paths",
    "filesystem_args",
    "visible_paths",
]

SYSTEM_TREES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""The host's read-only program and library trees, bound where they exist."""

ETC_ALLOWLIST = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/locale.alias",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/hosts",
    "/etc/gai.conf",
    "/etc/alternatives",
    "/etc/ssl/openssl.cnf",
)
"""The files of ``/etc`` a bot sees (each only where the host has it)."""

ETC_PATTERNS = ("/etc/java-*", "/etc/java")
"""Directories of ``/etc`` a bot sees too, where the host has them: a Java runtime's
configuration (Debian's OpenJDK links its ``conf/security/java.security`` there)."""

DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
"""The device nodes a bot gets."""


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _venv_root(path: str) -> str | None:
    """The Python virtual environment that holds ``path`` (the nearest directory above it with
    a ``pyvenv.cfg``), else None."""
    here = path if os.path.isdir(path) else os.path.dirname(path)
    while here not in ("/", ""):
        if os.path.isfile(os.path.join(here, "pyvenv.cfg")):
            return here
        here = os.path.dirname(here)
    return None


def _prefix(program: str) -> str:
    """Where an executable's installation lies: the parent of its ``bin`` directory (a Python
    or Node installation keeps its library beside it), else its own directory. Symlinks are
    followed first (a venv's ``python`` links to the installation's)."""
    real = os.path.realpath(program)
    here = os.path.dirname(real)
    return os.path.dirname(here) if os.path.basename(here) == "bin" else here


def _shebang(path: str, search_path: str | None) -> str | None:
    """The interpreter a ``#!`` script names (``env NAME`` looked up on ``search_path``)."""
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode(errors="replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env" and len(words) > 1:
        found = shutil.which(words[1], path=search_path)
        return os.path.abspath(found) if found else None
    return words[0]


def _named(word: str) -> list[str]:
    """The paths an argument may name: itself, the value of an ``--option=VALUE``, each entry
    of a ``:``-separated list (a Java class path, a ``*`` entry standing for its directory).

    >>> _named("-cp=bot.jar:lib/*")
    ['-cp=bot.jar:lib/*', 'bot.jar:lib/*', 'bot.jar', 'lib']
    """
    value = word.partition("=")[2]
    parts = [p.removesuffix("*").rstrip("/") or "/" for p in (value or word).split(os.pathsep)]
    named = [word, *([value] if value else [])]
    return [*named, *(p for p in parts if ":" in (value or word) and p not in named)]


def _sdk_root() -> str | None:
    """The directory holding this installation's :mod:`protocol` package (found, not
    imported: start-up)."""
    found = importlib.util.find_spec("protocol")
    origin = None if found is None else found.origin
    return os.path.dirname(os.path.dirname(os.path.abspath(origin))) if origin else None


def command_paths(
    argv: Sequence[str], cwd: str, search_path: str | None = None, own: str | None = None
) -> list[str]:
    """The host paths a bot's command needs, as described in the module docstring (existing
    paths only, in the order found, without repeats). With ``own`` (the directory of the bot's
    own files, a version's snapshot), nothing inside it makes another host path visible: its
    links, the installation a program of it links to and the ``#!`` interpreter it names
    (but for ``env NAME``, found on the operator's ``PATH``) are not followed.

    >>> command_paths(["/no/such/bot"], "/") == command_paths([], "/")
    True
    """
    found: list[str] = []

    def add(path: str | None) -> None:
        ours = own is not None and path is not None and _under(os.path.realpath(path), (own,))
        if path and path != "/" and os.path.exists(path) and path not in found and not ours:
            found.append(path)

    def theirs(path: str) -> bool:  # a file of the bot's own: it opens nothing else
        return own is not None and _under(os.path.normpath(path), (own,))

    program = argv[0] if argv else ""
    if program and os.sep not in program:
        program = shutil.which(program, path=search_path) or program
    files: list[str] = []
    for word in (program, *(part for arg in argv[1:] for part in _named(arg))):
        path = os.path.normpath(os.path.join(cwd, word)) if word else ""
        if word and os.path.exists(path):
            files.append(path)
    interpreter = _shebang(files[0], search_path) if files and program else None
    if theirs(files[0] if files else "/") and not _found_on(interpreter, search_path):
        interpreter = None  # a script of the bot's own names an interpreter: not shown for it
    if interpreter and os.path.exists(interpreter):
        files.append(interpreter)
    add(cwd)
    dirs = [cwd]  # the bot's directories: their symlinks are followed
    for path in files:
        venv = _venv_root(path)
        add(venv or (path if os.path.isdir(path) else os.path.dirname(path)))
        dirs.append(path if os.path.isdir(path) else os.path.dirname(path))
        if os.path.isfile(path) and os.access(path, os.X_OK) and not theirs(path):
            add(_prefix(path))
            for hop in links.resolve_link(path, os.path.dirname(path)):  # a chain of links
                add(hop)
    add(_sdk_root())
    for word in argv:  # as given, the kernel walks each directory before a ``..``
        if ".." in word.split(os.sep):
            add(os.path.join(cwd, word))
    for directory in dirs:
        if not _under(directory, SYSTEM_TREES) and not theirs(directory):
            for target in links.link_targets(directory):
                add(target)
    for directory in (search_path or "").split(os.pathsep):  # what a script finds on PATH
        if os.path.isabs(directory) and _under(directory, found) and not _under(directory, dirs):
            for target in links.link_targets(directory, recursive=False):
                add(target)
    return found


def _found_on(interpreter: str | None, search_path: str | None) -> bool:
    """Whether ``interpreter`` is what ``env NAME`` finds on ``search_path`` (the operator's
    programs, not a path a bot's script names)."""
    if interpreter is None:
        return False
    found = shutil.which(os.path.basename(interpreter), path=search_path)
    return found is not None and os.path.abspath(found) == interpreter


def visible_paths(paths: Iterable[str]) -> list[str]:
    """``paths`` without those the system trees or ``/etc`` already show and those inside
    another of them (a bind would only repeat it), sorted."""
    kept: list[str] = []
    for path in sorted({os.path.normpath(p) for p in paths}):
        if path in ("/", "/tmp") or _under(path, (*SYSTEM_TREES, "/etc", "/proc", "/dev", "/sys")):
            continue  # the sandbox's own, never the host's
        if _under(path, kept):
            continue
        kept.append(path)
    return kept


def _parents(paths: Iterable[str]) -> list[str]:
    """Every directory above ``paths`` (not ``/``), parents first, once."""
    made: list[str] = []
    for path in paths:
        chain = []
        here = os.path.dirname(path)
        while here not in ("/", ""):
            chain.append(here)
            here = os.path.dirname(here)
        made += [p for p in reversed(chain) if p not in made]
    return made


def _waypoints(paths: Iterable[str]) -> list[str]:
    """The directories a path with ``..`` passes through before each ``..`` (normalised): the
    kernel walks them, so they must exist in the sandbox, if only as empty directories.

    >>> _waypoints(["/srv/bots/y/../x/run.sh", "/srv/bots/x"])
    ['/srv/bots/y']
    """
    ways: list[str] = []
    for path in paths:
        parts = path.split(os.sep)
        for i, part in enumerate(parts):
            here = os.path.normpath(os.sep.join(parts[:i]) or os.sep)
            if part == ".." and here != os.sep and here not in ways:
                ways.append(here)
    return ways


def filesystem_args(
    paths: Sequence[str],
    *,
    tmp_size: int,
    hide: Sequence[str] = (),
    sockets: Sequence[str] = (),
    own: str | None = None,
) -> list[str]:
    """bubblewrap options for the whole filesystem a bot sees: the system trees, ``/etc``'s
    allowlist, ``paths`` (host paths, bound read-only where they are), ``sockets`` (unix socket
    files bound alone), a private ``/tmp``, ``/proc`` and a minimal read-only ``/dev``; then
    an empty tmpfs over each directory of ``hide`` that lies inside a visible path; last, the
    directory ``own`` (the bot's own files), read-only, even inside a hidden one."""
    args: list[str] = []
    for tree in SYSTEM_TREES:
        if os.path.islink(tree):
            args += ["--symlink", os.readlink(tree), tree]
        elif os.path.isdir(tree):
            args += ["--ro-bind", tree, tree]
    etc = [path for path in ETC_ALLOWLIST if os.path.lexists(path)]
    etc += sorted(p for pattern in ETC_PATTERNS for p in glob.glob(pattern) if os.path.isdir(p))
    hidden_dirs = [os.path.abspath(path) for path in hide]
    mine = [] if own is None else [os.path.abspath(own)]
    shown = [p for p in visible_paths(paths) if not _under(p, (*hidden_dirs, *mine))]
    ways = [p for p in _waypoints(paths) if not _under(p, (*SYSTEM_TREES, "/etc", *shown))]
    args += ["--size", str(tmp_size), "--perms", "1777", "--tmpfs", "/tmp"]
    # bubblewrap would make the directories above a mount point 0700 (as root: root's)
    for parent in _parents([*etc, *shown, *sockets, *(os.path.join(w, ".") for w in ways)]):
        if parent != "/tmp":
            args += ["--perms", "0755", "--dir", parent]
    for path in etc:
        args += ["--ro-bind-try", path, path]
    for path in shown:
        args += ["--ro-bind", path, path]
    for path in sockets:  # gone if the referee has just closed it: the bot then cannot connect
        args += ["--ro-bind-try", path, path]
    args += ["--proc", "/proc", "--size", "65536", "--perms", "0755", "--tmpfs", "/dev"]
    for device in DEVICES:
        args += ["--dev-bind", device, device]
    for i, name in enumerate(("stdin", "stdout", "stderr")):
        args += ["--symlink", f"/proc/self/fd/{i}", f"/dev/{name}"]
    args += ["--symlink", "/proc/self/fd", "/dev/fd", "--symlink", "/tmp", "/dev/shm"]
    args += ["--remount-ro", "/dev"]
    for hidden in hidden_dirs:
        if os.path.isdir(hidden) and _under(hidden, shown):
            args += ["--tmpfs", hidden]
    for path in mine:  # its parents are made (inside a hidden directory: on its tmpfs)
        for parent in _parents([path]):
            args += ["--perms", "0755", "--dir", parent]
        args += ["--ro-bind", path, path]
    return args


class UnreachableError(Exception):
    """A bot's own files cannot be reached by the uid it would run as (``rlimits`` level)."""


def check_reachable(
    argv: Sequence[str],
    cwd: str | None,
    search_path: str | None,
    uid: int,
    granted: Iterable[str] = (),
) -> None:
    """Raise :class:`UnreachableError` naming the first directory that keeps ``uid`` (an
    unprivileged stranger: only the "other" permission bits count, and the ``granted``
    directories its seat was let into) from the bot's working directory, its program or the
    installation the program runs from. Without namespaces the bot sees the host's paths as
    they are."""
    let_in = set(granted)
    workdir = os.path.abspath(cwd or os.getcwd())
    program = argv[0]
    if os.sep not in program:
        program = shutil.which(program, path=search_path) or program
    targets = [(workdir, True)]
    if os.path.exists(os.path.join(workdir, program)):
        path = os.path.join(workdir, program)
        targets += [(path, False), (os.path.realpath(path), False)]
    for target, itself in targets:
        parts = target.strip("/").split("/")
        here = "/"
        for part in parts if itself else parts[:-1]:
            here = os.path.join(here, part)
            with contextlib.suppress(OSError):
                mode = os.stat(here).st_mode
                if not mode & stat.S_IXOTH and here not in let_in:
                    raise UnreachableError(
                        f"at sandbox level rlimits the bot runs as uid {uid}, which cannot reach "
                        f"{target} ({here} is mode {stat.S_IMODE(mode):o}): use the namespaces "
                        "level, or keep the bot's files where other users may read them"
                    )
