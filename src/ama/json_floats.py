"""Which values msgspec writes otherwise than Python's ``json``: the floats below 1e-4 or
from 1e16 up (``0.00001`` for ``1e-05``, ``1e16`` for ``1e+16``) and the non-finite ones
(``null`` for ``NaN``).  Strings, integers and the other floats come out the same, so a
writer that must give ``json``'s exact text (``sessions show --json``, RPC ``get_messages``)
encodes a value with msgspec unless :func:`holds_odd_float` says otherwise.  Which fields of
a struct may hold a float is read from its types once (a text field is never looked at)."""

from __future__ import annotations

import math
from typing import Any

import msgspec
import msgspec.inspect as mi


def _may_hold_float(t: mi.Type, seen: set[type]) -> bool:
    if isinstance(t, mi.FloatType | mi.AnyType):
        return True
    if isinstance(t, mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType):
        return _may_hold_float(t.item_type, seen)
    if isinstance(t, mi.TupleType):
        return any(_may_hold_float(x, seen) for x in t.item_types)
    if isinstance(t, mi.DictType):
        return _may_hold_float(t.key_type, seen) or _may_hold_float(t.value_type, seen)
    if isinstance(t, mi.UnionType):
        return any(_may_hold_float(x, seen) for x in t.types)
    if isinstance(t, mi.StructType | mi.DataclassType | mi.TypedDictType | mi.NamedTupleType):
        if t.cls in seen:
            return False  # asked already, further up
        seen.add(t.cls)
        return any(_may_hold_float(f.type, seen) for f in t.fields)
    # not known: the safe side; else strings, integers, booleans, None, bytes, times, enums...
    return isinstance(t, mi.CustomType | mi.ExtType | mi.RawType)


#: struct class -> the attributes whose values may hold a float
_FLOAT_FIELDS: dict[type, tuple[str, ...]] = {}


def _float_fields(cls: type) -> tuple[str, ...]:
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    fields = tuple(f.name for f in info.fields if _may_hold_float(f.type, {cls}))
    _FLOAT_FIELDS[cls] = fields
    return fields


def _odd_float(v: float) -> bool:
    return v != 0.0 and not 1e-4 <= abs(v) < 1e16 or not math.isfinite(v)


def holds_odd_float(o: Any) -> bool:
    """Whether ``o`` holds a float msgspec writes otherwise than ``json`` (or a value this
    check does not know)."""
    todo = [o]
    pop, push, more = todo.pop, todo.append, todo.extend
    fields_of = _FLOAT_FIELDS.get
    while todo:
        o = pop()
        t = o.__class__
        if t is str or t is int or t is bool or o is None:
            continue
        if t is float:
            if _odd_float(o):
                return True
        elif t is list or t is tuple:
            more(o)
        elif t is dict:
            more(o)  # the keys
            more(o.values())
        else:
            fields = fields_of(t)
            if fields is None:
                if not isinstance(o, msgspec.Struct):
                    if o is msgspec.UNSET:
                        continue
                    return True  # not known: the safe side
                fields = _float_fields(t)
            for f in fields:
                push(getattr(o, f))
    return False
