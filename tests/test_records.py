"""``core.records.record``: made on first use, and then the same class ``dataclass`` makes."""

from __future__ import annotations

import dataclasses
import pickle
import re
import sys
import threading
import types
from functools import partial
from typing import Any

import pytest

from quiztui.core import records

# Each body is declared twice, once with @dataclass(ARGS) and once with @record(ARGS); ``make``
# builds an instance from each; the two must agree on everything a caller can see.
CASES: list[tuple[str, str, str]] = [
    ("plain", "", "a: int\nb: str = 'x'\nc: list[int] = field(default_factory=list)"),
    ("frozen", "frozen=True", "a: int\nb: tuple[int, ...] = ()"),
    ("frozen_kw_only", "frozen=True, kw_only=True", "a: int\nb: str | None = None"),
    ("no_eq", "eq=False", "a: int = 1"),
    ("order", "order=True", "a: int = 1\nb: str = ''"),
    ("unsafe_hash", "unsafe_hash=True", "a: int = 1"),
    ("no_match_args", "match_args=False", "a: int = 1"),
    ("no_repr", "repr=False, frozen=True", "a: int = 1"),
    (
        "init_false_field",
        "",
        "a: int\nb: int = field(init=False, default=7)\nc: int = field(default=3, repr=False)",
    ),
    (
        "post_init",
        "frozen=True",
        "a: list[int]\ndef __post_init__(self):\n    object.__setattr__(self, 'a', tuple(self.a))",
    ),
    ("classvar", "", "n: ClassVar[int] = 4\na: int = 0"),
    (
        "initvar",
        "",
        "a: int = 0\nb: InitVar[int] = 0\ndef __post_init__(self, b):\n    self.a += b",
    ),
    ("method", "frozen=True", "a: int = 2\ndef twice(self):\n    return 2 * self.a"),
    ("docless", "frozen=True", "a: int = 2"),
    # what the eq, hash and repr a record is given read (core/records._CLOSURES)
    ("no_fields", "frozen=True", "n: ClassVar[int] = 1"),
    ("one_field", "frozen=True", "a: float = 0.5"),
    (
        "compare_and_hash",
        "frozen=True",
        "a: int = 1\nb: list[int] = field(default_factory=list, compare=False)\n"
        "c: str = field(default='c', hash=False)\nd: int = field(default=4, repr=False)",
    ),
    ("unsafe_hash_plain", "unsafe_hash=True", "a: int = 1\nb: str = field(default='', hash=False)"),
]
HEADER = (
    "from __future__ import annotations\n"
    "from dataclasses import dataclass, field, InitVar\n"
    "from typing import ClassVar\n"
    "from quiztui.core.records import record\n"
)
ARGS: dict[str, tuple[Any, ...]] = {
    "plain": (1,),
    "init_false_field": (1,),
    "frozen": (1, (2, 3)),
    "frozen_kw_only": (),
    "post_init": ([1, 2],),
    "initvar": (1, 5),
}
KWARGS: dict[str, dict[str, Any]] = {"frozen_kw_only": {"a": 3}}


def _declare(kind: str, case: str) -> type:
    name, args, body = next(c for c in CASES if c[0] == case)
    decorator = "dataclass" if kind == "dataclass" else "record"
    doc = "" if case == "docless" else '    """A test class."""\n'
    source = HEADER + f"@{decorator}({args})\nclass C:\n" + doc
    source += "".join(f"    {line}\n" for line in body.splitlines())
    module = types.ModuleType(f"records_case_{kind}_{case}")
    sys.modules[module.__name__] = module
    exec(compile(source, module.__name__, "exec"), module.__dict__)
    return module.__dict__["C"]  # type: ignore[no-any-return]


def _plain(text: str) -> str:
    """A repr or message without the module's name (one per declaration) or an address."""
    return re.sub(r" at 0x[0-9a-f]+", "", re.sub(r"records_case_\w+?_(?=\w+\.C)", "", text))


def _outcome(call: Any) -> tuple[str, str]:
    try:
        return "ok", _plain(repr(call()))
    except Exception as exc:  # compared between the two classes, type and message
        return type(exc).__name__, _plain(str(exc))


@pytest.mark.parametrize("case", [c[0] for c in CASES])
def test_a_record_is_the_class_dataclass_makes(case: str) -> None:
    eager, lazy = _declare("dataclass", case), _declare("record", case)
    assert lazy in records.pending()  # nothing made at declaration
    args, kwargs = ARGS.get(case, ()), KWARGS.get(case, {})
    a, b = eager(*args, **kwargs), lazy(*args, **kwargs)
    assert lazy not in records.pending()
    assert _plain(repr(a)) == _plain(repr(b))
    assert [(f.name, f.default, f.init, f.repr, f.compare) for f in dataclasses.fields(a)] == [
        (f.name, f.default, f.init, f.repr, f.compare) for f in dataclasses.fields(b)
    ]
    assert repr(eager.__dataclass_params__) == repr(lazy.__dataclass_params__)
    assert getattr(eager, "__match_args__", None) == getattr(lazy, "__match_args__", None)
    assert eager.__doc__ == lazy.__doc__
    assert (a == eager(*args, **kwargs)) == (b == lazy(*args, **kwargs))
    assert (b == a) is False or type(a) is type(b)
    assert _outcome(lambda: hash(a))[0] == _outcome(lambda: hash(b))[0]
    if _outcome(lambda: hash(a))[0] == "ok":
        same_eager = hash(a) == hash(eager(*args, **kwargs))
        assert same_eager == (hash(b) == hash(lazy(*args, **kwargs)))
    for attempt in (
        lambda c: c.__setattr__("a", 9),
        lambda c: c.__delattr__("a"),
        lambda c: setattr(c, "other", 1),
        lambda c: dataclasses.replace(c),
        lambda c: dataclasses.asdict(c),
        lambda c: c < c,
    ):
        assert _outcome(partial(attempt, a)) == _outcome(partial(attempt, b))
    for bad in ((), (1, 2, 3, 4, 5), ("x",)):  # missing and extra arguments: the same TypeError
        assert _outcome(partial(eager, *bad)) == _outcome(partial(lazy, *bad))
    assert eager.__init__.__qualname__ == lazy.__init__.__qualname__ == "C.__init__"
    for name in ("__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
        mine, theirs = lazy.__dict__.get(name), eager.__dict__.get(name)
        assert (mine is None) == (theirs is None), name
        if callable(mine) and callable(theirs):
            assert mine.__qualname__ == theirs.__qualname__ == f"C.{name}"
            assert (mine.__module__, theirs.__module__) == (lazy.__module__, eager.__module__)
    other = type("Other", (), {})()
    assert (a.__eq__(other), b.__eq__(other)) == (NotImplemented, NotImplemented)


def test_fields_and_is_dataclass_make_a_record_before_any_instance() -> None:
    lazy = _declare("record", "plain")
    assert lazy in records.pending()
    assert dataclasses.is_dataclass(lazy)
    assert [f.name for f in dataclasses.fields(lazy)] == ["a", "b", "c"]
    assert lazy not in records.pending()
    assert lazy(1) == lazy(1, "x", [])


def test_match_statements_and_subclasses_see_the_made_record() -> None:
    base = _declare("record", "frozen")
    sub = dataclasses.dataclass(frozen=True)(
        type("Sub", (base,), {"__annotations__": {"c": "int"}, "c": 5})
    )
    assert base not in records.pending()  # the subclass's dataclass read the base's fields
    assert [f.name for f in dataclasses.fields(sub)] == ["a", "b", "c"]
    match sub(1):
        case base(a, b):
            assert (a, b) == (1, ())
        case _:
            pytest.fail("no match")
    plain_sub = type("Plain", (_declare("record", "order"),), {})
    assert repr(plain_sub(2)) == "Plain(a=2, b='')"


def test_a_frozen_record_refuses_assignment_as_dataclass_does() -> None:
    lazy = _declare("record", "frozen")
    item = lazy(1)
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'a'"):
        item.a = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'b'"):
        del item.b  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(item)) == item


def test_threads_instantiating_a_record_first_all_get_whole_instances() -> None:
    def first_use(lazy: type, barrier: threading.Barrier, results: list[Any]) -> None:
        barrier.wait()
        results.append(_outcome(partial(lazy, a=1)))

    for _ in range(20):
        lazy, barrier, results = _declare("record", "frozen_kw_only"), threading.Barrier(8), []
        threads = [
            threading.Thread(target=first_use, args=(lazy, barrier, results)) for _ in range(8)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == [("ok", "C(a=1, b=None)")] * 8


def test_make_pending_makes_every_record_one_per_step() -> None:
    declared = [_declare("record", case) for case in ("plain", "order", "method")]
    made = []
    for cls in records.make_pending():
        made.append(cls)
    assert set(declared) <= set(made)
    assert records.pending() == []


def test_slots_and_own_init_are_made_at_once() -> None:
    slotted = records.record(slots=True)(type("S", (), {"__annotations__": {"a": "int"}}))
    assert "__slots__" in slotted.__dict__ and slotted not in records.pending()

    def __init__(self: Any) -> None:
        self.a = 1

    own = records.record(type("O", (), {"__annotations__": {"a": "int"}, "__init__": __init__}))
    assert own not in records.pending() and own().a == 1


def test_an_instance_unpickled_first_makes_its_record() -> None:
    made = _declare("record", "frozen")
    data = pickle.dumps(made(1, (2,)))
    pending = _declare("record", "frozen")  # the module declared again: its C not made yet
    assert pending in records.pending()
    item = pickle.loads(data)
    assert type(item) is pending and pending not in records.pending()
    assert item == pending(1, (2,)) and repr(item) == "C(a=1, b=(2,))"
    assert "__setstate__" not in pending.__dict__


def test_the_closures_a_record_is_given_read_as_dataclass_writes_them() -> None:
    """The eq, hash and repr made as closures (core/records._CLOSURES) give what dataclass's
    compiled ones give: a field compared, hashed or shown only as its flags say, a value equal to
    itself by identity (NaN), a record that holds itself shown as ``...``."""
    eager, lazy = _declare("dataclass", "compare_and_hash"), _declare("record", "compare_and_hash")
    for cls in (eager, lazy):
        assert cls(1, [1], "x") == cls(1, [2], "x")  # b is not compared
        assert cls(1, [1], "x") != cls(1, [1], "y")
        assert repr(cls(1)).endswith("C(a=1, b=[], c='c')")  # d is not shown
    assert hash(eager(1, [], "x")) == hash(lazy(1, [], "y"))  # b, c not hashed: hash((a, d))
    assert hash(lazy(1)) == hash(eager(1)) == hash((1, 4))
    nan = float("nan")
    one = _declare("dataclass", "one_field"), _declare("record", "one_field")
    # One NaN object: equal by identity where dataclass compares tuples (3.11, 3.12), not where it
    # compares field by field (3.13): the record as dataclass, whichever.
    assert one[0](nan) == one[0](nan) if sys.version_info < (3, 13) else one[0](nan) != one[0](nan)
    for cls in one:
        assert (cls(nan) == cls(nan)) == (one[0](nan) == one[0](nan))
        assert cls(nan) != cls(float("nan"))
        assert hash(cls(nan)) == hash((nan,))
    for cls in (_declare("dataclass", "no_fields"), _declare("record", "no_fields")):
        assert cls() == cls() and hash(cls()) == hash(()) and _plain(repr(cls())) == "C()"
    for cls in (_declare("dataclass", "plain"), _declare("record", "plain")):
        item = cls(1)
        item.c.append(item)
        assert _plain(repr(item)) == "C(a=1, b='x', c=[...])"


def test_a_dataclass_made_while_a_record_is_made_keeps_dataclasss_frozen_methods() -> None:
    """The writers are swapped for the whole dataclasses module while a record is made: a frozen
    dataclass another thread makes meanwhile must still refuse as its own class does."""
    record_cls = _declare("record", "frozen")
    shell = type("C", (), {"__annotations__": {"a": "int"}})
    with records._lock, records._closures(shell, record_cls):
        other = dataclasses.dataclass(frozen=True)(
            type("Other", (), {"__annotations__": {"a": "int"}})
        )
    item = other(1)
    for attempt in (lambda: setattr(item, "a", 2), lambda: setattr(item, "b", 2)):
        with pytest.raises(dataclasses.FrozenInstanceError):
            attempt()
    assert item == other(1) and hash(item) == hash((1,)) and repr(item).endswith("Other(a=1)")
