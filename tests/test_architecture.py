"""The layer contracts of DESIGN.md hold, and they would catch a breach.

The contracts live in pyproject.toml's ``[tool.importlinter]`` (run them by hand with
``lint-imports``). Here the import graph is built once with grimp; each contract is checked on it,
and then on copies with one forbidden import added, to show the contract is not vacuous.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from typing import Any

import grimp
import pytest
from conftest import REPO
from importlinter.application.use_cases import _register_built_in_contract_types
from importlinter.domain.contract import registry

import quiztui.core


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    from importlinter.api import read_configuration

    return read_configuration(str(REPO / "pyproject.toml"))


@pytest.fixture(scope="module")
def graph(config: dict[str, Any]) -> grimp.ImportGraph:
    session = config["session_options"]
    return grimp.build_graph(
        *session["root_packages"],
        include_external_packages=True,
        exclude_type_checking_imports=True,
        cache_dir=None,
    )


def check(config: dict[str, Any], contract_id: str, graph: grimp.ImportGraph) -> Any:
    _register_built_in_contract_types()
    options = next(c for c in config["contracts_options"] if c.get("id") == contract_id)
    contract = registry.get_contract_class(options["type"])(
        name=options["name"], session_options=config["session_options"], contract_options=options
    )
    return contract.check(copy.deepcopy(graph), verbose=False)


CONTRACTS = ("layers", "cli-only-from-cli", "core-pure", "no-cycles")


@pytest.mark.parametrize("contract_id", CONTRACTS)
def test_every_layer_contract_is_kept(
    config: dict[str, Any], graph: grimp.ImportGraph, contract_id: str
) -> None:
    result = check(config, contract_id, graph)
    assert result.kept, f"{contract_id}: {result.metadata}"


@pytest.mark.parametrize(
    ("importer", "imported", "broken"),
    [
        # The TUI reaching into the CLI (what tui/screens/calibrate.py once did).
        ("quiztui.tui.screens.calibrate", "quiztui.cli.calibrate", {"layers", "cli-only-from-cli"}),
        # A report writer borrowing a CLI helper (what report/grades.py once did).
        ("quiztui.report.grades", "quiztui.cli.calibrate", {"layers", "cli-only-from-cli"}),
        # The domain depending on the simulated judges (what core/logprobs.py once did).
        ("quiztui.core.logprobs", "quiztui.simulate.vet", {"layers", "core-pure"}),
        ("quiztui.core.bayes", "textual", {"core-pure"}),
        # A cycle inside core (lexical → kscore added, kscore → lexical below).
        ("quiztui.core.lexical", "quiztui.core.kscore", {"no-cycles"}),
    ],
)
def test_a_forbidden_import_breaks_its_contract(
    config: dict[str, Any], graph: grimp.ImportGraph, importer: str, imported: str, broken: set[str]
) -> None:
    bad = copy.deepcopy(graph)
    if imported == "textual" and "textual" not in bad.modules:
        bad.add_module("textual", is_squashed=True)
    bad.add_import(importer=importer, imported=imported, line_number=1, line_contents="import")
    if imported == "quiztui.core.kscore":
        assert not bad.direct_import_exists(importer=imported, imported=importer)
        bad.add_import(importer=imported, imported=importer, line_number=1, line_contents="import")
    got = {c for c in CONTRACTS if check(config, c, graph).kept and not check(config, c, bad).kept}
    assert got == broken


def test_core_holds_the_domain_only() -> None:
    core = REPO / "quiztui" / "core"
    assert not sorted(core.glob("*_oracle.py")), "simulated oracles belong in quiztui/simulate/"
    assert not (core / "simulation.py").exists()
    assert (REPO / "quiztui" / "simulate" / "vet.py").is_file()
    assert quiztui.core.__file__


def test_version_and_help_import_no_heavy_module() -> None:
    """`quiztui --version` loads no subcommand: no numpy, scipy, textual or pydantic."""
    code = (
        "import sys\n"
        "from quiztui.cli import main\n"
        "try:\n"
        "    main(['--version'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('numpy', 'scipy', 'textual', 'httpx', 'pydantic', 'quiztui.cli.vet')\n"
        "print('loaded=' + ','.join(sorted(m for m in heavy if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    version, loaded = out.stdout.splitlines()
    assert version.startswith("quiztui ")
    assert loaded == "loaded="
