"""Every example script runs to completion (figures only if matplotlib is there)."""

import pathlib
import runpy

import pytest

EXAMPLES = sorted(
    (pathlib.Path(__file__).parent.parent / "examples").glob("*/plot_*.py")
)


def test_examples_exist():
    assert len(EXAMPLES) >= 4


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs(path, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # figures are written here
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()
