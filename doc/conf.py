"""Sphinx configuration of the skdp_synth documentation.

``make docs`` builds the whole site (gallery executed) with warnings as
errors; ``tests/test_docs.py`` builds it with ``-D plot_gallery=0`` on every
``make test``.  The API reference (``api.rst``) is generated here from the
``__all__`` of every public module, so a name added, moved or removed is
documented (or fails the build) without editing a list by hand.
"""

import ast
import importlib
import importlib.util
import inspect
import os
import pkgutil
import re
import sys
from pathlib import Path

from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle

HERE = Path(__file__).resolve().parent
# The test builds a copy of doc/ elsewhere and says where the repository is.
ROOT = Path(os.environ.get("SKDP_DOCS_ROOT", HERE.parent)).resolve()
sys.path.insert(0, str(ROOT))

import skdp_synth  # noqa: E402

project = "skdp_synth"
author = "skdp_synth developers"
copyright = "skdp_synth developers"
release = skdp_synth.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinxcontrib.bibtex",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "generated/*.examples", "**.ipynb_checkpoints"]
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]
suppress_warnings = ["myst.header"]  # privacy.md's headings skip levels

html_theme = "pydata_sphinx_theme"
html_title = f"skdp_synth {release}"
html_theme_options = {"navigation_with_keys": False}
html_static_path = []

autosummary_generate = True
templates_path = ["_templates"]
nitpicky = True  # an unresolved reference is a warning, hence an error
# No inventories offline: references into scikit-learn stay plain text, and
# private names (documented in the code, not on the site) are not targets.
nitpick_ignore_regex = [
    (r"py:.*", r"(sklearn|imblearn)\..*"),
    (r"py:.*", r"(.*\.)?_[A-Za-z].*"),
]
autodoc_typehints = "none"  # numpydoc sections carry the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

intersphinx_mapping = {}  # the site is built offline; no inventories

# ---------------------------------------------------------------- bibliography
bibtex_bibfiles = ["references.bib"]
bibtex_reference_style = "label"


class KeyLabelStyle(BaseLabelStyle):
    """Label every entry with its key: ``[Nikolov2013]``, as the code cites it."""

    def format_labels(self, sorted_entries):
        for entry in sorted_entries:
            yield entry.key


class KeyStyle(UnsrtStyle):
    default_label_style = "skdp_key"


register_plugin("pybtex.style.labels", "skdp_key", KeyLabelStyle)
register_plugin("pybtex.style.formatting", "skdp_style", KeyStyle)
bibtex_default_style = "skdp_style"

# --------------------------------------------------------------------- gallery
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "within_subsection_order": "FileNameSortKey",
    "doc_module": ("skdp_synth",),
    "backreferences_dir": "generated/backreferences",
    "reference_url": {"skdp_synth": None},
}


# --------------------------------------------------------- API reference page
def _deprecated(modname):
    """Whether ``modname`` is a shim kept for an old import path.

    A shim's docstring opens with "Deprecated path" and importing it warns
    (``FutureWarning``); its names are documented under their new package,
    so the shim is read, not imported.
    """
    origin = importlib.util.find_spec(modname).origin
    if not origin or not origin.endswith(".py"):
        return False
    doc = ast.get_docstring(ast.parse(Path(origin).read_text(encoding="utf-8")))
    return bool(doc) and doc.startswith("Deprecated path")


def public_modules():
    """``skdp_synth`` and every module or package under it without a ``_``.

    Private modules (``_release.py``...) hold the code of a family package
    whose ``__init__`` re-exports it: the package is documented, the private
    module is not. Deprecated shims are skipped.
    """
    names = ["skdp_synth"]
    for info in pkgutil.walk_packages(skdp_synth.__path__, "skdp_synth."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            if not _deprecated(info.name):
                names.append(info.name)
    return names


def _kind(obj):
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "data"


def _home(obj, exporters):
    """The module an object is documented in: the public module it is
    defined in (or the public package of its private module), else the first
    public module exporting it."""
    defined = getattr(obj, "__module__", None) or ""
    prefixes = [m for m in exporters if defined == m or defined.startswith(m + ".")]
    return max(prefixes, key=len) if prefixes else exporters[0]


def _defines(modname, name):
    """Whether ``modname`` assigns ``name`` at top level (a constant's home).

    A package counts its private modules (``_name.py``) as its own: a family
    package's constants are defined there and re-exported by its
    ``__init__``.
    """
    origin = Path(importlib.util.find_spec(modname).origin)
    files = [origin]
    if origin.name == "__init__.py":
        files += sorted(origin.parent.glob("_*.py"))
    for file in files:
        tree = ast.parse(file.read_text(encoding="utf-8"))
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AnnAssign):
                targets = [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
    return False


def write_api_page(path: Path) -> None:
    """One section per public module; each object documented once.

    An object is documented in full in its home module (:func:`_home`); every
    other public module that exports it gets a short alias entry pointing
    there, so that references through either import path resolve.
    """
    modules = {}
    for modname in public_modules():
        mod = importlib.import_module(modname)
        names = [n for n in getattr(mod, "__all__", []) if n != "__version__"]
        if names:
            modules[modname] = (mod, names)
    # who exports an object: by identity for classes and functions; by name
    # and value for constants (equal small ints share an identity)
    exporters: dict[object, list[str]] = {}

    def key(name, obj):
        return ("data", name, repr(obj)) if _kind(obj) == "data" else id(obj)

    for modname, (mod, names) in modules.items():
        for name in names:
            exporters.setdefault(key(name, getattr(mod, name)), []).append(modname)

    def data_home(name, obj):
        where = exporters[key(name, obj)]
        return next((m for m in where if _defines(m, name)), where[0])

    out = [
        ".. This file is generated by doc/conf.py; do not edit.",
        "",
        ".. _api:",
        "",
        "API reference",
        "=============",
        "",
        "Every name in the ``__all__`` of every public module. Each object is",
        "documented once, in the module that defines it; a module that",
        "re-exports it (``skdp_synth`` re-exports the estimators) links there.",
        "",
    ]
    for modname, (mod, names) in modules.items():
        title = f":mod:`{modname}`"
        out += [title, "-" * len(title), "", f".. automodule:: {modname}", ""]
        out += ["   :no-members:", ""]
        own = {"class": [], "function": [], "data": []}
        aliases = []
        for name in names:
            obj = getattr(mod, name)
            kind = _kind(obj)
            if kind == "data":
                home = data_home(name, obj)
            else:
                home = _home(obj, exporters[id(obj)])
            if home == modname:
                own[kind].append(name)
            else:
                aliases.append((kind, name, home))
        for kind, label in (
            ("class", "Classes"),
            ("function", "Functions"),
            ("data", "Constants"),
        ):
            if not own[kind]:
                continue
            out += [f".. rubric:: {label}", "", f".. currentmodule:: {modname}", ""]
            out += [".. autosummary::", "   :toctree: generated/", ""]
            out += [f"   {name}" for name in own[kind]] + [""]
        if aliases:
            out += [".. rubric:: Re-exported here", ""]
            out += [f".. currentmodule:: {modname}", ""]
            for kind, name, home in aliases:
                role = {"class": "class", "function": "func", "data": "data"}[kind]
                directive = {"class": "class", "function": "function", "data": "data"}
                out += [f".. py:{directive[kind]}:: {name}"]
                out += ["   :no-index-entry:", ""]
                out += [f"   Alias of :{role}:`{home}.{name}`.", ""]
    text = "\n".join(out) + "\n"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _skip_foreign_members(app, what, name, obj, skip, options):
    """Members inherited from scikit-learn / imbalanced-learn are documented
    there (``set_output``, ``set_fit_request``, ``get_metadata_routing``...)."""
    module = getattr(obj, "__module__", None) or type(obj).__module__ or ""
    if module.split(".")[0] in {"sklearn", "imblearn"}:
        return True
    return skip


def moved_modules():
    """``{old path: new path}`` of the deprecated shims.

    A shim's docstring names its new home: ``Deprecated path: moved to
    :mod:`skdp_synth.gaussian_release` ...``.
    """
    moved = {}
    for info in pkgutil.walk_packages(skdp_synth.__path__, "skdp_synth."):
        if _deprecated(info.name):
            origin = importlib.util.find_spec(info.name).origin
            doc = ast.get_docstring(ast.parse(Path(origin).read_text("utf-8")))
            new = re.search(r":mod:`([\w.]+)`", doc)
            if new:
                moved[info.name] = new.group(1)
    return moved


MOVED = moved_modules()


def _resolve_moved(app, env, node, contnode):
    """A reference through a deprecated path resolves to the new path.

    Docstrings written before a module moved (a ``:mod:`` role to its old path)
    link to the name's new home instead of failing the build.
    """
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    for old, new in MOVED.items():
        if target == old or target.startswith(old + "."):
            domain = env.get_domain("py")
            return domain.resolve_xref(
                env,
                node["refdoc"],
                app.builder,
                node["reftype"],
                new + target[len(old) :],
                node,
                contnode,
            )
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign_members)
    app.connect("missing-reference", _resolve_moved)


write_api_page(HERE / "api.rst")
