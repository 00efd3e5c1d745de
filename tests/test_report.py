"""skdp_synth.report: numbers against the metric, HTML/PNG content, honesty."""

import io
import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth import (
    CovarianceLossMicroaggregator,
    ProjectedGaussianRelease,
    make_synthesis_pipeline,
)
from skdp_synth.cli import _main as cli
from skdp_synth.exceptions import PrivacyLeakWarning
from skdp_synth.metrics import marginal_error
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.privacy import not_private
from skdp_synth.report import (
    FidelityReport,
    curve,
    fidelity_report,
    noisy_marginals_baseline,
    plot_curve,
    train_synthetic_test_real,
)
from skdp_synth.report._report import BANNER

CATS = {
    "colour": ["red", "green", "blue"],
    "size": ["S", "M", "L"],
    "sold": ["yes", "no"],
    "flag": [0, 1],
}
SCHEMA = {"categories": CATS, "bin_edges": {"age": [0, 30, 60, 100]}}


def _table(n, seed):
    rng = np.random.default_rng(seed)
    colour = rng.choice(CATS["colour"], n, p=[0.5, 0.3, 0.2])
    size = np.where(
        colour == "red",
        rng.choice(CATS["size"], n),
        rng.choice(CATS["size"], n, p=[0.7, 0.2, 0.1]),
    )
    return pd.DataFrame(
        {
            "colour": colour,
            "size": size,
            "sold": rng.choice(CATS["sold"], n),
            "flag": rng.integers(0, 2, n),  # Boolean
            "age": rng.integers(0, 101, n),  # binned by the schema (100 included)
        }
    )


def _binned(df):
    out = df.copy()
    out["age"] = np.minimum(np.searchsorted([0, 30, 60, 100], df["age"], "right"), 3)
    return out


def _same(value):
    """Equal up to floating-point summation order."""
    return pytest.approx(value, rel=1e-12, abs=1e-15)


@pytest.fixture(scope="module")
def real():
    return _table(1500, 0)


@pytest.fixture(scope="module")
def synthetic():
    syn = _table(900, 1)
    syn.loc[:200, "colour"] = "blue"  # a clear 1-way error
    return syn


@pytest.fixture(scope="module")
def report(real, synthetic):
    return fidelity_report(real, synthetic, SCHEMA, d=(1, 2, 3))


def test_averages_and_tables_equal_the_metric(report, real, synthetic):
    R, S = _binned(real), _binned(synthetic)
    for d in (1, 2, 3):
        # the same routine; only the cells' order (declared vs seen levels)
        # differs, hence rounding in the last bits
        assert report.average_tv(d) == _same(marginal_error(R, S, d, kind="tv"))
    for (col,), tv in report.tv[1]:
        assert tv == pytest.approx(marginal_error(R[[col]], S[[col]], 1, kind="tv"))
    assert report.worst[1][0].columns == ("colour",)
    frame = report.to_frame()
    assert set(frame["property"]) == {
        "Column Shapes",
        "Column Pair Trends",
        "Column Triplets",
    }
    assert np.allclose(frame["score"], 1 - frame["tv"])
    assert 0 <= report.score <= 1
    props = report.properties
    assert props["Column Shapes"] == 1 - report.average_tv(1)
    assert report.score == pytest.approx(np.mean(list(props.values())))


def test_worst_table_cells_reproduce_its_tv(report):
    table = report.worst[2][0]
    cells = table.to_frame()
    assert list(cells.index.names) == list(table.columns)
    assert 0.5 * cells["difference"].abs().sum() == pytest.approx(table.tv)
    assert table.tv == max(tv for _, tv in report.tv[2])
    assert report.levels["age"] == ("[0, 30)", "[30, 60)", "[60, 100]")


def test_report_is_frozen(report):
    with pytest.raises(AttributeError):
        report.n_real = 3
    with pytest.raises(TypeError):
        report.tv[1] = ()


def test_html_is_self_contained_and_holds_the_metric_values(report, real, synthetic):
    pytest.importorskip("matplotlib")
    page = report.to_html()
    assert page.index(BANNER) < page.index("<h1>")  # the banner comes first
    assert "NOT private" in page and "<script" not in page
    assert "src='data:image/png;base64," in page and "http" not in page
    R, S = _binned(real), _binned(synthetic)
    averages = dict(re.findall(r"class='avg-tv' data-d='(\d)' data-tv='([^']+)'", page))
    for d in (1, 2, 3):
        assert float(averages[str(d)]) == _same(marginal_error(R, S, d, kind="tv"))
    per_table = [float(v) for v in re.findall(r"class='tv' data-tv='([^']+)'", page)]
    expected = [tv for d in (1, 2, 3) for _, tv in report.tv[d]]
    assert sorted(per_table) == [_same(v) for v in sorted(expected)]
    assert [float(v) for v in sorted(per_table)] == sorted(expected)  # exact repr


def test_png_has_the_expected_size_and_is_not_blank(report, tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread

    path = tmp_path / "report.png"
    report.plot(path)
    img = imread(path)
    assert img.shape[:2] == (800, 1200)
    rgb = img[..., :3]
    assert rgb.std() > 0.05  # not blank
    assert (rgb.min(axis=-1) < 0.5).mean() > 0.01  # some dark ink
    assert not list(tmp_path.glob(".skdp-synth-*"))  # written atomically


class _Guarded:
    """Public interface of an estimator only: private attributes raise."""

    def __init__(self, inner):
        object.__setattr__(self, "inner", inner)

    def __getattribute__(self, name):
        inner = object.__getattribute__(self, "inner")
        if name == "inner":
            return inner
        if name.startswith("_") and name not in ("__class__",):
            raise AssertionError(f"the report read {name!r}")
        if isinstance(getattr(type(inner), name, None), not_private):
            raise AssertionError(f"the report read the not-private {name!r}")
        return getattr(inner, name)


@pytest.fixture(scope="module")
def fitted_release(real):
    return make_synthesis_pipeline(
        BooleanEncoder(**SCHEMA),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
    ).fit(real)


def test_estimator_is_read_through_its_public_interface_only(real, fitted_release):
    est = fitted_release[-1]
    guarded = _Guarded(est)
    # the bare estimator samples bits: compare on the encoded real rows
    bits = pd.DataFrame(
        fitted_release[0].transform(real),
        columns=fitted_release[0].get_feature_names_out(),
    )
    rep = fidelity_report(bits, guarded, random_state=0)
    g = rep.guarantee
    assert (g.epsilon, g.delta, g.neighbouring) == (1.0, 1e-6, "add-remove-one")
    assert g.kind == "differential privacy" and "released" in g.holds
    assert g.hardened_noise is False
    assert rep.n_synthetic == len(real)


def test_pipeline_guarantee_and_rows(real, fitted_release):
    rep = fidelity_report(real, fitted_release, SCHEMA, random_state=0)
    assert rep.guarantee.source == "ProjectedGaussianRelease"
    assert rep.guarantee.epsilon == 1.0
    assert rep.score > 0.9
    rel = fitted_release[-1].to_release()
    rows = fitted_release.sample(500, random_state=1)
    from_rows = fidelity_report(real, rows, SCHEMA, release=rel)
    assert from_rows.guarantee.source == "Release of ProjectedGaussianRelease"
    assert "seeded NumPy" in dict(from_rows.guarantee.lines())["noise"]


def test_anonymity_and_unknown_guarantees(real, synthetic):
    pipe = make_synthesis_pipeline(
        BooleanEncoder(**SCHEMA), CovarianceLossMicroaggregator(k=100)
    ).fit(real)
    rep = fidelity_report(real, pipe, SCHEMA, random_state=0)
    assert rep.guarantee.kind == "anonymity"
    assert "not differential privacy" in rep.guarantee.summary
    assert fidelity_report(real, synthetic, SCHEMA).guarantee.kind == "unknown"


def test_privacy_leak_warnings_are_recorded(real):
    with pytest.warns(PrivacyLeakWarning) as fit_warnings:
        pipe = make_synthesis_pipeline(
            # epsilon=None: age's edges learned without privacy, a leak (the
            # default, "auto", would learn them privately in the pipeline)
            BooleanEncoder(categories=CATS, epsilon=None),
            ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
        ).fit(real)
    rep = fidelity_report(
        real, pipe, SCHEMA, random_state=0, extra_warnings=list(fit_warnings)
    )
    assert any("PrivacyLeakWarning" in w for w in rep.privacy_warnings)
    pytest.importorskip("matplotlib")
    assert "Privacy warnings" in rep.to_html(include_plot=False)


def test_input_errors_are_clear(real, synthetic):
    with pytest.raises(ValueError, match="not among its declared levels"):
        fidelity_report(real, synthetic.assign(colour="pink"), SCHEMA)
    with pytest.raises(ValueError, match="outside its bin edges"):
        fidelity_report(real, synthetic.assign(age=200), SCHEMA)
    with pytest.raises(ValueError, match="lack the real table's columns"):
        fidelity_report(real, synthetic.drop(columns="sold"), SCHEMA)
    with pytest.raises(ValueError, match="unknown schema keys"):
        fidelity_report(real, synthetic, {"levels": {}})
    with pytest.raises(ValueError, match="d must be"):
        fidelity_report(real, synthetic, SCHEMA, d=4)
    with pytest.raises(TypeError, match="DataFrame"):
        fidelity_report(real.to_numpy(), synthetic, SCHEMA)


def test_without_schema_levels_are_learned_and_missing_is_a_level():
    real = pd.DataFrame({"a": ["x", None, "y", "x"], "b": [1, 2, 1, 2]})
    syn = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": [1, 1, 1, 2]})
    rep = fidelity_report(real, syn)
    assert rep.levels["a"][-1] == "<missing>"
    # levels as seen, in the metric's order: bit-for-bit the metric
    assert rep.average_tv(2) == marginal_error(real, syn, 2, kind="tv")


def test_noisy_marginals_baseline_noise_scale():
    codes = np.zeros((1000, 4), dtype=np.int64)
    rng = np.random.default_rng(0)
    out = noisy_marginals_baseline(codes, [2] * 4, 1e6, 0.0, "replace-one", 50, rng)
    assert out.shape == (50, 4) and not out.any()  # tiny noise: level 0 only


def test_curve_frame_and_plot(real):
    pytest.importorskip("matplotlib")

    def factory(epsilon, random_state):
        return make_synthesis_pipeline(
            BooleanEncoder(**SCHEMA),
            ProjectedGaussianRelease(
                epsilon=epsilon, delta=1e-6, random_state=random_state
            ),
        )

    frame = curve(factory, [0.3, 3.0], real, schema=SCHEMA, repeats=2)
    assert set(frame["method"]) == {
        "estimator",
        "baseline: noisy 1-way marginals",
        "floor: bootstrap of the real rows",
    }
    assert len(frame) == 2 * 2 * 2 + 2
    means = frame.groupby(["method", "epsilon"], dropna=False)["TV2"].mean()
    # the release beats independent columns on pairs at epsilon = 3
    assert means["estimator", 3.0] < means["baseline: noisy 1-way marginals", 3.0]
    fig = plot_curve(frame)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    assert len(fig.axes) == 3 and buf.tell() > 1000


def _copying_factory(epsilon, random_state):
    return make_synthesis_pipeline(
        BooleanEncoder(**SCHEMA),
        ProjectedGaussianRelease(
            epsilon=epsilon, delta=1e-6, random_state=random_state
        ),
    )


def test_curve_with_x_eval_equal_to_x_is_the_in_sample_curve(real):
    # identity: scoring against X_eval=X is exactly the default curve
    kw = dict(schema=SCHEMA, repeats=2, d=(1, 2))
    a = curve(_copying_factory, [1.0], real, **kw)
    b = curve(_copying_factory, [1.0], real, X_eval=real.copy(), **kw)
    pd.testing.assert_frame_equal(a, b)


def test_curve_scores_every_method_against_x_eval(real):
    held_out = _table(len(real), seed=99)
    kw = dict(schema=SCHEMA, repeats=1, d=(1,), n_samples=len(real))
    frame = curve(_copying_factory, [1.0], real, X_eval=held_out, **kw)
    floor = frame[frame["method"].str.startswith("floor")]["TV1"].iloc[0]
    # the floor is a bootstrap of X scored against X_eval: recompute it
    cx = _binned(real).to_numpy()
    cy = _binned(held_out).to_numpy()
    boot = cx[np.random.default_rng(20_000).integers(0, len(real), len(real))]
    expected = []
    for j in range(real.shape[1]):
        levels = np.unique(np.concatenate([cx[:, j], cy[:, j]]).astype(str))
        pb = pd.Series(boot[:, j].astype(str)).value_counts(normalize=True)
        pe = pd.Series(cy[:, j].astype(str)).value_counts(normalize=True)
        expected.append(0.5 * sum(abs(pb.get(v, 0.0) - pe.get(v, 0.0)) for v in levels))
    assert floor == pytest.approx(np.mean(expected), rel=1e-12)
    with pytest.raises(ValueError, match="same order"):
        curve(_copying_factory, [1.0], real, X_eval=held_out[held_out.columns[::-1]])
    with pytest.raises(TypeError, match="X_eval"):
        curve(_copying_factory, [1.0], real, X_eval=held_out.to_numpy())


def _write_inputs(tmp_path, real, synthetic):
    paths = {k: tmp_path / f"{k}.csv" for k in ("real", "synthetic")}
    real.to_csv(paths["real"], index=False)
    synthetic.to_csv(paths["synthetic"], index=False)
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    return str(paths["real"]), str(paths["synthetic"]), str(schema)


def test_cli_report(tmp_path, real, synthetic, capsys):
    pytest.importorskip("matplotlib")
    r, s, schema = _write_inputs(tmp_path, real, synthetic)
    out, png = tmp_path / "report.html", tmp_path / "report.png"
    code = cli.main(
        ["report", r, s, "--schema", schema, "-o", str(out), "--png", str(png)]
    )
    assert code == 0
    page = out.read_text(encoding="utf-8")
    assert BANNER in page
    avg = re.search(r"class='avg-tv' data-d='2' data-tv='([^']+)'", page).group(1)
    expected = marginal_error(_binned(real), _binned(synthetic), 2, kind="tv")
    assert float(avg) == _same(expected)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    err = capsys.readouterr().err
    assert "NOT private" in err and "average TV2" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "real.csv",
        "report.html",
        "report.png",
        "schema.json",
        "synthetic.csv",
    ]


def test_cli_report_errors_leave_nothing_behind(tmp_path, real, synthetic, capsys):
    r, s, schema = _write_inputs(tmp_path, real, synthetic.assign(colour="pink"))
    out = tmp_path / "report.html"
    assert cli.main(["report", r, s, "--schema", schema, "-o", str(out)]) == 2
    assert "not among its declared levels" in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.glob(".skdp-synth-*"))
    missing_dir = str(tmp_path / "nope" / "r.html")
    assert cli.main(["report", r, s, "-o", missing_dir]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_report_type_is_exported():
    from skdp_synth.report import _report as report

    assert report.FidelityReport is FidelityReport


def test_ks_of_numeric_columns_without_bins_matches_the_ecdf_definition():
    rng = np.random.default_rng(3)
    real = pd.DataFrame(
        {
            "income": rng.lognormal(10, 1, 400),
            "colour": rng.choice(CATS["colour"], 400),
            "flag": rng.integers(0, 2, 400).astype(bool),
        }
    )
    syn = pd.DataFrame(
        {
            "income": np.r_[rng.lognormal(10.3, 1, 299), np.nan],
            "colour": rng.choice(CATS["colour"], 300),
            "flag": rng.integers(0, 2, 300).astype(bool),
        }
    )
    rep = fidelity_report(real, syn, {"categories": {"colour": CATS["colour"]}})
    assert set(rep.ks) == {"income"}  # declared and Boolean columns excluded
    x = real["income"].to_numpy()
    y = syn["income"].dropna().to_numpy()
    grid = np.union1d(x, y)
    fx = np.searchsorted(np.sort(x), grid, side="right") / len(x)
    fy = np.searchsorted(np.sort(y), grid, side="right") / len(y)
    assert rep.ks["income"] == pytest.approx(np.max(np.abs(fx - fy)), abs=1e-15)
    assert rep.ks["income"] > 0.05  # a shifted distribution is seen
    page = rep.to_html(include_plot=False)
    assert f"data-ks='{rep.ks['income']!r}'" in page
    binned = fidelity_report(
        real, syn, {"bin_edges": {"income": [0, 1e4, 1e9]}, "categories": {}}
    )
    assert binned.ks == {}


def test_html_has_contents_one_header_row_and_levels_in_order(report):
    """A navigable page; worst 1-way tables keep the level order."""
    page = report.to_html(include_plot=False)
    toc = page[page.index("<nav class='toc'>") : page.index("</nav>")]
    targets = re.findall(r"href='#([^']+)'", toc)
    assert targets[:2] == ["summary", "guarantee"]
    for target in targets:  # every link lands on a section of the page
        assert f"id='{target}'" in page
    for d in report.tv:
        assert f"tables-{d}" in targets
    for table in report.worst.get(1, ()):
        start = page.index(f"<h3>{table.columns[0]} (TV")
        block = page[start : page.index("</table>", start)]
        # one header row: the column's name, then the three measures
        assert block.count("<tr") == 1 + len(table.cells)
        header = block[block.index("<thead>") : block.index("</thead>")]
        assert re.findall(r"<th>([^<]*)</th>", header) == [
            str(table.columns[0]),
            "real",
            "synthetic",
            "difference",
        ]
        levels = re.findall(r"<tr>\s*<td>([^<]*)</td>", block)
        assert levels == [str(c[0]) for c in table.cells]  # declared order


def test_numeric_scores_warns_on_synthetic_text_in_a_numeric_column():
    """A numeric code (gss ``occ10``) whose synthetic side came back as
    ``"other"`` was scored with 63 % "missing" and no word of why."""
    import pandas as pd

    from skdp_synth.report import numeric_scores

    real = pd.DataFrame({"code": [1.0, 2.0, 3.0, 4.0] * 10})
    synth = pd.DataFrame({"code": [1, 2, "other", 4] * 10}, dtype=object)
    with pytest.warns(UserWarning, match=r"columns \['code'\] have synthetic values"):
        scores = numeric_scores(real, synth)
    assert scores.loc["code", "missing_synthetic"] == 0.25


def test_the_report_scores_a_model_for_a_target(tmp_path):
    """The report adds the train-on-synthetic / test-on-real score for a
    target (it was only a separate function, and the CLI report lacked
    it)."""
    import json

    from skdp_synth.cli import _main as cli
    from skdp_synth.report import fidelity_report

    rng = np.random.default_rng(0)
    n = 1200
    x = rng.normal(size=n)
    df = pd.DataFrame(
        {"x": x, "g": rng.choice(["a", "b"], n), "y": np.where(x > 0, "yes", "no")}
    )
    train, held = df.iloc[:800], df.iloc[800:]
    report = fidelity_report(held, train, target="y", real_train=train, held_out=True)
    m = report.model
    assert (
        m["target"] == "y" and m["metric"] == "auc" and m["reference"] == "real_train"
    )
    assert m["synthetic"] == m["real"] > 0.9  # the same rows: the same model
    assert "A model predicting y, trained on the synthetic rows" in report.to_html()
    assert fidelity_report(held, train).model is None
    with pytest.raises(ValueError, match="not a column"):
        fidelity_report(held, train, target="z")
    # the command line
    train.to_csv(tmp_path / "train.csv", index=False)
    held.to_csv(tmp_path / "held.csv", index=False)
    schema = {"columns": {"x": "numeric", "g": "categorical", "y": "categorical"}}
    (tmp_path / "s.json").write_text(json.dumps(schema))
    page = tmp_path / "r.html"
    args = ["report", str(tmp_path / "held.csv"), str(tmp_path / "train.csv")]
    args += ["--schema", str(tmp_path / "s.json"), "--held-out", "--target", "y"]
    args += ["--real-train", str(tmp_path / "train.csv"), "-o", str(page)]
    assert cli.main(args) == 0
    assert "trained on the real training rows" in page.read_text()


def test_synthesize_writes_the_fitted_rows_for_the_reports_reference(tmp_path, capsys):
    """``synthesize --holdout`` wrote only the held-out rows, so the file
    ``report --real-train`` needs could not be had from the documented
    workflow, and ``report`` printed no model score (only the page had
    it). ``--train-out`` writes the fitted rows: with the held-out ones
    they are the input's rows, each once."""
    import json

    from skdp_synth.cli import _main as cli

    rng = np.random.default_rng(0)
    n = 1500
    x = rng.normal(size=n)
    df = pd.DataFrame(
        {"g": rng.choice(["a", "b"], n), "y": np.where(x > 0, "yes", "no")}
    )
    df["g"] = np.where(rng.random(n) < 0.8, np.where(x > 0, "a", "b"), df["g"])
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    schema = {
        "columns": {
            "g": {"type": "categorical", "levels": ["a", "b"]},
            "y": {"type": "categorical", "levels": ["no", "yes"]},
        }
    }
    (tmp_path / "s.json").write_text(json.dumps(schema))
    held, fitted, out = tmp_path / "held.csv", tmp_path / "fit.csv", tmp_path / "o.csv"
    base = ["synthesize", str(src), "--method", "gaussian-release", "--epsilon", "1"]
    base += ["--delta", "1e-6", "--schema", str(tmp_path / "s.json"), "--seed", "0"]
    assert cli.main([*base, "--train-out", str(fitted), "-o", str(out)]) == 2
    assert "--train-out writes the rows --holdout kept" in capsys.readouterr().err
    args = [*base, "--holdout", "0.2", "--holdout-out", str(held)]
    assert cli.main([*args, "--train-out", str(fitted), "-o", str(out)]) == 0
    hint = capsys.readouterr().err
    assert f"[--target COLUMN --real-train {fitted}] -o report.html" in hint
    assert f"--schema {tmp_path / 's.json'}" in hint
    both = pd.concat([pd.read_csv(fitted), pd.read_csv(held)])
    pd.testing.assert_frame_equal(
        both.sort_values(["g", "y"]).reset_index(drop=True),
        df.sort_values(["g", "y"]).reset_index(drop=True),
    )
    page = tmp_path / "r.html"
    report = ["report", str(held), str(out), "--schema", str(tmp_path / "s.json")]
    report += ["--held-out", "--target", "y", "--real-train", str(fitted)]
    assert cli.main([*report, "-o", str(page)]) == 0
    err = capsys.readouterr().err
    assert "a model of y trained on the synthetic rows: auc" in err
    assert "trained on the real training rows:" in err
    # without --target, --real-train is read all the same: the independent
    # columns are drawn from it (it was refused while only a model read it)
    no_target = [a for a in report if a not in ("--target", "y")]
    js = tmp_path / "r.json"
    assert cli.main([*no_target, "-o", str(page), "--json", str(js)]) == 0
    (drawn,) = [
        r
        for r in json.loads(js.read_text(encoding="utf-8"))["references"]
        if r["name"] == "independent columns"
    ]
    assert "real_train" in drawn["drawn_from"]
    assert drawn["scored_on"].startswith("the held-out real rows (")


def test_quantile_edges_do_not_split_a_heap():
    """A column on whole numbers (34 heights in inches) had quantile edges on
    its values: each heap's real rows above the edge, synthetic values
    placed around it on both sides, and the column read as the report's
    worst on binning alone. Edges move to midpoints between real values: a
    synthetic row within half a unit of its real value lands in its bin."""
    from skdp_synth.metrics._coding import _between_values

    rng = np.random.default_rng(0)
    h = rng.normal(66, 4, 5000).round()
    real = pd.DataFrame({"h": h, "g": rng.choice(["a", "b"], 5000)})
    jittered = real.assign(h=h + rng.uniform(-0.5, 0.5, 5000))
    assert fidelity_report(real, jittered).average_tv(1) == 0.0
    # an edge between two values stays; one on a value moves down half-way
    got = _between_values(
        np.array([2.0, 3.5, 7.0]), np.array([1.0, 2.0, 3.0, 4.0, 7.0])
    )
    assert got.tolist() == [1.5, 3.5, 5.5]


def test_undeclared_levels_are_shown_in_order():
    """The report promises levels "in their order"; an undeclared column's
    came in the order of appearance (species NL, PF, DS, SH, DM, ...).
    Levels that do not compare keep it."""
    from skdp_synth.metrics._coding import _discretize

    real = pd.DataFrame({"s": ["NL", "PF", "DS", "DM", "NL"], "m": ["b", 1, "a", 2, 1]})
    syn = pd.DataFrame({"s": ["PF", "AB", "DM", "NL", "NL"], "m": [1, 2, "b", "a", 1]})
    _, _, _, levels, _ = _discretize(real, syn, {})
    assert levels["s"] == ("AB", "DM", "DS", "NL", "PF")
    assert set(levels["m"]) == {"b", 1, "a", 2}


@pytest.mark.parametrize("seed", [2, 3])
def test_the_models_real_reference_learns_a_multi_class_target(seed):
    """Classes of a row or two drove the unregularised boosting (no early
    stopping) to raw scores in the tens of thousands: a police table's
    real-trained reference scored AUC .52 and accuracy below the majority
    rate, so synthetic rows "beat" real ones. A table shaped like it -- 11
    classes, 9,430 rows down to 2, each class named by its own actions -- is
    learned by the reference (measured: .48 / .50 unregularised, .88 / .93
    now)."""
    rng = np.random.default_rng(seed)
    counts = [9430, 1593, 1307, 170, 148, 104, 87, 77, 4, 3, 2]
    y = np.repeat([f"c{k}" for k in range(11)], counts)
    act = [f"a{k}_{j}" for k in range(11) for j in rng.integers(0, 3, counts[k])]
    df = pd.DataFrame({"act": act, "p": rng.integers(1, 6, len(y)), "y": y})
    df = df.sample(frac=1, random_state=seed).reset_index(drop=True)
    train, test = df.iloc[::2].reset_index(drop=True), df.iloc[1::2]
    out = train_synthetic_test_real(train, test.reset_index(drop=True), "y")
    assert out["metric"] == "auc-ovr" and out["synthetic"] > 0.8


@pytest.mark.parametrize("target", ["y", "flag"])
def test_a_numeric_feature_missing_in_every_synthetic_row_is_left_out(target):
    """A release at small ε returned a numeric column with every cell
    missing (attrition's ``MonthlyRate`` at ε = 0.1), and the model's
    binning failed on it ("window shape cannot be larger than input array
    shape"): the feature teaches nothing, so the model is fitted without
    it, and the score is the one of the rows without that column."""
    rng = np.random.default_rng(0)
    n = 800
    x = rng.normal(size=n)
    real = pd.DataFrame(
        {
            "x": x,
            "gone": rng.normal(size=n),
            "y": 2.0 * x + rng.normal(scale=0.5, size=n),
            "flag": np.where(x + rng.normal(scale=0.5, size=n) > 0, "a", "b"),
        }
    )
    syn = real.sample(frac=1.0, random_state=1).reset_index(drop=True)
    syn["gone"] = np.nan
    other = "flag" if target == "y" else "y"
    out = train_synthetic_test_real(
        syn.drop(columns=other), real.drop(columns=other), target
    )
    ref = train_synthetic_test_real(
        syn.drop(columns=[other, "gone"]), real.drop(columns=[other, "gone"]), target
    )
    assert np.isfinite(out["synthetic"])
    assert out["synthetic"] == ref["synthetic"]


def test_real_levels_the_release_did_not_discover_are_explained(tmp_path):
    """A column whose levels were discovered privately comes back with the
    rare ones as "other"; the report scored every rare real level as error
    with no word of why (a hotel table's ``country``: TV1 .246). Given
    the pipeline, its release or the release file, a note says how many
    levels and rows, and the column's TV1 had they been scored as "other".
    The scores stay raw: folding by the release's own levels scored a
    release that found no level best, in the report as in the scorer."""
    from skdp_synth import ProjectedGaussianRelease, Release, make_synthesis_pipeline
    from skdp_synth.metrics import make_marginal_scorer
    from skdp_synth.preprocessing import BooleanEncoder

    rng = np.random.default_rng(0)
    n = 6000
    common = rng.choice([f"c{i}" for i in range(12)], n)
    country = np.where(rng.random(n) < 0.2, [f"r{i}" for i in range(n)], common)
    df = pd.DataFrame({"country": country, "seg": rng.choice(["x", "y"], n)})
    train, test = df.iloc[::2].reset_index(drop=True), df.iloc[1::2]
    test = test.reset_index(drop=True)

    def fit(eps):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return make_synthesis_pipeline(
                BooleanEncoder(categories={"seg": ["x", "y"]}, random_state=0),
                ProjectedGaussianRelease(epsilon=eps, delta=1e-6, random_state=0),
            ).fit(train)

    pipe = fit(2.0)
    syn = pipe.sample(len(test), random_state=1)
    raw = dict(fidelity_report(test, syn).tv[1])[("country",)]
    assert raw > 0.15  # every rare real level against "other"
    path = tmp_path / "release.npz"
    pipe.to_release().save(path)
    for source in (pipe, pipe.to_release(), Release.load(path)):
        rep = fidelity_report(test, syn, release=source)
        assert dict(rep.tv[1])[("country",)] == raw  # the score stays raw
        (note,) = [note for note in rep.notes if "not discovered" in note]
        folded = float(note.rsplit(" ", 1)[1])
        assert folded < 0.06 < raw
    # a candidate that found fewer levels never scores better for it
    coarse = fit(0.002)
    assert len(coarse[0].specs_[0].levels) < len(pipe[0].specs_[0].levels)
    scorer = make_marginal_scorer(d=1, kind="tv", random_state=0)
    assert scorer(coarse, test) < scorer(pipe, test)


def test_synthetic_rows_of_none_are_refused():
    """An empty synthetic table raised ZeroDivisionError (a traceback and
    exit status 1 from ``skdp-synth report``)."""
    real = pd.DataFrame({"a": ["x", "y"] * 10})
    with pytest.raises(ValueError, match="synthetic has no rows"):
        fidelity_report(real, real.head(0))


# ------------------------------------------------------------ the verdict
def _mixed(n=2000, seed=0):
    """Numeric columns (one with missing cells), a categorical one with two
    rare levels (2.5 % of the rows together) and one that depends on x."""
    rng = np.random.default_rng(seed)
    x = rng.normal(50, 10, n)
    x[rng.random(n) < 0.06] = np.nan
    return pd.DataFrame(
        {
            "x": x,
            "y": 2 * np.nan_to_num(x, nan=50.0) + rng.normal(0, 5, n),
            "c": rng.choice(list("abcdef"), n, p=[0.4, 0.3, 0.2, 0.075, 0.015, 0.01]),
            "g": np.where(np.nan_to_num(x, nan=50.0) > 50, "hi", "lo"),
        }
    )


@pytest.fixture(scope="module")
def mixed():
    return _mixed()


def _faithful(df):
    return df.sample(len(df), replace=True, random_state=1).reset_index(drop=True)


def _kinds(rep):
    return {(a.column, a.kind) for a in rep.alerts}


def _collapsed(df):
    return df.assign(x=50 + 0.2 * (df["x"] - 50))


def _shifted(df):
    return df.assign(x=df["x"] + 15)


def _wide(df):
    return df.assign(x=50 + 3 * (df["x"] - 50))


def _no_missing(df):
    return df.assign(x=df["x"].fillna(50.0))


def _invented(df):
    return df.assign(g=df["g"].where(np.arange(len(df)) % 10 != 0))


def _folded(df):
    return df.assign(c=df["c"].where(~df["c"].isin(["e", "f"]), "other"))


@pytest.mark.parametrize(
    "change, expected",
    [
        (_collapsed, {("x", "range_collapsed"), ("x", "std_ratio")}),
        (_shifted, {("x", "range_shifted")}),
        (_wide, {("x", "std_ratio")}),
        (_no_missing, {("x", "missing_lost")}),
        (_invented, {("g", "missing_invented")}),
        (_folded, {("c", "levels_lost")}),
    ],
)
def test_each_alert_fires_on_its_case_only(mixed, change, expected):
    rep = fidelity_report(mixed, change(_faithful(mixed)), d=1)
    assert _kinds(rep) == expected
    for alert in rep.alerts:
        assert alert.column in alert.message and alert.evidence["threshold"]
    if change is _folded:
        (alert,) = rep.alerts
        assert "'other'" in alert.message and alert.evidence["catch_all"] == "other"
        assert alert.evidence["real_share"] == pytest.approx(
            mixed["c"].isin(["e", "f"]).mean()
        )


def test_a_faithful_copy_has_no_alerts(mixed):
    for copy in (mixed, _faithful(mixed)):
        rep = fidelity_report(mixed, copy, d=1, target="y")
        assert rep.alerts == ()
    assert "Alerts (0)" in rep.to_html(include_plot=False)


def test_a_model_no_better_than_the_mean_is_alerted(mixed):
    broken = _faithful(mixed)
    broken["y"] = broken["y"].sample(frac=1, random_state=2).to_numpy()
    rep = fidelity_report(mixed, broken, d=1, target="y")
    (alert,) = [a for a in rep.alerts if a.kind == "model_below_baseline"]
    assert alert.column == "y" and rep.model["synthetic"] <= 0 < rep.model["real"]
    assert "predicting the mean" in alert.message
    assert alert.evidence["baseline"] == 0.0


def test_the_references_are_computed(mixed):
    """Independent columns score between a faithful copy and rows with a
    column drawn at random; they are the report's own independent rows;
    real rows (held-out ones) are the sampling floor."""
    from skdp_synth.report._fidelity import _halves, _split_noise_scale
    from skdp_synth.report._verdict import independent_columns

    copy = _faithful(mixed)
    rep = fidelity_report(mixed, copy, held_out=True)
    refs = {r.name: r for r in rep.references}
    independent = refs["independent columns"]
    # rows that keep every relation but c's, drawn apart from the scored
    # rows as the reference now is (a copy of the scored rows with c redrawn
    # was compared with the in-sample reference, which flattered both)
    rng = np.random.default_rng(3)
    fresh = _mixed(2000, seed=21)
    shuffled = fresh.assign(c=rng.choice(list("abcdef"), len(fresh)))
    worse = fidelity_report(mixed, shuffled)
    assert worse.score < independent.score < rep.score
    assert independent.n_rows == len(copy)
    # drawn from one half of the held-out rows, scored on the other half,
    # the 1-way TVs scaled to the sampling noise of the full comparison
    a, b = _halves(mixed)
    assert not set(a.index) & set(b.index) and len(a) + len(b) == len(mixed)
    rows = independent_columns(a, len(copy))
    split = fidelity_report(b, rows)
    scale = _split_noise_scale(len(mixed), len(copy), len(a), len(b))
    assert independent.properties["Column Shapes"] == _same(
        1 - scale * split.average_tv(1)
    )
    assert independent.properties["Column Pair Trends"] == _same(
        split.properties["Column Pair Trends"]
    )
    assert independent.n_scored == len(b)
    assert "one half" in independent.drawn_from
    assert "other half" in independent.scored_on
    for col in mixed.columns:  # each column from the real 1-way table
        assert set(rows[col].dropna()) <= set(a[col].dropna())
    assert independent.score < refs["real rows"].score
    assert "independent columns" in rep.verdict and "real sample" in rep.verdict
    # the same rows every time (a fixed seed)
    again = fidelity_report(mixed, copy, held_out=True)
    assert [r.score for r in again.references] == [r.score for r in rep.references]
    # real rows only for held-out rows; with the fitted rows, a sample of them
    assert len(fidelity_report(mixed, copy, held_out=False).references) == 1
    train = _mixed(3000, seed=5)
    fitted = fidelity_report(mixed, copy, held_out=True, real_train=train, target="y")
    floor = {r.name: r for r in fitted.references}["real rows"]
    assert floor.n_rows == len(copy) and "fitted on" in floor.description
    # with the fitted rows: independent columns drawn from them, scored on
    # every held-out row
    drawn = {r.name: r for r in fitted.references}["independent columns"]
    assert drawn.n_scored == len(mixed) and "real_train" in drawn.drawn_from
    assert drawn.score == _same(
        fidelity_report(mixed, independent_columns(train, len(copy))).score
    )


def test_the_independent_reference_is_not_drawn_from_the_rows_it_scores(mixed):
    """Held out, without the fitted rows: independent columns drawn from the
    rows they are then scored on match those rows' own sampling noise, a
    score above what they reach on rows of the same table they were not
    drawn from. The split reference is below that in-sample score and
    close to independent columns drawn from fresh rows of the same
    distribution (``_mixed``'s generator, three seeds)."""
    from skdp_synth.report._verdict import independent_columns

    n = len(mixed)
    rep = fidelity_report(mixed, _faithful(mixed), held_out=True)
    ref = {r.name: r for r in rep.references}["independent columns"]
    in_sample = fidelity_report(mixed, independent_columns(mixed, n)).score
    fresh = [
        fidelity_report(mixed, independent_columns(_mixed(n, seed=s), n)).score
        for s in (11, 12, 13)
    ]
    # the flattered in-sample score lies above every fresh draw
    assert in_sample > max(fresh)
    assert ref.score < in_sample
    assert abs(ref.score - np.mean(fresh)) < in_sample - np.mean(fresh)
    page = rep.to_html(include_plot=False)
    assert "<td class='drawn-from'>one half of the held-out real rows" in page
    (js,) = [r for r in rep.to_dict()["references"] if r["name"] == ref.name]
    assert js["drawn_from"] == ref.drawn_from and js["scored_on"] == ref.scored_on
    # not held out: in-sample, as the synthetic score then is, and said so
    ins = fidelity_report(mixed, _faithful(mixed), held_out=False).references[0]
    assert ins.score == _same(in_sample)
    assert "in-sample" in ins.description


def test_every_column_gets_a_figure_and_the_missing_view(mixed):
    rep = fidelity_report(mixed, _collapsed(_faithful(mixed)), held_out=True)
    page = rep.to_html(include_plot=False)
    for col in mixed.columns:
        assert page.count(f"<svg class='column-plot' data-column='{col}'") == 1
    views = {v.column: v for v in rep.column_views}
    assert views["x"].kind == views["y"].kind == "numeric"
    assert views["c"].kind == views["g"].kind == "categorical"
    x = mixed["x"].dropna()
    edges = np.asarray(views["x"].edges)
    from skdp_synth.metrics._coding import _between_values

    inner = np.unique(np.quantile(x, np.linspace(0, 1, 17)[1:-1]))
    inner = _between_values(inner, np.unique(x))  # split no real value
    np.testing.assert_allclose(edges[1:-1], inner)  # the real quantiles
    assert not set(edges[1:-1]) & set(x)
    assert edges[0] == x.min() and edges[-1] >= x.max()
    # shares of all rows: with the missing share they sum to 1
    assert sum(views["x"].real) + views["x"].missing_real == pytest.approx(1)
    assert sum(views["x"].synthetic) + views["x"].missing_synthetic == pytest.approx(1)
    assert views["x"].missing_real == pytest.approx(mixed["x"].isna().mean())
    missing = page[page.index("id='missing'") :]
    assert all(f"<tr data-column='{c}'>" in missing for c in mixed.columns)
    # summary first: the verdict and the alerts before the contents
    assert page.index("id='verdict'") < page.index("id='alerts'") < page.index("<nav")
    assert page.index("id='references'") < page.index("<nav")
    assert "<details>" in page and "http" not in page


def test_the_json_round_trips_and_lists_the_pages_alerts(mixed, tmp_path, capsys):
    rep = fidelity_report(mixed, _no_missing(_shifted(_faithful(mixed))), held_out=True)
    data = rep.to_dict()
    assert json.loads(rep.to_json()) == data
    assert data["not_private"] == BANNER and data["score"] == rep.score
    assert [c["column"] for c in data["columns"]] == list(mixed.columns)
    assert [r["name"] for r in data["references"]] == [
        "independent columns",
        "real rows",
    ]
    page = rep.to_html(include_plot=False)
    on_page = re.findall(
        r"<li class='alert' data-kind='([^']+)' data-column='([^']+)'", page
    )
    listed = [(a["kind"], a["column"]) for a in data["alerts"]]
    assert on_page == listed == [(a.kind, a.column) for a in rep.alerts]
    assert ("range_shifted", "x") in listed and ("missing_lost", "x") in listed
    # the command line writes the same content
    real, syn = tmp_path / "real.csv", tmp_path / "syn.csv"
    mixed.to_csv(real, index=False)
    _no_missing(_shifted(_faithful(mixed))).to_csv(syn, index=False)
    out, js = tmp_path / "r.html", tmp_path / "r.json"
    args = ["report", str(real), str(syn), "--held-out", "-o", str(out)]
    assert cli.main([*args, "--json", str(js)]) == 0
    written = json.loads(js.read_text(encoding="utf-8"))
    assert [(a["kind"], a["column"]) for a in written["alerts"]] == listed
    assert written["score"] == pytest.approx(rep.score)
    err = capsys.readouterr().err
    assert "alert (range_shifted): x:" in err and "independent columns" in err


def test_a_numeric_column_of_few_values_is_plotted_in_value_order():
    """births14's weeks (integers 21-45, most at 37-41) drew its bars most
    common first -- 40, 39, 37, 38, 41, ... -- and summed the rest in one
    bar. Its values now stand in numeric order, an integer read as a float
    on one side (40.0) meeting the other side's 40."""
    rng = np.random.default_rng(0)
    weeks = rng.choice([40, 39, 37, 38, 41, 42, 36, 35, 34, 30, 26, 22], 1000)
    real = pd.DataFrame({"weeks": weeks})
    syn = pd.DataFrame({"weeks": rng.choice(weeks, 1000).astype(float)})
    (view,) = fidelity_report(real, syn, d=1).column_views
    assert view.kind == "categorical"
    values = [float(v) for v in view.labels]
    assert values == sorted(set(weeks.astype(float)))
    assert "40" in view.labels and "40.0" not in view.labels
    assert sum(view.real) == pytest.approx(1) and sum(view.synthetic) == pytest.approx(
        1
    )
