"""The suite benchmark's helpers: its TV scores, its coding of the rows for
MST/AIM, its halves and its count of silent fits.

Fast, no comparator environment and no real table needed.
"""

import itertools
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _brute_tv import brute_tv

from benchmarks import bench_suite as bs
from benchmarks._suite_tables import REGISTRY, REPORT, TUNE


@pytest.fixture
def mixed(rng):
    n = 300
    df = pd.DataFrame(
        {
            "a": rng.choice(["x", "y", None], n),
            "b": rng.choice(["p", "q", "r"], n),
            "v": rng.lognormal(size=n),
            "w": np.where(rng.random(n) < 0.2, np.nan, rng.normal(size=n)),
        }
    )
    df["a"] = df["a"].astype(object)
    return df


@pytest.mark.parametrize("d", [1, 2, 3])
def test_tv_k_matches_brute_force(mixed, rng, d):
    coder = bs.Coder(mixed, mixed.iloc[:200], ["a", "b"])
    real, syn = mixed.iloc[200:], mixed.sample(150, random_state=1)
    got = bs.tv_k(coder.codes(real), coder.codes(syn), coder.sizes, d)
    want = brute_tv(coder.strings(real), coder.strings(syn), d)
    assert got == pytest.approx(want, abs=1e-12)
    assert bs.tv_k(coder.codes(real), coder.codes(real), coder.sizes, d) == 0.0


def test_coder_decodes_to_the_same_cells(mixed):
    """MST/AIM's codes come back as values whose cells are the codes' own:
    categorical levels as the original values, a bin as the training rows'
    median of that bin (inside it), missing as missing."""
    train = mixed.iloc[:200]
    coder = bs.Coder(mixed, train, ["a", "b"])
    codes = coder.codes(mixed)
    back = coder.decode(codes)
    np.testing.assert_array_equal(coder.codes(back), codes)
    assert back["a"].isna().sum() == mixed["a"].isna().sum()
    assert set(back["b"]) <= set(mixed["b"])
    # mbi gets the table's own levels: every training code below size - 1
    assert (coder.codes(train) < np.array(coder.sizes) - 1).all()


def test_halves_are_disjoint_and_cover_the_registry():
    assert not set(TUNE) & set(REPORT)
    assert set(TUNE) | set(REPORT) == set(REGISTRY)
    assert len(REGISTRY) >= 12


def _record(std, miss, warned=(), shares=None, seed=0):
    return {
        "table": "t",
        "eps": 1.0,
        "seed": seed,
        "method": "auto",
        "oww": 4.0,
        "tv1": 0.0,
        "warnings": [{"class": "DegenerateColumnWarning", "columns": list(warned)}],
        "missing_shares": shares or {},
        "num": {"std": std, "ks": {}, "wiqr": {}, "miss": miss},
    }


def test_silent_counts_only_unwarned_columns():
    real = {
        "table": "t",
        "eps": 0.0,
        "seed": 0,
        "method": "real",
        "oww": None,
        "rows": 10_000,
        "train_miss": {"v": 0.0, "w": 0.2},
    }
    done = {bs.key_of(real): real}
    fits = [
        _record({"v": 1.0, "w": 1.1}, {"v": 0.0, "w": 0.2}, seed=0),  # fine
        _record({"v": 0.3, "w": 1.0}, {"v": 0.0, "w": 0.2}, seed=1),  # std
        _record({"v": 0.3, "w": 1.0}, {"v": 0.0, "w": 0.2}, ["v"], seed=2),
        # 0.2 +- 3 sd: sd = sqrt(0.01**2 + 0.2 * 0.8 / 1e4) = 0.0108
        _record(
            {"v": 1.0, "w": 1.0},
            {"v": 0.0, "w": 0.25},
            seed=3,
            shares={"w": [0.2, 0.01]},
        ),
        _record(
            {"v": 1.0, "w": 1.0},
            {"v": 0.0, "w": 0.23},
            seed=4,
            shares={"w": [0.2, 0.01]},
        ),
    ]
    for r in fits:
        done[bs.key_of(r)] = r
    lines, count, n = bs.silent(done, ["t"], eps_list=(1.0,), oww=4.0)
    assert (count, n) == (2, 5)
    assert lines[0].startswith("t eps=1 seed=1: v std ratio 0.30")
    assert lines[1].startswith("t eps=1 seed=3: w missing 25.0% vs 20.0%")


@pytest.mark.parametrize("eps", [0.3, 1.0, 3.0])
@pytest.mark.parametrize("n_attributes", [12, 40, 70])
def test_tune_replica_picks_what_auto_rule_picks(eps, n_attributes):
    """``choose`` (the ``--tune`` grid's copy of the rule, on recorded public
    estimates) picks what ``auto_rule`` picks at the release's own ``ρ``."""
    from skdp_synth.gaussian_release import _selection as sel
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES as rules
    from skdp_synth.mechanisms import analytic_gaussian_sigma
    from skdp_synth.workloads import AttributeMarginalWorkload

    levels = np.resize(np.array([2, 4, 6, 3, 8]), n_attributes)
    W = AttributeMarginalWorkload(
        levels, 2, tables=list(itertools.combinations(range(n_attributes), 2))
    )
    plan_W = sel.with_one_way_tables(W, rules.one_way_weight)
    tau, _ = sel.allocated_scales(W, plan_W, "add-remove-one")
    args = (W, tau, analytic_gaussian_sigma(eps, 1e-6), 3000, rules)
    args += ("add-remove-one", None, True)
    est = sel.auto_estimates(*args)
    assert bs.choose(est, rules.auto_tree_reach, rules) == sel.auto_rule(*args)


def test_tune_takes_the_middle_of_the_least_regret_values(capsys):
    """``--tune``: the 1-way tables win one cell, auto's MST (preferred to
    the paper's ``mst`` where both ran) the other; the chosen ``ρ`` is the
    middle of the grid values whose picks lose least."""
    est = {"none": 1.0, "q": 0.02, "e1_one": 0.01, "e1_mst": 0.015}
    done = {}
    for seed, (e_tree, one, mst) in enumerate([(0.3, 0.08, 0.1), (0.06, 0.11, 0.1)]):
        cell = ("t", 1.0, seed)
        done[(*cell, "auto", 4.0)] = {"est": dict(est, e_tree=e_tree)}
        done[(*cell, "one-way", 4.0)] = {"tv2": one}
        done[(*cell, "auto-mst", 4.0)] = {"tv2": mst}
        done[(*cell, "mst", 4.0)] = {"tv2": 1.0}
    score, rho = bs.tune(done, ["t"], 4.0)
    grid = [
        float(line.split(":")[0][4:])
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("rho=") and " 0.0000 " in line
    ]
    assert score == 0.0 and grid and rho == grid[len(grid) // 2]
    from benchmarks.bench_suite import choose
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES

    for seed, want in ((0, "one-way"), (1, "mst")):
        picked = choose(done[("t", 1.0, seed, "auto", 4.0)]["est"], rho, DEFAULT_RULES)
        assert picked == want


@pytest.mark.parametrize("method, expected", [("auto-target", "b"), ("auto", None)])
def test_auto_target_arm_declares_the_model_target(
    mixed, monkeypatch, method, expected
):
    """``--methods auto-target`` fits ``selection="auto"`` with ``target=``
    the table's model target; ``auto`` fits without it."""
    import skdp_synth

    seen = []

    class Spy(skdp_synth.ProjectedGaussianRelease):
        def fit(self, X, y=None, blocks=None, **params):
            seen.append((self.selection, self.target))
            return super().fit(X, y, blocks=blocks, **params)

    monkeypatch.setattr(skdp_synth, "ProjectedGaussianRelease", Spy)
    frame = mixed[["a", "b"]]
    _, info = bs.fit_ours(frame, ["a", "b"], {}, 1.0, 0, method, target="b")
    assert seen == [("auto", expected)]
    assert ("est" in info) == (method == "auto")
