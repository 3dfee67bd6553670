"""``record``: :func:`dataclasses.dataclass`, with the class's generated methods made on first use.

On Python 3.11 and 3.12 ``dataclass`` compiles each method it writes (``__init__``, ``__repr__``,
``__eq__``, a frozen class's ``__hash__``, ``__setattr__`` and ``__delattr__``) with its own
``exec``: about 1 ms a class. A headless vet imported 60 dataclasses before its first request,
60 ms of its start-up, though it made instances of 24 of them by then (``docs/speed.md``).

A class decorated with ``record(...)`` takes the same arguments and ends up exactly as
``dataclass(...)`` makes it, but is made when it is first used: its first instance, or the first
look at ``__dataclass_fields__``, ``__dataclass_params__`` or ``__match_args__`` (which
``dataclasses.fields``, ``is_dataclass``, ``replace`` and ``asdict``, a ``match`` statement and a
dataclass subclass all read). :func:`make_pending` makes the classes not used yet, one per step,
for a caller with idle time (a headless vet while the judge is waited on, ``cli/vet.report_work``).

How: until then the class carries an ``__init__`` that makes it (and a ``__setstate__``, for an
instance unpickled first), and a descriptor for each of those attributes. Making it runs ``dataclass(...)`` on a copy of the class (same name, bases and
namespace) and sets what that wrote onto the class itself, ``__init__`` last, under a lock, so a
thread that instantiates the class meanwhile waits for it and never finds it half made. A frozen
class's ``__setattr__``/``__delattr__`` are written here for the class itself (``dataclass``'s
name the class they were made for), with ``dataclass``'s conditions and messages.

Made at once, as ``dataclass`` would: ``slots=True`` (a slotted class is a new class object), and
a class that defines ``__init__`` itself or asks for ``init=False``. Type checkers see
``dataclasses.dataclass`` itself.
"""

from __future__ import annotations

import contextlib
import dataclasses
import operator
import sys
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

_lock = threading.RLock()
_pending: dict[type, dict[str, Any]] = {}  # class → its dataclass arguments, in definition order
_declared: weakref.WeakSet[type] = weakref.WeakSet()  # every class declared with record
_DESCRIBED = ("__dataclass_fields__", "__dataclass_params__", "__match_args__")


class _MadeOnUse:
    """A class attribute of a record not made yet: reading it makes the record first."""

    __slots__ = ("owner", "name")

    def __init__(self, owner: type, name: str) -> None:
        self.owner = owner
        self.name = name

    def __get__(self, obj: object, objtype: type | None = None) -> Any:
        make(self.owner)
        return getattr(obj if obj is not None else objtype, self.name)


def _init_stub(owner: type) -> Callable[..., None]:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        make(owner)
        owner.__init__(self, *args, **kwargs)  # type: ignore[misc]

    __init__.__qualname__ = f"{owner.__qualname__}.__init__"
    __init__._quiztui_stub = True  # type: ignore[attr-defined]
    return __init__


def _setstate_stub(owner: type) -> Callable[..., None]:
    """Unpickling (or ``copy``) makes an instance without ``__init__``: it makes the class, then
    sets the state as pickle itself would (the instance dict, then any slot values)."""

    def __setstate__(self: Any, state: Any) -> None:
        make(owner)
        own = getattr(type(self), "__setstate__", None)
        if own is not None:
            own(self, state)
            return
        slots = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slots = state
        if state:
            self.__dict__.update(state)
        for name, value in (slots or {}).items():
            object.__setattr__(self, name, value)

    __setstate__._quiztui_stub = True  # type: ignore[attr-defined]
    return __setstate__


def _is_stub(value: object) -> bool:
    return isinstance(value, _MadeOnUse) or getattr(value, "_quiztui_stub", False) is True


def _defer(cls: type, params: dict[str, Any]) -> type:
    own = cls.__dict__
    if params.get("slots") or not params.get("init", True) or "__init__" in own:
        made: type = dataclasses.dataclass(cls, **params)
        _declared.add(made)
        return made
    _declared.add(cls)
    with _lock:
        _pending[cls] = params
        cls.__init__ = _init_stub(cls)  # type: ignore[misc]
        if "__setstate__" not in own:
            cls.__setstate__ = _setstate_stub(cls)  # type: ignore[attr-defined]
        for name in _DESCRIBED:
            if name not in own:
                setattr(cls, name, _MadeOnUse(cls, name))
    return cls


def _frozen_methods(cls: Any, names: tuple[str, ...]) -> tuple[Callable[..., None], ...]:
    """``dataclass``'s frozen ``__setattr__``/``__delattr__``, for ``cls`` itself."""

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    for method in (__setattr__, __delattr__):
        method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
        method.__module__ = cls.__module__
    return __setattr__, __delattr__


class _Fields(str):
    """``dataclasses._tuple_str``'s text (``"(self.a,self.b,)"``), with the field names it lists."""

    names: tuple[str, ...] = ()


def _tuple_str(obj_name: str, fields: list[dataclasses.Field[Any]]) -> str:
    text = _Fields(_DATACLASS_HELPERS["_tuple_str"](obj_name, fields))
    text.names = tuple(f.name for f in fields)
    return text


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """``lambda self: (self.a, self.b,)``, without compiling it."""
    if not names:
        return lambda self: ()
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda self: (one(self),)
    return operator.attrgetter(*names)  # type: ignore[return-value]


def _repr_fn(fields: list[dataclasses.Field[Any]], globals: dict[str, Any]) -> Callable[..., str]:
    names = tuple(f.name for f in fields)

    def __repr__(self: Any) -> str:
        shown = ", ".join([f"{name}={getattr(self, name)!r}" for name in names])
        return self.__class__.__qualname__ + f"({shown})"

    __repr__.__module__ = globals.get("__name__", __repr__.__module__)
    return _DATACLASS_HELPERS["_recursive_repr"](__repr__)  # type: ignore[no-any-return]


def _cmp_fn(
    name: str, op: str, self_tuple: str, other_tuple: str, globals: dict[str, Any]
) -> Callable[..., Any]:
    if name != "__eq__" or not isinstance(self_tuple, _Fields):  # order: dataclass's own
        return _DATACLASS_HELPERS["_cmp_fn"](name, op, self_tuple, other_tuple, globals)  # type: ignore[no-any-return]
    values = _values(self_tuple.names)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    __eq__.__module__ = globals.get("__name__", __eq__.__module__)
    return __eq__


def _hash_fn(fields: list[dataclasses.Field[Any]], globals: dict[str, Any]) -> Callable[..., int]:
    values = _values(tuple(f.name for f in fields))

    def __hash__(self: Any) -> int:
        return hash(values(self))

    __hash__.__module__ = globals.get("__name__", __hash__.__module__)
    return __hash__


def _frozen_get_del_attr(
    cls: type, fields: list[dataclasses.Field[Any]], globals: dict[str, Any]
) -> tuple[Callable[..., None], ...]:
    if not _making or _making[-1][0] is not cls:  # another thread's dataclass: dataclass's own
        return _DATACLASS_HELPERS["_frozen_get_del_attr"](cls, fields, globals)  # type: ignore[no-any-return]
    return _frozen_methods(_making[-1][1], tuple(f.name for f in fields))


# On Python 3.11 and 3.12 ``dataclass`` writes each method from source with an ``exec`` of its own.
# A record's ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__`` and ``__delattr__`` are made
# here as closures over its field names instead (the same code, the same results: tests/
# test_records.py compares each with dataclass's): five of a frozen record's six compiles, two of
# a plain one's three. Only ``__init__`` (and an ordered record's comparisons) are compiled. The
# frozen methods check the instance's type against the record itself, so for any other class (a
# dataclass another thread makes meanwhile) dataclass writes them as ever.
_HELPERS = (
    "_tuple_str",
    "_repr_fn",
    "_cmp_fn",
    "_hash_fn",
    "_frozen_get_del_attr",
    "_recursive_repr",
)
_DATACLASS_HELPERS: dict[str, Callable[..., Any]] = (
    {name: getattr(dataclasses, name) for name in _HELPERS}
    if sys.version_info[:2] in ((3, 11), (3, 12))
    and all(hasattr(dataclasses, name) for name in _HELPERS)
    else {}
)
_CLOSURES = {
    "_tuple_str": _tuple_str,
    "_repr_fn": _repr_fn,
    "_cmp_fn": _cmp_fn,
    "_hash_fn": _hash_fn,
    "_frozen_get_del_attr": _frozen_get_del_attr,
}
_making: list[tuple[type, type]] = []  # (the copy dataclass is given, the record) being made


@contextlib.contextmanager
def _closures(shell: type, cls: type) -> Iterator[None]:
    """``dataclass``'s method writers swapped for :data:`_CLOSURES` while ``shell`` (the copy of
    the record ``cls`` that dataclass processes) is made, under ``_lock``; nothing is swapped
    where dataclasses is not the one they were written for."""
    if not _DATACLASS_HELPERS:
        yield
        return
    _making.append((shell, cls))
    for name, closure in _CLOSURES.items():
        setattr(dataclasses, name, closure)
    try:
        yield
    finally:
        for name in _CLOSURES:
            setattr(dataclasses, name, _DATACLASS_HELPERS[name])
        _making.pop()


def make(cls: type) -> None:
    """Make the record ``cls`` now (nothing when it is made already)."""
    with _lock:
        params = _pending.get(cls)
        if params is None:
            return
        own = dict(cls.__dict__)
        namespace = {
            k: v for k, v in own.items() if k not in ("__dict__", "__weakref__") and not _is_stub(v)
        }
        namespace["__qualname__"] = cls.__qualname__
        shell = type(cls)(cls.__name__, cls.__bases__, namespace)
        with _closures(shell, cls):
            copy: type = dataclasses.dataclass(shell, **params)
        made = dict(copy.__dict__)
        if params.get("frozen"):
            names = tuple(f.name for f in dataclasses.fields(copy))
            made["__setattr__"], made["__delattr__"] = _frozen_methods(cls, names)
        for name in own:  # what dataclass took away (a field's Field default)
            if name not in made and name not in ("__dict__", "__weakref__", "__init__"):
                delattr(cls, name)
        for name, value in made.items():
            if name in ("__dict__", "__weakref__", "__init__", "__qualname__"):
                continue
            if own.get(name, dataclasses.MISSING) is not value:
                setattr(cls, name, value)
        cls.__init__ = made["__init__"]  # type: ignore[misc]  # last: the class is whole
        del _pending[cls]


def make_pending() -> Iterator[type]:
    """Make every record not made yet, one per step (each yields the class it made)."""
    while True:
        with _lock:
            if not _pending:
                return
            cls = next(iter(_pending))
            make(cls)
        yield cls


def is_record(cls: type) -> bool:
    """Whether ``cls`` was declared with :func:`record` (made yet or not)."""
    return cls in _declared


def pending() -> list[type]:
    """The records not made yet."""
    with _lock:
        return list(_pending)


if TYPE_CHECKING:
    from dataclasses import dataclass as record
else:

    def record(cls=None, /, **params):
        """``dataclasses.dataclass(...)``, made on first use (see the module's docstring)."""

        def wrap(cls):
            return _defer(cls, params)

        return wrap if cls is None else wrap(cls)


__all__ = ["is_record", "make", "make_pending", "pending", "record"]
