"""Every import path the documentation shows is one that works.

The README, the pages under ``doc/`` and the example scripts name modules and
objects in two ways: import lines (``from skdp_synth.report import
fidelity_report``, in code blocks, doctests and scripts) and dotted names in
prose or roles (``skdp_synth.workloads.MarginalWorkload``). A module that moves
breaks both without failing a doctest, since most of them are prose. Here each
one is imported or resolved on its own.

The four module paths that moved into family packages still import, with a
``FutureWarning`` that names the new path; the docs use the new paths, and
these tests check that the old ones keep warning until they are removed.
"""

import importlib
import re
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIP_PARTS = {"_build", "generated", "auto_examples", "_templates"}

#: deprecated module -> the package its names moved to
SHIMS = {
    "skdp_synth.selection": "skdp_synth.gaussian_release",
    "skdp_synth.shrinkage": "skdp_synth.gaussian_release",
    "skdp_synth.invariants": "skdp_synth.gaussian_release",
    "skdp_synth.attribute_workload": "skdp_synth.workloads",
}

# ``from skdp_synth.x import a, b`` (parenthesised over lines, or on one line)
# and ``import skdp_synth.x``; doctest prompts and indentation allowed.
FROM_IMPORT = re.compile(
    r"^[ \t]*(?:>>>[ \t]*|\.\.\.[ \t]*)?from[ \t]+(skdp_synth[\w.]*)[ \t]+import[ \t]+"
    r"(\([^)]*\)|[^\n#]+)",
    re.MULTILINE,
)
PLAIN_IMPORT = re.compile(
    r"^[ \t]*(?:>>>[ \t]*|\.\.\.[ \t]*)?import[ \t]+(skdp_synth[\w.]*)", re.MULTILINE
)
# a dotted name: not part of a path (skdp_synth/...) or of a longer word
DOTTED = re.compile(r"(?<![\w/.])(skdp_synth(?:\.[A-Za-z_]\w*)+)")


def _sources():
    yield ROOT / "README.md"
    for sub in ("doc", "examples"):
        for path in sorted((ROOT / sub).rglob("*")):
            rel = path.relative_to(ROOT)
            if (
                path.suffix in {".md", ".rst", ".py", ".txt"}
                and not SKIP_PARTS.intersection(rel.parts)
                and path.name != "api.rst"
            ):
                yield path


def _clean(name):
    return name.strip().strip("()").split(" as ")[0].strip()


def _references():
    """``(where, dotted name)`` for every import and dotted name shown."""
    found = {}
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        rel = str(path.relative_to(ROOT))

        def add(name, start, rel=rel, text=text):
            line = text[:start].count("\n") + 1
            found.setdefault(name, f"{rel}:{line}")

        for m in FROM_IMPORT.finditer(text):
            body = re.sub(r"^[ \t]*(?:>>>|\.\.\.)", "", m.group(2), flags=re.M)
            for name in map(_clean, body.replace("\n", ",").split(",")):
                if name and name != "*":
                    add(f"{m.group(1)}.{name}", m.start())
        for m in PLAIN_IMPORT.finditer(text):
            add(m.group(1), m.start())
        for m in DOTTED.finditer(text):
            add(m.group(1).rstrip("."), m.start())
    return sorted((where, name) for name, where in found.items())


REFERENCES = _references()


def _import_fresh(modname):
    """Import ``modname`` as a first import would (shims warn only then)."""
    for name in [n for n in sys.modules if n == modname]:
        del sys.modules[name]
    parent, _, child = modname.rpartition(".")
    if parent in sys.modules and child in vars(sys.modules[parent]):
        delattr(sys.modules[parent], child)
    return importlib.import_module(modname)


def _resolve(dotted):
    """Import the longest module prefix of ``dotted``; getattr the rest."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        modname = ".".join(parts[:cut])
        try:
            importlib.util.find_spec(modname)
        except (ImportError, ValueError):
            continue
        if importlib.util.find_spec(modname) is None:
            continue
        if modname in SHIMS:
            with pytest.warns(FutureWarning, match=re.escape(SHIMS[modname])):
                obj = _import_fresh(modname)
        else:
            obj = importlib.import_module(modname)
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def test_the_scan_finds_the_documented_paths():
    names = {name for _, name in REFERENCES}
    assert "skdp_synth.report.fidelity_report" in names  # README's quickstart
    assert "skdp_synth.preprocessing.BooleanEncoder" in names
    assert "skdp_synth.private_sampling.sampling_epsilon" in names  # an example
    assert len(REFERENCES) > 30


@pytest.mark.parametrize(
    "where, name", REFERENCES, ids=[f"{n} ({w})" for w, n in REFERENCES]
)
def test_the_documented_path_resolves(where, name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a deprecated path warns: not in the docs
        if any(name == old or name.startswith(old + ".") for old in SHIMS):
            pytest.fail(f"{where}: {name} is a deprecated path, use the new one")
        assert _resolve(name) is not None


@pytest.mark.parametrize("old, new", sorted(SHIMS.items()))
def test_a_deprecated_path_warns_and_names_the_new_one(old, new):
    with pytest.warns(FutureWarning, match=re.escape(new)):
        shim = _import_fresh(old)
    package = importlib.import_module(new)
    assert shim.__all__
    for name in shim.__all__:
        # the same object through either path
        assert getattr(shim, name) is getattr(package, name), name
