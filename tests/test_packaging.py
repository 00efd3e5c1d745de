"""Project habits that a clean clone must keep."""

import re
import tomllib
from pathlib import Path

import skdp_synth

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_one_version_source():
    project = PYPROJECT["project"]
    assert "version" not in project, "the version literal lives in skdp_synth"
    assert "version" in project["dynamic"]
    attr = PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "skdp_synth.__version__"
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|(a|b|rc)\d+)?", skdp_synth.__version__)


def test_no_placeholder_project_url():
    for url in PYPROJECT["project"].get("urls", {}).values():
        assert "example" not in url and "invalid" not in url, url


def test_docs_extra_is_part_of_dev():
    extras = PYPROJECT["project"]["optional-dependencies"]
    names = {re.split(r"[<>=\[ ]", req)[0] for req in extras["docs"]}
    assert {"sphinx", "numpydoc", "sphinx-gallery", "sphinxcontrib-bibtex"} <= names
    assert "skdp_synth[docs]" in extras["dev"]


def test_pre_commit_runs_ruff_check_and_format():
    text = (ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    assert "astral-sh/ruff-pre-commit" in text
    assert re.search(r"id: ruff-check\b", text)
    assert re.search(r"id: ruff-format\b", text)
