"""The config's sections are validated in plain Python (quiztui/schema.py), with pydantic's
behaviour and words: each case below goes through quiztui's section and through the same
section declared in pydantic (installed with the test extras, by the openai SDK), and the errors
(where, kind, message) and the values must be the same."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import pytest

from quiztui.config import Config, CostConfig, ImportConfig, JudgeConfig, KeysConfig, VetConfig
from quiztui.schema import Field, Section, ValidationError, bounds_of, check_value

pydantic = pytest.importorskip("pydantic")


class _Ours(Section):
    count: int = Field(3, ge=1, le=10, description="a bounded count")
    ratio: float = Field(0.5, gt=0.0, lt=1.0, description="a ratio")
    flag: bool = Field(True, description="a switch")
    name: str = Field("x", description="a name")
    mode: Literal["a", "b", "c"] = Field("a", description="a choice")
    limit: int | None = Field(None, ge=0, description="optional")
    tags: list[str] = Field(default_factory=list, description="tags")


class _Theirs(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(
        extra="forbid", validate_assignment=True, allow_inf_nan=False
    )

    count: int = pydantic.Field(3, ge=1, le=10)
    ratio: float = pydantic.Field(0.5, gt=0.0, lt=1.0)
    flag: bool = True
    name: str = "x"
    mode: Literal["a", "b", "c"] = "a"
    limit: int | None = pydantic.Field(None, ge=0)
    tags: list[str] = pydantic.Field(default_factory=list)


CASES: list[dict[str, Any]] = [
    {},
    {"count": "7"},
    {"count": " 3 "},
    {"count": "2.0"},
    {"count": 2.0},
    {"count": 2.5},
    {"count": "2.5"},
    {"count": "abc"},
    {"count": "0"},
    {"count": 11},
    {"count": True},
    {"count": None},
    {"count": [1]},
    {"ratio": "0.25"},
    {"ratio": "1e-3"},
    {"ratio": 1},
    {"ratio": 0},
    {"ratio": "inf"},
    {"ratio": "nan"},
    {"ratio": math.inf},
    {"ratio": "half"},
    {"ratio": None},
    {"flag": "yes"},
    {"flag": "OFF"},
    {"flag": "0"},
    {"flag": 1},
    {"flag": 2},
    {"flag": "maybe"},
    {"flag": None},
    {"name": 5},
    {"name": "ok"},
    {"mode": "b"},
    {"mode": "d"},
    {"mode": 1},
    {"limit": None},
    {"limit": "4"},
    {"limit": -1},
    {"limit": "None"},
    {"tags": ["a", "b"]},
    {"tags": ("a",)},
    {"tags": "a"},
    {"tags": ["a", 1]},
    {"unknown": 1},
    {"count": 0, "ratio": 2, "unknown": 1},
]


def _errors(exc: Exception) -> list[tuple[tuple[Any, ...], str, str]]:
    return [(tuple(e["loc"]), e["type"], e["msg"]) for e in exc.errors()]  # type: ignore[attr-defined]


@pytest.mark.parametrize("data", CASES, ids=[repr(c) for c in CASES])
def test_a_section_validates_as_pydantic_does(data: dict[str, Any]) -> None:
    try:
        theirs = _Theirs.model_validate(data)
    except pydantic.ValidationError as exc:
        with pytest.raises(ValidationError) as ours:
            _Ours.model_validate(data)
        assert _errors(ours.value) == _errors(exc)
        assert ours.value.error_count() == exc.error_count()
    else:
        assert _Ours.model_validate(data).model_dump() == theirs.model_dump()


def test_assignment_is_validated_and_copy_is_not() -> None:
    section = _Ours()
    section.count = "4"  # type: ignore[assignment]
    assert section.count == 4
    with pytest.raises(ValidationError) as exc:
        section.count = 0
    assert _errors(exc.value) == [
        (("count",), "greater_than_equal", "Input should be greater than or equal to 1")
    ]
    assert section.count == 4
    copied = section.model_copy(update={"count": 99})  # as pydantic's: not validated
    assert copied.count == 99 and section.count == 4


def test_the_config_keeps_pydantics_words_for_nested_and_custom_errors() -> None:
    """The expected words are what the pydantic config printed before it was replaced."""
    cases = [
        (
            Config,
            {"judge": {"concurrency": 0}, "vet": {"batch_size": 0}},
            [
                (
                    ("judge", "concurrency"),
                    "greater_than_equal",
                    "Input should be greater than or equal to 1",
                ),
                (
                    ("vet", "batch_size"),
                    "greater_than_equal",
                    "Input should be greater than or equal to 1",
                ),
            ],
        ),
        (
            Config,
            {"judge": 5},
            [
                (
                    ("judge",),
                    "model_type",
                    "Input should be a valid dictionary or instance of JudgeConfig",
                )
            ],
        ),
        (
            JudgeConfig,
            {"provider": "foo"},
            [
                (
                    ("provider",),
                    "literal_error",
                    "Input should be 'auto', 'simulated', 'openai-compat', 'anthropic' or 'gemini'",
                )
            ],
        ),
        (
            VetConfig,
            {"prior": "x"},
            [
                (
                    ("prior",),
                    "prior",
                    "Input should be auto, auto+rates or a number greater than 0 and less than 1",
                )
            ],
        ),
        (
            VetConfig,
            {"seed": 2**70},
            [
                (
                    ("seed",),
                    "less_than_equal",
                    "Input should be less than or equal to 9223372036854775807",
                )
            ],
        ),
        (
            CostConfig,
            {"input_per_mtok": 1},
            [
                (
                    (),
                    "value_error",
                    "Value error, set both input_per_mtok and output_per_mtok (or neither: cost unknown)",
                )
            ],
        ),
        (
            CostConfig,
            {"models": {"x": {"input_per_mtok": 1}}},
            [(("models", "x", "output_per_mtok"), "missing", "Field required")],
        ),
        (
            KeysConfig,
            {"run.start": 5},
            [((), "value_error", 'Value error, run.start: a key such as "f2" or "ctrl+r", not 5')],
        ),
    ]
    for model, data, expected in cases:
        with pytest.raises(ValidationError) as exc:
            model.model_validate(data)
        assert _errors(exc.value) == expected, (model.__name__, data)
    assert VetConfig.model_validate({"prior": "0.5"}).prior == 0.5
    assert ImportConfig.model_validate({"options": "a+b"}).options == ["a", "b"]
    assert KeysConfig.model_validate({"run.start": "f2"}).keymap() == {"run.start": "f2"}
    config = Config.model_validate({"import": {"question": "Q"}})
    assert config.import_.question == "Q"
    assert config.model_dump(exclude_none=True, by_alias=True)["import"] == {"question": "Q"}


def test_a_flag_with_its_own_bounds_reads_as_pydantics_type_adapter() -> None:
    for kind, bounds in ((int, {"ge": 1}), (float, {"gt": 0.0}), (int, {"ge": 0, "lt": 10})):
        adapter = pydantic.TypeAdapter(
            Annotated[kind, pydantic.Field(**bounds)],
            config=pydantic.ConfigDict(allow_inf_nan=False),
        )
        for text in ("0", "-1", "abc", "1.5", "inf", "20", "5"):
            try:
                expected = adapter.validate_python(text)
            except pydantic.ValidationError as exc:
                with pytest.raises(ValidationError) as ours:
                    check_value(kind, text, bounds_of(**bounds))
                assert [e["msg"] for e in ours.value.errors()] == [e["msg"] for e in exc.errors()]
            else:
                assert check_value(kind, text, bounds_of(**bounds)) == expected


def test_a_subclass_validator_replaces_its_bases_and_runs_once() -> None:
    from quiztui.schema import field_validator, model_validator

    calls: list[str] = []

    class Base(Section):
        name: str = Field("x", description="a name")

        @field_validator("name", mode="before")
        @classmethod
        def _strip(cls, value: Any) -> Any:
            calls.append("base")
            return value

        @model_validator(mode="after")
        def _check(self) -> Any:
            calls.append("base after")
            return self

    class Child(Base):
        @field_validator("name", mode="before")
        @classmethod
        def _strip(cls, value: Any) -> Any:
            calls.append("child")
            return value.strip() if isinstance(value, str) else value

        def _check(self) -> Any:  # no longer a validator here
            return self

    assert Child.model_validate({"name": " y "}).name == "y"
    assert calls == ["child"]
    calls.clear()
    assert Base.model_validate({"name": " y "}).name == " y "
    assert calls == ["base", "base after"]
