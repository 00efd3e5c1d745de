"""The report tests the declared rules on the synthetic rows: a rule some
of them break is an alert with the share breaking it; the share of real
rows breaking it is given beside as information about the data."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.cli import _main as cli
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.report import fidelity_report
from skdp_synth.rules import Derived, Inequality, RuleSet, StructuralZero


def _table(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    weeks = rng.integers(30, 46, n)
    mage = rng.integers(16, 45, n)
    sex = rng.choice(["female", "male"], n)
    return pd.DataFrame(
        {
            "weeks": weeks,
            "mage": mage,
            "mature": mage >= 35,
            "sex": sex,
            "pregnant": np.where(sex == "male", "no", rng.choice(["yes", "no"], n)),
        }
    )


RULES = [
    Inequality("weeks", "<=", 45),
    Derived("mature", "mage >= 35"),
    StructuralZero({"sex": "male", "pregnant": "yes"}),
]


def test_a_rule_the_synthetic_rows_break_is_an_alert_with_its_share():
    real = _table()
    syn = _table(seed=1)
    syn.loc[:199, "weeks"] = 50  # 10 % break weeks <= 45
    syn.loc[:99, "mature"] = ~syn.loc[:99, "mature"]  # 5 % break the definition
    rep = fidelity_report(real, syn, d=1, rules=RULES)
    broken = {a.evidence["rule"]: a for a in rep.alerts if a.kind == "rule_broken"}
    assert set(broken) == {"weeks <= 45", "mature = mage >= 35"}
    weeks = broken["weeks <= 45"]
    assert weeks.column == "weeks"
    assert weeks.evidence["synthetic_broken"] == 200 / len(syn)
    assert weeks.evidence["real_broken"] == 0.0
    assert "broken by 10.0 % of the synthetic rows" in weeks.message
    assert "; for information: 0.0 % of the real rows break it" in weeks.message
    assert broken["mature = mage >= 35"].column == "mature"
    assert broken["mature = mage >= 35"].evidence["synthetic_broken"] == 100 / 2000
    # every rule listed, the kept one at 0 %
    checks = {c.rule: c for c in rep.rule_checks}
    assert len(checks) == 3
    zero = checks[repr(RULES[2])]
    assert zero.synthetic_broken == 0.0 and zero.real_broken == 0.0
    # on the page and in the JSON
    page = rep.to_html(include_plot=False)
    assert "<h2 id='rules'>Declared rules</h2>" in page
    assert "real rows breaking it (information about the data, not an alert)" in page
    assert "data-kind='rule_broken' data-column='weeks'" in page
    data = rep.to_dict()
    assert [r["rule"] for r in data["rules"]] == [c.rule for c in rep.rule_checks]
    assert data["rules"][0]["synthetic_broken"] == 0.1


def test_real_rows_breaking_a_rule_are_information_not_an_alert():
    real = _table()
    real.loc[:49, "pregnant"] = "yes"
    real.loc[:49, "sex"] = "male"  # 2.5 % of the real rows in the zero cell
    rep = fidelity_report(real, _table(seed=1), d=1, rules=RuleSet(RULES))
    assert not [a for a in rep.alerts if a.kind == "rule_broken"]
    (check,) = [c for c in rep.rule_checks if "StructuralZero" in c.rule]
    assert check.real_broken == 50 / len(real) and check.synthetic_broken == 0.0


def test_a_rule_on_a_column_the_rows_lack_is_not_checked():
    real, syn = _table().drop(columns=["mature"]), _table(seed=1)
    syn = syn.drop(columns=["mature"])
    rep = fidelity_report(real, syn, d=1, rules=RULES)
    (check,) = [c for c in rep.rule_checks if c.rule.startswith("mature")]
    assert check.synthetic_broken is None and "mature" in check.note
    assert "not checked" in rep.to_html(include_plot=False)
    with pytest.raises(TypeError, match="rules must be rules"):
        fidelity_report(real, syn, d=1, rules=["weeks <= 45"])


def test_the_pipelines_rules_are_read_and_kept():
    real = _table()
    pipe = make_synthesis_pipeline(
        BooleanEncoder(
            categories={
                "sex": ["female", "male"],
                "pregnant": ["no", "yes"],
            },
            bin_edges={"weeks": list(range(30, 47)), "mage": list(range(16, 46))},
        ),
        ProjectedGaussianRelease(epsilon=2.0, delta=1e-6),
        rules=RULES,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(real)
    rep = fidelity_report(real, pipe, d=1, random_state=0)
    assert [c.rule for c in rep.rule_checks] == [
        "weeks <= 45",
        "mature = mage >= 35",
        repr(RULES[2]),
    ]
    # the pipeline repairs its rows: no synthetic row breaks a rule
    assert all(c.synthetic_broken == 0.0 for c in rep.rule_checks)
    assert not [a for a in rep.alerts if a.kind == "rule_broken"]


def test_the_command_line_reads_the_schemas_rules(tmp_path, capsys):
    real, syn = _table(), _table(seed=1)
    syn.loc[:199, "weeks"] = 50
    syn.loc[:9, ["sex", "pregnant"]] = ["male", "yes"]
    real.to_csv(tmp_path / "real.csv", index=False)
    syn.to_csv(tmp_path / "syn.csv", index=False)
    schema = {
        "columns": {
            "weeks": "numeric",
            "mage": "numeric",
            "mature": "boolean",
            "sex": "categorical",
            "pregnant": "categorical",
        },
        "rules": [
            {"inequality": ["weeks", "<=", 45]},
            {"derived": "mature", "expression": "mage >= 35"},
            {"structural_zero": {"sex": "male", "pregnant": "yes"}},
        ],
    }
    (tmp_path / "s.json").write_text(json.dumps(schema))
    js = tmp_path / "r.json"
    args = ["report", str(tmp_path / "real.csv"), str(tmp_path / "syn.csv")]
    args += ["--schema", str(tmp_path / "s.json"), "--d", "1"]
    assert cli.main([*args, "-o", str(tmp_path / "r.html"), "--json", str(js)]) == 0
    data = json.loads(js.read_text(encoding="utf-8"))
    shares = {r["rule"]: r["synthetic_broken"] for r in data["rules"]}
    assert shares["weeks <= 45"] == 0.1
    assert shares["mature = mage >= 35"] == 0.0
    kinds = [(a["kind"], a["column"]) for a in data["alerts"]]
    assert ("rule_broken", "weeks") in kinds and ("rule_broken", "sex") in kinds
    err = capsys.readouterr().err
    assert "alert (rule_broken): declared rule weeks <= 45" in err


def test_report_release_accepts_the_schemas_derived_columns(tmp_path):
    """A release never holds a derived column (it is computed after
    sampling): 'report --release' refused the rows 'synthesize' wrote from
    a schema with derived columns, naming the columns as a mismatch."""
    real = _table(1500)
    real.to_csv(tmp_path / "real.csv", index=False)
    schema = {
        "columns": {
            "weeks": {"type": "numeric", "bounds": [30, 46], "integer": True},
            "mage": {"type": "numeric", "bounds": [16, 45], "integer": True},
            "mature": "boolean",
            "sex": {"type": "categorical", "levels": ["female", "male"]},
            "pregnant": {"type": "categorical", "levels": ["no", "yes"]},
        },
        "rules": [{"derived": "mature", "expression": "mage >= 35"}],
    }
    (tmp_path / "s.json").write_text(json.dumps(schema))
    s, rel, out = str(tmp_path / "s.json"), tmp_path / "r.rel", tmp_path / "o.csv"
    args = ["synthesize", str(tmp_path / "real.csv"), "--method", "gaussian-release"]
    args += ["--schema", s, "--epsilon", "1", "--delta", "1e-6", "--seed", "0"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cli.main([*args, "--release-out", str(rel), "-o", str(out)]) == 0
    assert "mature" in pd.read_csv(out).columns
    report = ["report", str(tmp_path / "real.csv"), str(out), "--schema", s]
    js = tmp_path / "r.json"
    report += ["--release", str(rel), "-o", str(tmp_path / "r.html"), "--json", str(js)]
    assert cli.main(report) == 0
    data = json.loads(js.read_text(encoding="utf-8"))
    assert data["guarantee"]["epsilon"] == 1.0
    assert data["rules"][0]["synthetic_broken"] == 0.0
