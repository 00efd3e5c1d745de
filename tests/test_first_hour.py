"""The mistakes of a first hour with the library, answered as the command
line answers them: text read where numbers were meant, a semicolon file
read with the default comma, a budget out of range, warnings that point at
the user's own line, advice that follows what was declared, the damped
method on a table below its size, a schema file drafted for the user, and a
demo whose tables say which rows are private."""

import io
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth import (
    DampedPrivateSynthesizer,
    ProjectedGaussianRelease,
    make_synthesis_pipeline,
)
from skdp_synth._sklearn_compat import InvalidParameterError
from skdp_synth.cli import _console, _demo
from skdp_synth.cli import _main as cli
from skdp_synth.cli._schema import SchemaError, load_schema
from skdp_synth.damped._estimator import USEFUL_SIZE
from skdp_synth.exceptions import (
    CoarseDomainWarning,
    NumbersAsTextWarning,
    PrivacyLeakWarning,
    SmallTableWarning,
)
from skdp_synth.preprocessing import BooleanEncoder


def _boolean(n, p=4, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random((n, p)) < 0.4).astype(np.int64)


# ------------------------------------------------- text read as numbers
def _digits_as_text(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "visits": rng.integers(0, 5, n).astype(str),  # object dtype
            "colour": rng.choice(["red", "blue"], n),
        }
    )


def test_a_text_column_of_numbers_is_named_with_its_fixes():
    df = _digits_as_text()
    with pytest.warns(NumbersAsTextWarning) as record:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            BooleanEncoder(epsilon=None).fit(df)
    (message,) = [str(w.message) for w in record]
    assert "['visits']" in message and "colour" not in message
    assert "pd.to_numeric" in message and "categories=" in message
    # no cell is quoted: the only digits would be the values 0-4
    assert not any(ch.isdigit() for ch in message)


def test_a_declared_or_real_text_column_does_not_warn():
    df = _digits_as_text()
    enc = BooleanEncoder(epsilon=None, categories={"visits": ["0", "1", "2", "3", "4"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # colour, inferred
        warnings.simplefilter("error", NumbersAsTextWarning)
        enc.fit(df)
        # numbers as numbers: nothing to say
        BooleanEncoder(epsilon=None).fit(df.assign(visits=df["visits"].astype(int)))


def test_the_text_warning_reads_the_released_levels_only():
    """Learned privately, the column's kept levels decide (post-processing
    of the level discovery): a column whose digits all fell into "other"
    keeps none, and the CoarseDomainWarning says what helps instead, from
    the dtype (public)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"w": rng.integers(0, 10**6, 400).astype(str)})
    enc = BooleanEncoder(epsilon=1.0, delta=1e-6, random_state=0)
    with pytest.warns(CoarseDomainWarning) as record:
        with warnings.catch_warnings():
            warnings.simplefilter("error", NumbersAsTextWarning)
            enc.fit(df)
    assert enc.specs_[0].levels == ["other"]
    (message,) = [str(w.message) for w in record]
    assert "numbers read as text" in message and "pd.to_numeric" in message


# ------------------------------------------ a semicolon file, read with ","
SEMICOLON_FILE = "age;sex;visits\n31;F;2\n45;M;0\n52;F;1\n"


@pytest.mark.parametrize(
    "fit",
    [
        lambda df: BooleanEncoder().fit(df),
        lambda df: ProjectedGaussianRelease(epsilon=1.0, delta=1e-6).fit(df),
        lambda df: make_synthesis_pipeline(
            BooleanEncoder(), ProjectedGaussianRelease(epsilon=1.0, delta=1e-6)
        ).fit(df),
    ],
    ids=["encoder", "synthesizer", "pipeline"],
)
def test_a_semicolon_file_read_with_commas_says_pass_sep(fit):
    df = pd.read_csv(io.StringIO(SEMICOLON_FILE))
    assert df.shape[1] == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused before any domain warning
        with pytest.raises(ValueError, match=r"sep=';'") as err:
            fit(df)
    assert "semicolons" in str(err.value)
    assert "age" not in str(err.value)  # the header is not quoted


def test_a_tab_file_and_a_true_one_column_table():
    tabbed = pd.read_csv(io.StringIO(SEMICOLON_FILE.replace(";", "\t")))
    with pytest.raises(ValueError, match=r"sep='\\t'"):
        BooleanEncoder().fit(tabbed)
    # one plain column, or one the user declared under that name: fitted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        BooleanEncoder().fit(pd.DataFrame({"age": [31, 45, 52]}))
        # numbers under such a name: not a misread file (its cells would be
        # text holding the delimiter)
        BooleanEncoder().fit(pd.DataFrame({"a;b": [31, 45, 52]}))
        BooleanEncoder(categories={"a;b": ["x", "y"]}).fit(
            pd.DataFrame({"a;b": ["x", "y", "x"]})
        )


# ---------------------------------------------------- budget out of range
@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: ProjectedGaussianRelease(epsilon=0.0, delta=1e-6), "epsilon"),
        (lambda: ProjectedGaussianRelease(epsilon=-1.0, delta=1e-6), "epsilon"),
        (lambda: DampedPrivateSynthesizer(epsilon=0), "epsilon"),
        (lambda: ProjectedGaussianRelease(epsilon=1.0, delta=0.0), "delta"),
        (lambda: ProjectedGaussianRelease(epsilon=1.0, delta=1.5), "delta"),
    ],
)
def test_a_budget_out_of_range_is_said_with_a_typical_value(make, name):
    est = make()
    with pytest.raises(InvalidParameterError) as err:
        est.fit(_boolean(50))
    message = str(err.value)
    assert isinstance(err.value, ValueError)
    assert f"'{name}' parameter of {type(est).__name__}" in message
    assert "typically" in message and "Got" in message
    if name == "epsilon":
        assert "must be > 0 and finite, typically 0.1-10" in message
    assert "float in the range" not in message  # scikit-learn's wording


def test_the_encoder_and_pipeline_say_it_too():
    df = pd.DataFrame({"a": np.arange(40.0)})
    with pytest.raises(InvalidParameterError, match="typically 0.1-10"):
        BooleanEncoder(epsilon=0.0).fit(df)
    pipe = make_synthesis_pipeline(
        BooleanEncoder(), ProjectedGaussianRelease(epsilon=-2.0, delta=1e-6)
    )
    with pytest.raises(InvalidParameterError, match="typically 0.1-10"):
        pipe.fit(df)


# ------------------------------------------- warnings at the user's line
def test_warnings_point_at_the_users_line():
    df = _digits_as_text()
    with pytest.warns(PrivacyLeakWarning) as record:
        BooleanEncoder(epsilon=None, categories={"visits": list("01234")}).fit(df)
    assert record[0].filename == __file__

    small = pd.DataFrame({"x": np.linspace(0, 100, 60)})
    with pytest.warns(CoarseDomainWarning) as record:
        BooleanEncoder(epsilon=0.01, bounds={"x": (0, 100)}, random_state=0).fit(small)
    assert record[0].filename == __file__

    with pytest.warns(SmallTableWarning) as record:
        DampedPrivateSynthesizer(random_state=0).fit(_boolean(500))
    assert record[0].filename == __file__

    # bounds read off the data (a synthesizer's box domain)
    box = np.random.default_rng(0).random((200, 3))
    with pytest.warns(PrivacyLeakWarning) as record:
        DampedPrivateSynthesizer(domain="box", random_state=0).fit(box)
    leaks = [w for w in record if issubclass(w.category, PrivacyLeakWarning)]
    assert [w.filename for w in leaks] == [__file__]

    # clipped in transform: the warning names the user's transform call
    enc = BooleanEncoder(bin_edges={"x": [0, 50, 100]}, out_of_bounds="clip")
    enc.fit(small)
    with pytest.warns(UserWarning, match="clipped") as record:
        enc.transform(pd.DataFrame({"x": [150.0]}))
    assert record[0].filename == __file__


def test_a_pipelines_warnings_point_at_the_users_line():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(50, 10, 200), "g": rng.choice(["a", "b"], 200)})
    pipe = make_synthesis_pipeline(
        BooleanEncoder(epsilon=None),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
    )
    with pytest.warns(PrivacyLeakWarning) as record:
        pipe.fit(df)
    assert {w.filename for w in record} == {__file__}


# ------------------------------------- advice that follows the declaration
def test_declared_bounds_are_not_told_to_declare_bounds():
    small = pd.DataFrame(
        {
            "x": np.linspace(0, 100, 60),
            "y": np.linspace(-1, 1, 60),
            "z": np.linspace(0, 5, 60),
        }
    )
    bounds = {"x": (0, 100), "z": (0, None)}
    enc = BooleanEncoder(epsilon=0.01, bounds=bounds, random_state=0)
    with pytest.warns(CoarseDomainWarning) as record:
        enc.fit(small)
    message = " ".join(str(w.message) for w in record)
    assert "bin_edges= for ['x'] (their bounds= are declared" in message
    assert "the open side of bounds= or bin_edges= for ['z']" in message
    assert "bounds= or bin_edges= for ['y']" in message
    assert "bin_edges= for ['x', " not in message
    assert "domain_share=0.7" in message  # a value to try (above auto's 0.55)
    # on the command line, in the schema's keys
    line = _console._in_schema_terms(message)
    for keyword in ("bin_edges=", "bounds=", "domain_share="):
        assert keyword not in line
    assert "\"bin_edges\" for ['x']" in line and "--domain-share 0.7" in line


# --------------------------------------- the damped method's useful size
def test_the_damped_method_warns_below_its_useful_size():
    with pytest.warns(SmallTableWarning) as record:
        DampedPrivateSynthesizer(random_state=0).fit(_boolean(1000))
    (message,) = [str(w.message) for w in record]
    assert "10,000" in message and "ProjectedGaussianRelease" in message
    assert "1000" not in message and "1,000" not in message  # not n itself


def test_the_damped_warning_depends_on_n_only():
    """``n`` is public under the method's replace-one guarantee; the warning
    reads nothing else, and comes before any value is read: a table whose
    values are refused still gets it first."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallTableWarning)
        DampedPrivateSynthesizer(random_state=0).fit(_boolean(USEFUL_SIZE))
    bad = _boolean(100).astype(float)
    bad[0, 0] = 0.5  # not Boolean: refused after the plan
    with pytest.warns(SmallTableWarning):
        with pytest.raises(ValueError, match="Boolean"):
            DampedPrivateSynthesizer(random_state=0).fit(bad)


def test_the_command_line_says_it_too(tmp_path):
    src = tmp_path / "small.csv"
    pd.DataFrame(_boolean(300), columns=list("abcd")).to_csv(src, index=False)
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"columns": dict.fromkeys("abcd", "boolean")}))
    args = ["synthesize", str(src), "--schema", str(schema), "--method", "damped"]
    args += ["--epsilon", "1", "--seed", "0", "-o", str(tmp_path / "out.csv")]
    with pytest.warns(SmallTableWarning) as record:
        assert cli.main(args) == 0
    # shown as a "skdp-synth: warning:" line, in the command line's terms
    (small,) = [w for w in record if issubclass(w.category, SmallTableWarning)]
    line = _console._in_schema_terms(str(small.message))
    assert "use --method gaussian-release" in line


# ------------------------------------------------------ skdp-synth schema
def _csv(tmp_path, text="age,sex,zip\n31,F,02134\n45,M,10001\n"):
    path = tmp_path / "people.csv"
    path.write_text(text)
    return path


def test_schema_drafts_from_the_header_only(tmp_path, capsys):
    path = _csv(tmp_path)
    assert cli.main(["schema", str(path)]) == 0
    captured = capsys.readouterr()
    draft = json.loads(captured.out)
    assert draft == {"columns": {"age": "?", "sex": "?", "zip": "?"}}
    assert "header line" in captured.err and "no value, level or bound" in captured.err
    # the loader refuses the draft until every "?" is replaced
    out = tmp_path / "schema.json"
    out.write_text(captured.out)
    with pytest.raises(SchemaError, match="unknown type '\\?'"):
        load_schema(out)


def test_schema_guesses_types_only_when_asked_and_says_so(tmp_path, capsys):
    path = _csv(tmp_path)
    out = tmp_path / "schema.json"
    assert cli.main(["schema", str(path), "--guess-types", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    draft = json.loads(out.read_text())
    assert draft["columns"]["sex"] == "categorical"
    assert draft["columns"]["age"] == {"type": "numeric", "integer": True}
    assert "guesses from the data" in err and "check each one" in err
    text = out.read_text()
    for cell in ("31", "45", "02134", "10001", '"F"', '"M"'):
        assert cell not in text  # no value, level or bound written
    load_schema(out)  # a complete schema
    # a completed schema is never overwritten by a draft
    assert cli.main(["schema", str(path), "-o", str(out)]) == 2
    assert "not overwritten" in capsys.readouterr().err


def test_guessed_types_take_iso_dates_for_dates(tmp_path, capsys):
    """Text dates were guessed "categorical" (each day a level, too rare to
    keep, so the column came back as "other"); ISO 8601 text is guessed a
    date, in days where every cell is one."""
    text = (
        "day,at,word,us\n"
        "2020-01-01,2020-01-01 10:00:00,a,03/01/2016\n"
        "2021-05-03,2021-05-03 11:22:33,b,04/02/2016\n"
        ",,,\n"
    )
    path = _csv(tmp_path, text)
    out = tmp_path / "schema.json"
    assert cli.main(["schema", str(path), "--guess-types", "-o", str(out)]) == 0
    assert "ISO 8601" in capsys.readouterr().err
    draft = json.loads(out.read_text())
    assert draft["columns"] == {
        "day": {"type": "datetime", "unit": "D"},
        "at": "datetime",
        "word": "categorical",
        "us": "categorical",  # not ISO 8601: the notice says what to make it
    }
    text = out.read_text()
    assert "2020" not in text and "2021" not in text
    load_schema(out)


def test_schema_of_a_parquet_file_reads_its_column_types_only(tmp_path, capsys):
    """A Parquet input was read as text ("the input is not UTF-8 text"); its
    footer declares each column's type, as a DataFrame's dtypes do: the
    draft takes them and reads no row."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    at = pd.to_datetime(["2021-03-04 05:06:07", "2022-08-09 10:11:12"])
    table = pa.table(
        {
            "age": pa.array([31, 45], type=pa.int16()),
            "income": [52123.5, 61234.25],
            "owner": [True, False],
            "zip": ["02134", "10001"],
            "hired": pa.array(at.date, type=pa.date32()),
            "seen": pa.array(
                at.tz_localize("Europe/Paris"),
                type=pa.timestamp("us", tz="Europe/Paris"),
            ),
            "took": pa.array(
                pd.to_timedelta([61, 3601], unit="s"), type=pa.duration("s")
            ),
            "tags": pa.array([[1], [2, 3]], type=pa.list_(pa.int8())),
        }
    )
    path = tmp_path / "people.parquet"
    pq.write_table(table, path)
    out = tmp_path / "schema.json"
    assert cli.main(["schema", str(path), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    draft = json.loads(out.read_text())
    assert draft == {
        "columns": {
            "age": {"type": "numeric", "integer": True},
            "income": "numeric",
            "owner": "boolean",
            "zip": "categorical",
            "hired": {"type": "datetime", "unit": "D"},
            "seen": {"type": "datetime", "timezone": "Europe/Paris"},
            "took": {"type": "duration", "unit": "s"},
            "tags": "?",
        }
    }
    assert "Parquet schema" in err and "no row" in err and "['tags']" in err
    text = out.read_text()
    for cell in ("31", "45", "52123", "02134", "10001", "2021", "3601"):
        assert cell not in text  # no value, level or bound written
    with pytest.raises(SchemaError, match="unknown type '\\?'"):
        load_schema(out)
    draft["columns"]["tags"] = "categorical"
    out.write_text(json.dumps(draft))
    load_schema(out)


def test_schema_of_a_semicolon_file_says_how_to_convert_it(tmp_path, capsys):
    path = _csv(tmp_path, SEMICOLON_FILE)
    assert cli.main(["schema", str(path)]) == 2
    assert "sep=';'" in capsys.readouterr().err


# ------------------------------------------------- the demo's DP column
def test_the_demo_tables_say_which_rows_are_private(capsys):
    rows = [
        ("real rows, bootstrap", "none (not private)", [0.01, 0.01, 0.01], 0.0),
        ("damped", "eps=1", [0.05, 0.04, 0.03], 0.1),
        ("microaggregation", "(n/k)=10-anonymous", [0.01, 0.01, 0.01], 0.1),
    ]
    marks = [_demo._dp_mark(None), _demo._dp_mark(1.0), _demo._dp_mark(None)]
    _demo._demo_table(
        [(*r, m) for r, m in zip(rows, marks)], ["1-way", "2-way", "3-way"]
    )
    out = capsys.readouterr().out
    lines = out.splitlines()
    rule = next(
        i for i, line in enumerate(lines) if "differentially private (DP)" in line
    )
    micro = next(
        i for i, line in enumerate(lines) if line.startswith("microaggregation")
    )
    damped = next(i for i, line in enumerate(lines) if line.startswith("damped"))
    assert micro < rule < damped  # the non-private rows above the rule
    assert lines[micro].split()[1] == "no" and lines[damped].split()[1] == "yes"
    assert "microaggregation is (n/k)-anonymity, not DP" in out
    assert _demo._dp_mark(50.0) == "yes [1]"
