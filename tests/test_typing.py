"""The public API is typed: ``py.typed`` ships and a type
checker accepts a user script against the package.

``mypy`` is a dev extra; the check runs it with ``--follow-imports=silent``
on ``tests/_typing_user.py`` (about 2 s), so a public annotation that
disappears or changes fails here through the script's ``assert_type`` calls.
"""

import importlib.util
import inspect
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import skdp_synth
import skdp_synth.generator as generator
import skdp_synth.report as report
from skdp_synth import blocks, datasets, metrics, plan, preprocessing, privacy, release

ROOT = Path(__file__).resolve().parent.parent


def test_py_typed_is_shipped():
    assert (ROOT / "skdp_synth" / "py.typed").is_file()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["skdp_synth"]


def _public_callables():
    """Every public function, and every public method a class of the package
    defines itself (scikit-learn's inherited ones are typed there, or not)."""
    modules = [skdp_synth, blocks, datasets, metrics, plan, privacy, release]
    modules += [preprocessing, report]
    seen = set()
    for mod in modules:
        for name in mod.__all__:
            obj = getattr(mod, name)
            if id(obj) in seen or not callable(obj):
                continue
            seen.add(id(obj))
            if not inspect.isclass(obj):
                yield f"{mod.__name__}.{name}", obj
                continue
            for klass in obj.__mro__:
                if not klass.__module__.startswith("skdp_synth"):
                    continue
                for attr, member in vars(klass).items():
                    if attr.startswith("_") and attr != "__init__":
                        continue
                    if isinstance(member, property):
                        member = member.fget
                    elif isinstance(member, classmethod | staticmethod):
                        member = member.__func__
                    if inspect.isfunction(member) and id(member) not in seen:
                        seen.add(id(member))
                        yield f"{klass.__name__}.{attr}", member
    yield "generator.controlled_rows", generator.controlled_rows


CALLABLES = list(_public_callables())


@pytest.mark.parametrize("name, func", CALLABLES, ids=[n for n, _ in CALLABLES])
def test_public_callable_is_annotated(name, func):
    sig = inspect.signature(func)
    missing = [
        p.name
        for p in sig.parameters.values()
        if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty
    ]
    assert missing == [], f"{name}: parameters without annotation: {missing}"
    assert sig.return_annotation is not inspect.Signature.empty, f"{name}: no return"


def _mypy(script, tmp_path):
    env = dict(os.environ, MYPYPATH=str(ROOT))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--follow-imports=silent",
            "--ignore-missing-imports",  # scikit-learn and pandas ship no types
            "--no-error-summary",
            f"--cache-dir={tmp_path / 'mypy-cache'}",
            str(script),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )


def test_mypy_accepts_a_user_script(tmp_path):
    # not skipped when missing: make test installs the dev extras
    assert importlib.util.find_spec("mypy") is not None, (
        "mypy is missing: pip install -e '.[dev]'"
    )
    result = _mypy(ROOT / "tests" / "_typing_user.py", tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_sees_the_annotations(tmp_path):
    # the same checker must reject a wrong call: the annotations are read,
    # not lost behind an untyped decorator or base class
    bad = tmp_path / "bad_user.py"
    bad.write_text(
        "from skdp_synth import DampedPrivateSynthesizer\n"
        "est = DampedPrivateSynthesizer(epsilon='high')\n"
        "est.fit([[0, 1]]).sample('ten')\n"
    )
    result = _mypy(bad, tmp_path)
    assert result.returncode == 1
    out = result.stdout
    assert 'Argument "epsilon" to "DampedPrivateSynthesizer"' in out, out
    assert 'Argument 1 to "sample" of "SynthesizerMixin"' in out, out
