"""The CLI's types-only schema, held-out rows and the report page."""

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth.cli import _commands, _console, _csv
from skdp_synth.cli import _main as cli
from skdp_synth.cli._schema import SchemaError, parse_schema
from skdp_synth.exceptions import (
    DegenerateColumnWarning,
    PrivacyLeakWarning,
    SmallTableWarning,
)
from skdp_synth.report import fidelity_report

#: A value planted in the data that no error or warning may show.
SECRET = "Zq7secret"


def _people(n=600, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "wage": rng.lognormal(6.5, 0.5, n).round(2),
            "sector": rng.choice(["public", "private"], n, p=[0.3, 0.7]),
            "region": rng.choice(["N", "S"], n),
            "education": rng.choice(["none", "school", "degree"], n),
        }
    )


TYPES = {
    "columns": {
        "age": {"type": "numeric", "integer": True},
        "wage": {"type": "numeric", "bounds": [0, 1e6]},
        "sector": "categorical",
        "region": {"type": "categorical", "levels": ["N", "S"], "missing": False},
        "education": {"type": "ordinal", "levels": ["none", "school", "degree"]},
    }
}


# ------------------------------------------------------------ the format
def test_a_types_only_schema_becomes_the_encoder_arguments():
    schema = parse_schema(TYPES)
    assert schema.encoder == {
        "categories": {"region": ["N", "S"]},
        "ordinal": {"education": ["none", "school", "degree"]},
        "bounds": {"wage": [0.0, 1e6]},
        "missing": {"region": False},
    }
    assert schema.types == {
        "age": "integer",
        "wage": "numeric",
        "sector": "categorical",
        "region": "categorical",
        "education": "ordinal",
    }
    # the full-domain form is kept as it is
    full = {"categories": {"c": ["a", None]}, "bin_edges": {"x": [0, 1, 2]}}
    assert parse_schema(full).encoder == full and parse_schema(full).types is None


def test_a_top_level_missing_covers_the_columns_that_do_not_say():
    schema = parse_schema(
        {
            "missing": "never",
            "columns": {"a": "numeric", "b": {"type": "numeric", "missing": True}},
        }
    )
    assert schema.encoder["missing"] == {"a": False, "b": True}
    assert parse_schema({"missing": "always", "columns": {"a": "numeric"}}).encoder == {
        "missing": "always"
    }


@pytest.mark.parametrize(
    "columns, message",
    [
        ({"a": "text"}, "unknown type 'text'"),
        ({"a": {"levels": [1]}}, "give its type"),
        ({"a": "ordinal"}, 'needs its "levels"'),
        ({"a": {"type": "numeric", "bounds": [5, 1]}}, "lo < hi"),
        ({"a": {"type": "numeric", "bounds": [0, float("inf")]}}, "finite"),
        ({"a": {"type": "numeric", "bounds": [None, None]}}, "one number and null"),
        ({"a": {"type": "numeric", "bin_edges": [0, 0, 1]}}, "increasing"),
        ({"a": {"type": "numeric", "bounds": [0, 1], "bin_edges": [0, 1]}}, "not both"),
        ({"a": {"type": "numeric", "levels": [1, 2]}}, "unknown keys ['levels']"),
        ({"a": {"type": "categorical", "levels": []}}, "non-empty"),
        ({"a": {"type": "categorical", "levels": ["x", "x"]}}, "duplicates"),
        ({"a": {"type": "categorical", "missing": "yes"}}, "true or false"),
        ({"a": {"type": "numeric", "integer": 1}}, "true or false"),
        ({"a": {"type": "numeric", "point_masses": []}}, "non-empty list"),
        ({"a": {"type": "numeric", "point_masses": ["x"]}}, "finite numbers"),
        ({"a": {"type": "categorical", "point_masses": [1]}}, "unknown keys"),
        ({}, "must map each column"),
    ],
)
def test_a_bad_types_only_schema_is_named(columns, message):
    with pytest.raises(SchemaError, match=re.escape(message)):
        parse_schema({"columns": columns})


def test_columns_and_domain_keys_are_not_mixed():
    with pytest.raises(SchemaError, match="declares each column's domain there"):
        parse_schema({"columns": {"a": "numeric"}, "bin_edges": {"a": [0, 1]}})
    with pytest.raises(SchemaError, match="unknown schema keys"):
        parse_schema({"colums": {"a": "numeric"}})


# ------------------------------------------------------------ synthesize
def _run(tmp_path, df, schema, *extra, method="gaussian-release"):
    src, path, out = tmp_path / "in.csv", tmp_path / "s.json", tmp_path / "out.csv"
    df.to_csv(src, index=False)
    path.write_text(json.dumps(schema))
    args = ["synthesize", str(src), "--method", method, "--schema", str(path)]
    args += ["-o", str(out), "--seed", "0", *extra]
    return cli.main(args), out


@pytest.mark.slow
def test_synthesize_with_types_only_pays_every_domain_from_the_epsilon_written(
    tmp_path, capsys
):
    df = _people()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, out = _run(
            tmp_path, df, TYPES, "--epsilon", "1", "--delta", "1e-6", "--rows", "300"
        )
    err = capsys.readouterr().err
    assert code == 0, err
    assert not [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    # the pipeline's total (encoder's share + synthesizer's), as written
    assert "privacy spent: epsilon=1, delta=1e-06 (add-remove-one" in err
    syn = pd.read_csv(out, keep_default_na=False, na_values=[""])
    assert list(syn.columns) == list(df.columns) and len(syn) == 300
    assert syn["region"].isin(["N", "S"]).all()
    assert syn["education"].isin(["none", "school", "degree"]).all()
    age = syn["age"].dropna().to_numpy()
    assert np.array_equal(age, np.round(age))  # integers stay integers


# 200 rows: the private numeric domains keep one bin (CoarseDomainWarning,
# tested in test_numeric_domain); this test is about the categorical levels
@pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.CoarseDomainWarning")
def test_a_pure_epsilon_method_says_where_categorical_levels_come_from(
    test_method, tmp_path, capsys
):
    # no δ: the sector's levels cannot be discovered privately, and the
    # warning says how to declare them in this form of the schema
    df = _people(200)
    with pytest.warns(PrivacyLeakWarning, match="sector"):
        code, _ = _run(
            tmp_path, df, TYPES, "--epsilon", "1", "--rows", "20",
            method="noisy-mean-test",
        )  # fmt: skip
    assert code == 0
    capsys.readouterr()
    # printed (outside pytest's recording) with the types-only form's hint
    # -- after the encoder's domain warning only: a time zone's warning says
    # its own remedy, and the hint must not follow it
    text = "learned. Declare them via categories="
    with _console._cli_warnings(schema_given=True, types_only=True):
        warnings.formatwarning(text, PrivacyLeakWarning, "f.py", 1)
        warnings.formatwarning("a time zone", PrivacyLeakWarning, "f.py", 1)
    err = capsys.readouterr().err
    assert err == (
        f"skdp-synth: warning: {text} ({_console.TYPES_ONLY_HINT})\n"
        "skdp-synth: warning: a time zone\n"
    )


def _assert_one_error_line(code, err, *, absent=SECRET):
    assert code == 2
    lines = [line for line in err.splitlines() if line.startswith("skdp-synth:")]
    assert lines and lines[-1].startswith("skdp-synth: error: ")
    assert absent not in err


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda s: s["columns"].pop("age"), "gives no type for the columns ['age'] of"),
        (
            lambda s: s["columns"].update(extra="numeric"),
            "does not have",
        ),
        (lambda s: s["columns"].update(sector="numeric"), "not numbers"),
        (lambda s: s["columns"].update(age="ordinal"), 'needs its "levels"'),
        (lambda s: s.update(bounds={}), "declares each column's domain there"),
    ],
)
def test_a_bad_schema_exits_2_without_a_data_value(
    test_method, tmp_path, capsys, change, message
):
    df = _people(50)
    df.loc[3, "sector"] = SECRET
    schema = json.loads(json.dumps(TYPES))
    change(schema)
    code, out = _run(tmp_path, df, schema, "--rows", "5", method="bootstrap-test")
    err = capsys.readouterr().err
    _assert_one_error_line(code, err)
    assert message in " ".join(err.split())
    assert not out.exists()


def test_an_integer_column_with_a_fraction_is_an_error(test_method, tmp_path, capsys):
    df = _people(50).astype({"age": float})
    df.loc[7, "age"] = 41.123
    code, _ = _run(tmp_path, df, TYPES, "--rows", "5", method="bootstrap-test")
    err = capsys.readouterr().err
    _assert_one_error_line(code, err, absent="41.123")
    assert "not whole numbers" in err


def test_csv_reading_follows_the_declared_types(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("n,i,c\n1.5,3,007\n,,NA\n2,4,x\n")
    schema = parse_schema(
        {
            "columns": {
                "n": "numeric",
                "i": {"type": "numeric", "integer": True},
                "c": "categorical",
            }
        }
    )
    frame = _csv._read_csv(str(src), schema)
    assert str(frame["i"].dtype) == "Int64" and frame["i"].isna().tolist() == [
        False,
        True,
        False,
    ]
    # a categorical column stays text ("007", not 7); a missing marker is missing
    assert frame["c"].tolist()[0] == "007" and frame["c"].isna().tolist() == [
        False,
        True,
        False,
    ]
    assert frame["n"].dtype == np.float64
    # whole numbers without "integer" are floats too: the dtype (which the
    # encoder reads as "integral, never missing") comes from the schema only
    src.write_text("m\n1\n2\n")
    whole = _csv._read_csv(str(src), parse_schema({"columns": {"m": "numeric"}}))
    assert whole["m"].dtype == np.float64


def test_out_of_core_asks_for_public_domains(test_method, tmp_path, capsys):
    pytest.importorskip("dask")
    code, _ = _run(
        tmp_path, _people(50), TYPES, "--out-of-core", method="bootstrap-test"
    )
    err = capsys.readouterr().err
    _assert_one_error_line(code, err)
    assert "['age', 'wage', 'sector']" in err


# ------------------------------------------------------------ held-out rows
def test_holdout_rows_are_kept_out_of_the_fit_and_written_as_read(
    test_method, tmp_path, capsys
):
    n = 400
    # every row unique (its id a category), cells with text pandas would
    # rewrite ("1.50" -> 1.5): the held-out file copies the input's cells
    df = pd.DataFrame({"id": [f"r{i}" for i in range(n)], "x": ["1.50"] * n})
    schema = {"columns": {"id": "categorical", "x": "categorical"}}
    held = tmp_path / "held.csv"
    with pytest.warns(PrivacyLeakWarning):  # (a method without a budget)
        code, out = _run(
            tmp_path, df, schema, "--holdout", "0.25", "--holdout-out", str(held),
            "--rows", "300", method="bootstrap-test",
        )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    kept_out = pd.read_csv(held, dtype=str)
    assert (held.read_text().splitlines()[1:3][0]).endswith(",1.50")
    # a partition of the input: no row both held out and fitted
    syn = pd.read_csv(out, dtype=str)
    assert not set(syn["id"]) & set(kept_out["id"])
    assert set(kept_out["id"]) <= set(df["id"])
    # one coin per row (Bernoulli(0.25)): the count is within 5 standard
    # deviations of n/4 (false-failure rate < 1e-6 at any seed)
    sd = np.sqrt(n * 0.25 * 0.75)
    assert abs(len(kept_out) - n / 4) < 5 * sd
    assert "report" in err and "--held-out" in err


def test_holdout_is_one_coin_per_row_not_a_fixed_size():
    sizes = {
        int((~_commands._holdout_split(100, 0.3, seed)).sum()) for seed in range(10)
    }
    assert len(sizes) > 1  # a fixed-size split would give one size
    # its own stream: not the fit's seed's first draws
    rng = np.random.default_rng(0)
    assert not np.array_equal(
        _commands._holdout_split(100, 0.3, 0), rng.random(100) >= 0.3
    )


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--holdout", "0.2"], "go together"),
        (["--holdout-out", "h.csv"], "go together"),
        (["--holdout", "1.5", "--holdout-out", "h.csv"], "fraction in (0, 1)"),
        (["--holdout", "0.2", "--holdout-out", "h.csv", "--counts", "x"], "--counts"),
    ],
)
def test_holdout_errors_write_nothing(test_method, tmp_path, capsys, extra, message):
    extra = [str(tmp_path / a) if a == "h.csv" else a for a in extra]
    code, out = _run(tmp_path, _people(30), TYPES, *extra, method="bootstrap-test")
    err = capsys.readouterr().err
    _assert_one_error_line(code, err)
    assert message in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "s.json"]


# ------------------------------------------------------------ the report
@pytest.mark.parametrize("held_out", [True, False, None])
def test_the_report_says_whether_it_is_in_sample(held_out):
    df = _people(200)
    rep = fidelity_report(df, df.sample(150, random_state=0), held_out=held_out)
    assert rep.held_out is held_out
    page = rep.to_html(include_plot=False)
    verdict = page[page.index("id='verdict'") : page.index("<nav")]
    if held_out:
        assert "held-out rows" in verdict and "in-sample" not in verdict
    else:
        assert "in-sample" in verdict and "--holdout" in verdict


def test_report_cli_held_out_flag(tmp_path, capsys):
    df = _people(100)
    real = tmp_path / "r.csv"
    df.to_csv(real, index=False)
    for flag, said in (["--held-out"], "held-out rows"), ([], "in-sample"):
        html = tmp_path / "r.html"
        assert cli.main(["report", str(real), str(real), "-o", str(html), *flag]) == 0
        assert said in capsys.readouterr().err
        assert said in html.read_text(encoding="utf-8")


def test_numeric_columns_are_compared_on_quantile_bins_of_the_real_column():
    rng = np.random.default_rng(1)
    real = pd.DataFrame({"x": rng.normal(size=500), "c": rng.choice(["a", "b"], 500)})
    syn = pd.DataFrame({"x": rng.normal(0.3, 1, 400), "c": rng.choice(["a", "b"], 400)})
    rep = fidelity_report(real, syn, d=1)
    assert len(rep.levels["x"]) == 10
    edges = np.quantile(real["x"], np.linspace(0, 1, 11)[1:-1])
    px = np.bincount(np.searchsorted(edges, real["x"], side="right"), minlength=10)
    py = np.bincount(np.searchsorted(edges, syn["x"], side="right"), minlength=10)
    tv = 0.5 * np.abs(px / 500 - py / 400).sum()
    # ten terms summed in a different order: a few ulps apart at most
    assert dict(rep.tv[1])[("x",)] == pytest.approx(tv, abs=1e-14)
    assert any("quantiles of the real column" in note for note in rep.notes)


@pytest.mark.slow
def test_the_page_has_no_array_shapes_and_the_pipeline_total():
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    df = _people(800)
    pipe = make_synthesis_pipeline(
        BooleanEncoder(
            categories={"sector": ["public", "private"], "region": ["N", "S"]},
            ordinal={"education": ["none", "school", "degree"]},
            random_state=0,
        ),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
    ).fit(df)
    assert pipe[-1].epsilon_ < 1.0  # the encoder paid for age's and wage's bins
    rep = fidelity_report(df, pipe, random_state=0, held_out=False)
    assert rep.guarantee.epsilon == pipe.epsilon_ == 1.0
    assert "released numbers and no real row" in rep.guarantee.holds
    page = rep.to_html(include_plot=False)
    assert not re.search(r"\(\d+, \d+\)|\(\d+,\)", page)  # no array shapes
    assert page.index("id='verdict'") < page.index("class='toc'")  # summary first


def test_a_long_step_shows_its_seconds(monkeypatch, capsys):
    pytest.importorskip("tqdm")
    import sys
    import time

    monkeypatch.setattr(_console._Steps, "TICK", 0.05)
    # on a terminal: elsewhere (a log file) no bar is drawn
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    with _console._Steps("synthesize", ["read", "fit"]) as steps:
        steps.step()
        steps.step()
        deadline = time.monotonic() + 30
        # the ticker redraws the running step with its time (no update() call)
        while "fit 0 s" not in capsys.readouterr().err:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    assert not steps._ticker.is_alive()  # stopped on the way out


def test_domain_share_is_a_command_line_option(tmp_path, capsys, monkeypatch):
    """The CoarseDomainWarning's remedy (a larger share of the budget for the
    domains) is reachable from the command line: ``--domain-share`` goes to
    ``make_synthesis_pipeline``; a value outside (0, 1) is a usage error."""
    import skdp_synth.pipeline as pipeline_module

    seen = []
    real = pipeline_module.make_synthesis_pipeline

    def spy(*steps, **kwargs):
        seen.append(kwargs.get("domain_share"))
        raise RuntimeError("stop before the fit")

    monkeypatch.setattr(pipeline_module, "make_synthesis_pipeline", spy)
    df = _people(200)
    for extra, want in (((), "auto"), (("--domain-share", "0.5"), 0.5)):
        with pytest.raises(RuntimeError, match="stop before the fit"):
            _run(tmp_path, df, TYPES, "--epsilon", "1", "--delta", "1e-6", *extra)
        assert seen[-1] == want
    monkeypatch.setattr(pipeline_module, "make_synthesis_pipeline", real)
    for bad in ("0", "1", "1.5", "half"):
        # a usage error is the CLI's one line and status 2 (not argparse's
        # usage block and SystemExit)
        assert _run(tmp_path, df, TYPES, "--domain-share", bad)[0] == 2
        err = capsys.readouterr().err
        assert "--domain-share" in err and err.count("\n") == 1


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_out_of_core_reads_the_schemas_numeric_types(tmp_path, suffix):
    """Out of core, an ``"integer": true`` column was read in the dtype pandas
    guessed (a float, with missing cells) and decoded to bin midpoints 0.5,
    1.5, ...; in memory it is ``Int64`` and decoded whole. Both now give
    whole numbers."""
    pytest.importorskip("dask")
    if suffix == "parquet":
        pytest.importorskip("pyarrow")
    rng = np.random.default_rng(0)
    kids = rng.integers(0, 9, 3000).astype(float)
    kids[:50] = np.nan
    frame = pd.DataFrame({"kids": kids, "sex": rng.choice(["F", "M"], 3000)})
    src = tmp_path / f"in.{suffix}"
    if suffix == "csv":
        frame.to_csv(src, index=False)
    else:
        frame.to_parquet(src, index=False)
    schema = {
        "columns": {
            "kids": {
                "type": "numeric",
                "integer": True,
                "missing": True,
                "bin_edges": [0, 1, 2, 3, 4, 6, 9],
            },
            "sex": {"type": "categorical", "levels": ["F", "M"]},
        }
    }
    (tmp_path / "s.json").write_text(json.dumps(schema))
    out = tmp_path / "out.csv"
    args = ["synthesize", str(src), "--schema", str(tmp_path / "s.json")]
    args += ["--method", "gaussian-release", "--epsilon", "1", "--delta", "1e-6"]
    args += ["--seed", "0", "-o", str(out)]
    if suffix == "csv":
        args.append("--out-of-core")
    assert cli.main(args) == 0
    v = pd.read_csv(out)["kids"].dropna().to_numpy()
    assert v.size and np.all(v == np.round(v))


def test_privacy_spent_says_what_it_does_not_cover(tmp_path, capsys):
    """After a warning that something was learned from the data without
    privacy, "privacy spent: epsilon=1" read as the whole truth: the line
    now says it does not cover it; without such a warning it does not. (The
    warned case is a categorical column without levels under a method
    without a delta to discover them; a declared-edges column's missingness
    is not learned at all.)"""
    rng = np.random.default_rng(0)
    kids = rng.integers(0, 9, 2000).astype(float)
    kids[:30] = np.nan
    frame = pd.DataFrame({"kids": kids, "sex": rng.choice(["F", "M"], 2000)})
    frame.to_csv(tmp_path / "in.csv", index=False)
    caveat = "does not cover what the warnings above say"
    for levels, warned in ((None, True), (["F", "M"], False)):
        sex = {"type": "categorical"}
        if levels is not None:
            sex["levels"] = levels
        schema = {
            "columns": {
                "kids": {"type": "numeric", "bin_edges": [0, 3, 6, 9], "missing": True},
                "sex": sex,
            }
        }
        (tmp_path / "s.json").write_text(json.dumps(schema))
        args = [
            "synthesize",
            str(tmp_path / "in.csv"),
            "--schema",
            str(tmp_path / "s.json"),
        ]
        args += ["--method", "damped", "--epsilon", "1"]
        args += ["--seed", "0", "-o", str(tmp_path / "o.csv")]
        # the damped method on 2,000 rows says it is small for it, whichever
        # branch: the command line shows that warning too
        with pytest.warns(SmallTableWarning, match="fewer than 10,000 records"):
            if warned:
                with pytest.warns(PrivacyLeakWarning, match="sex"):
                    assert cli.main(args) == 0
            else:
                assert cli.main(args) == 0
        err = capsys.readouterr().err
        assert "privacy spent: epsilon=1" in err
        assert (caveat in err) is warned


def test_no_progress_bar_is_drawn_into_a_log_file(monkeypatch, capsys):
    """A non-terminal stderr got every redraw of the bars."""
    pytest.importorskip("tqdm")
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    with _console._Steps("synthesize", ["read", "fit"]) as steps:
        steps.step()
        steps.step()
    assert "synthesize" not in capsys.readouterr().err


def test_a_schema_mismatch_names_the_file_it_is_in(tmp_path, capsys):
    """``report``'s synthetic file lacking a schema column was blamed on
    "the input"."""
    real, syn = tmp_path / "real.csv", tmp_path / "syn.csv"
    pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]}).to_csv(real, index=False)
    pd.DataFrame({"a": [1.0, 2.0]}).to_csv(syn, index=False)
    (tmp_path / "s.json").write_text(
        json.dumps({"columns": {"a": "numeric", "b": "categorical"}})
    )
    args = ["report", str(real), str(syn), "--schema", str(tmp_path / "s.json")]
    assert cli.main([*args, "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert f"which {syn} does not have" in err


def test_types_read_from_the_data_are_said(tmp_path, capsys):
    """With a schema without "columns" pandas read the undeclared columns'
    types from the values: one empty cell turned int64 into float64 and the
    release's decoder with it, without a word; a zone came from the cells'
    offsets. A types-only schema with a
    "timezone" says nothing."""
    rng = np.random.default_rng(0)
    n = 3000
    when = pd.Timestamp("2020-01-01", tz="UTC") + pd.to_timedelta(
        rng.integers(0, 9000, n), unit="h"
    )
    frame = pd.DataFrame({"k": rng.integers(0, 5, n), "when": when})
    frame.to_csv(tmp_path / "in.csv", index=False)
    base = ["synthesize", str(tmp_path / "in.csv"), "--method", "gaussian-release"]
    base += ["--epsilon", "1", "--delta", "1e-6", "--seed", "0"]
    base += ["-o", str(tmp_path / "o.csv"), "--schema", str(tmp_path / "s.json")]
    (tmp_path / "s.json").write_text(json.dumps({"bin_edges": {"k": [0, 2, 5]}}))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")  # also the text column's coarse domain
        assert cli.main(base) == 0
    said = " ".join(
        str(w.message) for w in record if issubclass(w.category, PrivacyLeakWarning)
    )
    assert "types of columns ['k', 'when']" in said
    column = {"type": "datetime", "unit": "h"}
    types = {"columns": {"k": {"type": "numeric", "integer": True}, "when": column}}
    (tmp_path / "s.json").write_text(json.dumps(types))
    with pytest.warns(PrivacyLeakWarning, match="time zone was read from the cells"):
        assert cli.main(base) == 0
    column["timezone"] = "UTC"
    (tmp_path / "s.json").write_text(json.dumps(types))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert cli.main(base) == 0
    assert not [w for w in record if issubclass(w.category, PrivacyLeakWarning)]


def test_a_missing_value_in_a_declared_column_is_explained_in_schema_terms(
    tmp_path, capsys
):
    """A declared column's missing level is declared, not inferred; the
    CLI's error says how in the schema file's terms, not Python's
    (``missing={column: True}``)."""
    (tmp_path / "m.csv").write_text("job,x\na,1\nb,2\n,3\nc,4\na,5\nb,6\n")
    schema = {
        "columns": {
            "job": {"type": "categorical", "levels": ["a", "b", "c"]},
            "x": {"type": "numeric", "bin_edges": [0, 3, 7]},
        }
    }
    (tmp_path / "m.json").write_text(json.dumps(schema))
    args = ["synthesize", str(tmp_path / "m.csv"), "--schema", str(tmp_path / "m.json")]
    args += ["--method", "gaussian-release", "--epsilon", "1", "--delta", "1e-6"]
    assert cli.main([*args, "-o", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert "column 'job' has missing values" in err
    assert 'null among its "levels", or "missing": true' in err and "None" not in err
    schema["columns"]["job"]["missing"] = True
    (tmp_path / "m.json").write_text(json.dumps(schema))
    # six rows in two declared bins: the release's noise (about 10 rows a
    # bin at epsilon = 1) is wider than either bin's count, and says so.
    # Seeded: with the default secure noise the count is a draw, and it read
    # "1 of its 2 bins" in 2 of 60 runs (and in both CI runs of one commit)
    with pytest.warns(DegenerateColumnWarning, match="'x': 0 of its 2 bins"):
        out = ["--seed", "0", "-o", str(tmp_path / "o.csv")]
        assert cli.main([*args, *out]) == 0


def test_a_schema_that_says_missing_both_ways_is_refused():
    from skdp_synth.cli._schema import SchemaError, parse_schema

    column = {"type": "categorical", "levels": ["a", None], "missing": False}
    with pytest.raises(SchemaError, match="keep one"):
        parse_schema({"columns": {"c": column}})


def test_holdout_does_not_decide_whether_the_declarations_hold(tmp_path, capsys):
    """With --holdout the declared-missing check read only the rows the
    split kept: the same command failed or passed by the coin (6 of 8 on
    credit). The whole input is checked."""
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame({"job": rng.choice(["a", "b"], n), "x": rng.integers(0, 9, n)})
    frame.loc[7, "job"] = None  # one missing cell
    frame.to_csv(tmp_path / "in.csv", index=False)
    schema = {
        "columns": {
            "job": {"type": "categorical", "levels": ["a", "b"]},
            "x": {"type": "numeric", "integer": True, "bin_edges": [0, 4, 9]},
        }
    }
    (tmp_path / "s.json").write_text(json.dumps(schema))
    for seed in range(6):
        args = [
            "synthesize",
            str(tmp_path / "in.csv"),
            "--schema",
            str(tmp_path / "s.json"),
        ]
        args += ["--method", "gaussian-release", "--epsilon", "1", "--delta", "1e-6"]
        args += ["--holdout", "0.5", "--holdout-out", str(tmp_path / "h.csv")]
        args += ["--seed", str(seed), "-o", str(tmp_path / "o.csv")]
        assert cli.main(args) == 2
        assert "column 'job' has missing values" in capsys.readouterr().err


def test_a_coarse_domain_warning_is_said_in_schema_terms(capsys):
    """On the command line the CoarseDomainWarning advised Python keywords
    (``bin_edges=``, ``categories=``), not the schema's keys."""
    from skdp_synth.exceptions import CoarseDomainWarning

    text = (
        "the private domains of columns ['x'] kept a single bin. Declare their "
        "domains (bin_edges= or bounds=, categories=) or give them more"
    )
    with _console._cli_warnings(schema_given=True, types_only=True):
        warnings.formatwarning(text, CoarseDomainWarning, "f.py", 1)
    err = capsys.readouterr().err
    assert (
        'Declare their domains in the schema ("bin_edges" or "bounds", "levels")' in err
    )
    assert "bin_edges=" not in err
    # a categorical domain that kept no level is told of the datetime type
    # (a column of dates read as text came back all "other"); a numeric one
    # is not
    assert '"datetime"' not in err
    with _console._cli_warnings(schema_given=True, types_only=True):
        warnings.formatwarning(
            "columns ['when'] kept a single bin (numeric) or no level (categorical)",
            CoarseDomainWarning,
            "f.py",
            1,
        )
    assert 'of type "datetime"' in capsys.readouterr().err


def test_a_numeric_columns_missing_value_remedy_is_missing_true(tmp_path, capsys):
    """A numeric column with bin edges and an undeclared missing value was
    told to put null among its "levels", which do not apply to a number:
    its remedy is "missing": true alone."""
    import json

    from skdp_synth.cli import _main as cli

    src = tmp_path / "in.csv"
    pd.DataFrame({"x": [1.0, None, 3.0] * 20, "c": ["a", "b", "a"] * 20}).to_csv(
        src, index=False
    )
    schema = {
        "columns": {
            "x": {"type": "numeric", "bin_edges": [0, 2, 4]},
            "c": {"type": "categorical", "levels": ["a", "b"]},
        }
    }
    (tmp_path / "s.json").write_text(json.dumps(schema))
    args = ["synthesize", str(src), "--method", "gaussian-release", "--epsilon", "1"]
    args += ["--delta", "1e-6", "--schema", str(tmp_path / "s.json")]
    assert cli.main([*args, "-o", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert 'declare it in the schema: "missing": true' in err
    assert "levels" not in err


def test_parameters_are_refused_before_a_cell_is_read(tmp_path, capsys):
    """``--epsilon -1`` with a cell that is not a number was refused for the
    cell: the data were read before the parameters were checked. The
    parameters come first."""
    df = _people(50).astype({"age": object})
    df.loc[3, "age"] = "not a number"
    assert _run(tmp_path, df, TYPES, "--epsilon", "-1", "--delta", "1e-6")[0] == 2
    err = capsys.readouterr().err
    assert "'epsilon' parameter" in err and "age" not in err


def test_a_side_of_numeric_bounds_can_be_null():
    """``"bounds": [0, null]``: a count's public floor, its top learned
    privately (without the floor, counts came back negative)."""
    schema = parse_schema(
        {"columns": {"kids": {"type": "numeric", "integer": True, "bounds": [0, None]}}}
    )
    assert schema.encoder["bounds"] == {"kids": [0.0, None]}


def test_a_boolean_column_type(tmp_path):
    """``"boolean"``: levels true and false, public by the type, read in any
    case (R writes TRUE); it was "unknown type", and as a categorical
    without levels a rare true could be discovered away into "other"."""
    schema = parse_schema(
        {"columns": {"flag": "boolean", "late": {"type": "boolean", "missing": True}}}
    )
    assert schema.encoder["categories"] == {
        "flag": [False, True],
        "late": [False, True, None],
    }
    rng = np.random.default_rng(0)
    df = _people(3000)
    df["flag"] = np.where(rng.random(3000) < 0.05, "TRUE", "FALSE")
    df["late"] = rng.choice(["true", "0", "1", ""], 3000)  # 0/1 too
    types = {"columns": {**TYPES["columns"], "flag": "boolean"}}
    types["columns"]["late"] = {"type": "boolean", "missing": True}
    code, out = _run(tmp_path, df, types, "--epsilon", "3", "--delta", "1e-6")
    assert code == 0
    rows = pd.read_csv(out)
    assert set(rows["flag"].astype(str)) <= {"True", "False"}
    assert set(rows["late"].dropna().astype(str)) <= {"True", "False"}


def test_a_misnamed_column_is_named_both_ways_at_once():
    """A typo'd column was reported as untyped on one run and as absent on
    the next; both are said at once."""
    schema = parse_schema({"columns": {"lead_tme": "numeric", "x": "categorical"}})
    with pytest.raises(SchemaError) as info:
        schema.check_columns(["lead_time", "x"])
    assert "['lead_time']" in str(info.value) and "['lead_tme']" in str(info.value)


def test_a_date_columns_bounds_can_leave_a_side_null(tmp_path):
    """``"bounds": ["2019-01-01", null]`` for a date: the floor public, the
    end learned privately, as for numbers."""
    schema = parse_schema(
        {
            "columns": {
                "d": {"type": "datetime", "unit": "D", "bounds": ["2019-01-01", None]}
            }
        }
    )
    assert schema.encoder["bounds"] == {"d": ["2019-01-01", None]}
    rng = np.random.default_rng(0)
    days = pd.Timestamp("2019-01-01") + pd.to_timedelta(rng.integers(0, 700, 3000), "D")
    df = pd.DataFrame(
        {"d": days.strftime("%Y-%m-%d"), "c": rng.choice(["a", "b"], 3000)}
    )
    types = {
        "columns": {
            "d": {"type": "datetime", "unit": "D", "bounds": ["2019-01-01", None]},
            "c": {"type": "categorical", "levels": ["a", "b"]},
        }
    }
    code, out = _run(tmp_path, df, types, "--epsilon", "3", "--delta", "1e-6")
    assert code == 0
    assert pd.to_datetime(pd.read_csv(out)["d"]).min() >= pd.Timestamp("2019-01-01")
    with pytest.raises(SchemaError, match="null for a side"):
        parse_schema({"columns": {"d": {"type": "datetime", "bounds": [None, None]}}})


# ------------------------------------------------------------ rules
def _subscribers(n=800, seed=0):
    """Every declared rule below holds on these rows (a churn-like table)."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    internet = rng.choice(["DSL", "Fiber", "No"], n)
    sex = rng.choice(["F", "M"], n)
    return pd.DataFrame(
        {
            "age": age,
            "tenure": np.minimum(rng.integers(0, 50, n), age - 14),
            "senior": np.where(age >= 65, "senior", "adult"),
            "internet": internet,
            "tv": np.where(
                internet == "No", "No internet service", rng.choice(["Yes", "No"], n)
            ),
            "sex": sex,
            "pregnant": np.where(
                sex == "M", "no", rng.choice(["yes", "no"], n, p=[0.2, 0.8])
            ),
        }
    )


SUBSCRIBERS = {
    "columns": {
        "age": {"type": "numeric", "integer": True, "bounds": [18, 80]},
        "tenure": {"type": "numeric", "integer": True, "bounds": [0, 66]},
        "senior": {"type": "categorical", "levels": ["adult", "senior"]},
        "internet": {"type": "categorical", "levels": ["DSL", "Fiber", "No"]},
        "tv": {"type": "categorical", "levels": ["Yes", "No", "No internet service"]},
        "sex": {"type": "categorical", "levels": ["F", "M"]},
        "pregnant": {"type": "categorical", "levels": ["yes", "no"]},
    }
}


def _senior_broken(s):
    return s["senior"] != np.where(s["age"] >= 65, "senior", "adult")


def _no_internet_broken(s):
    return (s["internet"] == "No") != (s["tv"] == "No internet service")


RULE_CASES = {
    "derived": (
        [{"derived": "senior", "expression": "'senior' if age >= 65 else 'adult'"}],
        _senior_broken,
    ),
    "inequality": (
        [{"inequality": ["tenure", "<=", "age"], "offset": -14}],
        lambda s: s["tenure"] > s["age"] - 14,
    ),
    "implies": (
        [
            {"implies": [{"internet": "No"}, {"tv": "No internet service"}]},
            {"implies": [{"tv": "No internet service"}, {"internet": "No"}]},
        ],
        _no_internet_broken,
    ),
    "structural_zero": (
        [{"structural_zero": {"sex": "M", "pregnant": "yes"}}],
        lambda s: (s["sex"] == "M") & (s["pregnant"] == "yes"),
    ),
    "fixed_combinations": (
        [
            {
                "fixed_combinations": ["internet", "tv"],
                "combinations": [
                    ["DSL", "Yes"],
                    ["DSL", "No"],
                    ["Fiber", "Yes"],
                    ["Fiber", "No"],
                    ["No", "No internet service"],
                ],
            }
        ],
        _no_internet_broken,
    ),
}


@pytest.mark.parametrize("kind", sorted(RULE_CASES))
def test_every_synthetic_row_keeps_a_rule_of_the_schema_file(tmp_path, capsys, kind):
    rules, broken = RULE_CASES[kind]
    df = _subscribers()
    # ε = 0.3: at ε = 1 the release alone keeps the structural zero's cell
    # empty (seeds 0-3), so the rule would not be shown to do anything there
    args = ("--epsilon", "0.3", "--delta", "1e-6", "--rows", "1000")
    # the same command without the rule: some rows break it (not vacuous)
    code, out = _run(tmp_path, df, SUBSCRIBERS, *args)
    assert code == 0, capsys.readouterr().err
    assert broken(pd.read_csv(out)).sum() > 0
    code, out = _run(tmp_path, df, {**SUBSCRIBERS, "rules": rules}, *args)
    err = capsys.readouterr().err
    assert code == 0, err
    syn = pd.read_csv(out)
    assert list(syn.columns) == list(df.columns) and len(syn) == 1000
    assert broken(syn).sum() == 0
    assert "privacy spent: epsilon=0.3, delta=1e-06" in err


def test_a_derived_column_is_read_but_never_fitted_nor_declared_to_the_encoder():
    schema = parse_schema(
        {**SUBSCRIBERS, "rules": RULE_CASES["derived"][0]}
    )  # fmt: skip
    assert "senior" in schema.types  # in the CSV, read as its type
    assert "senior" not in schema.encoder["categories"]  # dropped before the fit
    full = parse_schema(
        {"categories": {"senior": ["adult", "senior"], "sex": ["F", "M"]},
         "rules": RULE_CASES["derived"][0]}
    )  # fmt: skip
    assert full.encoder == {"categories": {"sex": ["F", "M"]}}
    assert full.types is None and len(full.rules) == 1


@pytest.mark.parametrize(
    "rules, message",
    [
        ({"derived": "x"}, '"rules" must be a list'),
        ([{"derive": "x"}], '"rules"[0]: a rule is a mapping with one of the keys'),
        ([{"derived": "x", "inequality": []}], "with one of the keys"),
        ([{"derived": "x"}], '"rules"[0] (derived): give the column\'s name'),
        ([{"derived": "x", "expression": "age >"}], "is not an expression"),
        (
            [{"derived": "x", "expression": "age", "offset": 1}],
            "(derived): unknown keys ['offset']",
        ),
        ([{"inequality": ["tenure", "<", "age"]}], "op must be one of"),
        ([{"inequality": ["tenure", "<="]}], "give [column,"),
        ([{"inequality": ["tenure", "<=", "age"], "offset": "x"}], '"offset" must'),
        ([{"inequality": ["sex", "<=", 3]}], "column 'sex' is categorical"),
        ([{"implies": [{"internet": "No"}]}], "give [condition, consequence]"),
        ([{"implies": [{"internet": "No"}, {"internet": "DSL"}]}], "in both"),
        ([{"structural_zero": {}}], "(structural_zero): StructuralZero's cell"),
        ([{"structural_zero": {"colour": "red"}}], "colour"),
        ([{"fixed_combinations": ["tv"], "combinations": [["No"]]}], "two or more"),
        (
            [{"inequality": ["age", "<=", 30]}, {"inequality": ["age", ">=", 40]}],
            "contradict",
        ),
        (
            [
                {"derived": "sex", "expression": "age > 1"},
                {"derived": "sex", "expression": "age > 2"},
            ],
            "defined twice",
        ),
    ],
)
def test_a_bad_rule_is_named_in_one_line(rules, message):
    with pytest.raises(SchemaError) as info:
        parse_schema({**SUBSCRIBERS, "rules": rules})
    text = str(info.value)
    assert "\n" not in text
    assert message in text


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('touch PWNED')",
        "age.__class__",
        "age[0]",
        "(lambda: 1)()",
        "[x for x in age]",
        "__builtins__",
        "open('PWNED', 'w')",
    ],
)
def test_a_schema_file_runs_no_code(tmp_path, capsys, monkeypatch, expression):
    monkeypatch.chdir(tmp_path)
    schema = {**SUBSCRIBERS, "rules": [{"derived": "senior", "expression": expression}]}
    code, out = _run(tmp_path, _subscribers(50), schema, "--rows", "5")
    err = capsys.readouterr().err
    _assert_one_error_line(code, err)
    assert "not allowed in a rule's expression" in err or "not an expression" in err
    assert not (tmp_path / "PWNED").exists() and not out.exists()


def test_rules_ask_for_an_in_memory_fit(tmp_path, capsys):
    schema = {**SUBSCRIBERS, "rules": RULE_CASES["implies"][0]}
    code, out = _run(tmp_path, _subscribers(50), schema, "--out-of-core")
    err = capsys.readouterr().err
    _assert_one_error_line(code, err)
    assert '"rules" need an in-memory fit' in err


@pytest.mark.filterwarnings("error::UserWarning")
def test_sample_from_a_release_keeps_the_schema_files_rules(tmp_path, capsys):
    rules = [
        *RULE_CASES["derived"][0],
        *RULE_CASES["inequality"][0],
        *RULE_CASES["implies"][0],
    ]
    schema = {**SUBSCRIBERS, "rules": rules}
    release = tmp_path / "release.npz"
    code, _ = _run(
        tmp_path, _subscribers(), schema, "--epsilon", "1", "--delta", "1e-6",
        "--release-out", str(release),
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    # the release file stores the schema's rules (plan["rules"]): no advice
    # to pass --schema again is printed
    assert "does not store" not in err
    path = tmp_path / "s.json"  # the schema _run wrote
    rows = tmp_path / "rows.csv"
    args = ["sample", str(release), "--rows", "3000", "--seed", "1", "-o", str(rows)]
    args += ["--chunk-rows", "700"]
    assert cli.main([*args, "--schema", str(path)]) == 0, capsys.readouterr().err
    syn = pd.read_csv(rows)
    assert list(syn.columns) == list(SUBSCRIBERS["columns"]) and len(syn) == 3000
    for _, broken in (RULE_CASES[k] for k in ("derived", "inequality", "implies")):
        assert broken(syn).sum() == 0
    # without --schema: the release file stores the rules (plan["rules"]),
    # so its rows keep them and carry the derived column all the same
    assert cli.main(args) == 0
    drawn = pd.read_csv(rows)
    assert set(drawn.columns) == set(SUBSCRIBERS["columns"]) and len(drawn) == 3000
    for _, broken in (RULE_CASES[k] for k in ("derived", "inequality", "implies")):
        assert broken(drawn).sum() == 0
    # conditions and a schema's rules are not combined from a file
    code = cli.main([*args, "--schema", str(path), "--given", "internet=No"])
    _assert_one_error_line(code, capsys.readouterr().err)


def test_a_derived_column_absent_from_the_input_is_written_last(tmp_path, capsys):
    df = _subscribers().drop(columns="senior")
    columns = {c: t for c, t in SUBSCRIBERS["columns"].items() if c != "senior"}
    schema = {"columns": columns, "rules": RULE_CASES["derived"][0]}
    code, out = _run(tmp_path, df, schema, "--epsilon", "1", "--delta", "1e-6")
    assert code == 0, capsys.readouterr().err
    syn = pd.read_csv(out)
    assert list(syn.columns) == [*df.columns, "senior"]
    assert _senior_broken(syn).sum() == 0


def test_a_numeric_columns_point_masses_reach_the_encoder():
    """A types-only schema's ``"point_masses"`` becomes the encoder's
    ``point_masses=`` (public values that hold heaps: a code, a cap)."""
    schema = parse_schema(
        {"columns": {"income": {"type": "numeric", "point_masses": [999999]}}}
    )
    assert schema.encoder["point_masses"] == {"income": [999999.0]}


@pytest.mark.slow
def test_synthesize_keeps_a_declared_code(tmp_path, capsys):
    """End to end: a wage code of 99999 held by 10 % of 600 rows comes back
    as itself from the command line when the schema declares it."""
    df = _people()
    df.loc[df.index[::10], "wage"] = 99999.0
    types = {
        "columns": {
            **TYPES["columns"],
            "wage": {"type": "numeric", "point_masses": [99999]},
        }
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code, out = _run(
            tmp_path, df, types, "--epsilon", "3", "--delta", "1e-6", "--rows", "600"
        )
    assert code == 0, capsys.readouterr().err
    syn = pd.read_csv(out, keep_default_na=False, na_values=[""])
    assert (syn["wage"] == 99999).mean() > 0.03


def test_a_parquet_output_keeps_the_input_files_date_time_and_text_types(tmp_path):
    """Written from pandas, a Parquet input's ``date32`` column came back as
    ``timestamp[ns]``, a ``timestamp[ms, tz]`` one as ``timestamp[ns, tz]``
    and a dictionary of text as plain strings; each is cast back where the
    cast cannot change a value (dates counted in days, whole seconds)."""
    pytest.importorskip("dask")
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rng = np.random.default_rng(0)
    n = 2000
    at = pd.Timestamp("2021-01-01") + pd.to_timedelta(
        rng.integers(0, 400 * 86400, n), "s"
    )
    table = pa.table(
        {
            "day": pa.array(at.normalize().date, type=pa.date32()),
            "seen": pa.array(at.tz_localize("UTC"), type=pa.timestamp("ms", tz="UTC")),
            "ward": pa.array(rng.choice(["a", "b"], n)).dictionary_encode(),
            "note": pa.array(rng.choice(["x", "y"], n), type=pa.large_string()),
            "x": rng.normal(size=n),
        }
    )
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(table, src)
    schema = {
        "columns": {
            "day": {"type": "datetime", "unit": "D"},
            "seen": {"type": "datetime", "timezone": "UTC"},
            "ward": {"type": "categorical", "levels": ["a", "b"]},
            "note": {"type": "categorical", "levels": ["x", "y"]},
            "x": "numeric",
        }
    }
    (tmp_path / "s.json").write_text(json.dumps(schema))
    args = ["synthesize", str(src), "--schema", str(tmp_path / "s.json")]
    args += ["--method", "gaussian-release", "--epsilon", "1", "--delta", "1e-6"]
    assert cli.main([*args, "--seed", "0", "-o", str(out)]) == 0
    written = pq.read_schema(out)
    for name in ("day", "seen", "ward", "note"):
        assert written.field(name).type == table.schema.field(name).type, name
    assert written.field("x").type == pa.float64()
