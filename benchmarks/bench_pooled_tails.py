"""Pooled growth of a private numeric domain's kept range past the cap:
windows of leaves tested on their pooled noisy count. Measured, not shipped
(``benchmarks/results/bench_pooled_tails.md``).

Growth (:func:`skdp_synth.preprocessing._numeric_domain.kept_counts`, step
2) asks each leaf to pass ``2 b`` (``b`` the Laplace scale of one leaf
count); at a small budget per column a tail holding a large share of the
rows spread over many leaves, each under its own noise, is cut whole. The
pooled count of ``m`` leaves has sd ``b sqrt(2 m)``: a window of leaves can
be above its noise where no leaf is.

:func:`pooled_growth` tests, past each end of the kept range, the windows
of leaves reaching ``1, 2, 4, ...`` in ``t(x) = sign(x) log2(1 + |x|)``
from that end (each window the leaves wholly inside ``[edge, edge + w)``,
only distinct non-empty ones, up to the root, never across ``x = 0``). A
window of ``m`` leaves passes when its pooled noisy count exceeds
:func:`window_threshold` ``(m, rate / K)`` times ``b``, ``K`` the windows
tested on the column: the exact upper ``rate / K`` quantile of a sum of
``m`` Laplace draws (:func:`laplace_sum_tail`), so by the union bound a
column whose leaves past the kept range are all empty has a window pass
with probability at most ``rate``. On each side the passing window with
the largest ratio of pooled count to threshold is kept: its pooled count
is shared among its leaves in proportion to their positive noisy counts,
and the cap moves to its outer edge. Post-processing of the released
Laplace counts: no budget.

``--scan`` prints, for the columns of the given fits with real rows outside
the cap, the best window on each side (its pooled count in noise sds and
the sds it needs); ``--rate R --suite ...`` runs ``benchmarks.bench_suite``
with the rule installed at false-pass rate ``R`` (``install``)::

    PYTHONPATH=. python -m benchmarks.bench_pooled_tails --scan \
        loans:0.3:3 credit:0.3:0 attrition:1:2 loans:0.3:0
    PYTHONPATH=. python -m benchmarks.bench_pooled_tails --rate 0.01 --suite \
        --half tune --tables credit,loans,acs12,attrition,hmda,cps1988 \
        --eps 1,0.3 --seeds 5 --methods auto --light --cache /tmp/cap/x2.jsonl
"""

from __future__ import annotations

import math

import numpy as np

#: The default chance that any window tested on a column whose leaves past
#: the kept range are all empty passes (:func:`pooled_growth`; union bound
#: over the ``K`` windows tested, each at ``rate / K``).
POOLED_FALSE_RATE = 0.01


def _t(x):
    return np.sign(x) * np.log2(1.0 + np.abs(x))


def laplace_sum_tail(m, y):
    """``P(S > y b)`` for ``S`` the sum of ``m`` Laplace(``b``) draws and
    ``y >= 0``, exactly: ``S`` has density ``e^-|y| / (2^(2m-1) (m-1)!)
    sum_j (2m-2-j)! 2^j |y|^j / (j! (m-1-j)!)`` (``j < m``), and
    ``int_y^inf x^j e^-x dx = j! e^-y sum_(i <= j) y^i / i!``."""
    if y <= 0:
        return 0.5
    ly = math.log(y)
    # in logs (the factorials overflow a float past m = 85)
    powers = np.arange(m) * ly - np.array([math.lgamma(i + 1) for i in range(m)])
    partial = np.logaddexp.accumulate(powers)  # ln sum_(i <= j) y^i / i!
    j = np.arange(m)
    coef = np.array(
        [math.lgamma(2 * m - 1 - i) - math.lgamma(m - i) for i in range(m)]
    ) + j * math.log(2.0)
    norm = (2 * m - 1) * math.log(2.0) + math.lgamma(m)
    logs = coef + partial - y - norm
    return float(np.exp(logs).sum())


def window_threshold(m, p):
    """The least ``y`` (to 1e-9 relative) with ``P(S > y b) <= p`` for the
    sum ``S`` of ``m`` Laplace(``b``) draws (:func:`laplace_sum_tail`, which
    falls in ``y``)."""
    lo, hi = 0.0, 1.0
    while laplace_sum_tail(m, hi) > p:
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if laplace_sum_tail(m, mid) > p else (lo, mid)
    return hi


def _windows(te, first, side):
    """The distinct windows past leaf index ``first`` (``side`` ``+1``
    upper): leaf index arrays, nearest first, each the leaves wholly inside
    ``[edge, edge + w)`` in ``t`` for ``w = 1, 2, 4, ...``, never across
    ``x = 0`` (a count's or an amount's natural limit: a window from the
    positive side with rows near 0 passed on them and shared its count
    with noise leaves below 0; acs12's ``age``, ε = 1, seed 0 of
    ``benchmarks.bench_suite --half tune``, came back with 3.6 times the
    real std)."""
    n = te.size - 1
    idx = np.arange(first, n) if side > 0 else np.arange(first, -1, -1)
    if idx.size == 0:
        return []
    edge = te[idx[0]] if side > 0 else te[idx[0] + 1]
    if side < 0 and edge > 0:
        idx = idx[te[idx] >= 0]
    elif side > 0 and edge < 0:
        idx = idx[te[idx + 1] <= 0]
    if idx.size == 0:
        return []
    reach = np.abs((te[idx + 1] if side > 0 else te[idx]) - edge)
    out, w, last = [], 1.0, 0
    while last < idx.size:
        k = int(np.searchsorted(reach, w, "right"))
        if k > last:
            out.append(idx[:k])
            last = k
        w *= 2.0
    return out


def pooled_growth(out, raw, edges, scale, cap, rate=POOLED_FALSE_RATE):
    """``(out, cap)`` with, past each end of the kept leaves ``out > 0``,
    the passing window with the largest ratio of pooled count to threshold
    added (module docstring). ``raw`` the released
    noisy leaf counts, ``scale`` their Laplace ``b``, ``cap`` the cap
    (integer columns: ``hi`` exclusive, as the leaf edges)."""
    pos = np.flatnonzero(out > 0)
    if pos.size == 0 or not np.isfinite(scale) or scale <= 0:
        return out, cap
    te = _t(np.asarray(edges, dtype=np.float64))
    sides = {
        -1: _windows(te, int(pos[0]) - 1, -1),
        1: _windows(te, int(pos[-1]) + 1, 1),
    }
    k = sum(len(w) for w in sides.values())
    if k == 0:
        return out, cap
    p = rate / k
    out = out.copy()
    lo, hi = cap
    for side, windows in sides.items():
        # of the passing windows, the one with the most evidence (pooled
        # count over its threshold): the nearest stops a tail spread wider
        # than it, the widest takes in the empty leaves beyond a tail
        ratio = [
            float(raw[w].sum()) / (window_threshold(w.size, p) * scale) for w in windows
        ]
        if not windows or max(ratio) <= 1.0:
            continue
        win = windows[int(np.argmax(ratio))]
        pooled = float(raw[win].sum())
        share = np.maximum(raw[win], 0.0)
        out[win] = pooled * share / share.sum()
        if side > 0:
            hi = max(hi, float(edges[win.max() + 1]))
        else:
            lo = min(lo, float(edges[win.min()]))
    return out, (lo, hi)


def install(rate=POOLED_FALSE_RATE):
    """Run :func:`pooled_growth` after the thin-tail recovery of
    ``_numeric_domain._kept_counts`` (patched in this process only): the
    window's mass joins the kept counts and the cap moves to the window's
    outer edge, cut, as the library cuts it, to the outermost leaf with
    mass."""
    import skdp_synth.preprocessing._numeric_domain as nd

    recover, kept = nd._recover_tails, nd._kept_counts
    moved = {}

    def _recover(out, raw, edges, atom, fences, scale):
        out = recover(out, raw, edges, atom, fences, scale)
        # from an empty cap: what comes back is the kept windows' outer edges
        grown, cap = pooled_growth(out, raw, edges, scale, (np.inf, -np.inf), rate)
        moved["cap"] = cap
        return grown

    def _kept(edges, raw, scale, finest, integer=False, near_zero=False):
        moved.clear()
        out, (lo, hi), tent = kept(edges, raw, scale, finest, integer, near_zero)
        wlo, whi = moved.get("cap", (np.inf, -np.inf))
        if wlo < np.inf or whi > -np.inf:
            pos = np.flatnonzero(out > 0)
            lo = max(float(edges[pos[0]]), min(lo, wlo))
            hi = min(float(edges[pos[-1] + 1]), max(hi, whi))
        return out, (lo, hi), tent

    nd._recover_tails, nd._kept_counts = _recover, _kept


def scan(fits, rate=POOLED_FALSE_RATE):
    """Per column of each ``(table, eps, seed)`` fit with more than 1 % of
    its training rows outside the cap and more than 0.5 % in a window: the
    best window on each side (largest pooled count over threshold), its
    leaves ``m``, its pooled count in noise sds ``S / (b sqrt(2 m))``, the
    sds the rule needs, and the real rows inside it (not released)."""
    import pandas as pd

    import skdp_synth.preprocessing._numeric_domain as nd
    from benchmarks.bench_suite import context
    from benchmarks.bench_trunc_tail import fit

    lines = [
        "| table | eps | seed | column | side | rows outside cap | m | "
        "pooled (sds) | needed (sds) | rows in window |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    kept = nd._kept_counts
    seen = []

    def spy(edges, raw, scale, finest, integer=False, near_zero=False):
        r = kept(edges, raw, scale, finest, integer, near_zero)
        seen.append(
            (np.asarray(edges, float), np.array(raw, float), scale, near_zero, r)
        )
        return r

    for table, eps, seed in fits:
        seen.clear()
        nd._kept_counts = spy
        try:
            ctx = context(table)
            pipe, _, _ = fit(ctx, eps, seed)
        finally:
            nd._kept_counts = kept
        for spec in pipe[0].specs_:
            h = spec.fine
            if spec.kind != "numeric" or h is None:
                continue
            edges, raw, b, near, (out, cap, _) = next(
                s
                for s in seen
                if s[0].shape == np.shape(h.edges) and np.allclose(s[4][0], h.counts)
            )
            if near:
                continue
            real = pd.to_numeric(ctx["train"][spec.name], errors="coerce").dropna()
            real = real.to_numpy(float)
            counts = np.histogram(real, edges)[0]
            lost = float(np.mean((real < cap[0]) | (real >= cap[1])))
            if lost < 0.01:
                continue
            te = _t(edges)
            pos = np.flatnonzero(out > 0)
            sides = {
                -1: _windows(te, int(pos[0]) - 1, -1),
                1: _windows(te, int(pos[-1]) + 1, 1),
            }
            k = sum(len(w) for w in sides.values())
            for side, windows in sides.items():
                if not windows:
                    continue
                thr = [window_threshold(w.size, rate / k) for w in windows]
                ratio = [raw[w].sum() / (y * b) for w, y in zip(windows, thr)]
                i = int(np.argmax(ratio))
                w, sd = windows[i], b * math.sqrt(2.0 * windows[i].size)
                share = counts[w].sum() / real.size
                if share < 0.005:
                    continue
                lines.append(
                    f"| {table} | {eps:g} | {seed} | {spec.name} | "
                    f"{'upper' if side > 0 else 'lower'} | {lost:.1%} | {w.size} | "
                    f"{raw[w].sum() / sd:.2f} | {thr[i] * b / sd:.2f} | {share:.1%} |"
                )
    return "\n".join(lines)


def main(argv=None):
    import argparse
    import sys

    p = argparse.ArgumentParser()
    p.add_argument("--rate", type=float, default=POOLED_FALSE_RATE)
    p.add_argument("--scan", nargs="+", metavar="TABLE:EPS:SEED")
    p.add_argument("--suite", action="store_true", help="the rest to bench_suite")
    a, rest = p.parse_known_args(argv)
    if a.scan:
        fits = [(t, float(e), int(s)) for t, e, s in (f.split(":") for f in a.scan)]
        print(scan(fits, a.rate))
    if a.suite:
        from benchmarks import bench_suite

        install(a.rate)
        sys.argv = ["bench_suite", *rest]
        bench_suite.main(rest)


if __name__ == "__main__":
    main()
