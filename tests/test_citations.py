"""Papers are cited by bibliography key, never by file number or spec section.

The code used to cite its source papers as "000"-"004" (their file numbers in
the project's private paper folder) and an unshipped spec as "SPEC §n".
Both are meaningless to a reader of the package; ``doc/references.bib`` holds
the real references and docstrings cite them with ``:cite:`Key```.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# "000".."004" as a paper citation, not as part of a number (30 000, 0.002).
PAPER_NUMBER = re.compile(r"(?<![\w.,\-])(?<!\d )(00[0-4])(?![\w\-]|[.,]\d| \d)")
SPEC = re.compile(r"SPEC\s+§")
CITE = re.compile(r"(?::cite(?::[pt])?:|\{cite(?::[pt])?\})`([^`]+)`")


def _files():
    yield ROOT / "README.md"
    for sub in ("skdp_synth", "doc", "examples", "benchmarks"):
        for path in sorted((ROOT / sub).rglob("*")):
            parts = path.relative_to(ROOT).parts
            if (
                path.suffix in {".py", ".md", ".rst", ".txt"}
                and not {"_build", "generated", "auto_examples"}.intersection(parts)
                and path.name != "api.rst"
            ):
                yield path


FILES = list(_files())


def test_the_scan_sees_the_package():
    assert any(
        p.name == "_release.py" and p.parent.name == "gaussian_release" for p in FILES
    )
    assert len(FILES) > 40


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_paper_numbers_or_spec_sections(path):
    bad = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if SPEC.search(line) or PAPER_NUMBER.search(line):
            bad.append(f"{lineno}: {line.strip()}")
    assert not bad, "cite by key (doc/references.bib), see /work/cite_fix.py:\n" + (
        "\n".join(bad)
    )


def test_the_patterns_catch_the_old_forms():
    for text in ("(002 Algorithm 3)", "paper 000 §5", "004 Lemma 13", "(001)"):
        assert PAPER_NUMBER.search(text), text
    for text in ("30 000 rows", "0.002", "20,000", "1e-004", "x000"):
        assert not PAPER_NUMBER.search(text), text
    assert SPEC.search("(SPEC §4)")


def test_every_cited_key_is_in_the_bibliography():
    bib = (ROOT / "doc" / "references.bib").read_text(encoding="utf-8")
    keys = set(re.findall(r"@\w+\{([^,\s]+),", bib))
    cited = set()
    for path in FILES:
        for group in CITE.findall(path.read_text(encoding="utf-8")):
            cited.update(k.strip() for k in group.split(","))
    assert cited, "no :cite: role found"
    assert cited <= keys, f"cited but not in doc/references.bib: {cited - keys}"
