"""SessionSummary is written out by hand (the catalog's readers do not import
``dataclasses``): it must behave as the dataclass of its fields would."""

from __future__ import annotations

import dataclasses
import inspect

from ama.session.summary_data import SessionSummary

DEFAULTS = {"archived": False, "unreadable": None, "error_count": 0, "pending_interaction": None,
            "task_status": "completed"}  # fmt: skip

Reference = dataclasses.make_dataclass(
    "SessionSummary",
    [
        (f, object, dataclasses.field(default=DEFAULTS[f])) if f in DEFAULTS else (f, object)
        for f in SessionSummary.FIELDS
    ],
)


def _values(i: int) -> dict:
    return {
        f: (f"{f}-{i}" if j % 3 else j + i) for j, f in enumerate(SessionSummary.FIELDS) if f not in DEFAULTS
    }


def test_the_constructor_repr_equality_and_json_are_the_dataclasss() -> None:
    params = inspect.signature(SessionSummary).parameters
    ref_params = inspect.signature(Reference).parameters
    assert list(params) == list(ref_params) == list(SessionSummary.FIELDS)
    assert {k: p.default for k, p in params.items()} == {k: p.default for k, p in ref_params.items()}
    a, ref = SessionSummary(**_values(1)), Reference(**_values(1))
    assert repr(a) == repr(ref)
    assert vars(a) == vars(ref) and list(vars(a)) == list(vars(ref))  # what the index stores, in order
    assert a == SessionSummary(**_values(1)) and a != SessionSummary(**_values(2)) and a != ref
    b = SessionSummary(*_values(1).values(), True, "gone", 3, "question", "running")
    assert b.to_json() == {
        "".join(w if i == 0 else w.title() for i, w in enumerate(k.split("_"))): v
        for k, v in dataclasses.asdict(
            Reference(*_values(1).values(), True, "gone", 3, "question", "running")
        ).items()
    }
    assert b.problem == "unreadable: gone" and a.problem == "damaged header: header_error-1"
    try:
        hash(a)
    except TypeError:
        pass
    else:
        raise AssertionError("a mutable summary must not be hashable")
