"""Sphinx configuration of the skdp_synth documentation.

``make docs`` builds the whole site (gallery executed) with warnings as
errors; ``tests/test_docs.py`` builds it with ``-D plot_gallery=0`` on every
``make test``.  The API reference (``api.rst``) is generated here from the
``__all__`` of every public module, so a name added, moved or removed is
documented (or fails the build) without editing a list by hand.
"""

import importlib
import inspect
import os
import pkgutil
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
def public_modules():
    """``skdp_synth`` and every module or package under it without a ``_``."""
    names = ["skdp_synth"]
    for info in pkgutil.walk_packages(skdp_synth.__path__, "skdp_synth."):
        if not any(part.startswith("_") for part in info.name.split(".")):
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
    exporters: dict[int, list[str]] = {}
    for modname, (mod, names) in modules.items():
        for name in names:
            exporters.setdefault(id(getattr(mod, name)), []).append(modname)
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
            home = modname if kind == "data" else _home(obj, exporters[id(obj)])
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
                role = {"class": "class", "function": "func"}[kind]
                out += [f".. py:{'class' if kind == 'class' else 'function'}:: {name}"]
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


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign_members)


write_api_page(HERE / "api.rst")
