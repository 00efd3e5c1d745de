"""The suite benchmark's helpers: its TV scores, its coding of the rows for
MST/AIM, its halves and its count of silent fits.

Fast, no comparator environment and no real table needed.
"""

import itertools
import math
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
    assert len(REGISTRY) >= 20


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


def _real(rows, train_miss):
    """A cache holding table ``t``'s ``real`` record alone."""
    real = {
        "table": "t",
        "eps": 0.0,
        "seed": 0,
        "method": "real",
        "oww": None,
        "rows": rows,
        "train_miss": train_miss,
    }
    return {bs.key_of(real): real}


def test_silent_counts_only_unwarned_columns():
    done = _real(10_000, {"v": 0.0, "w": 0.2})
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
    lines, count, n, unseen = bs.silent(done, ["t"], eps_list=(1.0,), oww=4.0)
    assert (count, n, unseen) == (2, 5, 0)
    # two fits release a missing share of w: two tests
    assert bs.missing_share_tests(done, ["t"], eps_list=(1.0,), oww=4.0) == 2
    assert lines[0].startswith("t eps=1 seed=1: v std ratio 0.30")
    assert lines[1].startswith("t eps=1 seed=3: w missing 25.0% vs 20.0%")
    # the released shares in their own sds: w's true share .2, released at
    # .24 ± .01 (z = 4) in two fits and .2 ± .01 (z = 0) in two; v (no
    # missing training cell) is not tested
    for r in fits[:2]:
        r["missing_shares"] = {"w": [0.24, 0.01], "v": [0.01, 0.01]}
    tests, mean, sd, past = bs.missing_share_z(done, ["t"], (1.0,), 4.0)
    assert tests == 4 and past == 2
    np.testing.assert_allclose([mean, sd], [2.0, 2.0])


def test_trimmed_std_drops_the_rows_farthest_from_the_median():
    r = np.array([0.0, 1.0, 2.0, 3.0, 100.0, -50.0])
    assert bs.trimmed_std(r, 0) == np.std(r)
    assert bs.trimmed_std(r, 1) == np.std(r[:4].tolist() + [-50.0])
    assert bs.trimmed_std(r, 2) == np.std(r[:4])
    assert bs.trimmed_std(r, 99) == np.std([1.0, 2.0])  # two values stay


def test_unseen_rows_explain_a_collapse_only_in_band():
    """``std_seen``: the synthetic std against the held-out rows without the
    ``UNSEEN_SCALES b / n_train`` share farthest from their median. A silent
    fit counts as unseen only where every silent column collapsed and its
    ratio reaches 0.5 against those rows; an explosion or a missing share
    never does."""
    test = pd.DataFrame({"v": np.r_[np.zeros(90), np.arange(1.0, 11.0)]})
    test["v"] = test["v"] + np.tile([0.0, 0.5], 50)
    syn = pd.DataFrame({"v": np.tile([0.0, 0.5], 50)})
    # b = 10 of 1,000 training rows: 3 b / 1,000 of 100 held-out rows = 3
    sc = bs.numeric_scores(syn, test, set(), {"v": 10.0}, 1_000)
    r = test["v"].to_numpy()
    assert sc["std_seen"]["v"] == np.std(syn["v"].to_numpy()) / bs.trimmed_std(r, 3)
    assert "v" not in bs.numeric_scores(syn, test, set())["std_seen"]
    # a zero-inflated column whose every non-zero row is unseen: the held-out
    # rows without them have std 0, and any collapse reaches the band
    zeros = pd.DataFrame({"v": np.r_[np.zeros(98), [40.0, 90.0]]})
    flat = pd.DataFrame({"v": np.r_[np.zeros(99), [0.5]]})
    assert bs.numeric_scores(flat, zeros, set(), {"v": 10.0}, 1_000)["std_seen"] == {
        "v": math.inf
    }
    one = pd.DataFrame({"v": np.zeros(100)})
    assert np.isnan(
        bs.numeric_scores(one, zeros, set(), {"v": 10.0}, 1_000)["std_seen"]["v"]
    )
    done = _real(1_000, {"v": 0.0, "w": 0.0})
    cases = [
        ({"v": 0.3}, {"v": 0.6}),  # unseen
        ({"v": 0.3}, {"v": 0.4}),  # still out of band
        ({"v": 0.3}, {"v": 2.5}),  # past the band: some rows fewer put it in
        ({"v": 3.0}, {"v": 3.5}),  # an explosion
        ({"v": 0.3, "w": 0.2}, {"v": 0.6, "w": 0.7}),  # both unseen
        ({"v": 0.3, "w": 3.0}, {"v": 0.6, "w": 3.1}),  # one not
        ({"v": 0.01}, {"v": math.inf}),  # every row off the mode unseen
        ({"v": 3.0}, {"v": math.inf}),  # an explosion all the same
    ]
    for seed, (std, seen) in enumerate(cases):
        r = _record(std, {c: 0.0 for c in std}, seed=seed)
        r["num"]["std_seen"] = seen
        done[bs.key_of(r)] = r
    lines, count, n, unseen = bs.silent(done, ["t"], eps_list=(1.0,), oww=4.0)
    assert (count, n, unseen) == (8, 8, 4)
    assert lines[0] == "t eps=1 seed=0: v std ratio 0.30 (unseen rows out: 0.60)"


def test_out_of_range_counts_the_share_past_the_held_out_range():
    """A column-fit counts where over ``OUT_SHARE`` of its rows fall outside
    the held-out range widened by ``OUT_MARGIN`` of it a side; a named
    column still counts, and is not among the unnamed; a record written
    before the score existed is skipped."""
    test = pd.DataFrame({"year": np.arange(1990, 2020).repeat(10), "g": ["a"] * 300})
    inside = test.copy()
    past = test.copy()
    past.loc[:29, "year"] = 2030  # 10 % at 2030: past 2019 + 0.05 * 29
    near = test.copy()
    near.loc[:29, "year"] = 2020  # within the margin
    scores = [bs.numeric_scores(x, test, {"g"}) for x in (inside, past, near)]
    assert [sc["out"]["year"] for sc in scores] == [0.0, 0.1, 0.0]
    done = {}
    for seed, (sc, warned) in enumerate(
        zip(scores + [scores[1]], [(), (), (), ["year"]])
    ):
        r = _record(sc["std"], sc["miss"], warned, seed=seed)
        r["num"]["out"] = sc["out"]
        done[bs.key_of(r)] = r
    old = _record({"year": 1.0}, {"year": 0.0}, seed=9)  # no "out" score
    done[bs.key_of(old)] = old
    assert bs.out_of_range(done, ["t"], eps_list=(1.0,), oww=4.0) == (2, 1, 4)


@pytest.mark.parametrize("eps", [0.1, 0.3, 1.0, 3.0])
@pytest.mark.parametrize("n_attributes", [12, 40, 70])
def test_tune_replica_picks_what_auto_rule_picks(eps, n_attributes):
    """``choose`` (the ``--tune`` grid's copy of the rule, on recorded public
    estimates) picks what ``auto_rule`` picks at the release's own ``ρ`` and
    ``φ`` (12 attributes: the 1-way tables at ε = 0.1 and AIM at ε = 0.3,
    where AIM's thresholds hold)."""
    from skdp_synth.gaussian_release import _plan_choice as choice
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
    est = choice.auto_estimates(*args)
    assert bs.choose(est, rules.auto_tree_reach, rules) == choice.auto_rule(*args)


def test_tune_takes_the_middle_of_the_least_regret_values(capsys):
    """``--tune``: the 1-way tables win one cell, auto's MST (preferred to
    the paper's ``mst`` where both ran) the other; the chosen ``ρ`` is the
    middle of the grid values whose picks lose least. (MST's 1-way term
    puts the first cell's tree past ``auto_tree_margin`` at small ``ρ``.)"""
    est = {"none": 1.0, "q": 0.02, "e1_one": 0.01, "e1_mst": 0.02}
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


def test_tune_aim_takes_the_middle_of_the_least_regret_values(capsys):
    """``--tune`` grids AIM's 1-way share ``φ`` where auto picks AIM or the
    1-way tables:
    the 1-way tables win the cell whose 1-way noise is large, AIM the other;
    the chosen ``φ`` is the middle of the grid values whose picks lose least,
    and at it ``choose`` picks the winner of each cell."""
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES

    base = {"none": 1.0, "q": 0.2, "one-way": 0.1, "q_aim": 0.1}
    base.update(e_tree=1.0, e1_mst=0.1)  # MST's estimate above 0.2
    done = {}
    # aim = aim_pairs + 0.9 * 2 e1 / sqrt(phi); one-way 0.1
    for seed, (pairs, e1, one, aim) in enumerate(
        [(0.05, 0.04, 0.20, 0.25), (0.05, 0.01, 0.12, 0.10)]
    ):
        cell = ("t", 1.0, seed)
        est = dict(base, aim_pairs=pairs, e1_one=e1)
        done[(*cell, "auto", 4.0)] = {"est": est}
        done[(*cell, "one-way", 4.0)] = {"tv2": one}
        done[(*cell, "aim", 4.0)] = {"tv2": aim}
    score, phi = bs.tune_aim(done, ["t"], 4.0)
    grid = [
        float(line.split(":")[0][4:])
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("phi=") and " 0.0000 " in line
    ]
    assert score == 0.0 and len(grid) >= 3 and phi == grid[len(grid) // 2]
    # cell 0 needs 0.05 + 0.072 / sqrt(phi) > 0.1 (phi < 2.07: every
    # value), cell 1 needs 0.05 + 0.018 / sqrt(phi) <= 0.1 (phi >= 0.1296)
    assert grid[0] == 0.15 and grid[-1] == 1.0
    for seed, want in ((0, "one-way"), (1, "aim")):
        est = done[("t", 1.0, seed, "auto", 4.0)]["est"]
        assert bs.choose(est, 0.75, DEFAULT_RULES, phi) == want


def _plan_cell(done, cell, est, aim=(1.0, 0.0), mst=(1.0, 0.0)):
    """Records of one table/ε/seed ``cell`` as the plan grids read them:
    auto's recorded estimates ``est`` and each plan's (TV2, train-on-synthetic);
    every table far off, the 1-way tables at (0.10, 0.5)."""
    done[(*cell, "auto", 4.0)] = {"est": est}
    plans = {
        "none": (1.0, 0.0),
        "auto-aim": aim,
        "auto-mst": mst,
        "one-way": (0.10, 0.5),
    }
    for method, (tv2, tstr) in plans.items():
        done[(*cell, method, 4.0)] = {"tv2": tv2, "tstr": tstr}


def test_tune_margin_takes_the_largest_margin_under_the_regret_rise(capsys):
    """``--tune-margin`` grids ``auto_one_way_margin``: AIM's estimate is 1.04
    times the 1-way tables' in one cell (it moves at ``m`` = 0.05: TV2
    regret 0.01, a model +0.3) and 1.14 times in the other (it moves at
    0.15: regret 0.3); the mean regret rises by under 0.01 up to 0.1, the
    choice."""
    base = {"q": 0.2, "one-way": 0.10, "q_aim": 0.0, "none": 10.0}
    base.update(e_tree=1.0, e1_mst=0.1, e1_one=0.0)  # MST's estimate far above
    done = {}
    for seed, (aim_est, aim_tv2, aim_tstr) in enumerate(
        [(0.104, 0.101, 0.8), (0.114, 0.13, 0.5)]
    ):
        est = dict(base, aim_pairs=aim_est)
        _plan_cell(done, ("t", 1.0, seed), est, aim=(aim_tv2, aim_tstr))
    rows, m = bs.tune_margin(done, ["t"], 4.0)
    assert m == 0.1
    by_m = {r[0]: r for r in rows}
    assert [by_m[x][1] for x in (0.0, 0.05, 0.1, 0.15, 0.2)] == [0, 1, 1, 2, 2]
    assert by_m[0.0][3] == 0.0
    assert by_m[0.1][3] == pytest.approx(0.005, abs=1e-12)
    assert by_m[0.15][3] == pytest.approx(0.155, abs=1e-12)
    assert by_m[0.05][4] == pytest.approx(0.15, abs=1e-12)
    assert "chosen: m = 0.1" in capsys.readouterr().out


def test_tune_tree_margin_takes_the_largest_margin_under_the_regret_rise(capsys):
    """``--tune-tree-margin`` grids ``auto_tree_margin``: the tree's estimate
    is 1.18 times the 1-way tables' in one cell (it moves at ``m_T`` = 0.2:
    TV2 regret 0.008, a model +0.4) and 1.32 times in the other (it moves at
    0.35: regret 0.3); the mean regret rises by under 0.005 up to 0.3, the
    choice."""
    base = {"q": 0.0, "D": 0.0, "one-way": 0.10, "q_aim": 0.0, "none": 10.0}
    base.update(e_tree=1.0, e1_one=0.0, aim_pairs=10.0)  # AIM far above
    done = {}
    for seed, (e1_mst, mst_tv2, mst_tstr) in enumerate(
        [(0.059, 0.1008, 0.9), (0.066, 0.13, 0.5)]
    ):
        est = dict(base, e1_mst=e1_mst)
        _plan_cell(done, ("t", 1.0, seed), est, mst=(mst_tv2, mst_tstr))
    rows, m_tree = bs.tune_tree_margin(done, ["t"], 4.0)
    assert m_tree == 0.3
    by_m = {r[0]: r for r in rows}
    assert [by_m[x][1] for x in (0.1, 0.15, 0.2, 0.25, 0.3, 0.35)] == [0, 0, 1, 1, 1, 2]
    assert by_m[0.1][3] == 0.0 and by_m[0.1][4] == pytest.approx(0.5, abs=1e-12)
    assert by_m[0.2][3] == pytest.approx(0.004, abs=1e-12)
    assert by_m[0.2][4] == pytest.approx(0.7, abs=1e-12)
    assert by_m[0.35][3] == pytest.approx(0.154, abs=1e-12)
    assert "chosen: m_T = 0.3" in capsys.readouterr().out


def test_tune_tree_price_reads_the_rule_on_either_recorded_price(capsys):
    """``--tune-tree-price``: the tree's estimate at every level (``e_tree_fine``
    0.3: 1.5 times the 1-way tables') never takes it; at its grouped levels
    it is 1.0 times theirs in one cell (taken within ``m`` alone) and 1.13
    times in the other (taken from ``m_T`` = 0.15), so the library's rule
    (grouped, 0.15) takes the tree in both and the moved cells are counted
    against that. With the dependence the grouped pairs lose
    (``tree_group_loss`` 0.02 in the second cell: 1.23 times) the tree is
    taken there only from 0.25. The tree's fits are better (TV2 0.09
    against 0.10, TV1 0.02 against 0.03, a model 0.9 against 0.5)."""
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES

    assert DEFAULT_RULES.auto_mst_price_grouped
    assert DEFAULT_RULES.auto_tree_margin == 0.15
    base = {"q": 0.5, "D": 0.0, "one-way": 0.10, "q_aim": 0.0, "none": 10.0}
    base.update(e_tree=0.3, e_tree_fine=0.3, e1_mst=0.0, e1_one=0.0, aim_pairs=10.0)
    done = {}
    for seed, (grouped, loss) in enumerate([(0.2, 0.0), (0.226, 0.02)]):
        est = dict(base, e_tree_grouped=grouped, tree_group_loss=loss)
        _plan_cell(done, ("t", 1.0, seed), est)
        for method, tv2, tv1, tstr in (
            ("auto-mst", 0.09, 0.02, 0.9),
            ("one-way", 0.10, 0.03, 0.5),
            ("none", 1.0, 0.5, 0.0),
            ("auto-aim", 1.0, 0.5, 0.0),
        ):
            done[("t", 1.0, seed, method, 4.0)] = {"tv2": tv2, "tv1": tv1, "tstr": tstr}
    rows = bs.tune_tree_price(done, ["t"], 4.0)
    by = {(r[0], r[1]): r for r in rows}
    one_way = 0.10 / 0.09 - 1.0
    for m_tree in (0.0, 0.1, 0.15, 0.3):
        assert by["e_tree_fine", m_tree][2:4] == (2, 0)
        assert by["e_tree_fine", m_tree][4] == pytest.approx(one_way, rel=1e-12)
    assert by["e_tree_grouped", 0.1][2:4] == (1, 1)
    assert by["e_tree_grouped", 0.1][4] == pytest.approx(one_way / 2, rel=1e-12)
    assert by["e_tree_grouped", 0.15][2:7] == (0, 2, 0.0, 0.02, 0.9)
    assert by["e_tree_grouped_loss", 0.15][2:4] == (1, 1)
    assert by["e_tree_grouped_loss", 0.25][2:4] == (0, 2)
    assert "tree price x tree margin over 2 " in capsys.readouterr().out


def test_plan_tallies_count_within_5_percent_and_never_worse(capsys):
    """``--plan-tallies``: on table ``t`` the tree is within
    ``auto_tree_margin`` of the 1-way tables (1.18 times), auto takes it,
    and its TV2 is within 5 % of the best; on ``u`` (1.32 times) auto takes
    the 1-way tables, 11 % above the tree's realised TV2 (a miss), and
    never worse than themselves."""
    base = {"q": 0.0, "D": 0.0, "one-way": 0.10, "q_aim": 0.0, "none": 10.0}
    base.update(e_tree=1.0, e1_one=0.0, aim_pairs=10.0)
    done = {}
    for table, e1_mst, mst_tv2 in (("t", 0.059, 0.101), ("u", 0.066, 0.09)):
        est = dict(base, e1_mst=e1_mst)
        _plan_cell(done, (table, 1.0, 0), est, mst=(mst_tv2, 0.9))
    assert bs.plan_tallies(done, ["t", "u"], 4.0) == {1.0: (2, 1, 2)}
    out = capsys.readouterr().out
    assert "u eps=1 picks ['one-way']" in out and "t eps=1" not in out


def test_tune_none_takes_the_middle_of_the_least_regret_values(capsys):
    """``--tune`` grids ``κ`` (``auto_none_factor``): every table wins the
    cell whose all-tables estimate is 0.1 (at ``κ`` up to 0.5 its 0.1 ``κ``
    is below AIM's 0.05), AIM the cell whose is 0.2 (``κ`` above 0.25);
    the least regret holds on (0.25, 0.5] and the choice is its middle."""
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES

    base = {"q": 0.2, "one-way": 0.3, "q_aim": 0.0, "aim_pairs": 0.05}
    base.update(e_tree=1.0, e1_mst=0.1, e1_one=0.0)  # MST's estimate above 0.2
    done = {}
    for seed, (none_est, none, aim) in enumerate([(0.1, 0.08, 0.09), (0.2, 0.2, 0.1)]):
        cell = ("t", 1.0, seed)
        done[(*cell, "auto", 4.0)] = {"est": dict(base, none=none_est)}
        for method, tv2 in (("none", none), ("aim", aim)):
            done[(*cell, method, 4.0)] = {"tv2": tv2}
        done[(*cell, "auto-mst", 4.0)] = {"tv2": 1.0}
        done[(*cell, "one-way", 4.0)] = {"tv2": 1.0}
    score, kappa = bs.tune_none(done, ["t"], 4.0)
    grid = [
        float(line.split(":")[0][6:])
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("kappa=") and " 0.0000 " in line
    ]
    assert score == 0.0 and grid == [0.3, 0.35, 0.4, 0.45, 0.5]
    assert kappa == 0.4
    for seed, want in ((0, "none"), (1, "aim")):
        est = done[("t", 1.0, seed, "auto", 4.0)]["est"]
        assert bs.choose(est, 0.75, DEFAULT_RULES, kappa=kappa) == want


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


def test_rules_table_divides_auto_by_the_best_fixed_rule():
    """``--rules-table``: auto's mean TV2 over the least of ``one-way``,
    ``mst`` and ``aim`` (and with ``none``), the earlier code's auto beside
    it, and the cells over 5 % named."""
    done, before = {}, {}
    tv2 = {"one-way": 0.10, "mst": 0.12, "aim": 0.11, "none": 0.09}
    for seed in (0, 1):
        for m, v in tv2.items():
            done[("t", 1.0, seed, m, 4.0)] = {"tv2": v}
        done[("t", 1.0, seed, "auto", 4.0)] = {"tv2": 0.104 + seed * 0.004}
        done[("t", 1.0, seed, "auto", 4.0)]["chose"] = "one-way"
        before[("t", 1.0, seed, "auto", 4.0)] = {"tv2": 0.11, "chose": "aim"}
    out = bs.rules_table(done, ["t"], [1.0], 4.0, before)
    row = [line for line in out.splitlines() if line.startswith("| t |")][0]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "2" and cells[8] == "aim, 0.1100"
    assert cells[9] == "one-way, 0.1060" and cells[10] == "1.060"
    assert cells[11] == "1.178"
    assert out.splitlines()[-1].endswith("t ε = 1: 1.060")


@pytest.mark.parametrize(
    ("method", "selection", "target"),
    [
        ("ceiling", "auto", None),
        ("ceiling-target", "auto", "b"),
        ("ceiling-chose", "mst", None),
    ],
)
def test_ceiling_arms_fit_the_same_pipeline_without_noise(
    mixed, monkeypatch, method, selection, target
):
    """The noise-free ceilings fit the ``auto`` pipeline at ``CEILING_EPS``
    (``ceiling-chose``: the rule ``auto`` chose at that cell), once per seed
    whatever the cell's ε, and record the encoder's round trip."""
    import skdp_synth
    from benchmarks._suite_ceiling import CEILING_EPS, fit_ceiling

    seen = []

    class Spy(skdp_synth.ProjectedGaussianRelease):
        def fit(self, X, y=None, blocks=None, **params):
            seen.append((self.selection, self.target, self.epsilon))
            return super().fit(X, y, blocks=blocks, **params)

    monkeypatch.setattr(skdp_synth, "ProjectedGaussianRelease", Spy)
    frame = mixed[["a", "b"]].assign(c=mixed["b"].to_numpy()[::-1])
    cats = ["a", "b", "c"]
    coder = bs.Coder(frame, frame, cats)
    ctx = {
        "train": frame, "test": frame, "cats": cats, "options": {},
        "target": "b", "coder": coder, "test_codes": coder.codes(frame),
        "train_codes": coder.codes(frame), "mixed": False,
    }  # fmt: skip
    done = {}
    for eps in (1.0, 3.0):
        auto = {"table": "t", "eps": eps, "seed": 0, "method": "auto", "oww": 4.0}
        done[bs.key_of(auto)] = {**auto, "chose": "mst"}
    recs = []
    for eps in (1.0, 3.0):
        rec = {"table": "t", "eps": eps, "seed": 0, "method": method, "oww": 4.0}
        fit_ceiling(rec, ctx, done, bs.fit_ours, bs.scored, bs.tstr)
        recs.append(rec)
    assert len(seen) == 1  # one fit for both cells
    sel, tgt, eps = seen[0]
    assert (sel, tgt) == (selection, target)
    # all of the pipeline's ε (every column is categorical and declared)
    assert eps == pytest.approx(CEILING_EPS)
    assert recs[0]["tstr"] == recs[1]["tstr"]
    assert "tstr_roundtrip" in recs[0] and recs[0]["rule"] == (
        "auto-target" if method == "ceiling-target" else selection
    )


def test_auto_fits_record_the_estimates_their_decision_compared(rng, monkeypatch):
    """An ``auto`` fit's ``est`` is what its ``auto_rule`` call compared (the
    first noisy total), not estimates recomputed after the fit from the final
    noisy ``n̂`` (12 columns of 5 levels, 400 rows, ε = 1: the 1-way tables,
    whose own total moves ``n̂``); the plan they pick is the plan the fit
    ran, and the release's call sites are restored after the fit."""
    import skdp_synth.gaussian_release._measuring as measuring
    import skdp_synth.gaussian_release._planning as planning
    from skdp_synth.gaussian_release import _plan_choice as choice
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES as rules

    calls = []

    def spy(*args, **kwargs):
        calls.append((args, kwargs))
        return choice.auto_rule(*args, **kwargs)

    monkeypatch.setattr(measuring, "auto_rule", spy)
    monkeypatch.setattr(planning, "auto_rule", spy)
    frame = pd.DataFrame({f"c{j}": rng.choice(list("pqrst"), 400) for j in range(12)})
    _, info = bs.fit_ours(frame, list(frame.columns), {}, 1.0, 0, "auto")
    assert info["chose"] == "one-way"
    assert len(calls) == 1
    args, kwargs = calls[0]
    want = choice.auto_estimates(*args, **kwargs)
    assert info["est"] == pytest.approx({k: float(v) for k, v in want.items()})
    assert bs.choose(info["est"], rules.auto_tree_reach, rules) == info["chose"]
    assert measuring.auto_rule is spy and planning.auto_rule is spy
    # ``--tune`` counts the records whose estimates pick another plan
    done = {("t", 1.0, 0, "auto", 4.0): info}
    assert bs.decision_mismatches(done, ["t"], 4.0, rules) == []
    done[("t", 1.0, 1, "auto", 4.0)] = {**info, "chose": "mst"}
    assert bs.decision_mismatches(done, ["t"], 4.0, rules) == [
        ("t", 1.0, 1, "mst", "one-way")
    ]


def _without_times(info):
    return {k: v for k, v in info.items() if k not in ("cpu", "secs")}


def test_a_fit_is_a_function_of_its_table_eps_and_seed(mixed):
    """The same fit of ours gives the same rows and record after another fit
    in the process and under one BLAS thread (the comparisons of two caches
    read the records exactly; ``results/bench_suite_repro.md``)."""
    from threadpoolctl import threadpool_limits

    train = mixed.iloc[:300].reset_index(drop=True)
    cats = [c for c in train.columns if train[c].dtype == object]
    first, info = bs.fit_ours(train, cats, {}, 1.0, 3, "auto")
    bs.fit_ours(train, cats, {}, 0.3, 4, "auto")
    with threadpool_limits(limits=1):
        again, info_again = bs.fit_ours(train, cats, {}, 1.0, 3, "auto")
    pd.testing.assert_frame_equal(first, again)
    assert _without_times(info) == _without_times(info_again)


def test_runs_store_their_code_and_the_summary_counts_it(tmp_path, monkeypatch):
    """Every fit of ours stores the commit it ran at (the cache keys on the
    rules, not the code); ``code_counts`` tells a cache of two codes."""
    import subprocess

    monkeypatch.setattr(bs, "context", lambda name: {})
    monkeypatch.setattr(bs, "_real", lambda *args: None)

    def one(rec, ctx, name, cap):
        rec.update(tv1=0.0, cpu=0.0)

    monkeypatch.setattr(bs, "_one", one)
    cache = str(tmp_path / "c.jsonl")
    done = bs.run(["credit"], [1.0], 2, ("auto",), cache)
    code = bs.code_version()
    root = Path(bs.__file__).resolve().parents[1]
    head = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    if head:
        assert code in (head, head + "+dirty")
    assert [r["code"] for r in bs.read_cache(cache).values()] == [code, code]
    done[("credit", 1.0, 2, "auto", 4.0)] = {"method": "auto"}  # an older line
    counts = bs.code_counts(done, ["credit"])
    assert counts == ({code: 2, "n/a": 1} if code else {"n/a": 3})


def test_grid_options_change_the_depth0_cells_and_the_cache_key(monkeypatch):
    """``--grid-step`` sets ``GRID_STEP`` and the depth limits derived from
    it; ``--grid-offset`` moves the cells past ``±1`` (offset 0: the
    library's own cells); both are in the rules every fit is keyed on."""
    from skdp_synth.preprocessing import _count_grid as cg
    from skdp_synth.preprocessing import _numeric_domain as nd
    from skdp_synth.preprocessing import _wide_leaves as wl

    for mod, names in (
        (nd, ("GRID_STEP", "root_cells")),
        (wl, ("DEEP_T", "SOLE_DEEP_T", "root_cells")),
        (cg, ("root_cells",)),
    ):
        for name in names:
            monkeypatch.setattr(mod, name, getattr(mod, name))
    monkeypatch.setattr(bs, "OVERRIDES", {})
    own = nd.root_cells
    bs.set_grid_offset(0)
    for integer in (True, False):
        for root in (None, (-5.0, 3000.0)):
            for cuts in (None, [100.0, 5000.0]):
                assert nd.root_cells(integer, root, cuts) == own(integer, root, cuts)
    bs.set_grid_offset(2)
    starts = [a for a, _ in nd.root_cells(True, None)[0] if -100 < a < 2000]
    assert starts == [-64.0, -4.0, -1.0, 0.0, 1.0, 4.0, 64.0, 1024.0]
    assert wl.root_cells is cg.root_cells is nd.root_cells
    bs.set_grid_step(3)
    assert (nd.GRID_STEP, wl.DEEP_T, wl.SOLE_DEEP_T) == (3, 3 / 32, 3 / 8)
    assert bs.weight().endswith(";grid=3;gridoff=2")


def test_bounds_coder_cuts_equal_widths_and_decodes_inside_each_bin(mixed):
    """``mbi-mst-bounds``' coding: 10 equal-width bins between the training
    rows' min and max, each code decoded to a value inside its own bin, a
    missing value kept missing; the categorical columns as ``Coder``'s."""
    train = mixed.iloc[:200]
    bc = bs.BoundsCoder(mixed, train, ["a", "b"])
    for c in ("v", "w"):
        x = train[c].dropna().to_numpy()
        lo, hi = x.min(), x.max()
        assert bc.bounds[c] == (lo, hi)
        np.testing.assert_allclose(bc.edges[c], np.linspace(lo, hi, 11)[1:-1])
    codes = bc.codes(train)
    values = bc.decode_uniform(codes, seed=0)
    again = bc.codes(values)
    np.testing.assert_array_equal(again, codes)
    assert values["w"].isna().sum() == train["w"].isna().sum()
    plain = bs.Coder(mixed, train, ["a", "b"])
    np.testing.assert_array_equal(codes[:, :2], plain.codes(train)[:, :2])


def test_minmax_arms_declare_the_bounds_coders_bounds(mixed):
    """``auto-minmax`` declares ``mbi-mst-bounds``' bounds (the training
    rows' min and max) as ``bounds=``; ``auto-minmax-wide`` a quarter of the
    range wider each side, not below 0 for a column that is not negative;
    the bins inside stay private (the encoder still learns them)."""
    train = mixed.iloc[:200].copy()
    train["k"] = np.arange(200, dtype="int64") % 7 + 3
    bc = bs.BoundsCoder(train, train, ["a", "b"])
    exact = bs.minmax_bounds(train, bc)["bounds"]
    assert exact == {c: bc.bounds[c] for c in ("v", "w", "k")}
    wide = bs.minmax_bounds(train, bc, bs.MINMAX_WIDEN)["bounds"]
    lo, hi = bc.bounds["w"]
    assert wide["w"] == pytest.approx((lo - 0.25 * (hi - lo), hi + 0.25 * (hi - lo)))
    assert wide["v"][0] == 0.0  # lognormal: not negative, so never below 0
    assert wide["k"] == (1.0, 11.0)  # 3-9 widened by 1.5, to whole numbers
    assert set(bs.PUBLIC_INFO) <= set(bs.OURS)
    _, info = bs.fit_ours(
        train[["a", "b", "v"]],
        ["a", "b"],
        {},
        1.0,
        0,
        "auto",
        {"bounds": {"v": exact["v"]}},
        keep_pipe=True,
    )
    spec = next(s for s in info["pipe"][0].specs_ if s.name == "v")
    assert spec.bounds == exact["v"] and spec.fine is not None


def test_a_table_cut_to_k_rows_is_read_as_its_suite_table(monkeypatch, mixed):
    """``T@k``: the suite table ``T`` sampled down to ``k`` rows before the
    split; the name's base is what the registry and the halves know."""
    assert bs._base("credit@1000") == "credit" and bs._base("credit") == "credit"
    monkeypatch.setattr(bs, "load", lambda name: (mixed, ["a", "b"], {}, "b"))
    full, cut = bs.context("t"), bs.context("t@120")
    assert len(full["train"]) + len(full["test"]) == len(mixed)
    assert len(cut["train"]) + len(cut["test"]) == 120
    assert set(map(tuple, cut["df"].astype(str).to_numpy())) <= set(
        map(tuple, mixed.astype(str).to_numpy())
    )


def test_auto_aim_arm_runs_auto_forced_to_aim(mixed):
    """``--methods auto-aim`` fits ``selection="auto"`` made to pick AIM (its
    own steps: the rounds, then the joins), records no estimates, and leaves
    auto's rule as it was after the fit."""
    import skdp_synth.gaussian_release._measuring as measuring
    import skdp_synth.gaussian_release._planning as planning

    before = (measuring.auto_rule, planning.auto_rule)
    frame = mixed[["a", "b"]]
    _, info = bs.fit_ours(frame, ["a", "b"], {}, 1.0, 0, "auto-aim")
    assert info["chose"] == "aim" and "est" not in info
    assert (measuring.auto_rule, planning.auto_rule) == before
    assert "auto-aim" in bs.EXTRA_RULES and "auto-aim" in bs.OURS


def test_auto_aim_stands_for_aim_in_the_tuning_cells():
    """Where ``auto-aim`` ran, its TV2 is AIM's outcome in the grids (auto's
    AIM, with the joins); else the paper's ``aim``."""
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES

    est = {"none": 1.0, "q": 0.2, "one-way": 0.3, "q_aim": 0.1, "aim_pairs": 0.05}
    est.update(e_tree=1.0, e1_mst=0.1, e1_one=0.01)
    done = {}
    for seed, with_auto_aim in ((0, True), (1, False)):
        cell = ("t", 1.0, seed)
        done[(*cell, "auto", 4.0)] = {"est": est}
        for method, tv2 in (("none", 0.3), ("auto-mst", 0.2), ("one-way", 0.25)):
            done[(*cell, method, 4.0)] = {"tv2": tv2}
        done[(*cell, "aim", 4.0)] = {"tv2": 0.11}
        if with_auto_aim:
            done[(*cell, "auto-aim", 4.0)] = {"tv2": 0.1}
    usable = bs._usable_cells(done, ["t"], 4.0, DEFAULT_RULES)
    assert usable[("t", 1.0, 0)][1]["aim"] == 0.1
    assert usable[("t", 1.0, 1)][1]["aim"] == 0.11


def test_the_neighbouring_option_reaches_every_fit_and_its_record(mixed, monkeypatch):
    """``--neighbouring replace-one`` fits the release under that relation
    and stores it in the record; without it the estimator's default."""
    frame = mixed[["a", "b"]]
    _, info = bs.fit_ours(frame, ["a", "b"], {}, 1.0, 0, "auto")
    assert info["neighbouring"] == "add-remove-one"
    monkeypatch.setattr(bs, "NEIGHBOURING", "replace-one")
    _, info = bs.fit_ours(frame, ["a", "b"], {}, 1.0, 0, "auto")
    assert info["neighbouring"] == "replace-one"


def test_tune_none_models_takes_the_smallest_kappa_that_keeps_regret_and_models(
    capsys,
):
    """``--tune-none-models``: every table wins a cell below ``κ`` = 0.5
    (all-tables estimate 0.1 against AIM's 0.05), 0.556 (0.09) or 0.25
    (0.2). At ``κ`` 0.6 AIM everywhere (no regret); at 0.4 every table on
    the two ε = 1 cells (regret .0025, models better); at 0.2 also on the ε
    = 3 cell, whose every table doubles TV2. The choice is 0.4: the least
    regret is at 0.6, 0.4 raises it by less than 0.01 at each ε with models
    no worse, 0.2 does not."""
    base = {"q": 0.2, "one-way": 0.3, "q_aim": 0.0, "aim_pairs": 0.05}
    base.update(e_tree=1.0, e1_mst=0.1, e1_one=0.0)  # MST's estimate above 0.2
    done = {}
    cells = [  # (ε, seed, all-tables estimate, (TV2, TSTR) every table, AIM)
        (1.0, 0, 0.1, (0.1, 0.6), (0.1, 0.5)),
        (1.0, 1, 0.09, (0.1005, 0.7), (0.1, 0.5)),
        (3.0, 0, 0.2, (0.2, 0.9), (0.1, 0.5)),
    ]
    for eps, seed, none_est, none, aim in cells:
        cell = ("t", eps, seed)
        done[(*cell, "auto", 4.0)] = {"est": dict(base, none=none_est)}
        for method, (tv2, tstr) in (("none", none), ("aim", aim)):
            done[(*cell, method, 4.0)] = {"tv2": tv2, "tstr": tstr}
        for method in ("auto-mst", "one-way"):
            done[(*cell, method, 4.0)] = {"tv2": 1.0, "tstr": 0.0}
    rows, kappa = bs.tune_none_models(done, ["t"], 4.0, grid=[0.2, 0.4, 0.6])
    assert kappa == 0.4
    per = dict(rows)
    assert per[0.6][1.0][:2] == (0.0, 0.5) and per[0.6][3.0][:2] == (0.0, 0.5)
    assert per[0.4][1.0][:2] == pytest.approx((0.0025, 0.65), rel=1e-12)
    assert per[0.2][3.0][0] == pytest.approx(1.0)
    assert "least regret at kappa = 0.6; chosen: kappa = 0.4" in capsys.readouterr().out


def test_plan_ceiling_counts_tables_at_the_comparators_model_score(capsys):
    """``--plan-ceiling``: on ``t`` auto takes the tree (AUC 0.9 against
    MST's 0.8); on ``u`` it takes the 1-way tables (0.5 against 0.7) while
    the tree, the best fixed plan and the oracle reach MST's; on ``v`` the
    tree's -1.5 and MST's -1.0 / -1.4 are clipped at -1, so auto reaches
    MST there (unclipped it would not), as do every table (0.0) and the 1-way
    tables (0.5), which reach no other. A table without MST's records and a
    comparator fit that did not finish are not counted."""
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES as rules

    base = {"q": 0.0, "D": 0.0, "one-way": 0.10, "q_aim": 0.0, "none": 10.0}
    base.update(e_tree=1.0, e1_one=0.0, aim_pairs=10.0)
    # the tree's estimate (2 e1_mst) between the 1-way tables' times 1 + m
    # and times 1 + m_T: the tree in their place; 0.132 is past both
    m, m_tree = rules.auto_one_way_margin, rules.auto_tree_margin
    within = 0.05 * (1.0 + (m + m_tree) / 2.0)
    done = {}
    for table, e1_mst, mst in (
        ("t", within, (0.101, 0.9)),
        ("u", 0.066, (0.09, 0.9)),
        ("v", within, (0.101, -1.5)),
        ("w", within, (0.101, 0.9)),
    ):
        _plan_cell(done, (table, 1.0, 0), dict(base, e1_mst=e1_mst), mst=mst)
    theirs = {"t": [0.8], "u": [0.7], "v": [-1.0, -1.4]}
    for table, scores in theirs.items():
        for seed, tstr in enumerate(scores):
            done[(table, 1.0, seed, "mbi-mst-bounds", None)] = {"tstr": tstr}
    done[("t", 1.0, 1, "mbi-mst-bounds", None)] = {"dnf": True, "tstr": None}
    out = bs.plan_ceiling(done, ["t", "u", "v", "w"], 4.0)
    assert out == {
        1.0: {
            "pairs": 3,
            "auto": 2,
            "best fixed": 3,
            "oracle": 3,
            "none": 1,
            "mst": 3,
            "one-way": 1,
        }
    }
    assert "auto 2, every table 1, the tree 3" in capsys.readouterr().out
