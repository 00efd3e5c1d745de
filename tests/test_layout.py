"""The package's floors, enforced: no upward import, no import cycle.

The contracts live in ``pyproject.toml`` (``[tool.importlinter]``) and are
checked by import-linter (a dev extra), so ``make test`` fails on an import
that climbs a floor or closes a cycle.
"""

import ast
import importlib
import importlib.util
import inspect
import pathlib
import pkgutil
import subprocess
import sys
import tomllib

import pytest

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


# -- the size of the pieces: a maintainer reads a module, or a class, at one sitting

PACKAGE = ROOT / "skdp_synth"
MAX_MODULE_LINES = 1100
MAX_CLASS_LINES = 1000
MAX_TOP_LEVEL_FILES = 40
MAX_RELEASE_FIT_LINES = 40


def _modules():
    return sorted(PACKAGE.rglob("*.py"))


def test_no_module_is_over_the_line_limit():
    long = {}
    for path in _modules():
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_MODULE_LINES:
            long[str(path.relative_to(ROOT))] = n
    assert long == {}


def test_no_class_is_over_the_line_limit():
    long = {}
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_CLASS_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.name}"] = n
    assert long == {}


def test_the_package_top_level_stays_small():
    files = [p for p in PACKAGE.iterdir() if p.is_file() and p.suffix == ".py"]
    assert len(files) <= MAX_TOP_LEVEL_FILES


def test_the_release_fit_reads_as_its_stages():
    from skdp_synth import ProjectedGaussianRelease

    source = inspect.getsource(ProjectedGaussianRelease._fit)
    assert len(source.splitlines()) < MAX_RELEASE_FIT_LINES


# -- moved public modules keep working for two releases, and say where they went

MOVED = {
    "skdp_synth.selection": ("skdp_synth.gaussian_release", "select_mst"),
    "skdp_synth.shrinkage": ("skdp_synth.gaussian_release", "shrink_interactions"),
    "skdp_synth.invariants": ("skdp_synth.gaussian_release", "repair_rows"),
    "skdp_synth.attribute_workload": (
        "skdp_synth.workloads",
        "AttributeMarginalWorkload",
    ),
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_a_moved_module_warns_with_its_new_path(old):
    new, name = MOVED[old]
    sys.modules.pop(old, None)
    with pytest.warns(FutureWarning, match=new.replace(".", r"\.")):
        module = importlib.import_module(old)
    assert getattr(module, name) is getattr(importlib.import_module(new), name)
    assert set(module.__all__) <= set(importlib.import_module(new).__all__)


# -- no import cycle anywhere in the repository: the benchmarks too


def _local_imports(path, names):
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            module = (node.module or "").split(".")
            if node.level == 0 and module == ["benchmarks"]:
                found.update(a.name for a in node.names)
            elif node.level == 0 and module[0] == "benchmarks":
                found.add(module[1])
            elif node.level == 0 and module[0] in names:
                found.add(module[0])
            elif node.level == 1:
                found.update(m for m in (module[0],) if m in names)
                found.update(a.name for a in node.names if a.name in names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "benchmarks" and len(parts) > 1:
                    found.add(parts[1])
                elif parts[0] in names:
                    found.add(parts[0])
    return found & names


def test_the_benchmarks_import_no_cycle():
    folder = ROOT / "benchmarks"
    names = {p.stem for p in folder.glob("*.py")}
    graph = {p.stem: _local_imports(p, names) - {p.stem} for p in folder.glob("*.py")}
    cycles = []

    def visit(node, stack):
        for nxt in graph[node]:
            if nxt in stack:
                cycles.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in seen:
                seen.add(nxt)
                visit(nxt, stack + [nxt])

    seen = set()
    for start in sorted(graph):
        if start not in seen:
            seen.add(start)
            visit(start, [start])
    assert cycles == []
