"""Private numeric and categorical domains: the mechanisms, the
pipeline's budget split, dtypes / missing values / clipping, and an audit."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.audit import audit_epsilon
from skdp_synth.exceptions import (
    CoarseDomainWarning,
    DegenerateColumnWarning,
    NumbersAsTextWarning,
    PrivacyLeakWarning,
)
from skdp_synth.mechanisms import NoiseSource
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.preprocessing._coarse_bins import coarse_edges, split_heavy_leaves
from skdp_synth.preprocessing._decoding import decode_fine
from skdp_synth.preprocessing._domain_warnings import _share_advice
from skdp_synth.preprocessing._level_selection import stable_levels
from skdp_synth.preprocessing._numeric_domain import (
    ROOT,
    FineHistogram,
    privtree_histogram,
)


def _mixed(n=600, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "wage": np.exp(rng.normal(6.5, 0.6, n)),
            "age": rng.integers(18, 80, n),
            "debt": np.where(rng.random(n) < 0.8, 0.0, rng.gamma(2.0, 1000.0, n)),
            "city": rng.choice(list("abc"), n),
            "flag": rng.random(n) < 0.3,
        }
    )
    df.loc[rng.random(n) < 0.2, "debt"] = np.nan
    return df


class _Recorder(NoiseSource):
    """A noise source that records every Laplace scale it is asked for."""

    def __init__(self):
        super().__init__(0)
        self.scales = []

    def laplace(self, values, scale):
        self.scales.append(scale)
        return super().laplace(values, scale)


@pytest.mark.parametrize("integer", [False, True])
def test_privtree_leaves_partition_the_root(integer):
    x = np.random.default_rng(1).integers(0, 1000, 3000).astype(float)
    h = privtree_histogram(x, 1.0, NoiseSource(0), integer=integer)
    # exact: the leaves are a partition of the root, in order
    assert h.edges[0] == -ROOT
    assert h.edges[-1] == (ROOT + 1.0 if integer else ROOT)
    assert np.all(np.diff(h.edges) > 0)
    assert h.counts.shape == h.finest.shape == (h.edges.size - 1,)
    assert np.all(h.counts >= 0)
    if integer:  # integer-aligned leaves, finest = one integer wide
        assert np.all(h.edges == np.round(h.edges))
        assert np.all(h.finest == (np.diff(h.edges) == 1.0))


@pytest.mark.parametrize("sens", [1.0, 2.0])
def test_privtree_noise_scales(sens):
    """Zhang2016 Algorithm 2 with beta = 2: lambda = 3 sens / eps_tree, and
    the leaf counts get Lap(sens / eps_count); eps split 0.4 to the tree and
    0.6 to the counts (TREE_SHARE; it was half and half before)."""
    from skdp_synth.preprocessing._numeric_domain import TREE_SHARE

    assert TREE_SHARE == 0.4
    rec = _Recorder()
    h = privtree_histogram(np.arange(500.0), 0.4, rec, sensitivity=sens)
    *tree, count = rec.scales
    eps_tree = 0.4 * TREE_SHARE
    assert tree and all(s == 3.0 * sens / eps_tree for s in tree)
    assert count == sens / (0.4 - eps_tree) == h.scale
    assert count == pytest.approx(sens / 0.24, rel=1e-12)
    assert tree[0] == pytest.approx(3.0 * sens / 0.16, rel=1e-12)


@pytest.mark.parametrize("sens", [1.0, 2.0])
def test_stable_levels_scale_and_threshold(sens):
    rec = _Recorder()
    values = ["a"] * 5000 + ["b"] * 3 + [None] * 10
    levels, _ = stable_levels(values, 0.5, 1e-6, rec, sensitivity=sens)
    assert rec.scales == [sens / 0.5]
    # tau = 1 + (sens/eps) ln(sens/(2 delta)) ~ 27-58: "a" passes, "b" (3 rows)
    # passes only if its noise exceeds tau - 3 > 24 scales' worth: P < 1e-10
    assert levels == ["a"]


def test_coarse_edges_are_leaf_edges_and_isolate_a_point_mass():
    x = np.where(np.random.default_rng(2).random(4000) < 0.7, 0.0, 50.0)
    x = x + np.where(x > 0, np.random.default_rng(3).random(4000), 0.0)
    h = privtree_histogram(x, 2.0, NoiseSource(0))
    e = coarse_edges(h, 10)
    assert set(e) <= set(h.edges.tolist())  # unions of leaves (exact)
    assert 0.0 in e  # the atom at 0 starts a bin
    enc_values = np.searchsorted(e, x, "right") - 1
    assert (enc_values[x == 0] == enc_values[x == 0][0]).all()


def test_pipeline_spends_the_one_epsilon_written():
    df = _mixed()
    enc = BooleanEncoder(epsilon="auto", random_state=0)
    syn = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no PrivacyLeakWarning
        # 600 rows at 0.0625 per column: domains collapse to one bin, which
        # CoarseDomainWarning reports (test_a_single_bin_domain_warns...)
        warnings.simplefilter("ignore", CoarseDomainWarning)
        pipe = make_synthesis_pipeline(enc, syn, domain_share=0.25).fit(df)
    assert pipe[0].epsilon_ == 0.25 and pipe[-1].epsilon_ == 0.75
    assert pipe[0].delta_ == 0.25e-6 and pipe[-1].delta_ == 0.75e-6
    # sums of two floats: equal to the written budget up to one rounding
    assert math.isclose(pipe.epsilon_, 1.0, rel_tol=1e-15)
    assert math.isclose(pipe.delta_, 1e-6, rel_tol=1e-15)
    assert pipe.privacy_guarantee_.neighbouring == "add-remove-one"
    # the parameters are as the user wrote them after the fit
    assert pipe[0].epsilon == "auto" and pipe[0].delta == 0.0
    assert pipe[-1].epsilon == 1.0 and pipe[-1].delta == 1e-6
    out = pipe.sample(300, random_state=1)
    assert list(out.columns) == list(df.columns)
    assert out["age"].dtype == np.int64 and out["flag"].dtype == bool
    # a float column can hold NaN, so it has a missing level (its dtype's);
    # the release decides how many rows get one: within 3 sd of its
    # released share (a column with no NaN gets some in about 1 fit in 6,
    # the 1-sigma keep rule's price); declared never missing, none
    share, sd = pipe.missing_shares_["wage"]
    assert abs(out["wage"].isna().mean() - share) <= 3 * sd
    enc = BooleanEncoder(epsilon="auto", missing={"wage": False}, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoarseDomainWarning)
        pipe = make_synthesis_pipeline(enc, syn, domain_share=0.25).fit(df)
    assert not pipe.sample(300, random_state=1)["wage"].isna().any()


# 400 rows at 0.04 per column: most domains keep one bin (the warning is
# tested in test_a_single_bin_domain_warns_naming_only_the_columns)
@pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.CoarseDomainWarning")
# and whichever plan selection="auto" takes on those domains (the 1-way
# tables warn): the shares, not the plan, are tested here
@pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.IndependentColumnsWarning")
@pytest.mark.parametrize(
    "n_numeric, share", [(2, 0.2), (7, 0.28), (9, 0.36), (12, 0.48), (15, 0.55)]
)
def test_auto_domain_share_follows_the_learned_columns(n_numeric, share):
    """``domain_share="auto"``: 0.04 of ε per column whose domain is learned,
    within [0.2, 0.55]; a declared column (``city``, with categories) counts
    for nothing. The pipeline still spends the ε written."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({f"x{i}": rng.normal(size=400) for i in range(n_numeric)})
    df["city"] = rng.choice(list("abc"), 400)
    enc = BooleanEncoder(categories={"city": list("abc")}, random_state=0)
    syn = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0)
    pipe = make_synthesis_pipeline(enc, syn).fit(df)
    assert pipe[0].epsilon_ == pytest.approx(share, rel=1e-12)
    assert pipe[-1].epsilon_ == pytest.approx(1.0 - share, rel=1e-12)
    assert math.isclose(pipe.epsilon_, 1.0, rel_tol=1e-15)


def test_no_split_when_every_domain_is_declared():
    df = _mixed()[["city", "age"]]
    enc = BooleanEncoder(
        categories={"city": ["a", "b", "c"]}, bin_edges={"age": [0, 40, 100]}
    )
    syn = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0)
    pipe = make_synthesis_pipeline(enc, syn).fit(df)
    assert pipe[-1].epsilon_ == 1.0 and pipe.epsilon_ == 1.0
    assert pipe[0].privacy_guarantee_ is None


@pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.CoarseDomainWarning")
def test_replace_one_doubles_the_sensitivity():
    df = _mixed()
    syn = ProjectedGaussianRelease(
        epsilon=1.0, delta=1e-6, neighbouring="replace-one", random_state=0
    )
    pipe = make_synthesis_pipeline(
        BooleanEncoder(epsilon="auto", random_state=0), syn
    ).fit(df)
    assert pipe[0].privacy_guarantee_.neighbouring == "replace-one"
    assert pipe.privacy_guarantee_.neighbouring == "replace-one"


def test_rare_levels_merge_into_other():
    df = pd.DataFrame({"c": ["x"] * 3000 + ["rare"] * 2})
    enc = BooleanEncoder(epsilon=1.0, delta=1e-6, random_state=0).fit(df)
    assert enc.specs_[0].levels == ["x", "other"]
    back = enc.inverse_transform(enc.transform(pd.DataFrame({"c": ["rare", "new"]})))
    assert back["c"].tolist() == ["other", "other"]


def test_public_bounds_clip_with_a_warning_that_shows_no_value():
    df = pd.DataFrame({"v": np.linspace(0.0, 10.0, 2000)})
    enc = BooleanEncoder(epsilon=1.0, bounds={"v": (2.0, 8.0)}, random_state=0)
    enc.fit(df)
    with pytest.warns(UserWarning, match=r"columns \['v'\] have values outside") as w:
        Z = enc.transform(pd.DataFrame({"v": [123.456, 5.0]}))
    assert "123" not in str(w[0].message)
    out = enc.inverse_transform(Z)["v"]
    assert out.between(2.0, 8.0).all()
    strict = BooleanEncoder(
        epsilon=1.0, bounds={"v": (2.0, 8.0)}, out_of_bounds="error", random_state=0
    )
    with pytest.raises(
        ValueError, match=r"'v' has values outside its bounds \[2.0, 8.0\]"
    ):
        strict.fit(df)


def test_nan_and_inf_do_not_reach_the_bounds():
    """smartnoise#580: non-finite values go to the root's ends, never out."""
    x = np.r_[np.random.default_rng(4).normal(100.0, 5.0, 3000), np.inf, -np.inf]
    x = np.r_[x, np.full(30, np.nan)]
    h = privtree_histogram(x, 1.0, NoiseSource(0))
    assert np.all(np.isfinite(h.edges)) and np.all(np.isfinite(h.counts))
    lo, hi = h.bounds
    assert -ROOT <= lo < 100.0 < hi <= ROOT


def _privtree_missing_count(n_missing, noise_factor, seed):
    x = np.r_[np.full(200, 1.0), np.full(n_missing, np.nan)]
    h = privtree_histogram(
        x, 1.0, NoiseSource(seed), tree_share=1e-3, noise_factor=noise_factor
    )
    return h.missing_count


@pytest.mark.parametrize("noise_factor, flagged", [(1.0, False), (0.5, True)])
def test_audit_flags_a_half_noise_estimator(noise_factor, flagged):
    """Clopper-Pearson audit (Jagielski2020) at alpha = 0.05 on neighbours that
    differ by one missing value. The honest estimator is 1-DP, so its lower
    bound exceeds 1 with probability <= 5 %; the planted one is 2-DP in its
    count and is caught (fixed seeds: deterministic)."""
    a = [_privtree_missing_count(100, noise_factor, s) for s in range(4000)]
    b = [_privtree_missing_count(101, noise_factor, 10**6 + s) for s in range(4000)]
    r = audit_epsilon(a, b, alpha=0.05)
    assert (r.epsilon_lower > 1.0) is flagged


_DTYPES = {
    "int64": lambda v: pd.Series(v.astype(np.int64)),
    "Int64": lambda v: pd.Series(v.astype(np.int64), dtype="Int64"),
    "float64": lambda v: pd.Series(v.astype(np.float64)),
    "category": lambda v: pd.Series((v % 3).astype(str), dtype="category"),
    "string": lambda v: pd.Series((v % 3).astype(str), dtype="string"),
    "bool": lambda v: pd.Series(v % 2 == 0),
    # near the top of the dtype: a private bin past 255 must not wrap to 0
    "uint8": lambda v: pd.Series((v + 205).astype(np.uint8)),
    "Int8": lambda v: pd.Series((v + 77).astype(np.int64), dtype="Int8"),
    "float32": lambda v: pd.Series(v.astype(np.float32)),
    "datetime": lambda v: pd.Series(
        pd.Timestamp("2020-01-01") + pd.to_timedelta(v, "D")
    ),
    "datetime-tz": lambda v: pd.Series(
        pd.Timestamp("2020-01-01", tz="Europe/Paris") + pd.to_timedelta(v, "h")
    ),
    "timedelta": lambda v: pd.Series(pd.to_timedelta(v, "min")),
}
#: The dtypes whose values must stay inside the dtype's range (exactly).
_INT_RANGES = {"uint8": (0, 255), "Int8": (-128, 127)}


@settings(max_examples=15, deadline=None)
@given(
    kind=st.sampled_from(sorted(_DTYPES)),
    n=st.integers(50, 400),
    seed=st.integers(0, 2**16),
    with_missing=st.booleans(),
)
def test_dtypes_and_missing_round_trip(kind, n, seed, with_missing):
    rng = np.random.default_rng(seed)
    s = _DTYPES[kind](rng.integers(0, 50, n))
    nullable = kind not in ("int64", "bool", "uint8")
    if with_missing and nullable:
        s = s.astype(object).where(rng.random(n) > 0.3, None).astype(s.dtype)
    df = pd.DataFrame({"c": s})
    declared = {"c": bool(with_missing and nullable)}
    enc = BooleanEncoder(epsilon=1.0, delta=1e-6, missing=declared, random_state=0)
    with warnings.catch_warnings():
        # 50 rows at epsilon=1 can keep a single bin or find nothing
        # significant: a CoarseDomainWarning is the right outcome there, and
        # this test is about dtypes and missing values (found with 300
        # examples, n=50, seed=248; the default 15 draw it now and then)
        warnings.simplefilter("ignore", CoarseDomainWarning)
        # the "string" column holds "0", "1", "2": text that reads as numbers,
        # rightly warned about (this test is about the dtype's round trip)
        warnings.simplefilter("ignore", NumbersAsTextWarning)
        enc.fit(df)
    out = enc.inverse_transform(enc.transform(df))["c"]
    if kind != "category":
        assert out.dtype == df["c"].dtype
    else:  # the private levels (plus "other") form the decoded categories
        assert isinstance(out.dtype, pd.CategoricalDtype)
    if not declared["c"]:
        assert not out.isna().any()  # declared without missing: never NaN
    if kind in ("int64", "Int64", "uint8", "Int8"):
        v = out.dropna().to_numpy(dtype=float)
        assert np.all(v == np.round(v))  # integers stay integers (exact)
    if kind in _INT_RANGES:
        lo, hi = _INT_RANGES[kind]
        edges = enc.specs_[0].levels
        # inside the private domain, clipped to the dtype: a value of a bin
        # past the dtype's largest is clipped to it, never wrapped around
        assert out.dropna().between(max(edges[0], lo), min(edges[-1], hi)).all()


@settings(max_examples=15, deadline=None)
@given(
    lo=st.floats(-1e6, 1e6),
    width=st.floats(1e-3, 1e6),
    seed=st.integers(0, 2**16),
)
def test_clipping_keeps_decoded_values_in_public_bounds(lo, width, seed):
    hi = lo + width
    rng = np.random.default_rng(seed)
    v = rng.normal(lo + width / 2, width, 300)
    enc = BooleanEncoder(epsilon=1.0, bounds={"v": (lo, hi)}, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the clipping warning
        out = enc.fit(pd.DataFrame({"v": v})).inverse_transform(
            enc.transform(pd.DataFrame({"v": v}))
        )
    assert out["v"].between(lo, hi).all()


def test_numeric_scores_identities():
    from skdp_synth.report import numeric_scores

    df = _mixed(400)
    scores = numeric_scores(df, df)
    assert list(scores.index) == ["wage", "age", "debt"]
    # identical samples: the statistics are exactly 0 / 1 (same arrays, same path)
    assert (scores["ks"] == 0.0).all() and (scores["wasserstein_iqr"] == 0.0).all()
    assert (scores["std_ratio"] == 1.0).all()
    assert scores.loc["age", "integral"] == 1.0
    assert scores.loc["debt", "missing_real"] == scores.loc["debt", "missing_synthetic"]
    shifted = df.assign(wage=df["wage"] + 10.0 * df["wage"].std())
    assert numeric_scores(df, shifted).loc["wage", "ks"] == 1.0  # disjoint supports


def test_wasserstein_is_scaled_by_the_std_where_the_iqr_is_0():
    """A column with most rows on one value (a debt: 0 for 82 % of the rows)
    has IQR 0; its Wasserstein distance was divided by 1 and read in the
    column's units (credit's ``Debt``: 115), outweighing every other column
    in a mean. It is divided by the real values' std there."""
    from scipy.stats import wasserstein_distance

    from skdp_synth.report import numeric_scores

    rng = np.random.default_rng(3)
    debt = np.where(rng.random(500) < 0.82, 0.0, rng.lognormal(7, 1, 500))
    real = pd.DataFrame({"debt": debt, "x": rng.normal(size=500)})
    synth = real.assign(debt=real["debt"] * 1.5, x=real["x"] + 0.5)
    assert np.subtract(*np.percentile(debt, [75, 25])) == 0.0
    got = numeric_scores(real, synth)["wasserstein_iqr"]
    want = wasserstein_distance(debt, debt * 1.5) / debt.std()
    assert got["debt"] == pytest.approx(want, rel=1e-12)
    iqr = np.subtract(*np.percentile(real["x"], [75, 25]))
    assert got["x"] == pytest.approx(0.5 / iqr, rel=1e-9)  # a shift by 0.5
    const = pd.DataFrame({"c": np.full(50, 7.0)})
    assert numeric_scores(const, const + 2.0).loc["c", "wasserstein_iqr"] == 2.0


def test_train_synthetic_test_real_reports_both_scores():
    from skdp_synth.report import train_synthetic_test_real

    rng = np.random.default_rng(5)
    x = rng.normal(size=600)
    df = pd.DataFrame({"x": x, "c": rng.choice(["u", "v"], 600)})
    df["y"] = np.where(x + 0.3 * rng.normal(size=600) > 0, "yes", "no")
    out = train_synthetic_test_real(df.iloc[:300], df.iloc[300:], "y")
    assert out["metric"] == "auc"
    # a learnable signal: both AUCs far above chance (0.5), at most 1
    assert 0.8 < out["synthetic"] <= 1.0 and 0.8 < out["real"] <= 1.0


# -- tails: each case failed on the previous rule -------------------------------


def _pipeline_sample(df, cats, seed):
    enc = BooleanEncoder(categories=cats, random_state=seed)
    syn = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no PrivacyLeakWarning
        pipe = make_synthesis_pipeline(enc, syn).fit(df)
    return pipe.sample(len(df), random_state=seed + 1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tails_do_not_invent_outliers(seed):
    """The README case: 2,000 rows, ages 18..79, log-normal wages, ε = 1 (0.1
    per numeric column). An earlier rule decoded ages up to 179 and wages to
    8e11; the previous one wages up to ~3x the real maximum. The cap keeps
    every decoded value within a factor of the real range."""
    rng = np.random.default_rng(0)
    n = 2000
    df = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "wage": np.round(rng.lognormal(6.5, 0.6, n), 2),
            "sector": rng.choice(["a", "b", "c"], n),
        }
    )
    out = _pipeline_sample(df, {"sector": ["a", "b", "c"]}, seed)
    assert out["age"].between(0, 100).all()
    assert out["wage"].max() <= 1.5 * df["wage"].max()
    for col in ("age", "wage"):
        ratio = out[col].std() / df[col].std()
        assert 0.7 <= ratio <= 1.3, (col, ratio)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_low_cardinality_integers_keep_their_range(seed):
    """A year column (2003..2009, the Wage table's shape) at 0.2/3 of ε: the
    previous rule decoded values in 1387..2048 (std ratio up to 9)."""
    rng = np.random.default_rng(1)
    n = 2400
    df = pd.DataFrame(
        {
            "year": rng.integers(2003, 2010, n),
            "age": rng.integers(18, 81, n),
            "wage": np.round(rng.lognormal(4.6, 0.35, n), 2),
        }
    )
    out = _pipeline_sample(df, {}, seed)
    assert out["year"].between(1990, 2025).all()
    ratio = out["year"].std() / df["year"].std()
    assert 0.7 <= ratio <= 1.3, ratio


def _year_histogram(last, scale=30.0):
    """Seed 0's Wage ``year`` (2003..2009, ~300 rows a year, b = 30): the last
    kept leaf ``[2008, 2014)`` holds two years' mass, and the leaves before it
    ``last`` (as densities: 386, 421 a year, then ``[2006, 2008)``)."""
    from skdp_synth.preprocessing._numeric_domain import FineHistogram

    edges = np.array([1963.0, 2004.0, 2005.0, 2006.0, 2008.0, 2014.0])
    counts = np.array([381.0, 386.0, 421.0, last, 632.0])
    finest = np.array([False, True, True, False, False])
    return FineHistogram(
        edges, counts, 0.0, finest, True, (1963.0, 2014.0), True, scale
    )


def test_a_tail_is_a_significant_fall_and_a_hard_edge_is_none():
    """The two tests behind the tail model, at their computed thresholds:
    a leaf is a tail iff its density is below its inner neighbour's by more
    than EDGE_Z sds of the difference (``sqrt(2) b sqrt(1/w1^2 + 1/w2^2)``),
    and it is filled flat (a hard edge) iff its neighbour's density is not
    below the next one's by more than HARD_EDGE_Z sds. The two levels were
    one (EDGE_Z) until HARD_EDGE_Z was set apart at 3 on the TUNE half's
    silent-fit suite (``_tail_rates.HARD_EDGE_Z``): each is asserted at its
    own computed threshold."""
    from skdp_synth.preprocessing._decoding import _falls, _is_hard_edge
    from skdp_synth.preprocessing._numeric_domain import EDGE_Z
    from skdp_synth.preprocessing._tail_rates import HARD_EDGE_Z

    assert EDGE_Z == 4.0 and HARD_EDGE_Z == 3.0
    width = np.array([1.0, 2.0, 6.0])
    sd = math.sqrt(2.0) * 30.0 * math.sqrt(1.0 + 0.25)  # leaves 0 and 1
    edge = 421.0 - EDGE_Z * sd
    for d1, tail in ((edge - 1e-6, True), (edge + 1e-6, False)):
        dens = np.array([421.0, d1, 50.0])
        assert _falls(dens, width, 1, 0, 30.0) is tail
    hard = 421.0 - HARD_EDGE_Z * sd
    for d1, flat in ((hard - 1e-6, False), (hard + 1e-6, True)):
        dens = np.array([421.0, d1, 50.0])
        # leaf 2's neighbour is leaf 1 (mode 0): hard edge iff 1 did not fall
        assert _is_hard_edge(dens, width, 1, 1, 0, 30.0) is flat
    # next to the mode there is no trend to read, and without b no test
    assert not _is_hard_edge(np.array([421.0, 50.0]), width, 0, 1, 0, 30.0)
    assert not _is_hard_edge(np.array([1.0, 2.0, 0.5]), width, 1, 1, 0, np.nan)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_bounded_integer_column_ends_where_its_mass_does(seed):
    """Wage's ``year`` on a fit's seed 0 (the leaves measured there):
    the density is flat up to 2008 within the noise, so the last leaf
    ``[2008, 2014)`` is a hard edge filled at its neighbour's density until
    its mass is used: 632 / 324 = 1.95 years, 2008 and 2009. Decaying over
    the whole leaf gave 2010-2013 (217 of 2,400 rows, std ratio 1.23). A
    density that does fall (648 -> 440 rows in ``[2006, 2008)``, 4.24 sds
    under 421 a year, past EDGE_Z = 4) keeps the decay into the leaf."""
    from skdp_synth.preprocessing._decoding import _tail_models

    rng = np.random.default_rng(seed)
    n = 20000
    for last in (648.0, 440.0):
        h = _year_histogram(last)
        e = np.asarray(coarse_edges(h, 10))
        assert e[-2:].tolist() == [2008.0, 2013.0]  # the last bin is the leaf
        v = decode_fine(
            h, np.full(n, 2008.0), np.full(n, 2013.0), np.ones(n, bool), rng
        )
        past = float(np.mean(v >= 2010.0))
        if last == 648.0:
            assert past == 0.0  # flat: 2008 and 2009 only
            assert abs(np.mean(v == 2009.0) - 0.95 / 1.95) < 5 * math.sqrt(0.25 / n)
        else:  # decay exp(-z / s) truncated at 6 years: P(z >= 2)
            inner, side, width, s, flat = _tail_models(h, *h.bounds)[4]
            assert (inner, side, width, flat) == (2008.0, 1, 6.0, False)
            p = (math.exp(-2 / s) - math.exp(-6 / s)) / -math.expm1(-6 / s)
            # 0.47 at s = 3.5; 5 binomial sds: a false failure < 1e-6
            assert abs(past - p) < 5 * math.sqrt(p * (1 - p) / n), (past, p)


def test_a_tail_touches_its_neighbour():
    """Credit's ``Time`` (months, multiples of 6) on seed 3: ``[16, 32)``
    (rows at 18, 24, 30) and ``[35, 37)`` with an emptied ``[32, 35)``
    between. Decayed or flat from ``[35, 37)``'s density at 32, it came back
    as 31 for most of its rows; across a gap it is an inner leaf. Without
    the gap (one leaf ``[16, 35)``) it is a tail, as before."""
    from skdp_synth.preprocessing._decoding import _tail_models
    from skdp_synth.preprocessing._numeric_domain import FineHistogram

    def hist(edges, counts):
        edges, counts = np.asarray(edges, float), np.asarray(counts, float)
        finest = np.diff(edges) <= 1.0
        cap = (edges[0], edges[-1])
        return FineHistogram(edges, counts, 0.0, finest, True, cap, True, 50.0)

    gap = hist([16, 32, 35, 37, 47, 49, 60, 61], [340, 0, 627, 0, 761, 0, 1443])
    assert 0 not in _tail_models(gap, *gap.bounds)
    joined = hist([16, 35, 37, 47, 49, 60, 61], [340, 627, 0, 761, 0, 1443])
    assert 0 in _tail_models(joined, *joined.bounds)


def test_a_wide_outermost_leaf_is_a_tail_whenever_it_falls():
    """Credit's ``Debt`` on seed 16 (b = 50): the last leaf ``[4096, 65536)``
    (212 rows, 4 wide in t) is 1.8 sds under ``[2049, 4096)``'s density, not
    a significant fall; decoded uniformly in t (median 16,384) it gave a std
    4.1x the real one. Wider than GAP_T in t, it is a tail on any fall and
    decays from 4096 (median near 6,000)."""
    from skdp_synth.preprocessing._decoding import _falls, _tail_models
    from skdp_synth.preprocessing._numeric_domain import FineHistogram

    edges = np.array([0, 1, 16, 65, 256, 512, 1025, 2049, 4096, 65536], float)
    counts = np.array([2901, 86, 0, 109, 112, 92, 253, 135, 212], float)
    finest = np.array([True] + [False] * 8)
    h = FineHistogram(edges, counts, 0.0, finest, True, (0.0, 65536.0), True, 50.0)
    dens, width = counts[[7, 8]] / np.diff(edges)[[7, 8]], np.diff(edges)[[7, 8]]
    assert not _falls(dens[::-1], width[::-1], 0, 1, 50.0)  # within the noise
    assert 8 in _tail_models(h, *h.bounds)
    rng = np.random.default_rng(0)
    n = 20000
    v = decode_fine(h, np.full(n, 4096.0), np.full(n, 65535.0), np.ones(n, bool), rng)
    assert np.median(v) < 8192.0


def test_with_nothing_significant_the_core_prefers_values_near_zero():
    """Where no run is significant, the core pays ``b |t| / NEAR_ZERO_T`` at
    its reach from 0 (:mod:`~skdp_synth.preprocessing._near_zero_core`): a
    data leaf near 3 (3.75 b) beats a noise leaf near 1e11 (5 b) that wins
    without the prior (the identity on hand-made counts); and on iris's
    sepal width (150 rows, its pipeline budget of 0.05), the kept ranges
    far from the data (beyond 10 spans, or 100 spans wide) fell from 17 of
    40 fixed seeds without a prior to 4 (with one paid a leaf at ``|t| / 8``,
    and with the run's prior) (NoiseSource's Laplace draws are exact across
    CPUs: no BLAS)."""
    from sklearn.datasets import load_iris

    from skdp_synth.preprocessing._numeric_domain import NEAR_ZERO_T, kept_counts

    assert NEAR_ZERO_T == 6.0
    b = 40.0
    edges = np.array([0.0, 1.0, 16.0, 256.0, 2.0**32, 2.0**36, 2.0**40])
    raw = np.array([-10.0, 150.0, 5.0, -30.0, 200.0, 20.0])
    finest = np.zeros(6, bool)
    plain, _ = kept_counts(edges, raw, b, finest)
    prior, _ = kept_counts(edges, raw, b, finest, near_zero=True)
    assert np.flatnonzero(plain).tolist() == [4]
    assert np.flatnonzero(prior).tolist() == [1]
    x = load_iris(as_frame=True).frame["sepal width (cm)"].to_numpy(float)
    span, far = x.max() - x.min(), 0
    for seed in range(40):
        h = privtree_histogram(x, 0.05, NoiseSource(seed))
        assert not h.found  # 150 rows at b = 40: never significant
        lo, hi = h.bounds
        away = hi < x.min() - 10 * span or lo > x.max() + 10 * span
        far += bool(away or hi - lo > 100 * span)
    assert far <= 4


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_zero_inflated_column_keeps_its_spread(seed):
    """A debt column, 0 for 82 % of rows, the rest spread over 100..30,000, at
    a budget where its tail is far above the noise (ε_c = 0.5: b = 4 rows).
    The previous rule stopped at the empty leaves between 0 and 100 (a gap of
    more than 1 in t) and decoded every value as 0."""
    rng = np.random.default_rng(2)
    n = 3500
    debt = np.where(rng.random(n) < 0.82, 0, np.round(rng.lognormal(7.3, 0.9, n)))
    x = pd.Series(np.clip(debt, 0, 30000).astype(np.int64))
    h = privtree_histogram(x.to_numpy(float), 0.5, NoiseSource(seed), integer=True)
    e = np.asarray(coarse_edges(h, 10))
    assert e[-1] > 1000.0  # the coarse bins reach into the tail
    # the kept mass outside 0: 18 % of the rows, within its noise
    nonzero = h.counts[h.edges[:-1] >= 1.0].sum() / h.counts.sum()
    assert 0.12 <= nonzero <= 0.24


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_zero_inflated_column_keeps_its_spread_at_a_small_budget(seed):
    """An assets column (0 for 37 % of rows, the rest log-normal over
    ~100..10^6) at the credit table's 0.2/9 of ε (b = 90 rows): its non-zero
    part is spread over many leaves, none alone above b ln(L/0.01), but their
    sum is; the previous rule decoded every value as 0 on these seeds."""
    rng = np.random.default_rng(3)
    n = 3500
    x = np.where(rng.random(n) < 0.37, 0, np.round(rng.lognormal(8.5, 1.2, n)))
    h = privtree_histogram(x, 0.2 / 9, NoiseSource(seed), integer=True)
    nonzero = h.counts[h.edges[:-1] >= 1.0].sum() / h.counts.sum()
    assert 0.45 <= nonzero <= 0.8  # 0.63 in the data
    assert 1e4 <= h.bounds[1] <= 1e6  # the cap: in the tail, not at the root


@settings(max_examples=25, deadline=None)
@given(
    shape=st.sampled_from(["normal", "lognormal", "zeros", "years", "one"]),
    n=st.integers(20, 3000),
    eps=st.floats(0.01, 2.0),
    seed=st.integers(0, 2**16),
)
def test_decoded_values_stay_inside_the_cap(shape, n, eps, seed):
    """Post-processing identities: every decoded value lies in the cap
    (``bounds``), the coarse edges start and end at it, integer columns
    decode to integers (exact comparisons: the values are clipped copies of
    the edges or floors)."""
    rng = np.random.default_rng(seed)
    x = {
        "normal": lambda: rng.normal(50.0, 10.0, n),
        "lognormal": lambda: rng.lognormal(7.0, 1.0, n),
        "zeros": lambda: np.where(rng.random(n) < 0.8, 0.0, rng.gamma(2.0, 500.0, n)),
        "years": lambda: rng.integers(2003, 2010, n).astype(float),
        "one": lambda: np.full(n, 5.0),
    }[shape]()
    integer = shape in ("zeros", "years", "one")
    if integer:
        x = np.round(x)
    h = privtree_histogram(x, eps, NoiseSource(seed), integer=integer)
    lo, hi = h.bounds
    e = np.asarray(coarse_edges(h, 10))
    assert e[0] == lo
    assert e[-1] == (max(hi - 1.0, lo + 1.0) if integer else hi)
    k = e.size - 1
    idx = rng.integers(0, k, 500)
    v = decode_fine(h, e[idx], e[idx + 1], idx == k - 1, rng)
    top = hi - 1.0 if integer else hi
    assert np.all((v >= lo) & (v <= top))
    if integer:
        assert np.all(v == np.round(v))


# ------------------------------------------------------------ missing levels
def test_a_private_missing_level_is_the_dtypes_or_the_declarations():
    """A privately learned column gets a missing level iff ``missing=``
    declares one or, undeclared, its dtype can hold a missing value --
    whatever its values: here no cell is missing, and every column that can
    be missing (float, nullable ``Int64``/``Float64``/``boolean``, object,
    category, string, ``datetime64``, ``timedelta64``) has its level, a
    NumPy integer or bool none; ``missing={col: False}`` has none. Decided
    on a noisy count (above ``0.51 b``), a complete column got one in 30 %
    of fits and a column of ``b`` missing rows lost it in about 30 %."""
    n = 400
    rng = np.random.default_rng(0)
    x = rng.lognormal(3.0, 1.0, n)
    k = rng.integers(0, 50, n)
    df = pd.DataFrame(
        {
            "f": x,
            "f_declared": x,
            "F": pd.array(x, dtype="Float64"),
            "I": pd.array(k, dtype="Int64"),
            "B": pd.array(k % 2 == 0, dtype="boolean"),
            "o": pd.Series(np.where(k % 2 == 0, "a", "b"), dtype=object),
            "c": pd.Categorical(np.where(k % 3 == 0, "a", "b")),
            "s": pd.array(np.where(k % 2 == 0, "a", "b"), dtype="string"),
            "t": pd.Timestamp("2020-01-01") + pd.to_timedelta(k, unit="D"),
            "d": pd.to_timedelta(k, unit="h"),
            "i": k,
            "u": k.astype(np.uint8),
            "b": k % 2 == 0,
            "i_declared": k,
        }
    )
    can = {"f", "F", "I", "B", "o", "c", "s", "t", "d", "i_declared"}
    for seed in range(3):
        enc = BooleanEncoder(
            epsilon=1.0,
            delta=1e-6,
            missing={"f_declared": False, "i_declared": True},
            random_state=seed,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            enc.fit(df)
        assert set(enc.private_domains_) == set(df.columns)
        got = {spec.name for spec in enc.specs_ if spec.missing}
        assert got == can
        for spec in enc.specs_:
            assert spec.missing_learned == (not spec.name.endswith("_declared"))
    from skdp_synth.preprocessing._column_spec import can_hold_missing

    assert {c for c in df.columns if can_hold_missing(df[c].dtype)} == can - {
        "i_declared"
    } | {"f_declared"}


def _complete_float_column_specs(seeds, df=None):
    x = np.random.default_rng(0).lognormal(3.0, 1.0, 300)
    df = pd.DataFrame({"c": x}) if df is None else df
    for seed in seeds:
        enc = BooleanEncoder(epsilon=1.0, delta=1e-6, random_state=seed).fit(df)
        yield enc, enc.specs_[0]


def test_the_missing_level_reads_no_value():
    """One numeric column, ε = 1: PrivTree's counts get ``0.6 ε``
    (TREE_SHARE 0.4), so the histogram's scale is ``b = 1/0.6``
    (add/remove). The column has a missing level in every fit, and so does
    its neighbour with one value missing: the bit layout is the same on
    both (a function of the dtype). The histogram's missing cell is still
    drawn (same ``ε``, the other cells' noise unchanged) but decides
    nothing: complete columns whose noisy count is below ``0.51 b`` have
    their level too."""
    x = np.random.default_rng(0).lognormal(3.0, 1.0, 300)
    neighbour = pd.DataFrame({"c": np.append(x[1:], np.nan)})
    below = 0
    pairs = zip(
        _complete_float_column_specs(range(40)),
        _complete_float_column_specs(range(40), neighbour),
    )
    for (enc, spec), (enc_n, spec_n) in pairs:
        assert spec.missing_learned and spec.missing and spec_n.missing
        assert enc.get_feature_names_out()[-1] == enc_n.get_feature_names_out()[-1]
        assert spec.bits[-1] == spec_n.bits[-1] == "c=<missing>"
        assert spec.fine.scale == pytest.approx(1.0 / 0.6, rel=1e-12)
        below += spec.fine.missing_count <= 0.51 * spec.fine.scale
    # P(Lap(b) <= 0.51 b) = 0.7: these seeds have complete columns whose
    # noisy count was below the old threshold
    assert below >= 20


def test_few_missing_categories_keep_their_level():
    """A privately learned categorical column with 3 missing values in 2,000
    rows: its dtype (object) gives it a missing level in every fit, so the
    3 values decode as missing -- never as "other" (where a noisy count
    said no, before) and never an error, which would say that the column
    has missing values."""
    rng = np.random.default_rng(0)
    s = pd.Series(rng.choice(["a", "b", "c"], 2000), dtype=object)
    s[:3] = None
    df = pd.DataFrame({"s": s})
    seen = set()
    for seed in range(6):
        enc = BooleanEncoder(epsilon=1.0, delta=1e-6, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = enc.inverse_transform(enc.fit_transform(df))["s"]
        spec = enc.specs_[0]
        seen.add(spec.missing)
        if not spec.missing:
            assert (out[:3] == spec.levels[-1]).all()
            assert not out.isna().any()
        else:
            assert out[:3].isna().all()
            assert not out[3:].isna().any()
    # an object column can hold a missing value: its level is its dtype's,
    # never a noisy count's (which said no in 7 % of fits: 3 rows, scale 1)
    assert seen == {True}


def test_declared_complete_numeric_column_rejects_missing():
    """``missing={col: False}`` is public: a missing value there is an error
    (naming the column), not silently imputed as for a learned decision."""
    x = pd.Series(np.random.default_rng(1).normal(size=500))
    x[0] = np.nan
    enc = BooleanEncoder(epsilon=1.0, delta=1e-6, missing={"x": False}, random_state=0)
    with pytest.raises(ValueError, match="'x' has missing values"):
        enc.fit_transform(pd.DataFrame({"x": x}))


def test_error_mode_refuses_only_what_the_public_bounds_exclude():
    """``out_of_bounds="error"`` with a private domain: the edges end at the
    private cap, inside the bounds, so rows between cap and bounds are valid
    (clipped to the cap, encoded like the cap); a value outside the public
    bounds is refused, naming the column and the bounds, never the value.
    Before, every fit of a long-tailed column failed here."""
    rng = np.random.default_rng(0)
    x = np.round(rng.lognormal(8.0, 1.2, 3000))
    df = pd.DataFrame({"x": x})
    enc = BooleanEncoder(
        epsilon=1.0,
        delta=1e-6,
        bounds={"x": (0, 1e7)},
        out_of_bounds="error",
        random_state=0,
    )
    Z = enc.fit_transform(df)
    edges = enc.specs_[0].levels
    assert x.max() > edges[-1]  # the tail reaches beyond the private cap
    capped = pd.DataFrame({"x": np.clip(x, edges[0], edges[-1])})
    assert np.array_equal(Z, enc.transform(capped))
    bad = df.copy()
    bad.loc[0, "x"] = 2e7
    with pytest.raises(ValueError, match=r"'x' has values outside its bounds") as e:
        enc.transform(bad)
    assert "2e+07" not in str(e.value) and "20000000" not in str(e.value)


def test_subnormal_bounds_decode_inside_them():
    """Hypothesis found bounds at a subnormal float (lo = -2.2e-313): a leaf's
    width was clamped in the density, so the tail model's equation had no
    solution and its bisection overflowed. Such leaves now decode uniformly."""
    test_clipping_keeps_decoded_values_in_public_bounds.hypothesis.inner_test(
        lo=-2.2250738585e-313, width=1.0, seed=0
    )


# ----------------------- a learned missing level the release does not support
def _complete_and_missing(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "a": rng.lognormal(3.0, 1.0, n),
            "b": rng.normal(50.0, 10.0, n),
            "c": rng.gamma(2.0, 3.0, n),
            "g": rng.choice(list("xyz"), n),
        }
    )
    df["d"] = df["b"] + rng.normal(0.0, 5.0, n)
    df.loc[rng.random(n) < 0.25, "d"] = np.nan
    # a declared missing level (None in the codebook) with 2 missing rows
    df["h"] = pd.Series(rng.choice(["p", "q"], n), dtype=object)
    df.loc[:1, "h"] = None
    return df


def _fit_mixed(df, seed, eps=1.0):
    cats = {"g": list("xyz"), "h": ["p", "q", None]}
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories=cats, random_state=seed),
        ProjectedGaussianRelease(epsilon=eps, delta=1e-6, random_state=seed),
    )
    return pipe.fit(df)


def test_release_level_estimate_is_the_residual_plans():
    """Without selection (one measurement of each residual), the estimate of
    a 1-way cell and its noise are the plan's own: ``T̂_j`` rebuilt from the
    released residuals, ``σ_j² = cell_variance(σ, 1, (j,))``."""
    df = _complete_and_missing(20000)
    pipe = _fit_mixed(df, 0, eps=3.0)
    rel = pipe[-1]
    assert rel.selection_ == "none"
    W = rel.workload_
    for j in range(len(rel.blocks_.names)):
        table = W.reconstruct(rel._residuals, (j,))
        sd = math.sqrt(W.cell_variance(rel.residual_scales_, 1.0, (j,)))
        for level in range(int(W.n_levels[j])):
            est, got_sd = rel._one_way_level_estimate(j, level)
            assert est == pytest.approx(table[level], rel=1e-9, abs=1e-9)
            assert got_sd == pytest.approx(sd, rel=1e-12)


def test_unsupported_missing_levels_are_dropped_after_the_fit():
    """Every missing level -- learned on the encoder's noisy count (a
    complete float column gets one with probability ``MISSING_FALSE_LEVEL``)
    or declared (``None`` among the categories) -- is kept iff the release's
    own estimate supports it: dropped iff ``T̂ < σ`` (``MISSING_SUPPORT_Z``;
    a numeric column's with its fine histogram's own noisy count,
    ``missing_support``;
    the other levels keep ``LEVEL_SUPPORT_Z = 2``), and a dropped column has
    no NaN in ``sample``. A column with 25 % missing keeps its level and its
    rate. Post-processing: the recorded ε does not change."""
    from skdp_synth.gaussian_release._release import LEVEL_SUPPORT_Z
    from skdp_synth.preprocessing._missing_support import missing_support, second_count
    from skdp_synth.preprocessing._numeric_domain import MISSING_SUPPORT_Z

    assert LEVEL_SUPPORT_Z == 2.0 and MISSING_SUPPORT_Z == 1.0
    df = _complete_and_missing()
    dropped_seen = h_dropped = 0
    for seed in range(8):
        pipe = _fit_mixed(df, seed)
        rel = pipe[-1]
        names = [str(x) for x in rel.blocks_.names]
        syn = pipe.sample(len(df), random_state=seed)
        assert pipe.epsilon_ == pytest.approx(1.0, rel=1e-12)
        for spec in pipe[0].specs_:
            if not spec.missing:
                assert spec.name not in pipe.missing_dropped_
                continue
            j = names.index(spec.name)
            est, sd = rel._one_way_level_estimate(j, int(rel.blocks_.n_levels[j]) - 1)
            raw, variance = second_count(spec)
            value, threshold = missing_support(est, sd, raw, variance)
            assert (spec.name in pipe.missing_dropped_) == (
                value < threshold and est < LEVEL_SUPPORT_Z * sd
            )
            if spec.name in pipe.missing_dropped_:
                dropped_seen += 1
                assert not syn[spec.name].isna().any()
        assert "d" not in pipe.missing_dropped_
        assert abs(syn["d"].isna().mean() - df["d"].isna().mean()) < 0.05
        # the declared level of 2 rows in 3,000: mostly below σ
        h_dropped += "h" in pipe.missing_dropped_
    # these fixed seeds exercise the drop of learned levels too
    assert h_dropped >= 6 and dropped_seen >= h_dropped + 4


def test_an_unsupported_other_level_is_dropped():
    """A categorical column whose levels are discovered privately always has
    an ``"other"`` level; when every level was found (a two-level column) it
    holds no row, and the generator gave it rows fitted to noise (credit's
    ``Status``: 0.5-2 % ``"other"``). The pipeline drops it exactly when the
    release's estimate is below ``LEVEL_SUPPORT_Z`` of its noise, and keeps
    it where rare levels fill it. Post-processing: ε unchanged."""
    from skdp_synth.gaussian_release._release import LEVEL_SUPPORT_Z

    rng = np.random.default_rng(5)
    n = 4000
    df = pd.DataFrame(
        {
            "x": rng.normal(0.0, 1.0, n),
            "two": rng.choice(["bad", "good"], n, p=[0.3, 0.7]),
            # 30 % of the rows in 15 levels of 2 % each: under the threshold
            "many": rng.choice(
                ["a", "b"] + [f"r{i}" for i in range(15)],
                n,
                p=[0.4, 0.3] + [0.02] * 15,
            ),
        }
    )
    dropped_two = 0
    for seed in range(6):
        pipe = make_synthesis_pipeline(
            BooleanEncoder(random_state=seed),
            ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=seed),
        )
        # "many"'s 30 % in rare levels come back as "other", and are named
        with pytest.warns(DegenerateColumnWarning, match=r"'many': about \d+% of"):
            pipe.fit(df)
        assert list(pipe.degenerate_columns_) == ["many"]
        rel = pipe[-1]
        assert pipe.epsilon_ == pytest.approx(1.0, rel=1e-12)
        names = [str(x) for x in rel.blocks_.names]
        syn = pipe.sample(n, random_state=seed)
        specs = {spec.name: spec for spec in pipe[0].specs_}
        for col in ("two", "many"):
            spec = specs[col]
            assert spec.other
            j = names.index(col)
            other = len(spec.levels) - 1
            est, sd = rel._one_way_level_estimate(j, other)
            assert (col in pipe.other_dropped_) == (est < LEVEL_SUPPORT_Z * sd)
            if col in pipe.other_dropped_:
                assert not (syn[col] == spec.levels[other]).any()
        assert set(specs["two"].levels[:-1]) == {"bad", "good"}
        dropped_two += "two" in pipe.other_dropped_
        # the rare levels fill "other" (30 % of the rows): never dropped
        assert "many" not in pipe.other_dropped_
        assert (syn["many"] == specs["many"].levels[-1]).mean() > 0.15
    assert dropped_two == 6


def test_dropping_a_level_is_post_processing():
    """The release fitted inside the pipeline and the same release fitted on
    the encoded rows alone publish identical answers; only the model's rows
    at the dropped level move, to other levels of the same column."""
    df = _complete_and_missing()
    for seed in range(8):
        pipe = _fit_mixed(df, seed)
        if pipe.missing_dropped_:
            break
    else:  # pragma: no cover - the seeds above contain a drop
        pytest.fail("no seed dropped a level")
    rel = pipe[-1]
    # the pipeline gives the encoder 0.2 of ε (no δ: every category is declared)
    alone = ProjectedGaussianRelease(epsilon=0.8, delta=1e-6, random_state=seed)
    enc = pipe[0]
    alone.fit(enc.transform(df), blocks=enc.blocks_)
    np.testing.assert_array_equal(rel.released_, alone.released_)
    names = [str(x) for x in rel.blocks_.names]
    moved = rel._model_rows != alone._model_rows
    for name in pipe.missing_dropped_:
        j = names.index(str(name))
        level = int(rel.blocks_.n_levels[j]) - 1
        assert not (rel._model_rows[:, j] == level).any()
        assert np.array_equal(moved[:, j], alone._model_rows[:, j] == level)
    untouched = [j for j, n in enumerate(names) if n not in pipe.missing_dropped_]
    assert not moved[:, untouched].any()


def test_a_point_mass_outside_the_grown_range_is_kept():
    """Credit's ``Assets`` (37 % of the rows at 0, the body from ~2,000 on,
    sparse leaves between): the core is the body, growth stops at the sparse
    run, and the point mass at 0 -- a finest leaf far above
    ``b ln(L/0.01)`` -- was dropped with all its rows (seed 3 of the
    benchmark: no synthetic 0 at all). It is kept, and the cap reaches it."""
    from skdp_synth.preprocessing._numeric_domain import kept_counts

    between = np.unique(np.round(np.geomspace(1.0, 2049.0, 15)))
    edges = np.concatenate([[0.0], between, [4096.0, 8192.0, 16385.0]])
    n_between = between.size - 1
    raw = np.concatenate([[1250.0], np.zeros(n_between), [900.0, 1200.0, 800.0]])
    finest = np.zeros(raw.size, dtype=bool)
    finest[0] = True
    scale = 50.0
    assert raw[0] > scale * math.log(raw.size / 0.01)  # a significant atom
    out, (lo, hi) = kept_counts(edges, raw, scale, finest, integer=True)
    assert out[0] == 1250.0
    assert lo == 0.0
    np.testing.assert_array_equal(out[-3:], raw[-3:])
    assert not out[1:-3].any()


def test_a_jump_keeps_the_core_of_its_run_not_the_far_noise_that_carried_it():
    """Credit's ``Debt`` (0 for 82 % of rows, the rest 100..30,000), seed 8
    of ``bench_mixed.py``: the nearest run beyond the atom that passes the
    jump's threshold ends at a noise leaf ``[2^20, 2^24)`` (184 noisy rows,
    none real), so the whole run up to it joined the range and 1.8 % of the
    synthetic rows came back between 30,000 and 2.7 million. Only the run's
    max-sum stretch of ``count - 2b`` joins now: the cap ends inside the
    data's range and nothing beyond it is kept."""
    from skdp_synth.preprocessing._numeric_domain import kept_counts

    edges = np.array(
        [0, 1, 16, 65, 129, 256, 1025, 2049, 4096, 65536, 262145, 2**20, 2**24, 2**30],
        dtype=np.float64,
    )
    raw = np.array(
        [2809, -20, -30, 57, 58, 274, 123, 92, 54, 100, -10, 184, -40],
        dtype=np.float64,
    )
    finest = np.zeros(raw.size, dtype=bool)
    finest[0] = True
    scale = 50.0
    strict = scale * math.log(raw.size / 0.01)
    assert (raw[1:] < strict).all()  # no single leaf beyond 0 is significant
    out, (lo, hi) = kept_counts(edges, raw, scale, finest, integer=True)
    assert (lo, out[0]) == (0.0, 2809.0)
    assert out[5] == 274.0  # the run's core, [256, 1025), is kept
    assert hi <= 4096.0  # the previous rule's cap: 76,028
    assert not out[edges[:-1] >= 4096.0].any()


def _debt_seed_4():
    """Credit's ``Debt`` in ``bench_mixed.py`` seed 4 (ε = 1, b = 41.7): 43
    leaves, 31 of them on the negative side (empty), then the atom at 0 and
    11 leaves beyond it; the far noise leaf ``[2^34, 2^35)`` (92 noisy rows,
    none real) is the last. Returns the index of the atom too."""
    negative = -(2.0 ** np.arange(31, 0, -1))  # 31 leaves below 0
    positive = [0, 1, 4, 16, 65, 256, 512, 1025, 4096, 65536, 2**20, 2**34, 2**35]
    edges = np.concatenate([negative, np.asarray(positive, dtype=np.float64)])
    raw = np.concatenate(
        [
            np.zeros(negative.size),
            [2896.7, -71.4, -54.5, 66.0, 212.3, -20.7, 41.0, 290.2, 38.1, -30.0, -40.0],
            [92.2],
        ]
    )
    raw[3] = -97.8  # a negative leaf's noise
    a = negative.size
    finest = np.zeros(raw.size, dtype=bool)
    finest[a] = True
    return edges, raw, finest, 125.0 / 3.0, a


def test_the_jump_counts_only_the_leaves_it_searches():
    """The jump's threshold ``b ln(L / 0.01) + 2 b sqrt(2 m)`` bounds the
    false level of a search over the ``L`` leaves beyond the range (one
    side), not over every leaf of the root: credit's ``Debt`` (seed 4 of the
    benchmark, 43 leaves in the root, 11 beyond the atom) missed it by 12
    rows with the root's 43 and decoded every row as 0."""
    from skdp_synth.preprocessing._numeric_domain import kept_counts

    edges, raw, finest, b, a = _debt_seed_4()
    assert raw.size == 43 and raw.size - a - 1 == 11
    run = raw[a + 3 : a + 9].sum()  # [16, 65536): the body
    side = b * math.log(11 / 0.01) + 2 * b * math.sqrt(2 * 6)
    root = b * math.log(43 / 0.01) + 2 * b * math.sqrt(2 * 6)
    assert side < run < root
    out, (lo, hi) = kept_counts(edges, raw, b, finest, integer=True)
    assert (lo, out[a]) == (0.0, raw[a])
    assert not out[:a].any()
    assert out[a + 4] == raw[a + 4] and out[a + 7] == raw[a + 7]  # the body
    assert hi >= 4096.0
    assert not out[-1]  # the far noise leaf is not


def test_a_noise_leaf_next_to_the_atom_does_not_stop_the_jump():
    """Credit's ``Debt`` (seed 14 of the benchmark): the leaf ``[1, 16)``
    next to the atom drew 120 noisy rows (4 real), passed ``2 b`` and joined
    the range, which then held more than point masses, so the jump was not
    tried and the cap stopped at 16 (every non-zero row decoded below 16).
    A range whose non-atom leaves together do not pass the jump's threshold
    holds point masses only; the body beyond joins."""
    from skdp_synth.preprocessing._numeric_domain import kept_counts

    edges, raw, finest, b, a = _debt_seed_4()
    raw[a + 1] = 120.0  # > 2 b: joins the atom's range
    assert raw[a + 1] > 2 * b
    out, (lo, hi) = kept_counts(edges, raw, b, finest, integer=True)
    assert out[a + 1] == raw[a + 1]
    assert out[a + 4] == raw[a + 4] and out[a + 7] == raw[a + 7]
    assert hi >= 4096.0
    # a range with a significant body of its own is not a point mass
    from skdp_synth.preprocessing._numeric_domain import _only_point_masses

    atom = finest & (raw > b * math.log(raw.size / 0.01))
    need = b * math.log(10 / 0.01) + 2 * b * math.sqrt(2)
    assert raw[a + 1] <= need
    assert _only_point_masses(raw, atom, a, a + 1, 10, b)
    raw[a + 1] = need + 1.0  # a significant body next to the atom
    assert not _only_point_masses(raw, atom, a, a + 1, 10, b)
    assert _only_point_masses(raw, atom, a, a, 10, b)


def _year_seed_27():
    """Wage's ``year`` (2003-2009, one leaf per year from 2004) in
    ``bench_mixed.py`` seed 27 (b = 25): past an empty ``[2014, 2049)`` the
    leaf ``[2049, 2897)`` drew 78 noisy rows, none real."""
    edges = np.array(
        [1025, 1961, 2004, 2005, 2006, 2007, 2008, 2014, 2049, 2897, 4096, 8192],
        dtype=np.float64,
    )
    raw = np.array(
        [-12.0, 413.9, 332.6, 351.5, 338.7, 356.2, 543.0, 5.0, 78.2, 32.9, -20.0]
    )
    finest = np.zeros(raw.size, dtype=bool)
    finest[2:6] = True
    return edges, raw, finest, 25.0


def test_a_wide_leaf_next_to_narrow_ones_must_be_significant_to_join():
    """A leaf more than ``WIDE_RATIO`` times wider in ``t`` than the kept
    leaf it would join passes growth only above ``b ln(L / 0.01)``: before,
    the noise leaf of :func:`_year_seed_27` passed ``2 b`` and 1.9 % of the
    synthetic years came back as 2049-2066 (std ratio 4.1)."""
    from skdp_synth.preprocessing import _numeric_domain as nd

    edges, raw, finest, b = _year_seed_27()
    width = np.diff(nd._t(edges))
    strict = b * math.log(raw.size / 0.01)
    assert 2 * b < raw[8] < strict and width[8] <= nd.GAP_T
    assert width[7] <= nd.GAP_T  # the empty leaf alone does not stop growth
    assert width[8] > nd.WIDE_RATIO * width[6]
    out, (lo, hi) = nd.kept_counts(edges, raw, b, finest, integer=True)
    assert not out[8:].any()
    assert hi <= 2049.0  # integer cap, exclusive: nothing from 2049 on
    np.testing.assert_array_equal(out[1:7], raw[1:7])
    # the same leaf no wider than WIDE_RATIO times its neighbour joins
    narrow = edges.copy()
    narrow[8] = 2014.5
    tn = nd._t(narrow)
    narrow[9] = nd._x(tn[8] + 0.9 * nd.WIDE_RATIO * (tn[7] - tn[6]))
    out2, _ = nd.kept_counts(narrow, raw, b, finest, integer=False)
    assert out2[8] == raw[8]


def test_jump_rule_constants_are_pinned():
    """The zero-inflated jump's threshold ``b ln(L / 0.01) + 2 b sqrt(2 m)``
    (``kept_counts``): looser values were measured to invent far ranges in
    0/1 and all-zero columns (benchmarks/bench_numeric_tails.py), so a change
    must be deliberate."""
    from skdp_synth.preprocessing import _numeric_domain as nd

    assert (nd.JUMP_FALSE_LEVEL, nd.JUMP_SCALES) == (0.01, 2.0)
    assert nd.WIDE_RATIO == 64.0


def test_a_single_bin_domain_warns_naming_only_the_columns():
    """A private domain that keeps one bin of a numeric column, or no level
    but "other" of a categorical one, warns with the columns' names and what
    helps; a column whose domain keeps its spread does not, and the message
    carries no value or count of the data (only the public per-column ε)."""
    rng = np.random.default_rng(0)
    n = 2000
    df = pd.DataFrame(
        {
            # one integer value: one bin (a float column's noise leaves next
            # to the atom at 0 can make a second one)
            "zero": np.zeros(n, dtype=np.int64),
            "rich": rng.normal(5000.0, 1000.0, n),
            # 80 levels of 25 rows: each far below the threshold at ε = 0.25
            "sparse": rng.permutation(np.repeat([f"l{i}" for i in range(80)], 25)),
        }
    )
    # (at random_state=0 one level of 25 rows passes on its noise, P ~ 4 %)
    enc = BooleanEncoder(epsilon=0.75, delta=1e-6, random_state=3)
    with pytest.warns(CoarseDomainWarning) as caught:
        enc.fit(df)
    assert not [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    (msg,) = [str(w.message) for w in caught]
    assert "['zero', 'sparse']" in msg and "rich" not in msg
    assert "epsilon 0.25 per column" in msg
    assert "domain_share=" in msg and "bin_edges=" in msg
    # the rows a level needs: the public threshold of the level selection
    # (a function of epsilon, delta, the relation and the schema only)
    private = enc._private_columns(df.columns, df.dtypes)
    rows_hint = enc._level_rows_hint(private)
    assert rows_hint in msg
    # nothing of the data (no row count, level count or value): no digit
    # but the public per-column ε, the constant domain_share to try and
    # that public threshold
    rest = msg.replace("epsilon 0.25", "").replace(_share_advice(), "")
    rest = rest.replace(rows_hint, "")
    assert not any(ch.isdigit() for ch in rest)
    spec = {s.name: s for s in enc.specs_}
    assert spec["zero"].n_levels == 1 and spec["sparse"].levels == ["other"]
    assert spec["rich"].n_levels >= 2


def test_a_domain_below_the_noise_warns_and_a_clear_one_does_not():
    """A numeric domain whose kept range is not above the noise
    (``core_is_significant``) warns that its values may be decoded far from
    the data; with enough rows nothing warns. 400 rows of N(0, 1) at 0.04
    per column: the core is not significant in 98 % of fits (measured), and
    here in these 7 (fixed seed); 20,000 rows at 0.25: always significant."""
    rng = np.random.default_rng(1)
    small = pd.DataFrame({f"x{i}": rng.normal(size=400) for i in range(7)})
    enc = BooleanEncoder(epsilon=0.28, random_state=0)
    with pytest.warns(CoarseDomainWarning) as caught:
        enc.fit(small)
    msgs = [str(w.message) for w in caught]
    lost = [s.name for s in enc.specs_ if not s.fine.found]
    assert lost == list(small.columns)
    assert any(f"numeric columns {lost} found no range" in m for m in msgs)
    assert all("x" in m for m in msgs)  # every message names its columns
    for m in msgs:  # no value or count of the data: digits only in names and ε
        rest = m.replace("epsilon 0.04", "").replace(_share_advice(), "")
        for name in small.columns:
            rest = rest.replace(name, "")
        assert not any(ch.isdigit() for ch in rest)
    large = pd.DataFrame({"a": rng.normal(size=20000), "b": rng.gamma(2.0, 1e3, 20000)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = BooleanEncoder(epsilon=0.5, random_state=0).fit(large)
    assert all(s.fine.found for s in enc.specs_)


def test_core_significance_is_the_jump_threshold():
    """``core_is_significant``: the core's noisy sum against ``b ln(L/0.01)
    + 2 b sqrt(2 m)``, exactly (post-processing of the noisy counts)."""
    from skdp_synth.preprocessing._numeric_domain import core_is_significant

    b, L = 10.0, 50
    need1 = b * math.log(L / 0.01) + 2 * b * math.sqrt(2.0)  # one-leaf core
    raw = np.zeros(L)
    raw[7] = need1 + 1e-6
    assert core_is_significant(raw, b)
    raw[7] = need1 - 1e-6
    assert not core_is_significant(raw, b)


def _body_and_tail(tail, edge=400.0):
    """Edges and raw counts: a 4-leaf body [100, 500) of 400 noisy rows per
    leaf (the last one ``edge``), then ``tail`` on leaves [500, 600),
    [600, 700), ... each under the growth threshold ``2 b``."""
    edges = np.arange(100.0, 100.0 * (6 + len(tail)), 100.0)
    raw = np.concatenate([[400.0] * 3, [edge], tail])
    return edges, raw


def _expected_tail(edges, raw, scale):
    """The rule of ``_recover_tails`` for ``_body_and_tail``, written out:
    the tail leaves inside the upper fence pool ``S``; ``S - TAIL_Z b
    sqrt(2 m)`` rows fill them nearest first, each at most the edge leaf's
    count (equal widths: its density)."""
    from skdp_synth.preprocessing import _numeric_domain as nd

    body = np.append(raw[:4], np.zeros(raw.size - 4))
    q1 = nd._quantile_t(edges, body, 0.25)
    q3 = nd._quantile_t(edges, body, 0.75)
    fence = q3 + nd.FENCE_IQR * (q3 - q1)
    te = nd._t(edges)
    window = [j for j in range(4, raw.size) if te[j] < fence]
    expected = np.zeros(raw.size - 4)
    left = raw[window].sum() - nd.TAIL_Z * scale * math.sqrt(2.0 * len(window))
    for j in window:
        expected[j - 4] = min(max(left, 0.0), raw[3])
        left -= expected[j - 4]
    return window, expected


def test_a_thin_tail_gets_its_pooled_count_less_its_noise_nearest_first():
    """Credit's ``Amount``: 225 rows above 1,723 in five leaves of 14-70
    rows at ``b = 42``, each under ``2 b``, were cut whole. The leaves
    beyond the kept range, up to the fence, pool their raw counts ``S``; the
    tail gets ``S - TAIL_Z b sqrt(2 m)`` rows, nearest leaf first, none
    denser than the kept edge leaf."""
    from skdp_synth.preprocessing import _numeric_domain as nd

    scale = 40.0
    edges, raw = _body_and_tail([70.0, 60.0, 50.0])
    finest = np.zeros(raw.size, dtype=bool)
    assert (raw[4:] < 2.0 * scale).all()  # growth alone keeps none of them
    window, expected = _expected_tail(edges, raw, scale)
    assert len(window) >= 2 and expected.sum() > 0
    out, (lo, hi) = nd.kept_counts(edges, raw, scale, finest)
    np.testing.assert_array_equal(out[:4], raw[:4])
    np.testing.assert_allclose(out[4:], expected, rtol=1e-12)
    assert out[4:].sum() < raw[4:].sum()  # shrunk, never inflated
    assert hi > edges[4]  # the cap reaches the recovered rows


def test_a_tail_of_noise_gets_no_rows_and_is_capped_by_the_edge_density():
    """Leaves beyond the range whose pooled count is under ``TAIL_Z`` sds of
    its noise get nothing; a pooled count above the edge leaf's density
    fills the nearest leaf only up to it (a tail's density falls), the
    next one with the rest."""
    from skdp_synth.preprocessing import _numeric_domain as nd

    scale = 40.0
    finest = np.zeros(7, dtype=bool)
    edges, raw = _body_and_tail([30.0, -20.0, 10.0])
    assert raw[4:].sum() < nd.TAIL_Z * scale * math.sqrt(2.0)
    out, (_, hi) = nd.kept_counts(edges, raw, scale, finest)
    assert not out[4:].any()
    assert hi == edges[4]
    # a thin edge leaf (90 rows, above 2 b) caps what each tail leaf takes
    edges, raw = _body_and_tail([75.0, 75.0, 75.0], edge=90.0)
    window, expected = _expected_tail(edges, raw, scale)
    assert expected[0] == 90.0 and 0 < expected[1] < 90.0  # the cap binds
    out, _ = nd.kept_counts(edges, raw, scale, finest)
    np.testing.assert_allclose(out[4:], expected, rtol=1e-12)


def test_tail_recovery_constant_is_pinned():
    """``TAIL_Z`` sets how many rows an empty tail gets on average
    (``E[(S - z sd)+]``, 0.08 sd at z = 1) and how much of a thin real tail
    comes back; wider windows than the fences put invented wages far out
    (Wage's R² .30 -> .26 with a 3-IQR window), so a change must be
    deliberate and measured."""
    from skdp_synth.preprocessing import _numeric_domain as nd

    assert nd.TAIL_Z == 1.0


def test_no_tail_is_recovered_where_nothing_is_significant():
    """With ``near_zero`` (the core is not significant, so the kept range may
    itself be a noise leaf) the pooled counts beyond it give no rows: the
    same counts that recover a tail without it recover none with it. The
    tail leaves are each under ``b``, so the core of a histogram with nothing
    significant (a leaf above ``b`` or ``1.5 b``) does not take them in itself."""
    from skdp_synth.preprocessing import _numeric_domain as nd

    scale = 40.0
    edges, raw = _body_and_tail([39.0, 38.0, 37.0])
    finest = np.zeros(raw.size, dtype=bool)
    plain, _ = nd.kept_counts(edges, raw, scale, finest)
    assert plain[4:].sum() > 0
    prior, _ = nd.kept_counts(edges, raw, scale, finest, near_zero=True)
    assert not prior[4:].any()


def _hist(edges, counts, integer=True):
    edges = np.asarray(edges, dtype=float)
    counts = np.asarray(counts, dtype=float)
    finest = np.diff(edges) <= 1.0
    return FineHistogram(
        edges, counts, 0.0, finest, integer, (edges[0], edges[-1]), True, 42.0
    )


def test_a_heap_leaf_is_split_into_one_bin_per_integer():
    """Credit's loan term: the 698 rows at 48 months sit in the leaf [45, 49)
    with empty neighbours. The leaf holds more than a bin's mass, spans 4
    integers and is a local peak: it becomes the bins 45, 46, 47, 48 (their
    indices returned for the release's support test)."""
    h = _hist(
        [1, 16, 32, 35, 37, 45, 49, 60, 61, 65], [0, 311, 0, 715, 0, 717, 0, 1658, 0]
    )
    cuts = coarse_edges(h, 10)
    edges, split = split_heavy_leaves(h, cuts, 10)
    for v in (35.0, 36.0, 45.0, 46.0, 47.0, 48.0):
        assert v in edges
        assert edges.index(v) in split
    assert [edges[k] for k in split] == [35.0, 36.0, 45.0, 46.0, 47.0, 48.0]
    assert set(cuts) <= set(edges)  # only cuts added
    assert edges == sorted(edges)


def test_a_smooth_stretch_and_a_real_column_are_not_split():
    """A heavy leaf no denser per integer than PEAK_RATIO times its
    neighbour (an age column's body) keeps its bin; so does every leaf of a
    float column, and a leaf wider than SPLIT_WIDTH."""
    from skdp_synth.preprocessing._coarse_bins import PEAK_RATIO, SPLIT_WIDTH

    assert (PEAK_RATIO, SPLIT_WIDTH) == (2.0, 16)
    smooth = _hist([20, 24, 28, 32, 40, 60], [300, 400, 500, 600, 900])
    cuts = coarse_edges(smooth, 10)
    assert split_heavy_leaves(smooth, cuts, 10) == (cuts, [])
    real = _hist([1, 16, 45, 49, 100], [0, 10, 700, 10], integer=False)
    cuts = coarse_edges(real, 10)
    assert split_heavy_leaves(real, cuts, 10) == (cuts, [])
    wide = _hist([0, 10, 30, 40], [0, 900, 10])
    cuts = coarse_edges(wide, 10)
    assert split_heavy_leaves(wide, cuts, 10) == (cuts, [])


def test_a_heavy_last_leaf_keeps_the_closed_last_bin():
    """Wage's ``year``: the last kept leaf [2008, 2014) holds 2008 and 2009
    (and nothing above). Split, each integer up to the cap's largest, 2013,
    gets a bin of its own: the closed last bin is [2013, 2014], 2014 past
    the cap (its bounds end at 2014, exclusive); the bins past the data are
    the release's to drop. (It was [2012, 2013], two integers in one bin.)"""
    h = _hist([1961, 2004, 2005, 2006, 2008, 2014], [20, 385, 40, 60, 630])
    cuts = coarse_edges(h, 10)
    edges, split = split_heavy_leaves(h, cuts, 10)
    assert cuts[-1] == 2013.0 and h.bounds[1] == 2014.0
    assert edges[-2:] == [2013.0, 2014.0]  # the closed last bin [2013, 2014]
    assert [edges[k] for k in split] == [2008.0, 2009.0, 2010.0, 2011.0, 2012.0, 2013.0]


def test_the_data_s_last_integer_and_one_past_it_are_measured_apart():
    """Integers 0-9 whose last kept leaf is [8, 11): the cap's largest
    integer, 10, is one past the data's end. Each integer up to 10 gets a
    bin of its own, the closed last bin [10, 11] (11 past the cap), so the
    release can drop 10 alone; decoded, a bin gives its own integer only,
    by the fine histogram and by the midpoint. Before, the last bin [9, 10]
    held 9 and 10, and half of 9's rows came back as 10 (ten such columns
    of a 20,000-row table at ε = 0.33: 4-6 % of their rows, unnamed)."""
    from skdp_synth.preprocessing._column_spec import _ColumnSpec
    from skdp_synth.preprocessing._decoding import values_from_index

    h = _hist(list(range(9)) + [11, 16], [2000.0] * 8 + [4000.0, 0.0])
    assert h.bounds == (0.0, 11.0)
    cuts = coarse_edges(h, 10)
    assert cuts[-1] == 10.0
    edges, split = split_heavy_leaves(h, cuts, 10)
    assert edges == [float(v) for v in range(12)]
    assert split == list(range(11))
    rng = np.random.default_rng(0)
    for k in range(11):
        left = np.full(200, edges[k])
        right = np.full(200, edges[k + 1])
        last = np.full(200, k == 10)
        values = decode_fine(h, left, right, last, rng)
        assert set(values.tolist()) == {float(k)}
    spec = _ColumnSpec("x", "numeric", edges, False, np.dtype("int64"), integer=True)
    spec.fine = h
    index = np.full(50, 10)
    for how in ("midpoint", "uniform"):
        out = values_from_index(spec, index, np.zeros(50, bool), rng, how)
        assert set(np.asarray(out).tolist()) == {10}


def _heaped(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    term = rng.choice([12, 24, 36, 48, 60], n, p=[0.05, 0.1, 0.25, 0.2, 0.4])
    return pd.DataFrame(
        {
            "term": term.astype(np.int64),
            "age": rng.integers(20, 70, n).astype(np.int64),
            "x": rng.normal(0.0, 1.0, n) + term / 30.0,
        }
    )


def test_heaps_come_back_on_their_integers_and_empty_bins_are_dropped():
    """A column whose rows sit on five integers: the heavy leaves around its
    heaps are split into one bin per integer, the release measures each, and
    the pipeline drops exactly the bins its estimate does not support
    (``T̂ < LEVEL_SUPPORT_Z σ``); ``sample`` never returns a dropped integer.
    Post-processing: the recorded ε is the one written."""
    from skdp_synth.gaussian_release._release import LEVEL_SUPPORT_Z

    df = _heaped()
    heaps = {12, 24, 36, 48, 60}
    on_heaps, splits = [], 0
    for seed in range(4):
        pipe = make_synthesis_pipeline(
            BooleanEncoder(random_state=seed),
            ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=seed),
        ).fit(df)
        assert pipe.epsilon_ == pytest.approx(1.0, rel=1e-12)
        rel = pipe[-1]
        spec = next(sp for sp in pipe[0].specs_ if sp.name == "term")
        splits += len(spec.split)
        j = [str(x) for x in rel.blocks_.names].index("term")
        dropped = pipe.integer_bins_dropped_.get("term", [])
        for b in spec.split:
            est, sd = rel._one_way_level_estimate(j, b)
            assert (spec.levels[b] in dropped) == (est < LEVEL_SUPPORT_Z * sd)
        syn = pipe.sample(len(df), random_state=seed)
        assert not syn["term"].isin(dropped).any()
        on_heaps.append(syn["term"].isin(heaps).mean())
    assert splits > 0
    # the rows come back on the heaps (uniform inside the leaves they put
    # 40-60 % of the rows between them)
    assert min(on_heaps) > 0.9


@settings(max_examples=200, deadline=None)
@given(
    widths=st.lists(st.integers(1, 20), min_size=2, max_size=12),
    counts=st.lists(st.floats(0.0, 1000.0), min_size=12, max_size=12),
    start=st.integers(-50, 50),
    n_bins=st.integers(2, 12),
)
# a heap leaf [1, 3) that ends inside its coarse bin [1, 17]: [2, 17) was
# marked split (found by hypothesis)
@example(widths=[1, 2, 15], counts=[0, 1, 0.5] + [0.0] * 9, start=0, n_bins=2)
def test_split_heavy_leaves_keeps_the_coarse_edges_valid(widths, counts, start, n_bins):
    """Whatever the noisy counts: the split edges are increasing integers,
    contain every coarse edge, and each split bin is one integer wide (the
    closed last bin two at most), so the encoder's bins stay valid; a split
    closed last bin holds one integer inside the cap (the edges go one past
    the coarse ones to give it that: ``_own_last_integers``)."""
    edges = np.cumsum([start, *widths]).astype(float)
    h = _hist(edges, counts[: len(widths)])
    if not (h.counts > 0).any():
        return
    cuts = coarse_edges(h, n_bins)
    out, split = split_heavy_leaves(h, cuts, n_bins)
    assert out == sorted(set(out))
    assert set(cuts) <= set(out)
    top = len(out) - 2
    assert out[0] == cuts[0]
    assert out[-1] == cuts[-1] or (out[-1] == cuts[-1] + 1.0 == h.bounds[1])
    if top in split:
        assert out[-2] >= h.bounds[1] - 1.0  # [out[-2], out[-1]]: one inside
    assert all(float(v).is_integer() for v in out)
    for k in split:
        assert 0 <= k < len(out) - 1
        assert out[k + 1] - out[k] == 1.0 or (
            k == len(out) - 2 and out[k + 1] - out[k] <= 2.0
        )


def test_train_synthetic_test_real_multiclass_is_macro_one_vs_rest():
    """A target of several levels was scored by the AUC of its last level in
    sorted order alone (a rare carrier: 0.44, read as a failure): now the
    macro one-vs-rest AUC,
    and a binary target names its positive level."""
    from skdp_synth.report import train_synthetic_test_real

    rng = np.random.default_rng(6)
    x = rng.normal(size=900)
    df = pd.DataFrame({"x": x})
    df["y"] = np.select([x < -0.5, x < 0.5], ["a", "b"], "c")
    out = train_synthetic_test_real(df.iloc[:450], df.iloc[450:], "y")
    assert out["metric"] == "auc-ovr" and "positive" not in out
    assert 0.9 < out["synthetic"] <= 1.0 and 0.9 < out["real"] <= 1.0
    # a level the synthetic rows lack still gets a score (probability 0)
    few = df.iloc[:450][df.iloc[:450]["y"] != "c"]
    assert 0.5 < train_synthetic_test_real(few, df.iloc[450:], "y")["synthetic"] <= 1
    df["y"] = np.where(x > 0, "yes", "no")
    assert (
        train_synthetic_test_real(df.iloc[:450], df.iloc[450:], "y")["positive"]
        == "yes"
    )


def test_train_synthetic_test_real_compares_like_with_like():
    """The "real" reference was a model fitted on the first half of the
    held-out rows: fewer rows, split by position, so synthetic rows often
    "beat" it (credit .788 against .763, while the real training rows give
    .824). ``real_train=`` gives the
    like-for-like reference; without it the halves are random."""
    from skdp_synth.report import train_synthetic_test_real

    rng = np.random.default_rng(0)
    n = 2000
    x = rng.normal(size=n)
    df = pd.DataFrame(
        {"x": x, "z": rng.normal(size=n), "y": x + 0.5 * rng.normal(size=n)}
    )
    train, held = df.iloc[:1500], df.iloc[1500:]
    out = train_synthetic_test_real(train, held, "y", real_train=train)
    assert out["reference"] == "real_train"
    assert out["real"] == out["synthetic"]  # the same rows: the same model
    # sorted by the target, the first half of the held-out rows cannot
    # predict the second; random halves can
    ranked = held.sort_values("y")
    half = train_synthetic_test_real(train, ranked, "y")
    assert half["reference"] == "half of real" and half["real"] > 0.5


def test_a_wide_noise_leaf_at_the_core_end_is_trimmed():
    """Flights' ``arr_delay`` (at most 931; ``bench_mixed.py`` seed 2, b =
    41.7): the max-sum core took in ``[1025, 4096)`` with 84 noisy rows, none
    real (just over ``2 b``), so the cap stayed at 4096 and the rows' std came
    back 1.9 times the real one. An outermost core leaf wider than ``GAP_T``
    in ``t`` must hold more than ``CORE_WIDE_SCALES b``."""
    from skdp_synth.preprocessing._numeric_domain import (
        CORE_WIDE_SCALES,
        GAP_T,
        _t,
        kept_counts,
    )

    b = 125.0 / 3.0
    body = [-66.0, -32.0, -16.0, -8.0, -4.0, -2.0, 0.0, 2.0, 4.0, 8.0, 16.0]
    edges = np.array(body + [32.0, 64.0, 128.0, 256.0, 1025.0, 4096.0, 65536.0])
    edges = np.append(edges, [2.0**20, 2.0**24])
    raw = np.full(edges.size - 1, 2000.0)
    far = {1025.0: 83.8, 4096.0: -24.6, 65536.0: -264.7, 2.0**20: 0.8}
    for lo, v in far.items():
        raw[np.flatnonzero(edges[:-1] == lo)[0]] = v
    j = np.flatnonzero(edges[:-1] == 1025.0)[0]
    assert 2 * b < raw[j] <= CORE_WIDE_SCALES * b  # in the max-sum core
    assert _t(edges[j + 1]) - _t(edges[j]) > GAP_T
    out, (lo, hi) = kept_counts(edges, raw, b, np.zeros(raw.size, dtype=bool))
    assert out[j] == 0.0 and not out[j:].any()
    assert hi <= 1025.0
    assert (out[: j - 1] == raw[: j - 1]).all()  # the body is untouched
    # a leaf that holds more than CORE_WIDE_SCALES b stays (credit's Debt:
    # [1025, 4096) with 290 noisy rows)
    raw[j] = CORE_WIDE_SCALES * b + 1.0
    out, (lo, hi) = kept_counts(edges, raw, b, np.zeros(raw.size, dtype=bool))
    assert out[j] == raw[j] and hi == 4096.0


def test_a_core_of_wide_weak_leaves_only_is_left_whole():
    """Where every leaf of the core is wide and weak, none is better
    evidence than another: the trim keeps the core (it kept its lowest leaf,
    by position: the top of a column was lost)."""
    from skdp_synth.preprocessing._numeric_domain import (
        CORE_WIDE_SCALES,
        _trim_wide_ends,
    )

    b = 40.0
    counts = np.array([0.0, 3.0 * b, 3.5 * b, 3.0 * b, 0.0])
    width = np.array([4.0, 2.0, 2.0, 2.0, 4.0])
    assert (counts[1:4] <= CORE_WIDE_SCALES * b).all()
    assert _trim_wide_ends(1, 3, counts, width, b) == (1, 3)
    counts[2] = CORE_WIDE_SCALES * b + 1.0  # one strong leaf: the core is it
    assert _trim_wide_ends(1, 3, counts, width, b) == (2, 2)
    width[1] = 0.5  # a narrow leaf is never trimmed
    assert _trim_wide_ends(1, 3, counts, width, b) == (1, 2)


def test_a_wide_core_end_past_a_weak_leaf_is_tentative():
    """Baseball's ``sh`` (sacrifice hits, at most 52; ε = 1, seed 3 of
    ``python -m benchmarks.bench_suite --half tune``): the max-sum core ran
    across ``[32, 65)`` (69.2 noisy rows, under ``2 b``) to ``[65, 256)``
    (303.5, over ``CORE_WIDE_SCALES b``, no real row), and 224 rows came back
    at 65-255 (std ratio 3.47) without a warning. Such an end is tentative,
    with everything beyond it: its coarse bin is its own, and a pipeline
    keeps it only where the release supports it (``TENTATIVE_SUPPORT_Z``).
    The test fails where the leaf is kept as settled (before this rule)."""
    from skdp_synth.preprocessing._numeric_domain import (
        CORE_WIDE_SCALES,
        GAP_T,
        _kept_counts,
        _t,
    )

    b = 600.0 / 11.0  # 54.5
    edges = np.array(
        [0.0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 16, 22, 26, 32, 65, 256, 4096, 65536]
    )
    raw = np.array(
        [5783.7, 2059.3, 1424.1, 1141.6, 947.2, 757.4, 602.8, 512.9, 350.2]
        + [555.4, 691.8, 264.0, 159.2, 94.1, 69.2, 303.5, -31.0, 12.0]
    )
    finest = np.diff(edges) == 1.0
    j = int(np.flatnonzero(edges[:-1] == 65.0)[0])
    strict = b * np.log(raw.size / 0.01)
    assert CORE_WIDE_SCALES * b < raw[j] <= strict and raw[j - 1] <= 2.0 * b
    assert _t(edges[j + 1]) - _t(edges[j]) > GAP_T
    out, cap, tentative = _kept_counts(edges, raw, b, finest, integer=True)
    assert out[j] > 0.0  # kept, as before ...
    assert tentative[j] and not tentative[:j].any()  # ... on probation
    hist = FineHistogram(edges, out, 0.0, finest, True, cap, True, b, tentative)
    coarse = coarse_edges(hist, 10)
    assert hist.tentative_bins(coarse) == [len(coarse) - 2]  # its own last bin
    assert coarse[-2] == 65.0

    # past a leaf above 2 b the end is settled ...
    strong = raw.copy()
    strong[j - 1] = 2.0 * b + 1.0
    _, _, tentative = _kept_counts(edges, strong, b, finest, integer=True)
    assert not tentative.any()
    # ... and so is an end above the strict b ln(L / 0.01)
    strong = raw.copy()
    strong[j] = strict + 1.0
    out, _, tentative = _kept_counts(edges, strong, b, finest, integer=True)
    assert out[j] == strong[j] and not tentative.any()


# ------------------------------------------- skewed and zero-inflated columns
def _zero_inflated(n=3600, zeros=0.37, seed=0):
    """A float column like credit's ``Assets``: a point mass at 0, the rest
    log-normal around 5,000 (float64, as a column with missing values is)."""
    rng = np.random.default_rng(seed)
    x = rng.lognormal(8.5, 1.0, n).round()
    x[rng.random(n) < zeros] = 0.0
    return x


def test_a_float_grid_has_a_public_resolution_floor_near_zero():
    """No leaf of a float column's fine grid near 0 is narrower than
    ``2^-10`` (``RES_FLOOR``), and ``[0, 2^-10)`` is a finest leaf: the
    symmetric-log grid had ever finer leaves near 0, and credit's ``Assets``
    kept ``[0, 0.0027)`` as its only leaf (every value decoded near 0.003).
    At credit's per-column budget (ε = 1/35)."""
    x = _zero_inflated()
    for seed in range(6):
        h = privtree_histogram(x, 1 / 35, NoiseSource(seed))
        near0 = (np.abs(h.edges[:-1]) < 1) | (np.abs(h.edges[1:]) < 1)
        assert np.diff(h.edges)[near0].min() >= 2.0**-10 * (1 - 1e-12)
        j = int(np.searchsorted(h.edges, 0.0, "right")) - 1
        assert h.edges[j] == 0.0 and h.finest[j]
    # a declared root narrower than 2^20 floors scales the floor down
    from skdp_synth.preprocessing._natural_limits import resolution_floor

    assert resolution_floor(False) == 2.0**-10
    assert resolution_floor(True) == 1.0
    assert resolution_floor(False, (0.0, 1e-3)) == pytest.approx(1e-3 * 2.0**-20)


def test_a_point_mass_at_zero_is_kept_with_the_rest_of_the_column():
    """A zero-inflated float column keeps its 0 as a leaf of its own, with
    about its share of the mass, and its positive body (bounds past 1,000),
    never a value below 0: 12 fits at credit's per-column budget."""
    x = _zero_inflated()
    for seed in range(12):
        h = privtree_histogram(x, 1 / 35, NoiseSource(seed))
        lo, hi = h.bounds
        assert lo >= 0.0 and hi > 1000.0, (seed, lo, hi)
        j = int(np.searchsorted(h.edges, 0.0, "right")) - 1
        assert 0.25 < h.counts[j] / h.counts.sum() < 0.5


def test_a_point_mass_at_a_natural_limit_is_not_crossed_on_noise():
    """Leaves beyond an outermost point mass (a share's 100) whose pooled
    noisy count is under ``b ln(L / 0.01)`` are dropped, though each passed
    growth's ``2 b``; a real range beyond it stays."""
    from skdp_synth.preprocessing._numeric_domain import kept_counts

    edges = np.array([40, 60, 80, 100, 101, 110, 128], float)
    finest = np.array([0, 0, 0, 1, 0, 0], bool)
    raw = np.array([300, 300, 300, 1700, 70, 75], float)
    out, (_, hi) = kept_counts(edges, raw, 30.0, finest, integer=True)
    assert hi <= 101 and (out[4:] == 0).all()
    raw = np.array([300, 300, 300, 1700, 300, 300], float)
    out, (_, hi) = kept_counts(edges, raw, 30.0, finest, integer=True)
    assert hi > 101 and (out[4:] > 0).all()


def test_no_coarse_bin_ends_inside_its_noise():
    """Every coarse bin but a point mass's or a tentative run's holds at
    least ``COARSE_NOISE_Z = 2`` sds of its noise ``b sqrt(2 m)`` (doc/
    privacy/encoder.md, "Coarse bins above their noise")."""
    from skdp_synth.preprocessing import _coarse_bins

    assert _coarse_bins.COARSE_NOISE_Z == 2.0
    rng = np.random.default_rng(3)
    x = rng.lognormal(3.0, 1.5, 1500)
    for seed in range(8):
        h = privtree_histogram(x, 0.05, NoiseSource(seed))
        cuts = coarse_edges(h, 20)
        tentative = h.tentative_bins(cuts)
        total = h.counts.sum()

        def heavy(a, b, h=h, total=total):  # one leaf, > 1/20 of the mass
            inside = (h.edges[:-1] >= a) & (h.edges[1:] <= b) & (h.counts > 0)
            return inside.sum() == 1 and h.counts[inside].sum() > total / 20

        for k, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
            beside = [cuts[i : i + 2] for i in (k - 1, k + 1) if 0 <= i < len(cuts) - 1]
            if k in tentative or all(heavy(*ab) for ab in beside):
                continue  # nothing it may merge with
            inside = (h.edges[:-1] >= a) & (h.edges[1:] <= b) & (h.counts > 0)
            m = max(int(inside.sum()), 1)
            mass = h.counts[inside].sum()
            atom = m == 1 and bool(h.finest[inside].all())
            assert atom or mass >= 2.0 * h.scale * np.sqrt(2.0 * m) - 1e-9


# independent columns: auto may measure the 1-way tables alone and say so
@pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.IndependentColumnsWarning")
# another column's truthful warning is not under test: at seed 5 a normal
# column's released top bin holds rows past its cap (c0: 227 ± 34 rows where
# its domain kept 12; named since auto's AIM joins its columns, which moved
# the draws after its rounds)
@pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.DegenerateColumnWarning")
def test_a_tentative_tail_is_kept_only_where_the_release_supports_it():
    """A zero-inflated column whose tail fails the jump's level but passes
    ``TENTATIVE_LEVEL`` gets its tail's bins in ``spec.split``; the pipeline
    drops exactly those its release does not support (a tentative bin under
    ``TENTATIVE_SUPPORT_Z`` sds, a split heap's under ``LEVEL_SUPPORT_Z``),
    and a tail of 18 %
    of the rows (credit's ``Debt``) comes back: 6 fits at ε = 1 with 13
    numeric columns sharing the domain budget."""
    from skdp_synth._pipeline_levels import TENTATIVE_SUPPORT_Z, _floor_parts
    from skdp_synth.gaussian_release._release import LEVEL_SUPPORT_Z

    rng = np.random.default_rng(0)
    n = 3600
    debt = np.where(rng.random(n) < 0.18, rng.lognormal(7.0, 1.0, n).round(), 0.0)
    df = pd.DataFrame({"debt": debt} | {f"c{i}": rng.normal(size=n) for i in range(8)})
    kept = 0
    for seed in range(6):
        pipe = make_synthesis_pipeline(
            BooleanEncoder(random_state=seed),
            ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=seed),
        ).fit(df)
        spec = next(sp for sp in pipe[0].specs_ if sp.name == "debt")
        rel = pipe[-1]
        j = [str(x) for x in rel.blocks_.names].index("debt")
        dropped = pipe.integer_bins_dropped_.get("debt", [])
        tentative = spec.fine.tentative_bins(spec.levels)
        # the 0s' floor cell's outer part is tested at the stricter z too
        tentative = set(tentative) | _floor_parts(spec)
        for b in spec.split:
            est, sd = rel._one_way_level_estimate(j, b)
            z = TENTATIVE_SUPPORT_Z if b in tentative else LEVEL_SUPPORT_Z
            assert (spec.levels[b] in dropped) == (est < z * sd)
        syn = pipe.sample(n, random_state=seed)["debt"]
        assert syn.min() >= 0.0
        kept += bool((syn > 100).mean() > 0.05)
    assert kept == 6


def test_a_finest_decimal_leaf_is_not_decoded_at_its_edge():
    """A finest float leaf decodes to its edge nearer 0 only where that edge
    is a whole number (a point mass at 0, 100, a whole amount); a decimal
    column in finest leaves (a decimal year, 2016.6-2017.7) decoded every row
    at a leaf edge (KS .48 on hotel_rates' ``arrival_date_num``)."""
    edges = np.array([-1.0, 0.0, 2.0**-10, 2016.6, 2017.1, 2017.6, 4096.0])
    counts = np.array([0.0, 100.0, 0.0, 500.0, 500.0, 0.0])
    finest = np.array([False, True, False, True, True, False])
    h = FineHistogram(edges, counts, 0.0, finest, False, (0.0, 2017.6), True, 10.0)
    n = 2000
    rng = np.random.default_rng(0)
    v = decode_fine(h, np.full(n, 2016.6), np.full(n, 2017.6), np.ones(n, bool), rng)
    assert v.min() >= 2016.6 and v.max() <= 2017.6
    assert np.unique(v).size > 100  # spread inside the leaves
    z = decode_fine(h, np.full(n, 0.0), np.full(n, 2.0**-10), np.zeros(n, bool), rng)
    assert (z == 0.0).all()  # the floor cell at 0: exactly 0


def _floor_cell_count(n_zeros, noise_factor, seed):
    x = np.r_[np.full(200, 1.0), np.zeros(n_zeros)]
    h = privtree_histogram(
        x, 1.0, NoiseSource(seed), tree_share=1e-3, noise_factor=noise_factor
    )
    return float(h.counts[int(np.searchsorted(h.edges, 0.0, "right")) - 1])


@pytest.mark.parametrize("noise_factor, flagged", [(1.0, False), (0.5, True)])
def test_audit_of_the_floor_cell_near_zero(noise_factor, flagged):
    """The floor cell ``[0, 2^-10)`` is one more cell of the same fine
    histogram (a row is in one cell), so the column's ε is unchanged:
    Clopper-Pearson audit at alpha = 0.05 on neighbours that differ by one
    exact 0 of a float column; the planted half-noise estimator is caught."""
    a = [_floor_cell_count(100, noise_factor, s) for s in range(3000)]
    b = [_floor_cell_count(101, noise_factor, 10**6 + s) for s in range(3000)]
    r = audit_epsilon(a, b, alpha=0.05)
    assert (r.epsilon_lower > 1.0) is flagged


def _cycle_threshold_seed_0():
    """covid_testing's ``ct_result`` (a test's cycle threshold; 94 % of the
    rows at 45, the positives at 14-43) at ε = 1, seed 0 of
    ``python -m benchmarks.bench_suite --half report --tables covid_testing``
    (b = 41.7): the leaves around the heap at 45 are narrow, and the
    positives' leaves ``[16, 38.7)`` (4.5, 6.4 and 2.6 ``b``) are wide beside
    them. Returns the index of the heap's leaf too."""
    negative = -(2.0 ** np.arange(40, 0, -2))  # 20 empty leaves below 0
    edges = np.array(
        [
            *negative,
            -1.0,
            0.0,
            1.0,
            16.0,
            22.872,
            32.521,
            38.723,
            42.241,
            44.116,
            44.597,
            44.839,
            44.961,
            44.991,
            44.999,
            45.001,
            45.003,
            45.007,
            45.022,
            45.083,
            46.071,
            65.098,
            128.0,
        ]
    )
    per_b = [0.0] * 21 + [
        -0.34,
        -1.26,
        4.52,
        6.42,
        2.64,
        1.04,
        0.03,
        -1.17,
        0.35,
        1.19,
        0.66,
        -2.52,
        276.48,
        -2.0,
        1.68,
        2.52,
        2.22,
        3.18,
        -1.01,
        0.2,
    ]
    b = 125.0 / 3.0
    raw = np.asarray(per_b) * b
    finest = np.zeros(raw.size, dtype=bool)
    a = 21 + 12
    finest[a] = True
    return edges, raw, finest, b, a


def test_the_jump_searches_the_leaves_growth_passed_over():
    """Growth from a heap stops at a run of failing leaves wider than
    ``GAP_T``; a leaf past ``2 b`` fails there too when it is ``WIDE_RATIO``
    times wider than the heap's leaf. The jump searched only the leaves past
    the end of that run, so such leaves inside it were weighed by no test:
    covid_testing's ``ct_result`` (:func:`_cycle_threshold_seed_0`) kept
    only its heap at 45, the positives' 5.6 % of the rows were clamped into
    the heap's coarse bin, and the release measured nothing of how they
    depend on the test's result. The jump's search starts at the first leaf
    growth passed over past ``2 b`` (``[32.5, 38.7)``): ``[16, 38.7)``
    passes its threshold, ``b ln(L / 0.01) + 2 b sqrt(2 m)`` with ``L`` the
    26 leaves searched. Where no leaf of the gap passes ``2 b`` the search
    starts past the gap, as before."""
    from skdp_synth.preprocessing import _numeric_domain as nd

    edges, raw, finest, b, a = _cycle_threshold_seed_0()
    width = np.diff(nd._t(edges))
    strict = b * math.log(raw.size / 0.01)
    body = slice(a - 10, a - 7)  # [16, 22.9), [22.9, 32.5), [32.5, 38.7)
    # each positive leaf is wide beside the heap and under ``strict``; the
    # nearest, [32.5, 38.7), passes 2 b, the leaves between it and the heap
    # do not
    assert (width[body] > nd.WIDE_RATIO * width[a]).all()
    assert (raw[body] < strict).all()
    assert raw[a - 8] > 2 * b and (raw[a - 7 : a] < 2 * b).all()
    # the failing run is wider than GAP_T only with [16, 22.9)
    assert width[a - 9 : a].sum() <= nd.GAP_T < width[a - 10 : a].sum()
    need = b * math.log((a - 7) / 0.01) + 2 * b * math.sqrt(2 * 3)
    assert raw[body].sum() > need
    out, (lo, hi) = nd.kept_counts(edges, raw, b, finest)
    np.testing.assert_array_equal(out[body], raw[body])
    assert lo == 16.0
    assert out[a] == raw[a]
    # with no leaf of the gap past 2 b, the search starts at [16, 22.9),
    # where no run passes even the tentative level: the heap alone
    raw[a - 9 : a - 7] = 1.9 * b
    out, (lo, hi) = nd.kept_counts(edges, raw, b, finest)
    assert not out[: a - 1].any()
    assert lo > 44.9
