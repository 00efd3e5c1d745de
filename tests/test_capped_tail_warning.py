"""The warning for rows past a numeric column's cap: the release's top
coarse bin against the domain's kept mass in it
(``_fences.capped_tail_reason``, through ``degenerate_reasons``;
benchmarks/results/bench_capped_tail.md)."""

import numpy as np

from skdp_synth.preprocessing._column_spec import _ColumnSpec
from skdp_synth.preprocessing._decoding import degenerate_reasons
from skdp_synth.preprocessing._fences import CAPPED_TAIL_Z, capped_tail_reason
from skdp_synth.preprocessing._numeric_domain import FineHistogram

B = 42.0


def _spec(top_kept=13.0, integer=True):
    """credit's ``Debt`` at ε = 1, seed 10 of ``bench_suite``: a kept range
    0-3 (3,015 zeros, 110 at 1, 13 at 2-3) while 18 % of the rows lie past
    it, up to 30,000."""
    edges = np.array([0.0, 1.0, 2.0, 4.0, 16.0, 256.0])
    counts = np.array([3015.0, 110.0, top_kept, 0.0, 0.0])
    hist = FineHistogram(
        edges,
        counts,
        0.0,
        np.array([1, 1, 0, 0, 0], bool),
        integer,
        (0.0, 4.0),
        True,
        B,
    )
    spec = _ColumnSpec("Debt", "numeric", [0.0, 1.0, 2.0, 3.0], False, np.dtype(float))
    spec.integer = integer
    spec.fine = hist
    return spec


def test_threshold_pinned():
    assert CAPPED_TAIL_Z == 3.0


def test_rows_past_the_cap_are_named():
    # the release: 595 ± 37.6 rows in the top bin [2, 3]; the domain kept 13
    spec = _spec()
    estimates = [(2967.5, 37.6), (-14.3, 37.6), (595.1, 37.6)]
    text = capped_tail_reason(spec, estimates)
    assert text is not None and "past the cap" in text and "bounds=" in text
    assert any(
        "past the cap" in r
        for r in degenerate_reasons(spec, estimates, 3563.0, None, False)
    )


def test_within_the_noise_is_not_named():
    # an excess of 3 sds of sqrt(σ² + 2 m b²) (m = 1) is not enough
    spec = _spec()
    sd = 37.6
    noise = float(np.sqrt(sd**2 + 2.0 * B**2))
    top = 13.0 + CAPPED_TAIL_Z * noise - 1.0
    estimates = [(2967.5, sd), (110.0, sd), (top, sd)]
    assert capped_tail_reason(spec, estimates) is None
    assert capped_tail_reason(spec, estimates[:2] + [(top + 2.0, sd)]) is not None


def test_closed_last_bin_of_an_integer_column():
    # the kept leaf [2, 4) overlaps the closed bin [2, 3]: its mass counts
    spec = _spec(top_kept=600.0)
    assert (
        capped_tail_reason(spec, [(2967.5, 37.6), (110.0, 37.6), (595.1, 37.6)]) is None
    )


def test_nothing_without_release_estimates():
    assert capped_tail_reason(_spec(), None) is None


def test_a_moderate_share_past_the_cap_is_not_named():
    # a normal column's fence at 1.3 sds: 227 rows past the cap against 268
    # kept in the top bin, 5.7 sds but under twice the kept mass
    spec = _spec(top_kept=268.0)
    estimates = [(2967.5, 27.0), (110.0, 27.0), (495.0, 27.0)]
    assert capped_tail_reason(spec, estimates) is None
    estimates[-1] = (268.0 * 3 + 1.0, 27.0)
    assert capped_tail_reason(spec, estimates) is not None


def test_not_for_a_date_time_column():
    spec = _spec()
    spec.time_unit = "s"
    assert (
        capped_tail_reason(spec, [(2967.5, 37.6), (-14.3, 37.6), (595.1, 37.6)]) is None
    )


def _credit_limit(filled):
    """openintro ``loans_full_schema``'s ``total_credit_limit`` at ε = 0.3,
    seed 3 of ``benchmarks.bench_suite --light``: 46 % of the rows past a
    cap at 131,072. The domain kept 1,205 noisy rows in the top bin
    ``[65536, 131071]`` (three of its five leaves emptied); the release
    measured 5,288 ± 186 there, and a pipeline filled the three emptied
    leaves with the 4,083 short (``_bin_mass.fill_emptied_leaves``)."""
    edges = np.array([16385.0, 32769, 65536, 77935, 92681, 101069, 110217, 131072])
    fill = 1361.1 if filled else 0.0
    counts = np.array([1725.0, 3895.1, fill, fill, fill, 473.0, 732.1])
    hist = FineHistogram(
        edges,
        counts,
        0.0,
        np.zeros(7, bool),
        True,
        (16385.0, 131072.0),
        True,
        323.2,
    )
    spec = _ColumnSpec(
        "total_credit_limit",
        "numeric",
        [16385.0, 32769.0, 65536.0, 131071.0],
        False,
        np.dtype(float),
    )
    spec.integer = True
    spec.fine = hist
    return spec


LIMIT_ESTIMATES = [(737.6, 185.7), (2034.6, 185.7), (5288.5, 185.7)]


def test_the_domains_own_kept_mass_not_the_filled_one():
    """Read after the fill, the top bin's kept mass is the release's own
    estimate and nothing is named (the parent's behaviour: std ratio 0.14,
    silent); against the domain's released histogram the excess is 4,083
    rows, 11 sds and 3.4 times the kept 1,205."""
    filled, domain = _credit_limit(True), _credit_limit(False).fine
    assert capped_tail_reason(filled, LIMIT_ESTIMATES) is None
    text = capped_tail_reason(filled, LIMIT_ESTIMATES, domain)
    assert text is not None and "past the cap 131071" in text
    reasons = degenerate_reasons(
        filled, LIMIT_ESTIMATES, 8000.0, None, False, domain=domain
    )
    assert any("past the cap" in r for r in reasons)


def test_a_pipeline_tests_the_domain_before_its_leaves_are_filled(monkeypatch):
    """``SynthesisPipeline`` hands ``degenerate_reasons`` each numeric
    column's fine histogram as the encoder released it, not the one
    ``_reconcile_leaves`` filled from the release (here every fill doubles
    the counts, so the two differ)."""
    import dataclasses
    import warnings

    import pandas as pd

    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder, _bin_mass, _decoding

    def doubled(hist, edges, estimates):
        return dataclasses.replace(hist, counts=2.0 * np.asarray(hist.counts))

    seen = {}
    real = _decoding.degenerate_reasons

    def spy(spec, *args, domain=None, **kwargs):
        seen[spec.name] = (domain, spec.fine)
        if domain is not None:
            kwargs["domain"] = domain
        return real(spec, *args, **kwargs)

    monkeypatch.setattr(_bin_mass, "fill_emptied_leaves", doubled)
    monkeypatch.setattr(_decoding, "degenerate_reasons", spy)
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {"x": rng.lognormal(5.0, 1.0, 2000), "c": rng.integers(0, 3, 2000)}
    )
    df["c"] = df["c"].astype(str)
    pipe = make_synthesis_pipeline(
        BooleanEncoder(epsilon="auto", random_state=0),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(df)
    domain, filled = seen["x"]
    assert domain is not None
    np.testing.assert_allclose(2.0 * np.asarray(domain.counts), filled.counts)


# loanapp's ``review`` (scores 0-15, 11 % of its rows at the code 999) at
# ε = 1, seed 0 of ``python -m benchmarks.bench_suite --half tune --tables
# loanapp``: the kept leaves up to the cap 8 (the last one, ``[4, 8)``,
# reaching across the one-integer top bin's inner edge 7), the noisy counts
# past the cap (the 999s in ``[512, 1025)``, 3.7 ``b``; the others made up
# within the noise) and the release's estimates of the bins 0 .. [7, 8].
REVIEW_EDGES = [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1025, 2049]
REVIEW_RAW = [150.8, 641.5, 692.5, 119.9, -20.0, 10.0, -30.0, 5.0, -15.0, 20.0]
REVIEW_RAW += [178.9, -40.0]
_SD = 64.5
REVIEW_ESTIMATES = [(-9.2, _SD), (661.7, _SD), (417.6, _SD), (299.8, _SD)]
REVIEW_ESTIMATES += [(107.2, _SD), (-23.7, _SD), (-20.7, _SD), (232.8, _SD)]


def _review():
    from dataclasses import replace
    from types import SimpleNamespace

    edges = np.asarray(REVIEW_EDGES, dtype=np.float64)
    raw = np.asarray(REVIEW_RAW, dtype=np.float64)
    counts = np.where(edges[1:] <= 8.0, raw, 0.0)
    hist = FineHistogram(
        edges, counts, 0.0, np.diff(edges) <= 1.0, True, (0.0, 8.0), True, 48.5
    )
    hist = replace(hist, raw=raw)
    spec = SimpleNamespace(
        kind="numeric", name="review", levels=[float(v) for v in range(9)],
        n_levels=8, fine=hist, missing=False, time_unit=None,
    )  # fmt: skip
    return hist, spec


def test_a_leaf_across_the_top_bins_inner_edge_counts_its_share(monkeypatch):
    """The top bin ``[7, 8]`` holds the part of the leaf ``[4, 8)`` from 7
    on, 0.20 of its width in ``t``, not the whole leaf: the release's 232.8
    ± 64.5 rows there exceed that part (24.0) by 3.2 sds, and the column is
    named. Read whole (119.9), the excess was 1.2 sds: the 999s came back
    as 7, and no warning named the column. The placement past the cap reads
    whole leaves (``_fences.SPLIT_STRADDLING_LEAVES``), so the rows stay
    in the bin."""
    import pytest

    from skdp_synth.preprocessing import _fences
    from skdp_synth.preprocessing._fences import top_bin_excess
    from skdp_synth.preprocessing._tail_past_cap import place_capped_tail

    hist, spec = _review()
    share = (np.log2(9.0) - np.log2(8.0)) / (np.log2(9.0) - np.log2(5.0))
    *_, kept, noise, excess = top_bin_excess(spec, REVIEW_ESTIMATES)
    assert kept == pytest.approx(share * 119.9, rel=1e-12)
    assert noise == pytest.approx(np.sqrt(64.5**2 + 2 * share**2 * 48.5**2), rel=1e-12)
    assert excess / noise > CAPPED_TAIL_Z
    assert "where its domain kept 24" in capped_tail_reason(spec, REVIEW_ESTIMATES)
    reasons = degenerate_reasons(spec, REVIEW_ESTIMATES, 1591.0, None, False)
    assert any("lie past the cap 8" in r for r in reasons)
    assert place_capped_tail(hist, spec.levels, REVIEW_ESTIMATES) is hist
    # the whole leaf read as the bin's (the rule before): silent
    monkeypatch.setattr(_fences, "SPLIT_STRADDLING_LEAVES", False)
    assert capped_tail_reason(spec, REVIEW_ESTIMATES) is None


def test_a_leaf_past_the_cap_counts_whole():
    """A leaf that the cap cuts (a fence inside it) counts whole in the top
    bin, whose rows the encoder clips there from past the cap; only the
    bin's inner edge cuts a leaf's share."""
    from skdp_synth.preprocessing._fences import leaf_shares

    edges = [0.0, 4.0, 16.0, 40.0]
    assert np.array_equal(leaf_shares(edges, 16.0, 28.0), [0.0, 0.0, 1.0])
    assert np.array_equal(leaf_shares(edges, 0.0, 28.0), [1.0, 1.0, 1.0])
    part = leaf_shares(edges, 10.0, 28.0)
    assert part[0] == 0.0 and part[2] == 1.0
    assert (
        abs(part[1] - (np.log2(17.0) - np.log2(11.0)) / (np.log2(17.0) - np.log2(5.0)))
        < 1e-12
    )


def _far_codes(seed=0, n=1500):
    """A body near 20 (log-normal) and 10 % of the rows at 1,000-2,000, as
    codes or a far cluster: the rows past a private cap far from the body."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    body = np.round(np.exp(rng.normal(3.0, 0.5, n)))
    far = rng.integers(1000, 2001, n)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "tail": np.where(rng.random(n) < 0.1, far, body).astype("int64"),
        }
    )


def test_the_advice_for_rows_past_the_cap_is_public_bins():
    """Both upper-cap warnings advise ``bin_edges=``, not ``bounds=``: a
    declared bound leaves the cap inside it private. Measured on
    :func:`_far_codes` (1,500 rows, ε = 1, seeds 0-3): of the 154-161 rows
    past 500, none came back with ``bounds={"tail": (None, 2000)}`` (a
    private cap near 64, std ratio 0.03) nor with ``(0, 2000)``, and 146-170
    did with ``bin_edges=`` doubling from 5 to 1,280 and 2,000 (std ratios
    0.93-0.99)."""
    import warnings

    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    # the count-tail warning's words: tests/test_count_columns.py
    text = capped_tail_reason(_spec(), [(2967.5, 37.6), (-14.3, 37.6), (595.1, 37.6)])
    assert "declare public bins, bin_edges=" in text
    assert "bounds= alone leaves the cap inside them private" in text

    df = _far_codes()
    real = int((df["tail"] > 500).sum())
    edges = [0, 5, 10, 20, 40, 80, 160, 320, 640, 1280, 2000]
    past, named = {}, {}
    for name, kw in (
        ("bounds", {"bounds": {"tail": (None, 2000)}}),
        ("bin_edges", {"bin_edges": {"tail": edges}}),
    ):
        pipe = make_synthesis_pipeline(
            BooleanEncoder(random_state=0, **kw),
            ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe.fit(df)
        past[name] = int((pipe.sample(len(df), random_state=0)["tail"] > 500).sum())
        named[name] = "tail" in pipe.degenerate_columns_
    assert real == 154
    assert past["bounds"] == 0  # the cap inside the bound held them back
    # and said so: far past the cap (far_past_cap; silent before at 0-3)
    assert named == {"bounds": True, "bin_edges": False}
    # the declared bins' counts are the release's (noise sd about 15 rows
    # per bin here): within 4 of those sds of the real rows past 500
    assert abs(past["bin_edges"] - real) < 4 * 2 * 15


def _far_past(window_raw, top=196.4, levels=(16.0, 32.0, 44.0)):
    """:func:`_far_codes` as at seed 1 with ``bounds={"tail": (None,
    2000)}``: the top bin ``[32, 44]`` (one kept leaf ``[32, 45)``, ``top``
    rows) measured at 404.8 ± 14.8 rows; ``window_raw``: the raw noisy
    counts of the leaves ``[45, 66)``, ``[66, 128)``, ``[128, 256)`` past
    the cap, each starting inside the window ``[45, 183)``; ``[716, 1197)``
    at 38.1."""
    from dataclasses import replace

    edges = np.array([16.0, 32.0, 45.0, 66.0, 128.0, 256.0, 716.0, 1197.0, 2001.0])
    raw = np.array([900.0, top, *window_raw, -5.0, 38.1, 20.0])
    counts = np.where(edges[1:] <= 45.0, raw, 0.0)
    hist = FineHistogram(
        edges, counts, 0.0, np.zeros(8, bool), True, (16.0, 45.0), True, 16.67
    )
    spec = _ColumnSpec("tail", "numeric", list(levels), False, np.dtype(float))
    spec.integer = True
    spec.fine = replace(hist, raw=raw)
    return spec, [(900.0, 14.8), (404.8, 14.8)]


def test_rows_far_past_the_cap_are_named_under_twice_the_kept_mass():
    """An excess past 3 sds but under twice the bin's kept rows (208.4
    against 196.4) is named where it lies beyond the window of
    ``FAR_PAST_CAP_T`` in ``t`` past the cap: the window's three leaves,
    measured apart, hold 3, -10 and 0 noisy rows, and 208.4 less them
    passes ``FAR_PAST_CAP_Z`` sds of ``sqrt(σ² + 2 b² + 2 m b²)`` (``m =
    3``). Where the window's leaves hold the excess (a tail that continues
    the body), it is not."""
    from skdp_synth.preprocessing._fences import (
        FAR_PAST_CAP_T,
        FAR_PAST_CAP_Z,
        far_past_cap,
        top_bin_excess,
    )

    assert (FAR_PAST_CAP_T, FAR_PAST_CAP_Z) == (2.0, 3.5)
    spec, est = _far_past([3.0, -10.0, 0.0])
    *_, kept, noise, excess = top_bin_excess(spec, est)
    assert kept == 196.4 and excess < 2 * kept and excess > CAPPED_TAIL_Z * noise
    far = excess - (3.0 - 10.0)
    assert far > FAR_PAST_CAP_Z * np.sqrt(noise**2 + 2 * 3 * 16.67**2)
    assert far_past_cap(spec.fine, excess, noise)
    assert "about 208 rows lie past the cap 44" in capped_tail_reason(spec, est)
    near, _ = _far_past([150.0, 60.0, 0.0])  # the excess just past the cap
    assert not far_past_cap(near.fine, excess, noise)
    assert capped_tail_reason(near, est) is None


def test_the_far_rule_reads_a_leaf_across_the_inner_edge_whole():
    """The top bin ``[40, 44]`` under the leaf ``[32, 45)`` (600 noisy
    rows): by its share of the leaf (0.34) the bin kept 204 and the excess
    passes the far test, but a heap at the top of such a leaf holds more
    than its share by width (credit's ``Time``: "977 rows past the cap
    64", where 1 of 3,563 lies). Read whole, the excess is negative: not
    named."""
    from skdp_synth.preprocessing._fences import far_past_cap, top_bin_excess

    spec, est = _far_past([3.0, -10.0, 0.0], top=600.0, levels=(16.0, 40.0, 44.0))
    *_, kept, noise, excess = top_bin_excess(spec, est)
    assert excess < 2 * kept and excess > CAPPED_TAIL_Z * noise
    assert far_past_cap(spec.fine, excess, noise)  # by the leaf's share
    assert top_bin_excess(spec, est, split=False)[6] < 0
    assert capped_tail_reason(spec, est) is None
