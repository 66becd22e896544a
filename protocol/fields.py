"""The description of every message, read from :mod:`protocol.schema`'s annotations.

Each message (and each nested map: action, view, time control, fault) is a frozen dataclass
of :mod:`protocol.schema`, and its field annotations are the one description of it: the
Python type the SDK shows, plus, where the type alone does not say it, a :class:`Check` in
``Annotated[...]`` (a length, a range, a card, a seat). :func:`describe` turns a class into
its table of :class:`FieldSpec` rows; the strict parser (:mod:`protocol.parse`), the generic
encoder (:func:`to_wire`, what :func:`protocol.codec.encode` packs) and the referee's
hot-path request writer (its map headers and keys) are all derived from that table.

A field's presence on the wire follows its dataclass declaration:

- no default: *required*; if its type admits ``None`` the key is still always written and
  may hold nil (*nullable*);
- a default (``None``, ``False``, ``()``): *optional*, omitted when it holds its default;
  absent or nil decodes to the default.

Keys are written in declaration order, a message's ``type`` first.

>>> from protocol.schema import Bye, Error
>>> [(f.name, f.presence) for f in describe(Error).fields]
[('code', 'required'), ('message', 'required'), ('request_id', 'optional')]
>>> to_wire(Error("stale_request", "late", None)), to_wire(Bye())
({'type': 'error', 'code': 'stale_request', 'message': 'late'}, {'type': 'bye'})
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeAlias, Union, get_args, get_origin, get_type_hints

import msgpack

from protocol.checks import check_bool, check_int, check_list, check_str

__all__ = [
    "Check",
    "FieldSpec",
    "ListOf",
    "Presence",
    "Shape",
    "Struct",
    "StructSpec",
    "describe",
    "map_header",
    "to_wire",
]

Presence: TypeAlias = Literal["required", "nullable", "optional"]
"""How a field appears on the wire (see the module docstring)."""


class Check:
    """A scalar (or plain nested list) field checked by ``fn(value, path, *args)``.

    ``out`` converts the value to its wire form when it is not already msgpack-ready
    (the read-only ``rules`` mapping becomes a dict); most checks need none.
    """

    __slots__ = ("args", "fn", "out")

    def __init__(
        self, fn: Callable[..., Any], *args: Any, out: Callable[[Any], Any] | None = None
    ) -> None:
        self.fn = fn
        self.args = args
        self.out = out

    def __repr__(self) -> str:
        args = "".join(f", {getattr(a, '__name__', repr(a))}" for a in self.args)
        return f"Check({self.fn.__name__}{args})"


@dataclasses.dataclass(frozen=True, slots=True)
class Struct:
    """A nested map described by its own dataclass (an action, a view, an event...)."""

    cls: type[Any]


@dataclasses.dataclass(frozen=True, slots=True)
class ListOf:
    """An array of maps, each described by ``item``."""

    item: Struct


Shape: TypeAlias = Check | Struct | ListOf
"""What a field holds."""


@dataclasses.dataclass(frozen=True, slots=True)
class FieldSpec:
    """One row of a description: a wire key, what it holds and when it is present."""

    name: str
    shape: Shape
    presence: Presence
    default: Any
    """The value an optional field decodes to when absent or nil (None for the others)."""


@dataclasses.dataclass(frozen=True, slots=True)
class StructSpec:
    """The description of one message or nested map."""

    cls: type[Any]
    type: str | None
    """The wire ``type`` of a message (written first), None for a nested map."""
    fields: tuple[FieldSpec, ...]

    @property
    def always(self) -> tuple[str, ...]:
        """Names of the fields always written (required and nullable), in wire order."""
        return tuple(f.name for f in self.fields if f.presence != "optional")

    def keys(self) -> dict[str, bytes]:
        """The packed msgpack key of every field, ``type`` included for a message."""
        names = ("type",) if self.type is not None else ()
        return {name: _pack(name) for name in (*names, *(f.name for f in self.fields))}

    def header(self, optional_present: int = 0) -> bytes:
        """The packed map header when ``optional_present`` optional fields are written."""
        count = len(self.always) + optional_present + (self.type is not None)
        return map_header(count)

    def type_prefix(self) -> bytes:
        """The packed ``"type": "<type>"`` pair that opens a message map."""
        if self.type is None:
            raise TypeError(f"{self.cls.__name__} is not a message")
        return _pack("type") + _pack(self.type)


_pack = msgpack.Packer(use_bin_type=True).pack


def map_header(count: int) -> bytes:
    """The msgpack header of a map of ``count`` entries."""
    if count < 16:
        return bytes((0x80 | count,))
    return b"\xde" + count.to_bytes(2, "big")


def _split(tp: Any) -> tuple[Any, Check | None, bool]:
    """(base type, its Check if annotated, whether it admits None) of an annotation."""
    check = None
    if get_origin(tp) is Annotated:
        tp, *meta = get_args(tp)
        check = next((m for m in meta if isinstance(m, Check)), None)
    nullable = False
    if get_origin(tp) in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        nullable = len(args) < len(get_args(tp))
        if len(args) != 1:
            raise TypeError(f"a field may be one type or None, not {tp!r}")
        tp, inner, _ = _split(args[0])
        check = check or inner
    return tp, check, nullable


_PLAIN = {bool: Check(check_bool), int: Check(check_int), str: Check(check_str)}


def _shape(tp: Any, check: Check | None) -> Shape:
    if check is not None:
        return check
    if tp in _PLAIN:
        return _PLAIN[tp]
    if dataclasses.is_dataclass(tp):
        return Struct(tp)  # type: ignore[arg-type]
    args = get_args(tp)
    if get_origin(tp) is tuple and len(args) == 2 and args[1] is Ellipsis:
        item, item_check, _ = _split(args[0])
        shape = _shape(item, item_check)
        if isinstance(shape, Struct):
            return ListOf(shape)
        if shape is _PLAIN.get(item):
            return Check(check_list, shape.fn)
    raise TypeError(f"no wire shape for {tp!r}: annotate it with a Check")


_Encoder: TypeAlias = Callable[[Any], dict[str, Any]]
_DESCRIPTIONS: dict[type[Any], StructSpec] = {}
_ENCODERS: dict[type[Any], _Encoder] = {}


def describe(cls: type[Any]) -> StructSpec:
    """The description of a message or nested-map class of :mod:`protocol.schema`."""
    spec = _DESCRIPTIONS.get(cls)
    if spec is None:
        spec = _DESCRIPTIONS[cls] = _read(cls)
    return spec


def _read(cls: type[Any]) -> StructSpec:
    hints = get_type_hints(cls, include_extras=True)
    rows = []
    for f in dataclasses.fields(cls):
        tp, check, admits_none = _split(hints[f.name])
        has_default = f.default is not dataclasses.MISSING
        presence: Presence = (
            "optional" if has_default else "nullable" if admits_none else "required"
        )
        default = f.default if has_default else None
        rows.append(FieldSpec(f.name, _shape(tp, check), presence, default))
    return StructSpec(cls, getattr(cls, "TYPE", None), tuple(rows))


# ------------------------------------------------------------------------ encoding


def _value_out(shape: Shape) -> Callable[[Any], Any] | None:
    """How a field's value becomes its wire form (None: as it is)."""
    if isinstance(shape, Check):
        return shape.out
    if isinstance(shape, Struct):
        return _encoder(shape.cls)
    item = _encoder(shape.item.cls)
    return lambda values: [item(v) for v in values]


def _encoder(cls: type[Any]) -> _Encoder:
    encoder = _ENCODERS.get(cls)
    if encoder is None:
        encoder = _ENCODERS[cls] = _generate(cls)
    return encoder


def _generate(cls: type[Any]) -> _Encoder:
    """The function writing the map of ``cls``, generated from its description the way
    :mod:`dataclasses` writes ``__init__``: straight-line code, as fast as a hand-written one
    (``encode`` runs for every event the referee sends). The fields before the first optional
    one go in a dict display; each optional one is added when it differs from its default."""
    spec = describe(cls)
    env: dict[str, Any] = {}
    display = [] if spec.type is None else [f"'type': {spec.type!r}"]
    tail: list[str] = []
    for i, f in enumerate(spec.fields):
        value = attr = f"m.{f.name}"
        out = _value_out(f.shape)
        if out is not None:
            env[f"out{i}"] = out
            value = f"out{i}({attr})"
            if f.presence != "required":
                value = f"(None if {attr} is None else {value})"
        if f.presence != "optional" and not tail:
            display.append(f"{f.name!r}: {value}")
        elif f.presence != "optional":
            tail.append(f"    d[{f.name!r}] = {value}")
        else:
            env[f"default{i}"] = f.default
            tail.append(f"    if not ({attr} is default{i} or {attr} == default{i}):")
            tail.append(f"        d[{f.name!r}] = {value}")
    source = "\n".join(
        ["def encode_map(m):", f"    d = {{{', '.join(display)}}}", *tail, "    return d"]
    )
    exec(source, env)  # the source is built above from the description alone
    encode_map: _Encoder = env["encode_map"]
    return encode_map


def to_wire(obj: Any) -> dict[str, Any]:
    """The plain msgpack-ready map of a message or nested map (what ``encode`` packs).

    Raises ``TypeError`` for anything else.
    """
    cls = type(obj)
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"not a protocol message: {cls.__name__}")
    return _encoder(cls)(obj)
