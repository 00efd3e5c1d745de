"""What a new user reads first tells the same story everywhere.

* "Which method when" -- README.md, doc/index.rst, doc/getting_started.md
  and ``skdp-synth list`` -- gives the methods in one order (the start-here
  one first) with the same plain words and table sizes: those of the
  method registry (``skdp_synth/cli/_registry.py``), its one source.
* Every guide example that shows the privacy spent shows the pipeline's
  total (``pipe.epsilon_``: the encoder's private domains and the release),
  never a step's (``pipe[-1].epsilon_`` read 0.76 of the 1.0 spent on the
  openintro births14 table, the encoder's 0.24 left out).
* ``skdp-synth --help`` shows the command that drafts a schema.
"""

import ast
import doctest
import re
import warnings
from pathlib import Path

import pytest

from skdp_synth.cli import _main as cli
from skdp_synth.cli._registry import which_method_when

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
INDEX = ROOT / "doc" / "index.rst"
GETTING_STARTED = ROOT / "doc" / "getting_started.md"
#: the guide's pages: README.md and every Markdown page under doc/
GUIDE = [README, *sorted((ROOT / "doc").rglob("*.md"))]
GUIDE = [p for p in GUIDE if "_build" not in p.parts and "generated" not in p.parts]


def _markdown_table(path, heading):
    """``(header, rows)`` of the first table after ``heading``: cells stripped."""
    text = path.read_text(encoding="utf-8")
    start = text.index(f"\n{heading}\n")
    lines = text[start:].splitlines()[2:]
    table = []
    for line in lines:
        if line.startswith("|"):
            table.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif table:
            break
    header, rows = table[0], table[1:]
    rows = [r for r in rows if not set("".join(r)) <= set("-: ")]
    return header, rows


def _rst_list_table(path):
    """``(header, rows)`` of the first ``list-table`` of ``path``."""
    rows = []
    text = path.read_text(encoding="utf-8")
    body = text[text.index(".. list-table::") :].splitlines()[1:]
    for line in body:
        if line.startswith("   * - "):
            rows.append([line[len("   * - ") :].strip()])
        elif line.startswith("     - ") and rows:
            rows[-1].append(line[len("     - ") :].strip())
        elif line.strip() and not line.startswith("   :") and rows:
            break
    return rows[0], rows[1:]


def _as_records(header, rows):
    need, size = header.index("you need"), header.index("table size")
    return [(" ".join(r), r[need], r[size]) for r in rows]


def _list_records(capsys):
    """``(name line, need, sizes)`` per method, in ``skdp-synth list``'s order."""
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out.splitlines()
    records = []
    for line in out:
        if line.startswith("    for: "):
            records[-1][1] = line[len("    for: ") :]
        elif line.startswith("    table size: "):
            records[-1][2] = line[len("    table size: ") :]
        elif line and not line.startswith((" ", "*", "Which")):
            records.append([line, None, None])
    return [tuple(r) for r in records]


def _pages(capsys):
    return {
        "README.md": _as_records(*_markdown_table(README, "## Which method when")),
        "doc/getting_started.md": _as_records(
            *_markdown_table(GETTING_STARTED, "## Which method when")
        ),
        "doc/index.rst": _as_records(*_rst_list_table(INDEX)),
        "skdp-synth list": _list_records(capsys),
    }


def test_which_method_when_is_worded_the_same_everywhere(capsys):
    """The registry's order, plain words and sizes on every page, row by
    row: a page that reorders, rewords or resizes a method fails."""
    methods = which_method_when()
    assert methods[0].recommended and "start here" in methods[0].need
    assert all(m.need and m.sizes for m in methods)
    for where, records in _pages(capsys).items():
        assert len(records) == len(methods), where
        for method, (row, need, sizes) in zip(methods, records, strict=True):
            named = (
                method.name in row
                if where == "skdp-synth list"
                else (method.class_name in row and f"`{method.name}`" in row)
            )
            assert named, (where, method.name, row)
            assert (need, sizes) == (method.need, method.sizes), (where, method.name)


def test_which_method_when_states_table_sizes_in_rows():
    """Each method's sizes name rows or a size, in plain words."""
    for method in which_method_when():
        assert re.search(r"\brows\b|any size", method.sizes), method.name


def test_the_top_level_help_shows_how_to_draft_a_schema(capsys):
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["--help"])
    out = capsys.readouterr().out
    examples = out[out.index("examples:") :]
    commands = [
        line.split()[1] for line in examples.splitlines() if "skdp-synth " in line
    ]
    assert "schema" in commands
    assert commands.index("schema") < commands.index("synthesize")


# ----------------------------------------------------------- privacy spent

#: attributes that state what was spent
SPENT = ("epsilon_", "delta_", "privacy_guarantee_")


def _examples(path):
    """The doctest examples of a page, as parsed by doctest."""
    text = path.read_text(encoding="utf-8")
    return doctest.DocTestParser().get_examples(text, str(path))


def _step_reads(source, steps):
    """The spent attributes ``source`` reads off a pipeline's step:
    ``pipe[-1].epsilon_``, ``pipe.named_steps[...]``, ``pipe.steps[..]``,
    ``pipe._final_estimator.epsilon_``, or a name bound to one of them
    (``steps``, updated in place with the names ``source`` binds so)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []

    def is_step(node):
        if isinstance(node, ast.Subscript):
            return True  # pipe[-1], pipe.named_steps["x"], pipe.steps[-1][1]
        if isinstance(node, ast.Attribute) and node.attr in (
            "_final_estimator",
            "named_steps",
        ):
            return True
        return isinstance(node, ast.Name) and node.id in steps

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                if is_step(node.value) and not isinstance(node.value, ast.Name):
                    steps.add(target.id)
                else:
                    steps.discard(target.id)
        if (
            isinstance(node, ast.Attribute)
            and node.attr in SPENT
            and is_step(node.value)
        ):
            found.append(ast.unparse(node))
    return found


@pytest.mark.parametrize("page", GUIDE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_guide_example_reads_the_privacy_spent_off_a_step(page):
    """No example reads what was spent off one step of a pipeline (the
    release's share only, when the encoder learned a domain). A subscript
    of anything counts as a step: an estimator's own ``epsilon_`` is read
    off the estimator by name, as the damped and sampler pages do."""
    steps = set()
    bad = [
        (example.lineno + 1, read)
        for example in _examples(page)
        for read in _step_reads(example.source, steps)
    ]
    assert not bad, f"{page.name}: read off a step at lines {bad}"


def test_the_step_reads_are_found():
    """The check above finds the forms it refuses (and not the total)."""
    steps = set()
    assert _step_reads("pipe[-1].epsilon_, pipe[-1].delta_\n", steps) == [
        "pipe[-1].epsilon_",
        "pipe[-1].delta_",
    ]
    assert _step_reads("pipe.named_steps['r'].privacy_guarantee_\n", steps)
    assert _step_reads("pipe._final_estimator.epsilon_\n", steps)
    assert _step_reads("release = pipe[-1]\n", steps) == [] and steps == {"release"}
    assert _step_reads("release.epsilon_\n", steps) == ["release.epsilon_"]
    assert _step_reads("release.neighbouring_\n", steps) == []
    assert _step_reads("pipe.epsilon_, pipe.delta_\n", steps) == []


def _pages_printing_the_spent():
    """The guide's pages with an example that prints a pipeline's spent
    budget (reads ``.epsilon_`` or ``.delta_`` of a name and shows it)."""
    pages = []
    for page in GUIDE:
        for example in _examples(page):
            if example.want and re.search(r"\w\.(epsilon_|delta_)\b", example.source):
                pages.append(page)
                break
    return pages


@pytest.mark.slow
@pytest.mark.parametrize(
    "page", _pages_printing_the_spent(), ids=lambda p: str(p.relative_to(ROOT))
)
def test_every_example_printing_the_spent_prints_the_pipelines_total(page):
    """Run the page's examples in order; before each one that shows an
    ``epsilon_`` or ``delta_``, the object it reads is either a pipeline
    (its total) or an estimator that is no pipeline's step. Run, not read:
    ``release = pipe[-1]`` three examples earlier is caught as well."""
    from skdp_synth.pipeline import SynthesisPipeline

    globs = {"__name__": "__guide__"}
    checked = 0
    for example in _examples(page):
        reads = []
        if example.want:
            for match in re.finditer(
                r"([A-Za-z_][\w.]*)\.(epsilon_|delta_)\b", example.source
            ):
                reads.append(match.group(1))
        for expr in reads:
            obj = eval(expr, globs)
            pipelines = [v for v in globs.values() if isinstance(v, SynthesisPipeline)]
            is_step = any(obj is step for p in pipelines for _, step in p.steps)
            assert not is_step, (
                f"{page.name} line {example.lineno + 1}: {expr} is a step of a "
                "pipeline: show the pipeline's epsilon_/delta_ (its total)"
            )
            checked += 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                exec(compile(example.source, str(page), "single"), globs)
            except Exception:
                if example.exc_msg is None:
                    raise
    assert checked
