"""Rows the release measured past a numeric column's caps, placed there.

(:func:`place_capped_floor` does for the lower cap and the bottom bin what
this docstring says of the upper cap and the top bin.)

A private numeric domain caps its column's tails (``_numeric_domain``,
``kept_counts``), and the encoder clips every row past the upper cap into
the top coarse bin, which the release measures. Where growth stopped
short of a tail (its leaves each under the noise), the release's estimate
``T̂ ± σ`` of the top bin then holds the tail's rows while the bin's leaves
hold far fewer, and the decoder drew every one of them inside the bin:
credit's ``Debt`` (82 % zeros, 614 of 3,563 training rows above 2, up to
30,000; ε = 1, seed 10 of ``python -m benchmarks.bench_suite --half tune
--tables credit --eps 1 --seeds 20 --methods auto --light``) kept ``[0,
4)`` only, its top bin ``[2, 3]`` measured at 595 ± 38 rows against 13 kept,
and came back all 0-3 (std ratio 0.00); ``Assets`` (seed 9) capped at
11,585 with 11 % of the rows past it, measured its top bin at 707 ± 22
against 230 kept, and ``fill_emptied_leaves`` put the 477 rows into the
emptied leaf ``[7192, 7511)`` (raw noisy count -17; std ratio 0.38).

:func:`place_capped_tail` compares two independent noisy measurements of the
rows inside the top bin: the release's ``T̂`` and the fine histogram's raw
noisy counts of the bin's leaves inside the cap (kept and emptied, ``m``
leaves, ``Lap(b)`` each; unbiased). Where ``T̂`` exceeds their sum by more
than :data:`PAST_CAP_Z` sds of the difference (``sqrt(σ² + 2 m b²)``) and
by more than twice the sum outside point masses, that excess lies past the
cap, and it is given to the leaves past it, by their raw noisy counts
(:func:`_past_run`). The cap moves to the end of those leaves, and the top
bin decodes up to it (``_decoding.decode_fine``). Post-processing of
released quantities only: the release's estimate and public noise sd, the
fine histogram's noisy counts and public ``b`` -- no budget, no new
released quantity (``doc/privacy.md``).

The run past the cap ends at the nearest leaf whose raw count passes
:data:`PAST_CAP_SCALES` ``b`` (or at the last of the touching leaves from
it on that each pass it: :func:`_past_run`). Scanning a dozen leaves for one is a
multiple comparison (an empty leaf passes ``2 b`` with probability
``e^-2 / 2 = 6.8 %``, one of ten about half the time), and a noise leaf's
count has the same distribution whatever its distance or width, so the
leaf that passes may lie ``2^12`` times ``1 + cap`` out: a right-skewed
area (``bsmt_sf``, ε = 0.3, seed 24 of ``python -m
benchmarks.bench_tail_past_cap --synthetic --tables area``: cap 2,049,
the raw counts past it 0.4, 0.0, -1.1, 0.6, 1.4, 0.0 and 1.1 ``b``, then
3.7 ``b`` on ``[2^22, 2^23)``, which took 447 of the 860 rows) came
back with a std ratio of 3,386. A tail that continues the column's body
decays from the cap. Where the
release measures the bin below the top bin (:data:`PAST_CAP_BODY_Z`) --
the body reaches the top bin -- a density non-increasing in ``t`` past
the cap ``t_c`` puts on the leaf ``[t_j, t_j+1)`` at most the share
``w_j / (t_j+1 - t_c)`` of the rows past the cap (its mean over the last
stretch is at most its mean over the whole), so at most ``E w_j / (t_j+1
- t_c)`` of the excess ``E``: the leaf's room (:func:`_room`). A leaf's
raw count counts up to its room only, both to end the run and to share
the excess, and what the leaves cannot hold stays on the first leaf past
the cap (whose room is ``E``). A leaf then ends the run only where ``t_j+1
- t_c < E w_j / (2 b)``: the reach grows with the rows measured past the
cap, not with the number of leaves scanned; ``bsmt_sf``'s leaf, 11 in
``t`` past the cap and 1 wide, has room for ``E / 12`` = 0.47 ``b``. Where the
release does not measure the bin below (credit's ``Debt`` at ε = 1, seed
10: ``[1, 2]`` at -14 ± 38 under ``[2, 3]``), or the column is one bin
from a point mass at 0, the rows past the cap are another component than
the body -- ``Debt``'s amounts past its 0s rise away from the cap, to
1,000-4,000 -- and no leaf's room is bounded.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ._fences import CAP_ADVICE, CAPPED_TAIL_Z, bottom_bin_excess
from ._natural_limits import ATOM_CANDIDATES, NATURAL_LIMITS
from ._numeric_domain import _t

#: The release's top-bin estimate must exceed the raw noisy sum of the
#: bin's leaves inside the cap by this many sds of the difference before
#: the excess is placed past the cap (:func:`place_capped_tail`): at most
#: ``1 - Φ(3) = 0.13 %`` of top bins with no row past the cap, by chance.
#: The usual three sds (as ``_bin_mass.FILL_Z``), not searched.
PAST_CAP_Z = 3.0
#: How far past the cap (in ``t``, a factor ``2^12`` in ``1 + x``) a leaf
#: may take the excess (:func:`_past_run`). Credit's ``Debt`` (cap 4, rows
#: up to 30,000) needs 8.7 (its nearest leaf past ``2 b``, ``[1025, 2049)``);
#: 16 let a leaf past ``2 b`` at 32-65 take the excess of a ratio column at
#: 0.1-0.8 (hmda's ``pirat``, ε = 1, seed 7 of ``python -m
#: benchmarks.bench_suite --half tune --light``: std ratio 69).
PAST_CAP_REACH_T = 12.0
#: A leaf past the cap ends the run that takes the excess where its raw
#: noisy count passes this many noise scales ``b`` (an empty leaf does with
#: probability ``e^-2 / 2 = 6.8 %``, as growth's ``2 b``): the nearest such
#: leaf, so a far noise leaf only matters where no nearer one passes.
PAST_CAP_SCALES = 2.0
#: The run ends earlier, at the first leaf before the one past ``2 b``
#: whose raw count is at least this share of that leaf's (:func:`_past_run`):
#: two such counts do not say the farther leaf holds the tail's end, and a
#: tail decays from the cap. loans' ``interest_rate`` (ε = 1, seed 7 of
#: ``python -m benchmarks.bench_suite --half tune --light``): 180 raw on the
#: first leaf past the cap 22.87, then 91, 2, 3, 19 and 205 (2.11 ``b``) on
#: ``[65, 256)``, a noise leaf that took 267 of the 651 rows: std ratio
#: 4.27. The runs of credit's ``Debt`` end at leaves far stronger than any
#: before them (166 against at most 40; 326 against 166; 301 against 75).
PAST_CAP_NEAR_SHARE = 0.8
#: Where the release measures the coarse bin below the top bin (or those
#: below it within the top bin's width in ``t``, pooled: :func:`_body_at_cap`)
#: at this many of its sds or more, the column's body reaches the top bin and the rows
#: past the cap are its tail, decaying from the cap: each leaf past it
#: holds at most its room (:func:`_room`, module docstring). Not searched:
#: the release's level-support test (``gaussian_release.LEVEL_SUPPORT_Z``,
#: 2), between what the measured cases drew (the TUNE half's placements,
#: 10 seeds of ``python -m benchmarks.bench_suite --half tune --light`` at
#: ε = 1 and 0.3, and ``python -m benchmarks.bench_tail_past_cap
#: --synthetic --tables calls,area --eps 0.3,1 --seeds 40``): the runs
#: that reach a separate component -- credit's ``Debt`` (ε = 1, seed 10:
#: ``[1, 2]`` at -14 ± 38), acs12's ``hrs_work`` (ε = 0.3, seed 0: 1.1
#: sds) -- at most 1.1 sds; the runs that ended at a noise leaf far past a
#: body (``bsmt_sf``, 12.9 sds, std ratio 3,386; ``service_calls``, 9.3)
#: and the TUNE half's other bodies 2.1 sds or more (credit's ``Assets``,
#: ε = 0.3, seed 4, whose run is its first leaf; else 2.9 or more).
PAST_CAP_BODY_Z = 2.0
#: Below the lower cap (:func:`place_capped_floor`) only the excess less
#: this many sds of the difference is placed: its lower confidence bound
#: (97.7 %), the rest stays in the bottom bin. The whole excess is
#: the difference of two noisy measurements, and where it passes
#: :data:`PAST_CAP_Z` barely, it is mostly the noise of the bin's leaves:
#: loans' ``total_credit_lines`` (ε = 0.3, seed 1 of ``python -m
#: benchmarks.bench_suite --half tune --tables loans --light``: its bottom
#: bin ``[8, 16)`` measured at 2,433 ± 139 against 334 raw on its leaves,
#: sd of the difference 664) put 2,098 rows on ``[6, 8)``, where about 500
#: of the training rows lie below 8. Not searched: the usual two sds.
FLOOR_MARGIN_Z = 2.0
#: Where the lower cap is a natural lower limit held by a kept point mass
#: at 0 (:func:`_at_lower_limit`), rows are placed below it only where the
#: bottom bin's excess passes this many sds of the difference, not
#: :data:`PAST_CAP_Z`: the bin is then the point mass's leaf alone, whose
#: Laplace draw far under its rows fakes an excess (loans'
#: ``paid_late_fees``, 99 % zeros, ε = 1, seed 2: 3.70 sds, the largest of
#: the TUNE half's bins at such a limit, ε 0.3, 1 and 3, 10 seeds of
#: ``python -m benchmarks.bench_suite --half tune --methods auto``). A
#: signed balance's negatives measure 7.2-9.4 sds (4,000 rows, 30 % below
#: 0, ε = 0.1, seeds 1-8; ``tests/test_tail_past_cap.py``). Not searched:
#: a round value between the two. The rows below are another component
#: than the body above the limit: no leaf's room is bounded.
FLOOR_AT_LIMIT_Z = 5.0
#: Below the lower cap, an excess past this many sds of the difference is
#: placed even where it is under twice the bottom bin's raw rows
#: (:func:`_excess`'s guard against the bin's leaves drawn far under their
#: rows): a sum of ``m`` Laplace draws falls 6 sds under its mean with
#: probability under ``e^-8.5 / 2 = 1e-4`` (``m = 1``, the worst case).
#: The guard had kept half of a column's rows at its cap: loans'
#: ``paid_principal`` (ε = 0.3, seed 8 of ``python -m benchmarks.bench_suite
#: --half tune --methods auto --tv-only``; 52 % of its rows below the cap at
#: 1,025, spread over leaves each under the noise) measured its bottom bin at
#: 25.9 ``b`` against 11.8 ``b`` on its leaf, 8.8 sds, and came back all
#: 1,025 or more (KS 0.519; placed: 0.263). Of the TUNE half's 180 fits at
#: ε 0.3 and 1 (10 seeds), it moved that one and one other
#: (``total_credit_utilized``, ε = 1, seed 1: KS 0.144 -> 0.087) and no
#: other. Not searched: a round value far past :data:`PAST_CAP_Z`. Not for
#: the upper cap, whose far noise leaves take a misplaced excess many
#: times the column's range (:func:`_excess`).
FLOOR_STRONG_Z = 6.0
#: Below the lower cap, the guard is also waived where the raw noisy counts
#: of the :data:`FLOOR_CONFIRM_LEAVES` leaves nearest past the cap sum to
#: more than :data:`FLOOR_CONFIRM_Z` sds of their own noise (``sqrt(2 m')
#: b``): a measurement of rows below the cap that is independent of the
#: bin's estimate and of its leaves, so a bin whose own leaves drew far
#: under their rows (what the guard is for) is not enough. Whole leaves
#: only: the part below the cap of a leaf the cap cut holds that leaf's raw
#: count shared by width (:func:`_split_at_cap`), rows that may all lie
#: above the cap (k401ksubs' ``inc``, ε = 0.3, seed 0: none of its rows
#: under 10, and 2.5 ``b`` placed at 1-3.9 where the part was read). With no row
#: past the cap, two Laplace draws sum past ``4 b`` with probability
#: ``e^-4 (2 + 4) / 4 = 2.7 %`` (one draw past ``2 sqrt(2) b``: 3.0 %), on
#: top of an excess past :data:`PAST_CAP_Z`. doctorcontacts' ``linc`` (log
#: income; ε = 1, seed 0 of ``python -m benchmarks.bench_suite --half
#: report --tables doctorcontacts``): 4 % of its rows below the cap 7.12,
#: its bottom bin at 65.2 ``b`` against 48.3 ``b`` on its leaves (5.8 sds,
#: under twice them) and the two whole leaves below at 7.0 and 1.4 ``b``;
#: it came back with none below 7.12. Its std ratio was under 0.5,
#: unnamed, in 16 of 20 fits (ε 0.3 and 1, 10 seeds; 9 with this rule).
#: On the TUNE half's floor tests (14 mixed tables, ε 0.3 and 1, seeds
#: 0-4) every excess past 3 sds that the guard refused and these leaves
#: confirm had rows below the cap (4.0-10.4 ``b``), and none of the three
#: with none below passed (their nearest leaves' sums -4.0 to 1.0 ``b``, a
#: cut leaf's part read as one of them, as the rule first did). Not
#: searched: the usual two sds, and the nearest two leaves.
FLOOR_CONFIRM_Z = 2.0
#: How many leaves nearest past the lower cap :data:`FLOOR_CONFIRM_Z` reads.
FLOOR_CONFIRM_LEAVES = 2
#: Below the lower cap, a leaf at a public point-mass candidate (0, 100:
#: ``_natural_limits.ATOM_CANDIDATES``, a finest leaf) whose raw noisy count
#: passes :data:`FLOOR_CONFIRM_Z` sds of its own noise (``2 sqrt(2) b``; a
#: leaf with no row does with probability ``e^-2.83 / 2 = 3.0 %``) also
#: confirms the bottom bin's excess (:func:`_candidate_past_cap`), and the
#: whole excess is placed, without :data:`FLOOR_MARGIN_Z`, on the leaves
#: from the cap to that leaf at least (by their raw counts): the rows below
#: the cap are then measured twice, apart, and the excess is the unbiased
#: estimate of them. The candidate's own level as a point mass is ``b ln(K
#: / (a s))`` = 5.99 ``b`` (``_natural_limits._atom_levels``), which a point
#: mass of 6 ``b`` rows misses half the time: credit_card's
#: ``expenditure`` (24 % exact zeros, 253 of 1,055 training rows, then
#: amounts from 1 up; ε = 1, ``b`` = 41.7) lost every zero in 4 of 10 seeds
#: of ``python -m benchmarks.bench_suite --half tune --tables credit_card``
#: (KS .30): at seed 0 its leaf at 0 drew 5.3 ``b``, the lower cap fell at
#: 32.5, and the bottom bin's excess (268 rows, 3.09 sds) was under twice the
#: bin's raw rows and its two nearest leaves below the cap summed to 0.6
#: sds. ``False``: only the nearest leaves confirm.
CANDIDATE_CONFIRMS = True


def place_capped_tail(
    hist,
    edges,
    estimates,
    free=None,
    margin=0.0,
    separate=False,
    strong_z=math.inf,
    confirm=None,
):
    """``hist`` (a :class:`._numeric_domain.FineHistogram`) with the rows the
    release measured in the top coarse bin (``estimates[-1]``: ``(T̂, σ)``;
    ``edges``: the column's bin edges, the last bin closed for integer
    columns) beyond what the bin's leaves inside the cap hold, placed on the
    leaves past the upper cap (module docstring); ``hist`` itself where the
    excess is within :data:`PAST_CAP_Z` sds, the raw counts or ``b`` are
    unknown, or the cap does not end at a leaf edge (a fence cut a leaf).

    Only where the excess is also twice the raw rows of the bin's leaves
    that are not point masses (finest; as the capped-tail warning's test)
    and, for a column of one bin, where that bin starts at a point mass at
    0 (else it holds rows clipped from below too). The
    run past the cap runs from the cap to the nearest leaf whose raw noisy
    count passes :data:`PAST_CAP_SCALES` ``b`` within
    :data:`PAST_CAP_REACH_T` (else the first leaf past the cap); its leaves
    share the excess in proportion to their positive raw counts (by their
    width in ``t`` where none is positive), and the cap moves to its end.
    Where the column's body reaches the top bin (:func:`_body_at_cap`),
    each raw count counts up to the leaf's room only (:func:`_room`), and
    the rows the leaves cannot hold stay on the first leaf past the cap.
    ``free`` (optional, a mask of the leaves): leaves whose room is never
    bounded -- a public point-mass candidate holds its own component
    (:func:`place_capped_floor`); ``margin``: that many sds of the
    difference are taken off the excess before it is placed (the rest stays
    in the bin); ``separate``: the rows past the cap are another component
    than the bin's (rows below a natural limit, :func:`place_capped_floor`),
    and no leaf's room is bounded; ``strong_z``: an excess past that many
    sds is placed even under twice the bin's raw rows
    (:data:`FLOOR_STRONG_Z` below the lower cap); ``confirm`` (``None``:
    off): so is an excess that the leaves nearest past the cap confirm,
    from the ``confirm``-th leaf past it on (:func:`_confirmed_past_cap`,
    below the lower cap; 1 skips the part of a leaf the cap cut), and, with
    ``free``, one that a ``free`` leaf past the cap confirms
    (:func:`_candidate_past_cap`, :data:`CANDIDATE_CONFIRMS`): that excess
    is placed whole (no ``margin``) on a run reaching that leaf at least."""
    raw = getattr(hist, "raw", None)
    scale = float(getattr(hist, "scale", np.nan))
    edges = np.asarray(edges, dtype=np.float64)
    k = edges.size - 1
    if (
        raw is None
        or not np.isfinite(scale)
        or k < 1
        or estimates is None
        or len(estimates) < k
        or estimates[k - 1] is None
    ):
        return hist
    e = np.asarray(hist.edges, dtype=np.float64)
    raw = np.asarray(raw, dtype=np.float64)
    counts = np.asarray(hist.counts, dtype=np.float64)
    cap_hi = float(hist.cap[1])
    a = float(edges[k - 1])
    right = float(edges[k]) + (1.0 if hist.integer else 0.0)
    at = np.flatnonzero(e == cap_hi)
    if not np.isfinite(cap_hi) or cap_hi > right or not 0 < at.size:
        return hist
    if at[0] >= counts.size:  # the cap is the last leaf's end: none past it
        return hist
    first = int(at[0])  # the first leaf past the cap
    finest = np.asarray(hist.finest, dtype=bool)
    kept = np.flatnonzero(counts > 0)
    if k < 2 and not (kept.size and finest[kept[0]] and e[kept[0]] == 0.0):
        # one bin holds the rows clipped from below too, unless it starts
        # at a point mass at 0 (a natural limit: acs12's hrs_work, one bin
        # [32, 64] and 184 rows below it, took them past 65: std x2.3e5)
        return hist
    inside = (e[1:] > a) & (e[:-1] < cap_hi)
    confirmed = confirm is not None and _confirmed_past_cap(
        raw, first + int(confirm), scale
    )
    # a public point mass past the cap measured apart from the bin
    held = None
    if free is not None:
        free = np.asarray(free, dtype=bool)
        if confirm is not None:
            held = _candidate_past_cap(e, raw, free, first, cap_hi, scale)
    # a confirmed excess waives the guard at any strength past PAST_CAP_Z
    strong = 0.0 if (confirmed or held is not None) else strong_z
    found = _excess(raw, inside, finest, estimates[k - 1], scale, strong)
    if found is None:
        return hist
    excess, noise = found
    if held is None:  # what the two measurements certify, at least
        excess -= margin * noise
    room = np.full(raw.size, np.inf)  # a separate component: any leaf
    if not separate and _body_at_cap(estimates, k, edges, hist.integer):
        room = _room(e, first, excess)
        if free is not None:
            room[free] = np.inf
    run = _past_run(e, np.minimum(raw, room), first, cap_hi, scale)
    if held is not None and held > run[-1]:  # on to the point mass
        run = np.arange(first, held + 1)
    w = np.minimum(np.maximum(raw[run], 0.0), room[run])
    if not w.sum() > 0:
        w = np.diff(_t(e[run[0] : run[-1] + 2]))
    share = excess * w / w.sum()
    if np.any(share > room[run]):  # the rest stays on the first leaf
        share = np.minimum(share, room[run])
        share[0] += excess - float(share.sum())
    out = counts.copy()
    out[run] = share
    cap = (hist.cap[0], float(e[run[-1] + 1]))
    return dataclasses.replace(hist, counts=out, cap=cap)


def _confirmed_past_cap(raw, first, scale):
    """Whether the raw noisy counts of the :data:`FLOOR_CONFIRM_LEAVES`
    leaves from ``first`` (the first leaf past the cap) on sum to more than
    :data:`FLOOR_CONFIRM_Z` sds of their noise, ``sqrt(2 m') b``: rows past
    the cap, measured apart from the bin (:data:`FLOOR_CONFIRM_Z`)."""
    near = np.asarray(raw, dtype=np.float64)[first : first + FLOOR_CONFIRM_LEAVES]
    if not near.size:
        return False
    noise = math.sqrt(2.0 * near.size) * scale
    return float(near.sum()) > FLOOR_CONFIRM_Z * noise


def _candidate_past_cap(e, raw, free, first, cap_hi, scale):
    """The nearest leaf past the cap that starts at a public point-mass
    candidate (``free``: a finest leaf at 0 or 100), lies within
    :data:`PAST_CAP_REACH_T` of the cap in ``t`` and has a raw noisy count
    past :data:`FLOOR_CONFIRM_Z` sds of its own noise, ``sqrt(2) b``
    (:data:`CANDIDATE_CONFIRMS`); ``None`` where there is none.
    Post-processing: the released leaves and the public ``b``."""
    if not CANDIDATE_CONFIRMS:
        return None
    idx = np.arange(first, raw.size)
    near = _t(e[idx]) - _t(cap_hi) <= PAST_CAP_REACH_T
    level = FLOOR_CONFIRM_Z * math.sqrt(2.0) * scale
    at = idx[free[idx] & near & (raw[idx] > level)]
    return int(at[0]) if at.size else None


def _excess(raw, inside, finest, estimate, scale, strong_z=math.inf):
    """``(excess, noise)`` of a coarse bin's rows outside its leaves, or
    ``None`` where it is within them: the release's estimate ``T̂ ± σ``
    (``estimate``) less the raw noisy counts of the ``m`` leaves ``inside``
    it (``Lap(b)`` each, unbiased), and the sd of that difference,
    ``sqrt(σ² + 2 m b²)``. ``None`` unless the excess passes
    :data:`PAST_CAP_Z` sds and twice the raw rows of the leaves that are
    not point masses (``finest``), as the capped-tail warning's own test
    (``_fences.capped_tail_reason``): a bin whose leaves drew a large
    negative noise (loans' ``num_satisfactory_accounts``, ε = 0.3, seed 1:
    1,691 raw rows against 3,768 real, b = 323) is not emptied past the cap
    (std ratio 1.11 -> 36.8). Past ``strong_z`` sds the guard is waived
    (:data:`FLOOR_STRONG_Z`; ``0`` where the leaves past the cap confirm
    the excess, :data:`FLOOR_CONFIRM_Z`)."""
    est, sd = (float(v) for v in estimate)
    excess = est - float(raw[inside].sum())
    noise = math.sqrt(sd * sd + 2.0 * scale * scale * max(int(inside.sum()), 1))
    spread = float(raw[inside & ~finest].sum())  # a point mass holds its own
    strong = excess > strong_z * noise  # past it, the guard is waived
    if not (excess > PAST_CAP_Z * noise and (excess > 2.0 * spread or strong)):
        return None
    return excess, noise


def _past_run(e, raw, first, cap_hi, scale):
    """Indices of the leaves past the cap that take its excess
    (:func:`place_capped_tail`): from ``first`` to the nearest leaf whose
    raw count passes :data:`PAST_CAP_SCALES` ``b`` and that starts within
    :data:`PAST_CAP_REACH_T` of the cap in ``t``, or to the first leaf
    before it whose raw count is :data:`PAST_CAP_NEAR_SHARE` of that one's;
    ``[first]`` where none does. Where the run reaches that leaf, it goes
    on over the leaves right after it whose raw counts pass
    :data:`PAST_CAP_SCALES` ``b`` too (within the reach): a stretch of
    leaves each past its noise is one stretch of rows, not the end of one.
    covid_testing's ``ct_result`` (ε = 1, seed 0 of ``python -m
    benchmarks.bench_suite --half report --tables covid_testing``; 94 %
    exactly 45, 6 % at 14-44): the leaves below its cap ``[32.5, 38.7)``,
    ``[22.9, 32.5)`` and ``[16, 22.9)`` drew 2.6, 6.4 and 4.5 ``b``, and
    the run that ended at the first put every row at 32.5 or more (std
    1.5 against 4.0; with the stretch, 3.9). On the TUNE half (14 mixed
    tables, ε 0.3 and 1, 10 seeds) 5 of 280 fits moved: KS of acs12's
    ``income`` .256 -> .205, attrition's ``YearsSinceLastPromotion`` .214
    -> .126, movies' ``budget`` .478 -> .383, storms' ``wind`` .046 ->
    .039; loans' ``total_debit_limit`` (ε = 0.3, seed 2, named before and
    after) .100 -> .121."""
    reach = float(_t(cap_hi)) + PAST_CAP_REACH_T
    j = first
    while j < raw.size and float(_t(e[j])) < reach:
        if raw[j] > PAST_CAP_SCALES * scale:
            near = np.flatnonzero(raw[first:j] >= PAST_CAP_NEAR_SHARE * raw[j])
            if near.size:
                return np.arange(first, first + int(near[0]) + 1)
            end = j  # and on over the leaves just past it that pass too
            while (
                end + 1 < raw.size
                and raw[end + 1] > PAST_CAP_SCALES * scale
                and float(_t(e[end + 1])) < reach
            ):
                end += 1
            return np.arange(first, end + 1)
        j += 1
    return np.asarray([first])


def _body_at_cap(estimates, k, edges, integer):
    """Whether the release measures the coarse bin below the top bin (of
    ``k``; ``estimates``: ``(estimate, sd)`` per bin; ``edges``: the bins'
    edges, the last bin closed for ``integer`` columns) at
    :data:`PAST_CAP_BODY_Z` sds or more: the column's body reaches the top
    bin, and the rows past the cap are its tail (module docstring).

    Failing that, the bins below the top bin within its own width in
    ``t``, pooled (their estimates summed, their variances added) and
    tested at the same level: a bin of one integer below a wide top bin
    says little of the body (acs12's ``hrs_work``, ε = 3, seed 0 of
    ``python -m benchmarks.bench_suite --half tune --tables acs12``: the
    top bin ``[54, 64]``, 67 ± 7 rows, above ``[53, 54)`` at -5 ± 7 and
    ``[45, 53)`` at 124 ± 21 in eight bins of one integer; read as a
    separate component, a noise leaf 2.6 ``b`` at ``[65536, 131072)`` took
    34 rows: std ratio 659). The pooling stops at a bin that starts at a
    public point-mass candidate (0, 100): a point mass is not a body (a
    count's or an amount's 0s say nothing of the values above them)."""
    if k < 2 or estimates[k - 2] is None:
        return False
    est, sd = (float(v) for v in estimates[k - 2])
    if est >= PAST_CAP_BODY_Z * sd:
        return True
    e = np.asarray(edges, dtype=np.float64)
    te = _t(np.append(e[:k], e[k] + (1.0 if integer else 0.0)))
    reach = 2.0 * te[k - 1] - te[k]  # the top bin's width in t, below it
    total, var, pooled = est, sd * sd, 1
    for i in range(k - 3, -1, -1):
        if estimates[i] is None or te[i] < reach or e[i] in ATOM_CANDIDATES:
            break
        b_est, b_sd = (float(v) for v in estimates[i])
        total, var, pooled = total + b_est, var + b_sd * b_sd, pooled + 1
    return pooled > 1 and total >= PAST_CAP_BODY_Z * math.sqrt(var)


def _room(e, first, excess):
    """The most rows of ``excess`` that a density non-increasing in ``t``
    from the cap (``e[first]``) can put on each leaf past it,
    ``excess * w_j / (t_(j+1) - t_cap)`` (``inf`` on the leaves inside the
    cap): the mean of such a density over its last stretch is at most its
    mean from the cap (module docstring)."""
    te = _t(np.asarray(e, dtype=np.float64))
    room = np.full(te.size - 1, np.inf)
    room[first:] = excess * np.diff(te)[first:] / (te[first + 1 :] - te[first])
    return room


def place_capped_floor(hist, edges, estimates):
    """``hist`` with the rows the release measured in the *bottom* coarse
    bin beyond what its leaves inside the cap hold placed on the leaves
    below the lower cap: :func:`place_capped_tail` on the column mirrored
    (``x -> -x``; an integer column's half-open leaves ``[a, b)`` become
    ``[1 - b, 1 - a)``, so the cap's upper end stays exclusive), then
    mirrored back.

    The encoder clips every row below the lower cap into the bottom bin, as
    it clips the rows past the upper cap into the top bin, and the release
    measures both. credit_card's ``expenditure`` (24 % exact zeros) at ε =
    1 (``python -m benchmarks.bench_suite --half tune --tables credit_card
    --light``) kept no leaf below its lower cap in 5 of 10 seeds, whose
    rows held no 0: at seed 8 the cap was 20.1, the bottom bin measured at
    447 ± 17 rows, and the rows' KS against the held-out ones 0.298; with
    the rows below placed, 0.106 (29 % zeros). A leaf starting at a public
    point-mass candidate (0, 100; :data:`._natural_limits.ATOM_CANDIDATES`)
    is a component of its own, not the decaying tail of the body: its room
    is not bounded. Only the excess less :data:`FLOOR_MARGIN_Z` sds is
    placed; an excess past :data:`FLOOR_STRONG_Z` sds, or one that the
    leaves nearest below the cap confirm (:data:`FLOOR_CONFIRM_Z`), is
    placed even where it is under twice the bin's raw rows; one that a
    candidate's leaf below the cap confirms (:data:`CANDIDATE_CONFIRMS`) is
    placed whole, down to that leaf at least. A column of one
    bin is left as it is (its bin holds the rows clipped from above too).
    Where the lower cap is a natural lower limit held by a kept point mass
    (:func:`_at_lower_limit`), rows are placed below it only past
    :data:`FLOOR_AT_LIMIT_Z` sds, as another component (``separate``: no
    room bounded): a signed balance's negatives. Where a fence cut a leaf
    at the lower cap, that leaf is first split there (:func:`_split_at_cap`).
    Post-processing of released quantities only, as
    :func:`place_capped_tail`."""
    raw = getattr(hist, "raw", None)
    edges = np.asarray(edges, dtype=np.float64)
    k = edges.size - 1
    if raw is None or k < 2 or estimates is None or len(estimates) < k:
        return hist
    separate = _at_lower_limit(hist)
    if separate and not _limit_z(hist, edges, estimates[0]) > FLOOR_AT_LIMIT_Z:
        return hist
    shift = 1.0 if hist.integer else 0.0
    cut = _split_at_cap(hist)
    finest = np.asarray(cut.finest, dtype=bool)
    e = np.asarray(cut.edges, dtype=np.float64)
    free = finest & np.isin(e[:-1], ATOM_CANDIDATES)
    mirrored = _mirror(cut, shift)
    bins = shift - edges[::-1]
    bins[-1] -= shift  # the mirrored top bin is the bottom bin, closed
    out = place_capped_tail(
        mirrored,
        bins,
        list(estimates)[::-1],
        free=free[::-1],
        margin=FLOOR_MARGIN_Z,
        separate=separate,
        strong_z=FLOOR_STRONG_Z,
        # the part below the cap of a leaf it cut holds a share of that
        # leaf's raw count by width, not rows measured below the cap
        confirm=0 if cut is hist else 1,
    )
    if out is mirrored:
        return hist
    return _mirror(out, shift)


def _bottom_excess(hist, edges, estimate):
    """:func:`_excess` of the bottom coarse bin (``edges``: the column's bin
    edges; ``estimate``: the release's ``(T̂, σ)`` of the bin) over its
    leaves' raw noisy counts, and the mask of those leaves; ``(None,
    mask)`` where the excess does not pass :func:`_excess`'s test."""
    a, b = (float(v) for v in np.asarray(edges, dtype=np.float64)[:2])
    e = np.asarray(hist.edges, dtype=np.float64)
    inside = (e[1:] > a) & (e[:-1] < b)
    if estimate is None or not np.isfinite(hist.scale):
        return None, inside
    raw = np.asarray(hist.raw, dtype=np.float64)
    finest = np.asarray(hist.finest, dtype=bool)
    return _excess(raw, inside, finest, estimate, float(hist.scale)), inside


def _limit_z(hist, edges, estimate):
    """The bottom bin's excess in sds of the difference
    (:func:`_bottom_excess`), ``-inf`` where it does not pass
    :func:`_excess`'s own test: what :data:`FLOOR_AT_LIMIT_Z` reads."""
    found, _ = _bottom_excess(hist, edges, estimate)
    return -np.inf if found is None else found[0] / found[1]


def _at_lower_limit(hist):
    """Whether ``hist``'s lower cap is a natural lower limit (0,
    :data:`._natural_limits.NATURAL_LIMITS`) whose finest leaf is kept: a
    point mass at 0 that bounds the column. A bottom bin of that point mass
    alone tests the noise of its own leaf: loans' ``paid_late_fees`` (99 %
    zeros; ε = 1, seed 2 of ``python -m benchmarks.bench_suite --half tune
    --tables loans --light``), its leaf at 0 drawn 3.9 ``b`` under its rows,
    put 564 rows on a noise leaf ``[-65, -16)``."""
    lower = [v for v, side in NATURAL_LIMITS if side < 0]
    lo = float(hist.cap[0])
    e = np.asarray(hist.edges, dtype=np.float64)
    at = np.flatnonzero((e[:-1] == lo) & np.asarray(hist.finest, dtype=bool))
    return lo in lower and at.size > 0 and float(hist.counts[at[0]]) > 0.0


def _split_at_cap(hist):
    """``hist`` with the leaf that its lower cap cuts (a fence inside a
    leaf, ``_fences.fences_t``) split at the cap: the part below it emptied
    (its count 0, as the cap had it) and each part given the leaf's raw
    noisy count in proportion to its width in ``t`` -- the leaf's count
    read as uniform in ``t``, as the decoder draws inside a leaf. ``hist``
    itself where the cap is a leaf edge (or outside the leaves)."""
    e = np.asarray(hist.edges, dtype=np.float64)
    lo = float(hist.cap[0])
    j = int(np.searchsorted(e, lo, "right")) - 1
    if not (0 <= j < e.size - 1) or e[j] == lo or not np.isfinite(lo):
        return hist
    if hist.integer and lo != math.floor(lo):
        return hist
    te = _t(np.asarray([e[j], lo, e[j + 1]], dtype=np.float64))
    below = float((te[1] - te[0]) / (te[2] - te[0]))

    def split(a, first, second):
        if a is None:
            return None
        a = np.asarray(a)
        return np.concatenate([a[:j], [first, second], a[j + 1 :]])

    raw, tent = hist.raw, hist.tentative
    return dataclasses.replace(
        hist,
        edges=np.concatenate([e[: j + 1], [lo], e[j + 1 :]]),
        counts=split(hist.counts, 0.0, hist.counts[j]),
        raw=None if raw is None else split(raw, raw[j] * below, raw[j] * (1 - below)),
        finest=split(hist.finest, False, False),
        tentative=None if tent is None else split(tent, tent[j], tent[j]),
    )


def _mirror(hist, shift):
    """``hist`` with its values mirrored, ``x -> -x``: its edges ``e ->
    shift - e`` (``shift`` 1 for an integer column, whose leaves ``[a, b)``
    hold ``a .. b - 1``: they become ``[1 - b, 1 - a)``); twice is
    ``hist``."""

    def rev(a):
        return None if a is None else np.asarray(a)[::-1].copy()

    lo, hi = (float(v) for v in hist.cap)
    return dataclasses.replace(
        hist,
        edges=shift - np.asarray(hist.edges, dtype=np.float64)[::-1],
        counts=rev(hist.counts),
        raw=rev(hist.raw),
        finest=rev(hist.finest),
        tentative=rev(hist.tentative),
        cap=(shift - hi, shift - lo),
    )


def capped_floor_reason(spec, estimates, domain=None):
    """Why a numeric column's rows below its lower cap come back inside it,
    from released quantities only, or ``None``.

    Where the lower cap is a natural lower limit held by a kept point mass
    (:func:`_at_lower_limit`), :func:`place_capped_floor` places rows below
    it only where the excess passes :data:`FLOOR_AT_LIMIT_Z` sds; else the
    rows the encoder clipped up into the bottom bin stay there. The test
    is :func:`place_capped_tail`'s, mirrored: the release's
    estimate ``T̂ ± σ`` of the bottom bin against the raw noisy counts of
    its ``m`` leaves (``domain``: the fine histogram as the domain released
    it; ``None``: ``spec.fine``), an excess over :data:`PAST_CAP_Z` sds of
    the difference and over twice the raw rows of its leaves that are not
    point masses. A signed balance (4,000 rows: 40 % at 0, 30 % at -5,000
    to -100, 30 % at 100 to 5,000; ε = 0.1, seeds 1-3) kept no leaf below
    its 0 and measured its bottom bin ``[0, 0.001)`` at 2,765-2,870 ± 77
    rows against 1,546-1,599 on the 0's leaf (8.3-9.4 sds): no synthetic
    row was negative, and no warning said so. Past
    :data:`FLOOR_AT_LIMIT_Z` sds those rows are placed below the 0, and
    the column is named only where the placement stopped within one unit
    of it (the decoded histogram's lower cap, ``spec.fine``, above -1: at
    seed 1 the leaf ``[-0.001, 0)`` drew 3.2 ``b`` and took them)."""
    hist = getattr(spec, "fine", None) if domain is None else domain
    k = int(getattr(spec, "n_levels", 0))
    raw = getattr(hist, "raw", None)
    if hist is None or raw is None or estimates is None or k < 2:
        return None
    if len(estimates) < k or estimates[0] is None or not np.isfinite(hist.scale):
        return None
    if getattr(spec, "time_unit", None) is not None:
        return None
    if not _at_lower_limit(hist):
        return _below_cap_reason(spec, estimates, hist)
    a, b = (float(v) for v in spec.levels[:2])
    found, inside = _bottom_excess(hist, spec.levels, estimates[0])
    if found is None:
        return None
    # the rows as decoded (spec.fine) were placed more than one unit below
    # the limit (place_capped_floor, past FLOOR_AT_LIMIT_Z): nothing to say
    limit = float(hist.cap[0])
    if getattr(getattr(spec, "fine", None), "cap", (limit,))[0] <= limit - 1.0:
        return None
    excess, held = found[0], float(np.asarray(raw, dtype=np.float64)[inside].sum())
    est, sd = (float(v) for v in estimates[0])
    return (
        f"a released bottom bin [{a:.6g}, {b:.6g}) of {est:.3g} ± {sd:.3g} rows "
        f"where its leaves' noisy counts hold {held:.3g}: about {excess:.3g} "
        f"rows lie below its lower cap {a:.6g}, a point mass the domain keeps "
        f"as the column's lower limit, and come back inside the bin ({CAP_ADVICE})"
    )


def _below_cap_reason(spec, estimates, hist):
    """Why a numeric column's rows below a lower cap that is no natural
    limit come back inside it, or ``None``: the capped-tail warning's test
    (``_fences.capped_tail_reason``) on the bottom coarse bin
    (``_fences.bottom_bin_excess``: the release's ``T̂ ± σ`` against the
    domain's kept mass ``K`` in it, ``hist`` as the domain released it), an
    excess over :data:`._fences.CAPPED_TAIL_Z` sds and over ``2 K``, where
    :func:`place_capped_floor` placed no row below the cap (the decoded
    histogram's lower cap, ``spec.fine``, is the domain's). Released
    quantities only."""
    found = bottom_bin_excess(spec, estimates, hist)
    if found is None:
        return None
    edges, est, sd, kept, noise, excess = found
    if not (excess > CAPPED_TAIL_Z * noise and excess > 2.0 * kept):
        return None
    decoded = getattr(spec, "fine", None)
    if decoded is not None and float(decoded.cap[0]) < float(hist.cap[0]):
        return None  # placed below the cap
    a, b = float(edges[0]), float(edges[1])
    return (
        f"a released bottom bin [{a:.6g}, {b:.6g}) of {est:.3g} ± {sd:.3g} rows "
        f"where its domain kept {kept:.3g}: about {excess:.3g} rows lie below "
        f"the lower cap {a:.6g}; they come back below it only where the "
        "domain's noisy counts there place them, else inside it, narrower "
        f"than the data ({CAP_ADVICE})"
    )
