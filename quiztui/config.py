"""Configuration: TOML file validated against declared sections (``quiztui/schema.py``),
environment overrides, commented defaults.

Precedence: CLI flags the user typed > environment (``QUIZTUI_<SECTION>_<KEY>``) > config file >
defaults. API keys are never read from the file: ``api_key_env`` names the variable that holds it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from quiztui.errors import ConfigError
from quiztui.locations import LOCATION_VARIABLES, config_path, default_db_path
from quiztui.schema import (
    Check,
    CustomError,
    Field,
    Section,
    ValidationError,
    field_validator,
    model_validator,
)

if TYPE_CHECKING:
    from quiztui.core.estimate import ModelPrice


# Seeds and run ids are stored in SQLite INTEGER columns: signed 64-bit.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class _Section(Section):
    """A base for the config's sections: unknown keys refused, values checked on assignment,
    no inf or nan anywhere (an infinite timeout, latency or budget is a typo, not a setting)."""


class JudgeConfig(_Section):
    provider: Literal["auto", "simulated", "openai-compat", "anthropic", "gemini"] = Field(
        "auto",
        description="auto: use base_url/model when a model is set, else Ollama on localhost when it"
        " answers, else the simulated judge; anthropic / gemini: their native APIs",
    )
    base_url: str = Field(
        "http://localhost:11434/v1",
        description="OpenAI-compatible endpoint; anthropic and gemini use their own API (the"
        " default here stands for the provider's own API) unless this is changed",
    )
    model: str = Field(
        "",
        description="model name, e.g. gpt-4o-mini, llama3.1:8b, claude-haiku-4-5 or"
        " gemini-2.5-flash",
    )
    api_key_env: str = Field(
        "OPENAI_API_KEY",
        description="environment variable holding the openai-compat API key (never the key itself)",
    )
    anthropic_key_env: str = Field(
        "ANTHROPIC_API_KEY", description="environment variable holding the Anthropic API key"
    )
    gemini_key_env: str = Field(
        "GEMINI_API_KEY", description="environment variable holding the Gemini API key"
    )
    adaptive: bool = Field(
        True,
        description="adaptive concurrency: halve the limit on a rate limit (429/529), add one back"
        " after each quiet period, never above concurrency",
    )
    quiet_seconds: float = Field(
        30.0, gt=0, description="seconds without a rate limit before the limit grows by one"
    )
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="sampling temperature")
    max_tokens: int | None = Field(
        None, ge=1, description="reply length cap (unset: provider default)"
    )
    timeout: float = Field(120.0, gt=0, description="seconds per request")
    concurrency: int = Field(16, ge=1, le=256, description="requests in flight at once")
    max_retries: int = Field(4, ge=0, le=20, description="retries on 408/429/5xx/timeouts")
    stream: bool = Field(True, description="stream replies (verdicts appear as they are written)")
    logprobs: Literal["auto", "on", "off"] = Field(
        "auto",
        description="token logprobs → P(true) per assertion. auto: ask, and go on without them"
        " when the server refuses; on: a refusal is an error; off: never ask",
    )
    system_role: Literal["auto", "system", "user"] = Field(
        "auto",
        description="where the judge's instructions go. system: a system message; user: at the"
        " top of the user turn, for chat templates that drop system messages (llama.cpp's"
        " gemma format); auto: user for Gemma models, else system",
    )
    structured: Literal["auto", "on", "off"] = Field(
        "auto",
        description="constrained verdicts: ask an OpenAI-compatible server for JSON that fits"
        " the verdict schema (response_format). auto: ask, and go on with text when the server"
        " refuses (remembered for the run); on: a refusal is an error; off: never ask",
    )


def _one_prior_error(value: Any, validate: Any) -> Any:
    """vet.prior's errors as one line without the union's branch names."""
    try:
        return validate(value)
    except Exception:
        raise CustomError(
            "prior",
            "Input should be auto, auto+rates or a number greater than 0 and less than 1",
        ) from None


# A number in (0, 1), or "auto": estimated from the run's own verdicts (core/prior.py);
# "auto+rates": the judge's TPR/TNR fitted from them too (core/prior.fit_prior_and_rates).
Prior = Annotated[
    Annotated[float, Field(gt=0.0, lt=1.0)] | Literal["auto", "auto+rates"],
    Check(_one_prior_error),
]


class VetConfig(_Section):
    batch_size: int = Field(20, ge=1, le=500, description="assertions per request")
    max_reasks: int = Field(2, ge=0, le=10, description="times a missing verdict is asked again")
    prior: Prior = Field(
        "auto",
        description="prior probability that a key is correct; auto (the default): estimated from"
        " the run's own verdicts (empirical Bayes), shrunk toward prior_default with fewer than 30"
        " questions; auto+rates: the judge's TPR/TNR fitted from the quiz too, the profile's"
        " counting as 20 assertions each; a number in (0, 1) fixes it",
    )
    prior_default: float = Field(
        0.95, gt=0.0, lt=1.0, description="the prior auto leans on when a quiz has few questions"
    )
    seed: int | None = Field(
        None, ge=INT64_MIN, le=INT64_MAX, description="shuffle seed (unset: derived from the quiz)"
    )
    cache: bool = Field(True, description="reuse verdicts of the same judge for the same assertion")
    mode: Literal["assertion", "question"] = Field(
        "assertion",
        description="assertion: batches of true/false assertions; question: one request"
        " per question asking for the correct option",
    )
    fail_on: Literal["poor", "questionable", "never"] = Field(
        "questionable", description="headless exit code 1 when a question is at least this bad"
    )
    budget: float | None = Field(
        None,
        gt=0.0,
        description="USD a run may spend: it stops within one batch of it, the rest is not run"
        " (resume continues); needs a [cost] price for the judge model (unset: no limit)",
    )


class GradeConfig(_Section):
    grader: Literal["rubric10", "pass3", "facts", "lexical", "embedding"] = Field(
        "rubric10",
        description="rubric10 (LLM rating 1-10), pass3 (LLM pass/partial/fail = 2/1/0), facts (LLM, per fact),"
        " lexical (offline EM/F1), embedding (offline MiniLM cosine; needs the embed extra)",
    )
    max_reasks: int = Field(
        1, ge=0, le=5, description="times an unparseable grading reply is asked again"
    )
    calibration: Literal["isotonic", "linear"] = Field(
        "isotonic", description="benchmark: monotone map from raw scores to 0-5, fitted on train"
    )
    data_dir: str = Field(
        "", description="benchmark data folder (empty: ../shared/data/grading beside the repo)"
    )
    answers_calibration: str = Field(
        "",
        description="grading answer files: a calibration saved by grade --benchmark FILE"
        " --fit kfold (its name or file) applied when --calibration is not given (empty or"
        " none: no calibration)",
    )


class RobustnessConfig(_Section):
    variants: int = Field(5, ge=1, le=20, description="paraphrases per question (v)")
    format: Literal["multiple-choice", "abstractive"] = Field(
        "multiple-choice",
        description="multiple-choice: each form answered with the options shown; abstractive: the"
        " question alone, free-form answers grouped by match",
    )
    temperature: float = Field(
        1.0, ge=0.0, le=2.0, description="rewriting and answering temperature (MultiQ&A used 1.0)"
    )
    match: Literal["normalised", "embedding"] = Field(
        "normalised",
        description="abstractive answers: group by normalised text, or by embedding similarity"
        " (needs the embed extra)",
    )
    similarity: float = Field(
        0.8, gt=0.0, le=1.0, description="embedding match: cosine at or above which answers group"
    )
    fragile_certainty: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="a question is fragile when a paraphrase was answered differently or its"
        " normalised certainty is below this",
    )
    max_reasks: int = Field(1, ge=0, le=5, description="times an unparseable reply is asked again")


class ReviewConfig(_Section):
    mode: Literal["direct", "feedback"] = Field(
        "feedback",
        description="direct: one judge, one pass; feedback: two judges exchange strengths and"
        " flaws until their scores agree (the MIRROR method)",
    )
    max_iterations: int = Field(
        5, ge=2, le=50, description="feedback: iteration cap (not converged when reached)"
    )
    temperature: float = Field(
        0.7, ge=0.0, le=2.0, description="rating temperature (MIRROR used 0.7)"
    )
    max_reasks: int = Field(
        1, ge=0, le=5, description="times a reply with no scores is asked again"
    )
    judge2_model: str = Field("", description="second judge's model (empty: the judge's model)")
    judge2_base_url: str = Field("", description="second judge's base URL (empty: the judge's)")
    low_score: int = Field(
        2,
        ge=1,
        le=5,
        description="a grammaticality, appropriateness or relevance rating at or below this"
        " marks the question for rewriting",
    )


class LintConfig(_Section):
    select: list[str] = Field(
        default_factory=lambda: ["correctness"],
        description='lint rules that run: codes or categories ("correctness", "style", "all")',
    )
    extend_select: list[str] = Field(
        default_factory=list, description='rules added to select, e.g. ["style"] or ["L105"]'
    )
    ignore: list[str] = Field(
        default_factory=list, description='rules left out (wins over select), e.g. ["L106"]'
    )
    disable: list[str] = Field(
        default_factory=list, description="the old name of ignore (still read)"
    )
    fail_on: Literal["error", "warning", "info", "never"] = Field(
        "warning", description="quiztui lint exits 1 when a finding is at least this severe"
    )
    option_similarity: float = Field(
        0.92, gt=0.0, le=1.0, description="difflib ratio at which two options are near-duplicates"
    )
    question_similarity: float = Field(
        0.9, gt=0.0, le=1.0, description="difflib ratio at which two stems are near-duplicates"
    )
    prefilter_jaccard: float = Field(
        0.4,
        gt=0.0,
        le=1.0,
        description="stems are compared only when their content words overlap this much (Jaccard)",
    )
    giveaway_min_chars: int = Field(
        4, ge=0, description="keys shorter than this are not looked for in stems"
    )
    long_key_ratio: float = Field(
        2.0, gt=0.0, description="key length / longest distractor length that is much longer"
    )
    long_key_min_chars: int = Field(12, ge=0, description="shorter keys are never much longer")
    min_stem_words: int = Field(3, ge=0, description="a stem with fewer words is too short")
    min_stem_chars: int = Field(10, ge=0, description="a stem with fewer characters is too short")
    cue_topic_words: int = Field(
        2, ge=1, description="topic words another stem must share with a key to give it away"
    )
    cue_topic_share: float = Field(
        0.5, gt=0.0, le=1.0, description="... and at least this share of the question's topic words"
    )
    alpha: float = Field(
        0.01, gt=0.0, le=1.0, description="quiz-level tests (bias, balance) flag below this p-value"
    )
    min_questions: int = Field(
        5, ge=2, description="questions a quiz-level test needs before it is run"
    )

    @field_validator("select", "extend_select", "ignore", "disable", mode="before")
    @classmethod
    def _known_rules(cls, value: Any) -> Any:
        from quiztui.core.lint_model import check_selectors, split_selectors

        if isinstance(value, str):  # QUIZTUI_LINT_IGNORE="L106,L107"
            value = split_selectors([value])
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            try:
                return list(check_selectors(split_selectors(value)))
            except ConfigError as exc:
                raise ValueError(str(exc)) from None
        return value

    def settings(  # type: ignore[no-untyped-def]
        self,
        extra_disable: list[str] | None = None,
        *,
        select: list[str] | None = None,
        extend_select: list[str] | None = None,
    ):
        """The core ``LintSettings``: ``select`` (the command line's, else this section's),
        plus every ``extend_select``, less every ``ignore``/``disable`` (``extra_disable``: the
        command line's ``--ignore``)."""
        from quiztui.core.lint import LintSettings, codes_of, selection_codes

        values = self.model_dump(
            exclude={"select", "extend_select", "ignore", "disable", "fail_on"}
        )
        chosen = selection_codes(
            select if select else self.select, [*self.extend_select, *(extend_select or [])]
        )
        ignored = codes_of([*self.ignore, *self.disable, *(extra_disable or [])])
        return LintSettings(select=chosen, disable=ignored, **values)


class SimulatedConfig(_Section):
    tpr: float = Field(0.95, ge=0.0, le=1.0, description="P(says true | assertion true)")
    tnr: float = Field(0.95, ge=0.0, le=1.0, description="P(says false | assertion false)")
    latency: float = Field(0.3, ge=0.0, description="seconds per request")
    line_delay: float = Field(0.06, ge=0.0, description="seconds between streamed reply lines")
    seed: int = Field(
        0, ge=INT64_MIN, le=INT64_MAX, description="seed of the simulated judge's errors"
    )
    disagreement: float = Field(
        0.08,
        ge=0.0,
        le=1.0,
        description="robustness: P(a simulated answer differs from the true one), per answer",
    )
    refusal_rate: float = Field(
        0.02, ge=0.0, le=1.0, description="robustness: P(a simulated answer is a refusal)"
    )


class ModelPriceConfig(_Section):
    input_per_mtok: float = Field(ge=0.0, description="USD per million prompt tokens")
    output_per_mtok: float = Field(ge=0.0, description="USD per million completion tokens")


class CostConfig(_Section):
    input_per_mtok: float | None = Field(
        None,
        ge=0.0,
        description="default judge price: USD per million prompt tokens, for models without an"
        " entry under [cost.models] (unset: unknown)",
    )
    output_per_mtok: float | None = Field(
        None, ge=0.0, description="default judge price: USD per million completion tokens"
    )
    batch_discount: float = Field(
        0.5, gt=0.0, le=1.0, description="price factor of runs sent through a provider batch API"
    )
    models: dict[str, ModelPriceConfig] = Field(
        default_factory=dict,
        description='per-model prices, e.g. [cost.models."gpt-4o-mini"] input_per_mtok = 0.15,'
        " output_per_mtok = 0.6",
    )

    @model_validator(mode="after")
    def _both_or_neither(self) -> CostConfig:
        if (self.input_per_mtok is None) != (self.output_per_mtok is None):
            raise ValueError(
                "set both input_per_mtok and output_per_mtok (or neither: cost unknown)"
            )
        return self

    def price_for(self, model: str) -> ModelPrice | None:
        """The model's ``ModelPrice``: its own entry, else the default; None when unknown."""
        from quiztui.core.estimate import ModelPrice

        entry = self.models.get(model)
        if entry is not None:
            return ModelPrice(
                entry.input_per_mtok, entry.output_per_mtok, model, self.batch_discount
            )
        if self.input_per_mtok is None or self.output_per_mtok is None:
            return None
        return ModelPrice(self.input_per_mtok, self.output_per_mtok, "default", self.batch_discount)


class BatchConfig(_Section):
    """``--batch-api``: the run goes through the judge provider's batch API (openai-compat:
    OpenAI Batch; anthropic: Message Batches) at about half the price, results within 24 h."""

    poll_seconds: float = Field(
        30.0, gt=0.0, description="batch mode: seconds between looks at a submitted batch"
    )
    max_wait: float = Field(
        86400.0,
        ge=0.0,
        description="batch mode: seconds to wait for a batch before stopping; it stays pending"
        " and --resume collects it (0: submit, then stop)",
    )
    gather_seconds: float = Field(
        0.5,
        gt=0.0,
        le=60.0,
        description="batch mode: quiet time after the last request before the batch is submitted",
    )
    max_requests: int = Field(
        10_000, ge=1, le=50_000, description="batch mode: requests per provider batch at most"
    )


class StoreConfig(_Section):
    path: str = Field("", description="SQLite file (empty: the XDG data dir)")


class UIConfig(_Section):
    theme: str = Field("quiztui-dark", description="theme name (themes/ folder or built-in)")
    flush_interval: float = Field(0.1, gt=0.0, le=2.0, description="seconds between table flushes")
    autostart: bool = Field(
        False,
        description="start a vet run with a paid (non-simulated) judge as soon as the TUI opens,"
        " without waiting for r (--autostart); a simulated judge always starts at once",
    )


class KeysConfig(_Section):
    """``[keys]``: the TUI's keys by binding id, e.g. ``"run.start" = "ctrl+r"`` (F1 help lists
    each key's id; several keys: ``"f2,ctrl+h"``). Textual's keymap applies them."""

    model_config = {"extra": "allow"}

    @model_validator(mode="after")
    def _keys_are_strings(self) -> KeysConfig:
        for name, value in (self.model_extra or {}).items():
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f'{name}: a key such as "f2" or "ctrl+r", not {value!r}')
        return self

    def keymap(self) -> dict[str, str]:
        return {name: str(value) for name, value in (self.model_extra or {}).items()}


class LogConfig(_Section):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = Field(
        "INFO",
        description="level of the log file (quiztui locate log); QUIZTUI_LOG_LEVEL overrides it",
    )

    @field_validator("level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value


class FormatsConfig(_Section):
    strict: bool = Field(
        False,
        description="stop at a quiz file's first bad item (exit 2) instead of loading the good"
        " items and listing the skipped ones (--strict)",
    )


class ImportConfig(_Section):
    """``[import]``: which CSV column or JSON Lines field holds what, for names quiztui does not
    know; the same roles as ``--columns``, which wins role by role."""

    question: str | None = Field(None, description="the column holding the question text")
    answer: str | None = Field(
        None, description="the column holding the key (a letter, an index or the option's text)"
    )
    options: list[str] | None = Field(
        None, description='the option columns, in order, e.g. ["Opt1", "Opt2", "Opt3"]'
    )
    choices: str | None = Field(
        None, description="a column holding all options as one list (JSON or Python literal)"
    )
    category: str | None = Field(None, description="the column holding the category")

    @field_validator("options", mode="before")
    @classmethod
    def _options(cls, value: Any) -> Any:  # QUIZTUI_IMPORT_OPTIONS="Opt1+Opt2+Opt3"
        return (
            [n.strip() for n in value.split("+") if n.strip()] if isinstance(value, str) else value
        )

    def columns(self) -> dict[str, tuple[str, ...]]:
        """role -> names, for the roles set here."""
        out: dict[str, tuple[str, ...]] = {}
        for role in type(self).model_fields:
            value = getattr(self, role)
            if value:
                out[role] = tuple(value) if isinstance(value, list) else (value,)
        return out


class Config(_Section):
    judge: JudgeConfig = Field(default_factory=JudgeConfig)  # type: ignore[arg-type]
    vet: VetConfig = Field(default_factory=VetConfig)  # type: ignore[arg-type]
    grade: GradeConfig = Field(default_factory=GradeConfig)  # type: ignore[arg-type]
    robustness: RobustnessConfig = Field(default_factory=RobustnessConfig)  # type: ignore[arg-type]
    review: ReviewConfig = Field(default_factory=ReviewConfig)  # type: ignore[arg-type]
    lint: LintConfig = Field(default_factory=LintConfig)  # type: ignore[arg-type]
    simulated: SimulatedConfig = Field(default_factory=SimulatedConfig)  # type: ignore[arg-type]
    cost: CostConfig = Field(default_factory=CostConfig)  # type: ignore[arg-type]
    batch: BatchConfig = Field(default_factory=BatchConfig)  # type: ignore[arg-type]
    store: StoreConfig = Field(default_factory=StoreConfig)  # type: ignore[arg-type]
    ui: UIConfig = Field(default_factory=UIConfig)  # type: ignore[arg-type]
    log: LogConfig = Field(default_factory=LogConfig)  # type: ignore[arg-type]
    keys: KeysConfig = Field(default_factory=KeysConfig)  # type: ignore[arg-type]
    formats: FormatsConfig = Field(default_factory=FormatsConfig)  # type: ignore[arg-type]
    # "import" is a Python keyword: the attribute is import_, the TOML table and variables "import".
    import_: ImportConfig = Field(default_factory=ImportConfig, alias="import")  # type: ignore[arg-type]

    def db_path(self) -> Path:
        return Path(self.store.path).expanduser() if self.store.path else default_db_path()


def section_name(field: str) -> str:
    """A config section's name in TOML and QUIZTUI_ variables (``import_`` -> ``import``)."""
    return Config.model_fields[field].alias or field


def _format_error(source: str, exc: ValidationError) -> str:
    err = exc.errors()[0]
    key = ".".join(str(p) for p in err["loc"])
    msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{source}: {key}: {msg}{more}"


def _env_overrides(environ: dict[str, str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    sections = {section_name(name): name for name in Config.model_fields}
    for name, value in environ.items():
        if not name.startswith("QUIZTUI_") or name in LOCATION_VARIABLES:
            continue
        section, _, key = name[len("QUIZTUI_") :].lower().partition("_")
        if section in sections and key:
            out.setdefault(sections[section], {})[key] = value
    return out


def load_config(path: Path | None = None, environ: dict[str, str] | None = None) -> Config:
    """Read the config file (missing is fine unless given explicitly) and apply env overrides."""
    explicit = path is not None
    path = path or config_path()
    data: dict[str, Any] = {}
    if path.exists() or explicit:
        import tomllib  # only when there is a file to read (none: a start-up without it)

        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"{path}: config file not found") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read config: {exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_error(str(path), exc)) from None
    env = _env_overrides(dict(os.environ if environ is None else environ))
    if env:
        merged = config.model_dump()
        for section, values in env.items():
            merged[section].update(values)
        try:
            config = Config.model_validate(merged)
        except ValidationError as exc:
            raise ConfigError(_format_error("environment QUIZTUI_*", exc)) from None
    return config


def default_config_text() -> str:
    """The default config as TOML (written by tomli-w) with each key's description as a comment."""
    lines = [
        "# quiztui configuration. Precedence: command-line flags > QUIZTUI_<SECTION>_<KEY>",
        "# environment variables > this file > built-in defaults.",
        "",
    ]
    import tomli_w  # writing a config file only (not at every start)

    defaults = Config()
    for section, field in Config.model_fields.items():
        model = getattr(defaults, section)
        section = section_name(section)
        lines.append(f"[{section}]")
        if section == "keys":  # a table of binding id = keys, empty by default
            lines.append('# "run.start" = "ctrl+r"   (binding id = keys; F1 help lists the ids)')
        for key, info in type(model).model_fields.items():
            value = getattr(model, key)
            if info.description:
                lines.append(f"# {info.description}")
            if value is None:
                lines.append(f"# {key} = ")
            elif isinstance(value, dict) and not value:  # a table: an example, commented out
                lines.append(f'# [{section}.{key}."NAME"]')
            else:
                lines.append(tomli_w.dumps({key: value}).strip())
        lines.append("")
        del field
    return "\n".join(lines)


def write_default_config(path: Path, *, force: bool = False) -> Path:
    if path.exists() and not force:
        raise ConfigError(f"{path}: already exists (use --force to overwrite)")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(default_config_text(), encoding="utf-8")
    return path
