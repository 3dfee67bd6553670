"""The built wheel: every data file the code names is inside it, and the package reads its data
only through :mod:`quiztui.resources` (never from the source tree).

The wheel is built once per test session (``built_wheel`` in conftest.py) with the build backend
installed in the venv (hatchling is in the test extra), without build isolation, so no index is
needed. ``.ci/wheel_smoke.sh`` goes
further: it installs the wheel into a fresh venv outside the checkout and runs the commands.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import textwrap
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import quiztui
from quiztui import resources
from quiztui.errors import ConfigError
from quiztui.pipeline.prompts import PROMPT_FOR_MODE, load_prompt
from quiztui.tui.themes import DEFAULT_THEME, load_themes, theme_from_mapping

REPO = Path(__file__).resolve().parents[1]
DATA = "quiztui/_data"


@pytest.fixture(scope="module")
def wheel(built_wheel: Path) -> Path:
    return built_wheel  # built once per session for every worker (tests/conftest.py)


@pytest.fixture(scope="module")
def names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        listed = zf.namelist()
    assert len(listed) == len(set(listed)), "a path is in the wheel twice"
    return set(listed)


def _stems(names: set[str], folder: str, suffix: str) -> set[str]:
    return {
        n[len(folder) + 1 : -len(suffix)]
        for n in names
        if n.startswith(folder + "/") and n.endswith(suffix) and "/" not in n[len(folder) + 1 :]
    }


def prompts_named_in_code() -> set[str]:
    """Every prompt a run loads: the mode, grader, review, robustness and generate tables, and
    any literal ``load_prompt("…")`` in the package."""
    from quiztui.pipeline import generate, grade, review, robustness

    named = set(PROMPT_FOR_MODE.values())
    for files in grade.PROMPTS.values():
        named.update(files)
    named.update(review.PROMPTS.values())
    named.update(robustness.PROMPTS.values())
    named.update(generate.PROMPT_NAMES.values())
    literal = re.compile(r"load_prompt\(\s*[\"']([A-Za-z0-9_]+)[\"']")
    for path in (REPO / "quiztui").rglob("*.py"):
        named.update(literal.findall(path.read_text(encoding="utf-8")))
    return named


def test_every_prompt_the_code_names_is_shipped_and_in_the_wheel(names: set[str]) -> None:
    top_level = {p.stem for p in (REPO / "prompts").glob("*.md")}
    in_wheel = _stems(names, f"{DATA}/prompts", ".md")
    used = prompts_named_in_code()
    assert len(used) >= 15, sorted(used)  # the tables above were found
    assert used <= top_level, sorted(used - top_level)
    assert used <= in_wheel, sorted(used - in_wheel)
    assert in_wheel == top_level == set(resources.prompt_names())


def test_every_theme_and_the_gold_set_are_in_the_wheel_byte_for_byte(
    wheel: Path, names: set[str]
) -> None:
    top_level = sorted((REPO / "themes").glob("*.toml"))
    known = [t.name for t in resources.theme_files()]
    assert known == [p.name for p in top_level] and f"{DEFAULT_THEME}.toml" in known
    copies = {f"{DATA}/themes/{p.name}": p for p in top_level} | {
        f"{DATA}/gold/opentdb_sample.json": REPO / "sample_quizzes" / "opentdb_sample.json",
        f"{DATA}/demo/planted_errors.json": REPO / "sample_quizzes" / "planted_errors.json",
        f"{DATA}/demo/planted_errors.truth.json": REPO
        / "sample_quizzes"
        / "planted_errors.truth.json",
    }
    with zipfile.ZipFile(wheel) as zf:
        for inside, source in copies.items():
            assert zf.read(inside) == source.read_bytes(), inside
        for name in known:  # every packaged theme parses as a Textual theme
            data = tomllib.loads(zf.read(f"{DATA}/themes/{name}").decode())
            theme_from_mapping(data, name.removesuffix(".toml"))
    assert resources.default_gold().name == "opentdb_sample.json"


def test_every_package_file_is_in_the_wheel(names: set[str]) -> None:
    """Modules, the stylesheets, the MiniLM vocabulary and its NOTICE: the whole package."""
    package = REPO / "quiztui"
    own = {
        p.relative_to(REPO).as_posix()
        for p in package.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and not p.relative_to(package).as_posix().startswith(_LINKED)
    }
    assert {"quiztui/tui/app.tcss", f"{DATA}/minilm/vocab.txt", f"{DATA}/minilm/NOTICE"} <= own
    assert own <= names, sorted(own - names)
    css = {
        f"quiztui/tui/{m}"
        for p in (package / "tui").rglob("*.py")
        for m in re.findall(r"CSS_PATH\s*=\s*\"([^\"]+)\"", p.read_text(encoding="utf-8"))
    }
    assert css and css <= names, css


_LINKED = ("_data/prompts", "_data/themes", "_data/gold", "_data/demo")


def test_the_sdist_builds_the_same_wheel(tmp_path: Path, names: set[str]) -> None:
    """The sdist carries the sources of the packaged data (not the checkout's links to them),
    and a wheel built from it holds the same files as one built from the checkout."""
    out = tmp_path / "sdist"
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", str(out)],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=300,
    )
    (sdist,) = out.glob("quiztui-*.tar.gz")
    with tarfile.open(sdist) as tf:
        tf.extractall(tmp_path / "src", filter="data")
        inside = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    table = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["hatch"]
    sources = table["build"]["targets"]["wheel"]["hooks"]["custom"]["data"]
    for source, target in sources.items():
        assert any(n == source or n.startswith(source + "/") for n in inside), source
        assert not any(n.startswith(target) for n in inside), target
    (root,) = (tmp_path / "src").iterdir()
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation"]
        + ["-w", str(tmp_path / "dist"), str(root)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (rebuilt,) = (tmp_path / "dist").glob("quiztui-*.whl")
    with zipfile.ZipFile(rebuilt) as zf:
        assert set(zf.namelist()) == names


def test_version_and_dependency_pins(wheel: Path) -> None:
    """One version (quiztui/__init__.py); ranges in the metadata, exact pins in constraints.txt."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "version" not in project and "version" in project["dynamic"]
    with zipfile.ZipFile(wheel) as zf:
        meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(zf.read(meta_name).decode())
    assert meta["Version"] == quiztui.__version__
    pins: dict[str, str] = {}
    for line in (REPO / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            req = Requirement(line)
            (spec,) = req.specifier
            assert spec.operator == "==", line
            pins[_canonical(req.name)] = spec.version
    checked = 0
    for raw in meta.get_all("Requires-Dist") or []:
        req = Requirement(raw)
        if req.marker is not None and req.marker.evaluate({"extra": "embed"}):
            continue  # the optional embed extra is not pinned
        if req.marker is None:  # a runtime dependency: a range a user's install can resolve
            assert all(s.operator != "==" for s in req.specifier), f"pinned: {raw}"
        pinned = pins.get(_canonical(req.name))
        assert pinned is not None, f"{req.name} has no pin in constraints.txt"
        assert req.specifier.contains(pinned, prereleases=True), f"{req.name}=={pinned} vs {raw}"
        checked += 1
    assert checked >= 20


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_no_module_finds_files_relative_to_its_own_source() -> None:
    offenders = [
        f"{p.relative_to(REPO)}:{n}"
        for p in (REPO / "quiztui").rglob("*.py")
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if "__file__" in line and not line.lstrip().startswith("#")
    ]
    assert offenders == []


def test_the_editable_checkout_reads_the_top_level_files_through_the_package() -> None:
    """``pip install -e .`` links the packaged places to the top-level sources, so an edit to
    ``prompts/`` is what the next run sends (see hatch_build.py)."""
    prompt = resources.prompt_file("judge_assertions")
    assert isinstance(prompt, Path)
    assert prompt.is_relative_to(Path(quiztui.__file__).parent / "_data")
    assert prompt.resolve() == (REPO / "prompts" / "judge_assertions.md").resolve()
    assert resources.themes_dir().is_dir()
    assert {t.name for t in load_themes().themes} >= {"quiztui-dark", "quiztui-light"}


def test_a_user_prompt_override_wins_and_a_missing_prompt_names_both_places(
    tmp_path: Path,
) -> None:
    override = tmp_path / "prompts"
    override.mkdir()
    (override / "judge_assertions.md").write_text("=== SYSTEM ===\nmine\n=== USER ===\nU\n")
    assert load_prompt("judge_assertions", override).system == "mine"
    assert load_prompt("judge_question", override).path.endswith("judge_question.md")
    with pytest.raises(ConfigError) as err:
        load_prompt("no_such_prompt", override)
    assert str(override) in str(err.value) and "package" in str(err.value)


# Run in a child python whose quiztui is the built wheel (unpacked, or imported from the .whl
# itself as a zip), with the checkout not on sys.path: every lookup must be served from there.
_FROM_WHEEL = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import quiztui
    from quiztui import resources
    from quiztui.embed.minilm import _build_tokenizer  # noqa: F401  (imports without the extra)
    from quiztui.pipeline.calibrate import default_gold_path, load_gold
    from quiztui.pipeline.prompts import load_prompt
    from quiztui.tui.themes import load_themes
    from quiztui.formats import load_quiz

    origin, checkout = sys.argv[1], Path(sys.argv[2])
    assert quiztui.__file__.startswith(origin), quiztui.__file__
    assert resources.checkout_root() is None
    names = resources.prompt_names()
    for name in names:
        assert load_prompt(name).user.strip(), name
    themes = load_themes()
    assert not themes.problems and len(themes.themes) >= 2, themes.problems
    gold_path = default_gold_path()
    gold = load_gold(gold_path, 5)
    assert not gold_path.resolve().is_relative_to(checkout.resolve()), gold_path
    demo = load_quiz(resources.as_path(resources.demo_quiz(), with_siblings=True))
    assert demo.truth, "the demo quiz's truth file travels with it"
    vocab = resources.as_path(resources.minilm_vocab()).read_text(encoding="utf-8")
    print(len(names), len(themes.themes), gold.name, len(demo.questions), len(vocab.split()))
    """
)


@pytest.mark.parametrize("unpacked", [True, False], ids=["unpacked", "zipped"])
def test_the_wheel_serves_every_lookup_without_the_checkout(
    wheel: Path, tmp_path: Path, unpacked: bool
) -> None:
    if unpacked:
        site = tmp_path / "site"
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(site)
        origin = str(site)
    else:
        origin = str(wheel)
    script = tmp_path / "probe.py"
    script.write_text(_FROM_WHEEL, encoding="utf-8")
    # -P: not even the script's folder first; PYTHONPATH puts the wheel before site-packages,
    # where the editable install's .pth adds the checkout (last on sys.path).
    out = subprocess.run(
        [sys.executable, "-P", str(script), origin, str(REPO)],
        cwd=tmp_path,
        env={"PYTHONPATH": origin, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    prompts, themes, gold, *rest = out.stdout.split(" ", 3)
    assert int(prompts) == len(list((REPO / "prompts").glob("*.md")))
    assert int(themes) >= 2
    assert "opentdb_sample.json" in out.stdout and "5 of 50 questions" in out.stdout
