"""The private dependence probe of ``selection="auto"`` (``_probe``):
its sensitivity by enumeration, its noise scale and share pinned, and its
accounting inside the release."""

import dataclasses
import itertools
import math

import numpy as np
import pandas as pd
import pytest

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.gaussian_release import _selection as sel
from skdp_synth.gaussian_release._probe import (
    dependence,
    probe_sensitivity,
    probed_terms,
    release_dependence,
    tree_mean,
)
from skdp_synth.gaussian_release._rules import DEFAULT_RULES
from skdp_synth.gaussian_release._selection import gdp_mu_of_pure_dp
from skdp_synth.mechanisms import NoiseSource, analytic_gaussian_sigma
from skdp_synth.preprocessing import BooleanEncoder


def _g(rows, shape, pairs):
    """The probe's mean dependence ``G`` of ``rows`` (tuples of levels)."""
    out = []
    for r in pairs:
        t = np.zeros(tuple(shape[j] for j in r))
        for row in rows:
            t[tuple(row[j] for j in r)] += 1
        out.append(dependence(t.ravel(), t.shape))
    return np.array([sum(out) / len(out), tree_mean(out, pairs)[0]])


@pytest.mark.parametrize("neighbouring", ["add-remove-one", "replace-one"])
def test_probe_sensitivity_holds_over_every_neighbour(neighbouring):
    """``|G(D) - G(D')| <= Δ`` and ``|G_T(D) - G_T(D')| <= Δ`` (2
    add/remove, 3 replace-one) over every neighbour of random small datasets
    of three attributes (all pairs): every added record of the domain, every
    removed or replaced row."""
    rng = np.random.default_rng(0)
    shape = (2, 3, 2)
    domain = list(itertools.product(*(range(k) for k in shape)))
    pairs = list(itertools.combinations(range(3), 2))
    delta = probe_sensitivity(neighbouring)
    worst = 0.0
    for trial in range(150):
        n = int(rng.integers(1, 9))
        rows = [domain[i] for i in rng.integers(0, len(domain), n)]
        if trial % 5 == 0:  # one dominant cell: the product term moves most
            rows = [domain[0]] * n
        g0 = _g(rows, shape, pairs)
        if neighbouring == "add-remove-one":
            near = [rows + [x] for x in domain]
            near += [rows[:i] + rows[i + 1 :] for i in range(n)]
        else:
            near = [rows[:i] + [x] + rows[i + 1 :] for i in range(n) for x in domain]
        worst = max(worst, max(np.abs(_g(d, shape, pairs) - g0).max() for d in near))
    assert worst <= delta + 1e-12
    # the bounds are not loose by more than half (what enumeration reaches)
    assert worst > delta / 2


def test_probe_scale_and_share_are_pinned():
    """Noise std ``√2 Δ c / sqrt(f)`` on each of the two released means and
    the default share: a change of either (or of the sensitivity) fails
    here."""
    assert (probe_sensitivity("add-remove-one"), probe_sensitivity("replace-one")) == (
        2.0,
        3.0,
    )
    assert DEFAULT_RULES.auto_probe_share == 0.0
    assert DEFAULT_RULES.auto_probe_max_scale == 4.0
    # three attributes: pairs (0, 1) and (1, 2) dependent, (0, 2) not
    tables = {
        (0, 1): np.array([5.0, 1.0, 1.0, 5.0]),
        (1, 2): np.array([6.0, 0.0, 0.0, 6.0]),
        (0, 2): np.array([3.0, 3.0, 3.0, 3.0]),
    }
    pairs = sorted(tables)
    g = {r: dependence(tables[r], (2, 2)) for r in pairs}
    assert g == {(0, 1): 4.0, (0, 2): 0.0, (1, 2): 6.0}
    for nb, d in (("add-remove-one", 2.0), ("replace-one", 3.0)):
        draws = [
            release_dependence(tables, [2, 2, 2], pairs, 0.04, 3.0, nb, NoiseSource(s))
            for s in range(2000)
        ]
        std = math.sqrt(2.0) * d * 3.0 / math.sqrt(0.04)
        assert all(x["std"] == std and x["tree_part"] == 2 / 3 for x in draws)
        for key, exact in (("mean", 10.0 / 3.0), ("tree", 5.0)):
            vals = np.array([x[key] for x in draws])
            assert np.std(vals) == pytest.approx(std, rel=0.05)
            assert np.mean(vals) == pytest.approx(exact, abs=4 * std / math.sqrt(2000))
    # the tree's pairs and the rest, per record: (5, 0) over 10 records
    probe = {"mean": 10.0 / 3.0, "tree": 5.0, "tree_part": 2 / 3}
    assert probed_terms(probe, 10.0) == pytest.approx((0.5, 0.0))


def _frame(n=2000, a=30, seed=0):
    """Dependent columns: each a copy of a shared column half the time."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 3, n)
    df = pd.DataFrame(
        {
            f"x{j}": np.where(rng.random(n) < 0.5, base, rng.integers(0, 3, n))
            for j in range(a)
        }
    ).astype(str)
    return df, {col: ["0", "1", "2"] for col in df}


def _fit(df, cats, monkeypatch, share, **kw):
    rules = dataclasses.replace(ProjectedGaussianRelease._rules, auto_probe_share=share)
    monkeypatch.setattr(ProjectedGaussianRelease, "_rules", rules)
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories=cats),
        ProjectedGaussianRelease(epsilon=1.0, random_state=0, **kw),
    )
    return pipe.fit(df)[-1]


@pytest.mark.parametrize("neighbouring", ["add-remove-one", "replace-one"])
def test_probe_is_spent_from_the_release_budget(monkeypatch, neighbouring):
    """With the probe, ``selection_shares_["probe"]`` is its share of what
    is left after the noisy total, the recorded steps still compose to
    ``1/c`` (``Σ μ_i² = 1/c²``) and ``epsilon_``, ``delta_`` are the
    release's; the choice after it saw the noisy probe and nothing else."""
    df, cats = _frame()
    calls = []
    original = sel.auto_estimates

    def spy(*args, **kw):
        calls.append(kw)
        return original(*args, **kw)

    monkeypatch.setattr(sel, "auto_estimates", spy)
    est = _fit(df, cats, monkeypatch, 0.05, neighbouring=neighbouring)
    c = analytic_gaussian_sigma(1.0, 1e-6)
    assert est.epsilon_ == 1.0 and est.delta_ == 1e-6
    shares = est.selection_shares_
    before = shares.get("count", 0.0)
    assert shares["probe"] == pytest.approx(0.05 * (1.0 - before), rel=1e-12)
    res = est._selection_result
    gauss = sum(v for k, v in shares.items() if k != "selection_select")
    mu2 = gauss / c**2 + sum(gdp_mu_of_pure_dp(e) ** 2 for e in res.epsilons)
    assert mu2 == pytest.approx(1.0 / c**2, rel=1e-9)
    assert sum(shares.values()) == pytest.approx(1.0, rel=1e-12)
    d = probe_sensitivity(neighbouring)
    std = math.sqrt(2.0) * d * c / math.sqrt(shares["probe"])
    assert res.probe["std"] == pytest.approx(std, rel=1e-12)
    n_hat = est.plan_.selection.get("public_n") or res.totals[0][0]
    assert calls[-1]["probed"] == probed_terms(res.probe, n_hat)
    assert calls[-1]["spent"] == pytest.approx(before + shares["probe"], rel=1e-12)
    assert est.selection_ in ("mst", "aim", "one-way")


def test_probe_off_or_every_table_spends_nothing(monkeypatch):
    """Share 0 (the default), a target, or auto measuring every table: no
    probe is run and the release is the one without it."""
    df, cats = _frame()
    off = _fit(df, cats, monkeypatch, 0.0)
    assert "probe" not in off.selection_shares_ and off._selection_result.probe is None
    target = _fit(df, cats, monkeypatch, 0.05, target="x0")
    assert "probe" not in (target.selection_shares_ or {})
    narrow, ncats = _frame(n=20_000, a=4)
    every = _fit(narrow, ncats, monkeypatch, 0.05)
    assert every.selection_ == "none"
    assert "probe" not in (every.selection_shares_ or {})


def test_probed_dependence_moves_the_choice():
    """More dependence off the tree raises the selected plans' losses of
    unmeasured pairs: the 1-way tables' estimate grows faster than MST's
    (which recovers part of it through the tree); each term is clipped."""
    levels = np.array([3] * 40)
    rules = DEFAULT_RULES
    W, tau, c, n = sel_args(levels)
    args = (W, tau, c, n, rules, "add-remove-one", None, True)
    lo = sel.auto_estimates(*args, probed=(0.15, 0.02))
    hi = sel.auto_estimates(*args, probed=(0.15, 0.1))
    assert hi["one-way"] - lo["one-way"] > hi["mst"] - lo["mst"] > 0
    assert (lo["D_tree"], lo["D"], hi["D"]) == (0.15, 0.02, 0.1)
    m = rules.auto_probe_max_scale
    top = sel.auto_estimates(*args, probed=(9.0, 9.0))
    assert top["D"] == pytest.approx(m * rules.auto_tv_threshold)
    assert top["D_tree"] == pytest.approx(m * rules.auto_edge_threshold)
    low = sel.auto_estimates(*args, probed=(-1.0, -1.0))
    assert low["D"] == pytest.approx(rules.auto_tv_threshold / m)
    assert low["D_tree"] == pytest.approx(rules.auto_edge_threshold / m)


def sel_args(levels):
    from skdp_synth.gaussian_release._selection import allocated_scales
    from skdp_synth.workloads import AttributeMarginalWorkload

    W = AttributeMarginalWorkload(levels, 2)
    tau, _ = allocated_scales(W, W, "add-remove-one")
    return W, tau, analytic_gaussian_sigma(1.0, 1e-6), 3000.0
