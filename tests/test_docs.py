"""The documentation site builds, warnings as errors (a broken reference fails).

``make docs`` builds the full site with the gallery executed; here the same
sources are built with ``-D plot_gallery=0`` (examples rendered, not run --
``tests/test_examples.py`` runs them) by the ``dummy`` builder, which reads,
cross-references and resolves every page and docstring but writes nothing.
The build runs on a copy of ``doc/`` so the suite leaves no generated files in
the tree.
"""

import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GENERATED = {"_build", "generated", "auto_examples", "api.rst"}


@pytest.mark.slow
def test_sphinx_build_has_no_warnings(tmp_path):
    src = tmp_path / "doc"
    shutil.copytree(
        ROOT / "doc", src, ignore=lambda d, names: GENERATED.intersection(names)
    )
    for name in ("README.md", "CONTRIBUTING.md"):  # included by doc pages
        shutil.copy(ROOT / name, tmp_path / name)
    env = dict(os.environ)
    env["SKDP_DOCS_ROOT"] = str(ROOT)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env["MPLBACKEND"] = "Agg"
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "dummy"]
    cmd += ["-D", "plot_gallery=0", str(src), str(tmp_path / "out")]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-6000:] + proc.stdout[-2000:]


def test_every_public_name_is_in_the_api_reference(tmp_path, monkeypatch):
    """The generated API page names every ``__all__`` entry of every module."""
    monkeypatch.setenv("SKDP_DOCS_ROOT", str(ROOT))

    # conf.py writes api.rst next to itself: load it from a copy
    shutil.copy(ROOT / "doc/conf.py", tmp_path / "conf.py")
    spec = importlib.util.spec_from_file_location("skdp_doc_conf", tmp_path / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    page = (tmp_path / "api.rst").read_text()
    for modname in conf.public_modules():
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", []):
            if name != "__version__":
                assert name in page, f"{modname}.{name} missing from the API page"
