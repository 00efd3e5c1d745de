"""The package's floors, enforced: no upward import, no import cycle.

The contracts live in ``pyproject.toml`` (``[tool.importlinter]``) and are
checked by import-linter (a dev extra), so ``make test`` fails on an import
that climbs a floor or closes a cycle.
"""

import importlib.util
import pathlib
import pkgutil
import subprocess
import sys
import tomllib

import skdp_synth

ROOT = pathlib.Path(__file__).resolve().parents[1]
CONFIG = ROOT / "pyproject.toml"


def _lint(config, cwd):
    code = (
        "import sys; from importlinter.cli import lint_imports; "
        f"sys.exit(lint_imports(config_filename={str(config)!r}, no_cache=True, "
        "no_logo=True))"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True
    )


def test_import_contracts_are_kept():
    # not skipped when missing: make test installs the dev extras, and an
    # unenforced layout check would pass silently
    assert importlib.util.find_spec("importlinter") is not None, (
        "import-linter is missing: pip install -e '.[dev]'"
    )
    result = _lint(CONFIG, ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_every_module_is_on_a_floor():
    # a new module must be placed: otherwise the layers contract ignores it
    config = tomllib.loads(CONFIG.read_text())["tool"]["importlinter"]
    (layers,) = [c for c in config["contracts"] if c["type"] == "layers"]
    placed = {name.strip() for layer in layers["layers"] for name in layer.split("|")}
    children = {m.name for m in pkgutil.iter_modules(skdp_synth.__path__)}
    assert children - placed == set()
    assert placed - children == set()


def test_the_check_fails_on_an_upward_import(tmp_path):
    # the same tool with the floors reversed must report the real imports
    bad = tmp_path / "reversed.toml"
    bad.write_text(
        "[tool.importlinter]\n"
        'root_package = "skdp_synth"\n'
        "[[tool.importlinter.contracts]]\n"
        'name = "reversed"\n'
        'type = "layers"\n'
        'containers = ["skdp_synth"]\n'
        'layers = ["validation", "base"]\n'
    )
    result = _lint(bad, ROOT)
    assert result.returncode == 1
    assert "BROKEN" in result.stdout and "skdp_synth.base" in result.stdout
