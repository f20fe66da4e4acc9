"""A small, pure JSON-schema checker for tool arguments.

Covers what tool schemas use: ``type`` (object, array, string, integer, number, boolean),
``properties``, ``required``, ``additionalProperties: false``, ``items``, ``enum``,
``minimum`` / ``maximum`` and ``minLength``.  Returns the first problem as a sentence the
model can act on, naming the argument by its path (``items[2].status``).
"""

from __future__ import annotations

from typing import Any

_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "array": "an array",
    "object": "an object",
}


def validate_args(schema: dict, args: Any) -> str | None:
    """The first problem with ``args`` against ``schema``, or None."""
    return _check(schema, args, "")


def _is_type(value: Any, type_: str) -> bool:
    if type_ == "string":
        return isinstance(value, str)
    if type_ == "boolean":
        return isinstance(value, bool)
    if type_ == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if type_ == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if type_ == "array":
        return isinstance(value, list)
    if type_ == "object":
        return isinstance(value, dict)
    return True


def _check(schema: dict, value: Any, where: str) -> str | None:
    name = f"'{where}'" if where else "the arguments"
    type_ = schema.get("type")
    if type_ is not None and not _is_type(value, type_):
        return f"{name} must be {_TYPE_NAMES.get(type_, type_)}, got {_describe(value)}"
    if "enum" in schema and value not in schema["enum"]:
        options = ", ".join(repr(v) for v in schema["enum"])
        return f"{name} must be one of {options}, got {value!r}"
    if type_ in ("integer", "number"):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{name} must be at least {schema['minimum']}, got {value}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{name} must be at most {schema['maximum']}, got {value}"
    if type_ == "string" and len(value) < schema.get("minLength", 0):
        return f"{name} must not be empty" if schema["minLength"] == 1 else f"{name} is too short"
    if type_ == "array" and "items" in schema:
        for i, item in enumerate(value):
            err = _check(schema["items"], item, f"{where}[{i}]")
            if err:
                return err
    if type_ == "object":
        props: dict = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                return f"'{_join(where, key)}' is required"
        if schema.get("additionalProperties") is False:
            extra = [k for k in value if k not in props]
            if extra:
                allowed = ", ".join(props)
                return f"unexpected argument '{_join(where, extra[0])}' (allowed: {allowed})"
        for key, sub in props.items():
            if key in value and not (value[key] is None and key not in schema.get("required", [])):
                err = _check(sub, value[key], _join(where, key))
                if err:
                    return err
    return None


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    for type_ in ("boolean", "integer", "number", "string", "array", "object"):
        if _is_type(value, type_) and not (type_ == "integer" and isinstance(value, float)):
            return _TYPE_NAMES[type_]
    return type(value).__name__
