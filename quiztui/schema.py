"""Declared settings validated in plain Python: the config's sections (``quiztui/config.py``).

The config was made of pydantic models; importing pydantic and building them was a quarter of a
headless run's start-up (``docs/speed.md``), for a few dozen keys. This module keeps what the
config used, with pydantic's behaviour and words, so files, ``QUIZTUI_*`` variables, flags and
their error lines read as before:

- fields declared by annotation with :func:`Field` (default or default factory, description,
  alias, bounds ``ge``/``gt``/``le``/``lt``); the types int, float, bool, str, ``X | None``,
  ``Literal[...]``, ``list[str]``, ``dict[str, Section]`` and nested sections, and
  ``Annotated[T, check]`` for a custom check (:class:`Check`);
- lax input as pydantic's: numbers and booleans from strings (``"16"``, ``"0.5"``, ``"yes"``),
  a whole float for an int; never inf or nan;
- ``field_validator(..., mode="before")`` and ``model_validator(mode="after")``;
- ``extra``: "forbid" (an unknown key is an error) or "allow" (kept in ``model_extra``);
- validation on assignment, ``model_validate``, ``model_dump``, ``model_copy`` (no validation,
  as pydantic's) and ``model_fields``;
- :class:`ValidationError` with ``errors()`` (``loc``, ``msg``, ``type``) and ``error_count()``.
"""

from __future__ import annotations

import copy
import math
import sys
import types
from collections.abc import Callable, Iterable
from typing import Annotated, Any, ClassVar, Literal, TypeVar, Union, get_args, get_origin

T = TypeVar("T", bound="Section")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()  # no default: the key is required


class Ge:
    __slots__ = ("ge",)

    def __init__(self, ge: float) -> None:
        self.ge = ge


class Gt:
    __slots__ = ("gt",)

    def __init__(self, gt: float) -> None:
        self.gt = gt


class Le:
    __slots__ = ("le",)

    def __init__(self, le: float) -> None:
        self.le = le


class Lt:
    __slots__ = ("lt",)

    def __init__(self, lt: float) -> None:
        self.lt = lt


Bound = Ge | Gt | Le | Lt


class FieldInfo:
    """A declared field: its default, bounds (``metadata``), description and alias; the class
    sets ``annotation`` (the resolved type)."""

    def __init__(
        self,
        default: Any = MISSING,
        *,
        default_factory: Callable[[], Any] | None = None,
        description: str | None = None,
        alias: str | None = None,
        ge: float | None = None,
        gt: float | None = None,
        le: float | None = None,
        lt: float | None = None,
    ) -> None:
        self.default = default
        self.default_factory = default_factory
        self.description = description
        self.alias = alias
        self.metadata: list[Bound] = [
            cls(value)
            for cls, value in ((Ge, ge), (Gt, gt), (Le, le), (Lt, lt))
            if value is not None
        ]
        self.annotation: Any = None

    def is_required(self) -> bool:
        return self.default is MISSING and self.default_factory is None

    def get_default(self) -> Any:
        if self.default_factory is not None:
            return self.default_factory()
        return copy.copy(self.default) if isinstance(self.default, list | dict) else self.default


def Field(  # noqa: N802 (pydantic's name, kept for the declarations)
    default: Any = MISSING,
    description: str | None = None,
    *,
    default_factory: Callable[[], Any] | None = None,
    alias: str | None = None,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    lt: float | None = None,
) -> Any:
    return FieldInfo(
        default,
        default_factory=default_factory,
        description=description,
        alias=alias,
        ge=ge,
        gt=gt,
        le=le,
        lt=lt,
    )


class ValidationError(ValueError):
    """What failed, pydantic's way: ``errors()`` is a list of {loc, msg, type}."""

    def __init__(self, errors: list[dict[str, Any]], title: str = "") -> None:
        self._errors = errors
        self.title = title
        lines = [f"{len(errors)} validation error{'s' if len(errors) != 1 else ''} for {title}"]
        for e in errors:
            lines += [".".join(str(p) for p in e["loc"]), f"  {e['msg']}"]
        super().__init__("\n".join(lines))

    def errors(self) -> list[dict[str, Any]]:
        return list(self._errors)

    def error_count(self) -> int:
        return len(self._errors)


class _Fail(Exception):
    """One error at a place inside the value being checked (``loc`` relative to it)."""

    def __init__(self, kind: str, msg: str, loc: tuple[Any, ...] = ()) -> None:
        self.kind, self.msg, self.loc = kind, msg, loc


class _Many(Exception):
    def __init__(self, errors: list[dict[str, Any]]) -> None:
        self.errors = errors


class Check:
    """``Annotated[T, Check(fn)]``: ``fn(value, validate)`` validates (``validate`` checks
    against ``T``, raising) and may give its own words, by raising :class:`CustomError`."""

    def __init__(self, fn: Callable[[Any, Callable[[Any], Any]], Any]) -> None:
        self.fn = fn


class CustomError(Exception):
    """Raised in a :class:`Check`: the error is ``kind`` with this message, nothing added."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.message = kind, message


def _number(value: float) -> str:
    """A bound in an error message as pydantic writes it: 0.0 -> 0, 0.5 -> 0.5."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _bounds(value: Any, metadata: Iterable[Any]) -> None:
    for m in metadata:
        if isinstance(m, Ge) and not value >= m.ge:
            raise _Fail(
                "greater_than_equal", f"Input should be greater than or equal to {_number(m.ge)}"
            )
        if isinstance(m, Gt) and not value > m.gt:
            raise _Fail("greater_than", f"Input should be greater than {_number(m.gt)}")
        if isinstance(m, Le) and not value <= m.le:
            raise _Fail("less_than_equal", f"Input should be less than or equal to {_number(m.le)}")
        if isinstance(m, Lt) and not value < m.lt:
            raise _Fail("less_than", f"Input should be less than {_number(m.lt)}")


_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


def _int(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return int(value)
        if not math.isfinite(value):
            raise _Fail("finite_number", "Input should be a finite number")
        raise _Fail(
            "int_from_float", "Input should be a valid integer, got a number with a fractional part"
        )
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if "." in text and math.isfinite(number) and number.is_integer():
            return int(number)
        raise _Fail(
            "int_parsing", "Input should be a valid integer, unable to parse string as an integer"
        )
    raise _Fail("int_type", "Input should be a valid integer")


def _float(value: Any) -> float:
    if isinstance(value, bool | int):
        number = float(value)
    elif isinstance(value, float):
        number = value
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise _Fail(
                "float_parsing",
                "Input should be a valid number, unable to parse string as a number",
            ) from None
    else:
        raise _Fail("float_type", "Input should be a valid number")
    if not math.isfinite(number):
        raise _Fail("finite_number", "Input should be a finite number")
    return number


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    if isinstance(value, int | float | str):
        raise _Fail("bool_parsing", "Input should be a valid boolean, unable to interpret input")
    raise _Fail("bool_type", "Input should be a valid boolean")


def _str(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise _Fail("string_type", "Input should be a valid string")


def _literal_words(choices: tuple[Any, ...]) -> str:
    words = [repr(c) for c in choices]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def validate_type(annotation: Any, value: Any, metadata: Iterable[Any] = ()) -> Any:
    """``value`` as ``annotation`` (lax, as pydantic), then within ``metadata``'s bounds."""
    origin = get_origin(annotation)
    if origin is Annotated:
        inner, *extras = get_args(annotation)
        checks = [e for e in extras if isinstance(e, Check)]
        bounds = [m for e in extras if isinstance(e, FieldInfo) for m in e.metadata]
        if checks:
            try:
                return checks[0].fn(value, lambda v: validate_type(inner, v, bounds))
            except CustomError as exc:
                raise _Fail(exc.kind, exc.message) from None
        checked = validate_type(inner, value, bounds)
        _bounds(checked, metadata)
        return checked
    if origin in (Union, types.UnionType):
        args = get_args(annotation)
        if value is None and type(None) in args:
            return None
        rest = [a for a in args if a is not type(None)]
        first: _Fail | None = None
        for arg in rest:
            try:
                return validate_type(arg, value, metadata)
            except _Fail as exc:
                first = first or exc
        assert first is not None
        raise first
    if origin is Literal:
        choices = get_args(annotation)
        if any(value == c and type(value) is type(c) for c in choices):
            return value
        raise _Fail("literal_error", f"Input should be {_literal_words(choices)}")
    if origin is list:
        if not isinstance(value, list | tuple):
            raise _Fail("list_type", "Input should be a valid list")
        (item_type,) = get_args(annotation)
        out_list, errors = [], []
        for i, item in enumerate(value):
            try:
                out_list.append(validate_type(item_type, item))
            except _Fail as exc:
                errors.append(_error((i, *exc.loc), exc))
        if errors:
            raise _Many(errors)
        return out_list
    if origin is dict:
        if not isinstance(value, dict):
            raise _Fail("dict_type", "Input should be a valid dictionary")
        key_type, value_type = get_args(annotation)
        out_dict, errors = {}, []
        for key, item in value.items():
            try:
                out_dict[validate_type(key_type, key)] = validate_type(value_type, item)
            except _Fail as exc:
                errors.append(_error((key, *exc.loc), exc))
            except _Many as many:
                errors += [{**e, "loc": (key, *e["loc"])} for e in many.errors]
        if errors:
            raise _Many(errors)
        return out_dict
    if isinstance(annotation, type) and issubclass(annotation, Section):
        if isinstance(value, annotation):
            return value
        if not isinstance(value, dict):
            raise _Fail(
                "model_type",
                f"Input should be a valid dictionary or instance of {annotation.__name__}",
            )
        try:
            return annotation.model_validate(value)
        except ValidationError as exc:
            raise _Many(exc.errors()) from None
    if annotation is int:
        out: Any = _int(value)
    elif annotation is float:
        out = _float(value)
    elif annotation is bool:
        out = _bool(value)
    elif annotation is str:
        out = _str(value)
    elif annotation is Any:
        out = value
    else:  # pragma: no cover - a declaration this module does not know
        raise TypeError(f"unsupported field type {annotation!r}")
    _bounds(out, metadata)
    return out


def check_value(annotation: Any, value: Any, metadata: Iterable[Any] = (), title: str = "") -> Any:
    """:func:`validate_type`, raising :class:`ValidationError` (a flag with its own bounds)."""
    try:
        return validate_type(annotation, value, metadata)
    except _Fail as exc:
        raise ValidationError([_error(exc.loc, exc)], title) from None
    except _Many as many:
        raise ValidationError(many.errors, title) from None


def bounds_of(
    *,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    lt: float | None = None,
) -> list[Bound]:
    """The metadata :func:`validate_type` reads for these bounds."""
    return FieldInfo(ge=ge, gt=gt, le=le, lt=lt).metadata


def _error(loc: tuple[Any, ...], exc: _Fail) -> dict[str, Any]:
    return {"loc": loc, "msg": exc.msg, "type": exc.kind}


def field_validator(*names: str, mode: Literal["before"] = "before") -> Callable[[Any], Any]:
    """Run the decorated classmethod ``(cls, value) -> value`` on ``names``' input first; a
    ValueError it raises is the field's error ("Value error, …")."""
    del mode

    def mark(fn: Any) -> Any:
        target: Any = fn.__func__ if isinstance(fn, classmethod) else fn
        target.__quiztui_before__ = names
        return fn

    return mark


def model_validator(*, mode: Literal["after"] = "after") -> Callable[[Any], Any]:
    """Run the decorated method ``(self) -> self`` after the fields; a ValueError it raises is
    the model's error."""
    del mode

    def mark(fn: Any) -> Any:
        fn.__quiztui_after__ = True
        return fn

    return mark


class _Spec:
    """A section class's fields (by name and by alias) and its validators: one per method name,
    a subclass's replacing its base's, as Python's own method lookup does."""

    def __init__(self, cls: type[Section]) -> None:
        self.fields = cls.model_fields
        self.by_alias = {info.alias: name for name, info in self.fields.items() if info.alias}
        marked: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            for attr_name, attr in vars(klass).items():
                fn = attr.__func__ if isinstance(attr, classmethod) else attr
                if hasattr(fn, "__quiztui_before__") or hasattr(fn, "__quiztui_after__"):
                    marked[attr_name] = fn
                else:
                    marked.pop(attr_name, None)  # overridden by an unmarked method
        self.before: dict[str, list[Callable[[Any], Any]]] = {}
        self.after: list[Callable[[Any], Any]] = []
        for attr_name, fn in marked.items():
            for name in getattr(fn, "__quiztui_before__", ()):
                self.before.setdefault(name, []).append(getattr(cls, attr_name))
            if getattr(fn, "__quiztui_after__", False):
                self.after.append(fn)

    def field(self, name: str, value: Any) -> Any:
        for hook in self.before.get(name, ()):
            try:
                value = hook(value)
            except ValueError as exc:
                raise _Fail("value_error", f"Value error, {exc}") from None
        info = self.fields[name]
        return validate_type(info.annotation, value, info.metadata)


class Section:
    """A base for declared settings (see the module docstring)."""

    model_config: ClassVar[dict[str, Any]] = {"extra": "forbid"}
    model_fields: ClassVar[dict[str, FieldInfo]] = {}
    _spec_cache: ClassVar[_Spec | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields: dict[str, FieldInfo] = {}
        for base in reversed(cls.__mro__[1:]):
            fields.update(getattr(base, "model_fields", {}))
        names = vars(sys.modules[cls.__module__])  # what the module has defined so far
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if name.startswith("_") or name in ("model_config", "model_fields"):
                continue
            declared = cls.__dict__.get(name, MISSING)
            info = declared if isinstance(declared, FieldInfo) else FieldInfo(declared)
            # ``from __future__ import annotations``: the type is text until evaluated here
            info.annotation = eval(annotation, names) if isinstance(annotation, str) else annotation
            fields[name] = info
            if name in cls.__dict__:
                delattr(cls, name)  # the instance's value, not the declaration, is read
        cls.model_fields = fields
        cls._spec_cache = None

    @classmethod
    def _spec(cls) -> _Spec:
        spec = cls.__dict__.get("_spec_cache")
        if spec is None:
            spec = _Spec(cls)
            cls._spec_cache = spec
        return spec

    def __init__(self, **data: Any) -> None:
        values, extra = type(self)._validated(data)
        if extra is not None:
            values["_extra"] = extra
        object.__setattr__(self, "__dict__", values)

    @classmethod
    def model_validate(cls: type[T], data: Any) -> T:
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            error = {
                "loc": (),
                "msg": f"Input should be a valid dictionary or instance of {cls.__name__}",
                "type": "model_type",
            }
            raise ValidationError([error], cls.__name__)
        return cls(**data)

    @classmethod
    def _validated(cls, data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
        spec = cls._spec()
        allow = cls.model_config.get("extra") == "allow"
        values: dict[str, Any] = {}
        extra: dict[str, Any] | None = {} if allow else None
        errors: list[dict[str, Any]] = []
        given: dict[str, Any] = {}
        unknown: list[str] = []
        for key, value in data.items():
            name = spec.by_alias.get(key, key)
            if name in spec.fields:
                given[name] = value
            elif allow:
                assert extra is not None
                extra[key] = value
            else:
                unknown.append(key)
        for name, info in spec.fields.items():
            if name not in given:
                if info.is_required():
                    errors.append({"loc": (name,), "msg": "Field required", "type": "missing"})
                else:
                    values[name] = info.get_default()
                continue
            try:
                values[name] = spec.field(name, given[name])
            except _Fail as exc:
                errors.append(_error((name, *exc.loc), exc))
            except _Many as many:
                errors += [{**e, "loc": (name, *e["loc"])} for e in many.errors]
        errors += [
            {"loc": (key,), "msg": "Extra inputs are not permitted", "type": "extra_forbidden"}
            for key in unknown
        ]
        if errors:
            raise ValidationError(errors, cls.__name__)
        if spec.after:
            probe = object.__new__(cls)
            object.__setattr__(
                probe, "__dict__", values if extra is None else {**values, "_extra": extra}
            )
            for check in spec.after:
                try:
                    check(probe)
                except ValueError as exc:
                    error = {"loc": (), "msg": f"Value error, {exc}", "type": "value_error"}
                    raise ValidationError([error], cls.__name__) from None
        return values, extra

    @property
    def model_extra(self) -> dict[str, Any] | None:
        """The keys an ``extra="allow"`` section was given beyond its fields (else None)."""
        extra = self.__dict__.get("_extra")
        return extra if isinstance(extra, dict) else None

    def __setattr__(self, name: str, value: Any) -> None:
        cls = type(self)
        spec = cls._spec()
        if name not in spec.fields:
            raise AttributeError(f"{cls.__name__} has no setting {name!r}")
        try:
            checked = spec.field(name, value)
        except _Fail as exc:
            raise ValidationError([_error((name, *exc.loc), exc)], cls.__name__) from None
        except _Many as many:
            errors = [{**e, "loc": (name, *e["loc"])} for e in many.errors]
            raise ValidationError(errors, cls.__name__) from None
        self.__dict__[name] = checked

    def model_dump(
        self,
        *,
        exclude: Iterable[str] | None = None,
        exclude_none: bool = False,
        by_alias: bool = False,
    ) -> dict[str, Any]:
        skip = set(exclude or ())
        out: dict[str, Any] = {}
        for name, info in type(self).model_fields.items():
            if name in skip:
                continue
            value = _dumped(self.__dict__[name], exclude_none, by_alias)
            if exclude_none and value is None:
                continue
            out[info.alias if by_alias and info.alias else name] = value
        extra = self.model_extra
        if extra:
            out.update({k: v for k, v in extra.items() if not (exclude_none and v is None)})
        return out

    def model_copy(self: T, *, update: dict[str, Any] | None = None) -> T:
        """A shallow copy with ``update`` set as given (not validated, as pydantic's)."""
        new = object.__new__(type(self))
        values = dict(self.__dict__)
        if "_extra" in values and isinstance(values["_extra"], dict):
            values["_extra"] = dict(values["_extra"])
        values.update(update or {})
        object.__setattr__(new, "__dict__", values)
        return new

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.__dict__ == other.__dict__  # type: ignore[union-attr]

    __hash__ = None  # type: ignore[assignment]  # mutable, as pydantic's (not frozen)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items() if k != "_extra")
        return f"{type(self).__name__}({fields})"


def _dumped(value: Any, exclude_none: bool, by_alias: bool) -> Any:
    if isinstance(value, Section):
        return value.model_dump(exclude_none=exclude_none, by_alias=by_alias)
    if isinstance(value, dict):
        return {k: _dumped(v, exclude_none, by_alias) for k, v in value.items()}
    if isinstance(value, list):
        return [_dumped(v, exclude_none, by_alias) for v in value]
    return value


__all__ = [
    "MISSING",
    "Check",
    "CustomError",
    "Field",
    "FieldInfo",
    "Ge",
    "Gt",
    "Le",
    "Lt",
    "Section",
    "ValidationError",
    "bounds_of",
    "check_value",
    "field_validator",
    "model_validator",
    "validate_type",
]
