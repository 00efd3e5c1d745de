"""How a numeric column's domain budget is split between PrivTree's splits
and its leaf counts.

Why a module of its own: the in-memory fit (:func:`._numeric_domain.
privtree_histogram`), the fit from merged chunk counts (:mod:`._speculation`,
:mod:`._domain_stats`) and the refinement passes (:mod:`._refine_bounds`)
must split every column's ``ε_c`` alike -- the Dask fit's domains equal the
in-memory fit's (``tests/test_dask_domains.py``) -- so the rule lives in one
place. Any split keeps the column's ``ε_c``: the tree is ``ε_T``-DP
(:cite:`Zhang2016` Theorem 3.2), the counts ``(ε_c - ε_T)``-DP (the Laplace
mechanism), together ``ε_c`` by sequential composition (:cite:`Dwork2014`
Theorem 3.16); the share is a function of the public budget only
(``doc/privacy/encoder.md``).
"""

from __future__ import annotations

__all__ = [
    "SMALL_COLUMN_EPSILON",
    "TREE_SHARE",
    "TREE_SHARE_SMALL",
    "column_tree_share",
]

#: Share of a column's ε spent on PrivTree's splits; the rest goes to the
#: leaf counts (and the missing count). Any split keeps the column's ε: the
#: tree is ε_T-DP (:cite:`Zhang2016` Theorem 3.2), the counts ε_H-DP (the
#: Laplace mechanism, :cite:`Dwork2014` Theorem 3.6), together ε_T + ε_H by
#: sequential composition (:cite:`Dwork2014` Theorem 3.16; doc/privacy.md).
#: Less for the tree makes fewer, wider
#: leaves, each with less noise: a tail spread over many narrow leaves under
#: their noise is kept as one. Measured (``python -m
#: benchmarks.bench_mixed_seeds --seeds 32``, ``target=``; 0.5 -> 0.4 -> 0.3):
#: credit W/IQR 30.0 -> 23.3 -> 21.8, TV2 .1610 -> .1590 -> .1644, KS .0833
#: -> .0850 -> .0878, std in band .75 -> .77 -> .78, worst missing rate 1.52
#: -> 1.10 -> 1.13 pp; Wage TV2 .0987 -> .0943 -> .0947, TSTR R² .296 ->
#: .304 -> .300; CPS1988 TV2 .0333 -> .0332 -> .0347; credit's ``Debt``
#: (82 % zeros) kept its tail in 32 -> 58 % of 300 fits, with far false
#: ranges of all-zero / 0-1 columns 2.7 / 1.5 -> 2.7 / 2.2 % (600 fits);
#: 0.7 was worse everywhere (credit TV2 .2227 on 16 seeds). The price:
#: columns whose rows sit on a few integers (credit's ``Time``, ``Expenses``)
#: get wider leaves, KS .113 -> .136 and .111 -> .147.
TREE_SHARE = 0.4
#: The tree's share for a column whose budget is below
#: :data:`SMALL_COLUMN_EPSILON` (:func:`column_tree_share`). There PrivTree's splits
#: are mostly noise (``λ = 3Δ/ε_tree`` is hundreds of rows), and the leaf
#: counts gain more from the budget than the tree loses. Measured
#: (``python -m benchmarks.bench_suite --half tune --eps 0.3,1 --seeds 10
#: --methods auto --tv-only``, nine TUNE tables and their 1,000-row cuts,
#: ``benchmarks/results/bench_suite.md``, "PrivTree's share at a small
#: column budget"): 0.25 against 0.4 at ε = 0.3 (columns at 0.005-0.02 of
#: ε), TV1 -9.7 % and TV2 -8.1 % on the whole tables, -10 % and -8.8 % on
#: the cuts; at ε = 1 (0.017-0.067) TV1 +0.9 % on the whole tables (credit
#: +17 %, loans +9 %) and -5 % on the cuts; 0.15 lost on credit, nmes1988
#: and workinghours at ε = 0.3.
TREE_SHARE_SMALL = 0.25
#: A column's budget below which the tree gets :data:`TREE_SHARE_SMALL`:
#: between the TUNE columns that gained from it (0.015 of ε and less) and
#: those that lost (loans at ε = 1, 0.0172; hmda and cps1988 at ε = 0.3,
#: 0.02: TV1 +9 % and +2.5 %).
SMALL_COLUMN_EPSILON = 0.016


def column_tree_share(epsilon):
    """PrivTree's share of a column's budget ``epsilon`` (public: the
    budget only, so any value keeps the column's ``ε``, doc/privacy/
    encoder.md): :data:`TREE_SHARE`, or :data:`TREE_SHARE_SMALL` below
    :data:`SMALL_COLUMN_EPSILON`."""
    return TREE_SHARE_SMALL if float(epsilon) < SMALL_COLUMN_EPSILON else TREE_SHARE
