"""Where a heavy upper tail past a numeric column's private cap goes, and
whether the release's own evidence can name the column.

openintro ``loans_full_schema``'s ``paid_total`` (8,000 training rows; 1 %
178, median 1,562, 90 % 4,141, 99 % 25,013, max 41,630) comes back with
std ratios 0.26-0.39 in 16 of 20 fits of ``benchmarks.bench_suite --half
tune --tables loans --eps 1,0.3 --seeds 10 --methods auto --light``, with
no warning. ``--diagnose`` prints, per fit and column, the private cap,
the real rows past it, the release's estimate of the top coarse bin (it
holds every row at or above its lower edge: the encoder clips the rows past
the cap into it) against the domain's kept noisy mass there, and the raw
noisy counts of the leaves past the cap in units of their Laplace scale
``b`` (scores only: the real counts are not released).

``--columns OUT`` records, per fit and numeric column, what
``degenerate_reasons`` reads (the released domain before the pipeline
fills emptied leaves, the release's estimates, ``n̂``) and, to score only,
the std ratio against the test rows and whether a warning named the
column; ``--rules OUT`` prints how a warning rule's statistic separates
the silently collapsed columns (std ratio < 0.5) from the in-band ones.
``--open-window`` (the tentative window past every stopped upper cap,
ungated), ``--wide-tail-t`` (a wide outermost tail leaf decaying in
``t``) and ``--fence-leaf-end`` (an upper fence inside a kept leaf moved
to the leaf's outer edge) change the library's domain or decoding for this
run only; ``--suite`` passes
the rest of the command line to ``bench_suite``
(``benchmarks/results/bench_cut_tail.md``).

    PYTHONPATH=. python -m benchmarks.bench_cut_tail --diagnose \\
        paid_total,paid_principal,total_collection_amount_ever \\
        --fit-tables loans --fit-eps 1,0.3 --fit-seeds 4
    PYTHONPATH=. python -m benchmarks.bench_cut_tail --open-window --suite \\
        --half tune --tables loans --eps 1,0.3 --seeds 10 --methods auto \\
        --light --cache OPEN.jsonl
    PYTHONPATH=. python -m benchmarks.bench_cut_tail --columns C.pkl \\
        --fit-tables loans,credit,attrition,acs12,hmda,cps1988 \\
        --fit-eps 1,0.3 --fit-seeds 5
    PYTHONPATH=. python -m benchmarks.bench_cut_tail --rules C.pkl
    PYTHONPATH=. python -m benchmarks.bench_cut_tail --fence-leaf-end \\
        --wide-tail-t --suite --half tune --tables \\
        credit,hmda,cps1988,acs12,attrition,loans --eps 1,0.3 --seeds 10 \\
        --methods auto --light --cache ARM.jsonl
"""

from __future__ import annotations

import argparse
import copy
import math
import pickle
import sys

import numpy as np
import pandas as pd


def _fit(ctx, eps, seed, record):
    """One ``auto`` fit of ``bench_suite``'s pipeline; ``record`` receives
    each ``degenerate_reasons`` call's arguments."""
    from benchmarks.bench_trunc_tail import fit
    from skdp_synth.preprocessing import _decoding

    orig = _decoding.degenerate_reasons

    def spy(spec, estimates, n_estimate, *args, domain=None, **kwargs):
        record.append(
            {
                "spec": copy.deepcopy(spec),
                "estimates": estimates,
                "n": n_estimate,
                "domain": copy.deepcopy(domain if domain is not None else spec.fine),
            }
        )
        return orig(spec, estimates, n_estimate, *args, domain=domain, **kwargs)

    from skdp_synth.preprocessing import _numeric_domain

    kept, raws = _numeric_domain._kept_counts, []

    def spy_raw(edges, raw, scale, *args, **kwargs):
        raws.append((np.asarray(edges, float).copy(), np.asarray(raw, float).copy()))
        return kept(edges, raw, scale, *args, **kwargs)

    _decoding.degenerate_reasons = spy
    _numeric_domain._kept_counts = spy_raw
    try:
        out = fit(ctx, eps, seed)
    finally:
        _decoding.degenerate_reasons = orig
        _numeric_domain._kept_counts = kept
    for r in record:  # the raw noisy leaf counts (scores only: the domain's)
        h = r["domain"]
        if h is None:
            continue
        e = np.asarray(h.edges, float)
        same = [c for ee, c in raws if ee.size == e.size and np.array_equal(ee, e)]
        r["raw"] = same[-1] if same else None
    return out


def columns(tables, eps_list, seeds):
    from benchmarks.bench_suite import context, numeric_scores

    out = []
    for table in tables:
        ctx = context(table)
        for eps in eps_list:
            for seed in range(seeds):
                calls = []
                pipe, syn, named = _fit(ctx, eps, seed, calls)
                std = numeric_scores(syn, ctx["test"], ctx["cats"])["std"]
                for c in calls:
                    spec = c["spec"]
                    if spec.kind != "numeric" or spec.name not in std:
                        continue
                    real = pd.to_numeric(ctx["train"][spec.name], errors="coerce")
                    real = real.dropna().to_numpy(float)
                    hist = c["domain"]
                    out.append(
                        {
                            **c,
                            "table": table,
                            "eps": eps,
                            "seed": seed,
                            "col": str(spec.name),
                            "std": std[spec.name],
                            "named": spec.name in named,
                            "past_cap": None
                            if hist is None
                            else float(np.mean(real >= hist.cap[1])),
                        }
                    )
                print(table, eps, seed, file=sys.stderr, flush=True)
    return out


def statistics(r):
    """Released-quantity statistics of the upper cap of one recorded column
    (``None`` where the release has no estimate): ``z_top``, the release's
    top-bin estimate less the domain's kept mass there, ``(T̂ - K) /
    sqrt(σ² + 2 m b²)`` (the capped-tail warning's ``z``); ``z_past``, the
    raw noisy counts of the leaves within 2 of ``t`` past the cap pooled,
    ``P / (b sqrt(2 m'))``; ``z_both``, the two combined by inverse
    variance; ``share``, ``(T̂ - K) / n̂``; ``z_far``, the raw noisy counts
    of the leaves 1 to 3 past the cap in ``t`` pooled, over ``b sqrt(2
    m')``; ``z_slope``, the top-bin estimate less the extrapolation of the
    two bins below it (:func:`_slope_excess`), over ``σ``. All
    post-processing of the noisy counts and the release's estimates."""
    from skdp_synth.preprocessing._fences import _t

    spec, h, est, k = r["spec"], r["domain"], r["estimates"], r["spec"].n_levels
    if (
        h is None
        or est is None
        or k < 2
        or None in est[:k]
        or not np.isfinite(h.scale)
        or spec.time_unit is not None
    ):
        return None
    e = np.asarray(spec.levels, float)
    right = e[k] + (1.0 if h.integer else 0.0)
    fe = np.asarray(h.edges, float)
    inside = (fe[1:] > e[k - 1]) & (fe[:-1] < right)
    kept = float(h.counts[inside].sum())
    m = max(int((h.counts[inside] > 0).sum()), 1)
    top, sd = est[k - 1]
    b = float(h.scale)
    gap, v_gap = top - kept, sd**2 + 2.0 * m * b * b
    out = {"z_top": gap / math.sqrt(v_gap), "share": gap / r["n"]}
    out["z_past"], out["z_both"] = float("nan"), out["z_top"]
    out["z_far"], out["z_slope"] = float("nan"), float("nan")
    raw = r.get("raw")
    cap = float(h.cap[1])
    window = (fe[:-1] >= cap) & (_t(fe[:-1]) < _t(cap) + 2.0)
    if raw is not None and window.any():
        pooled, v_past = float(raw[window].sum()), 2.0 * int(window.sum()) * b * b
        out["z_past"] = pooled / math.sqrt(v_past)
        both = gap / v_gap + pooled / v_past
        out["z_both"] = both / math.sqrt(1.0 / v_gap + 1.0 / v_past)
    far = (fe[:-1] >= cap) & (_t(fe[:-1]) >= _t(cap) + 1.0)
    far &= _t(fe[:-1]) < _t(cap) + 3.0
    if raw is not None and far.any():
        out["z_far"] = float(raw[far].sum()) / (b * math.sqrt(2.0 * int(far.sum())))
    if k >= 4:
        out["z_slope"] = _slope_excess(e, est[:k], h.integer) / sd
    return out


def _slope_excess(e, est, integer):
    """The release's top-bin estimate less what the two bins below it
    predict: their densities in ``t`` (estimates floored at their sd)
    extrapolated log-linearly, never rising, over the top bin's width in
    ``t``. Only the release's own estimates: its noise is theirs (``σ`` a
    bin), not the fine leaves' ``b``."""
    from skdp_synth.preprocessing._fences import _t

    k = len(est)
    te = _t(np.asarray(e[: k + 1], float))
    te[k] = _t(e[k] + (1.0 if integer else 0.0))
    d = [max(v, s) / (te[j + 1] - te[j]) for j, (v, s) in enumerate(est)]
    mid = 0.5 * (te[:-1] + te[1:])
    slope = min(
        (math.log(d[k - 2]) - math.log(d[k - 3])) / (mid[k - 2] - mid[k - 3]), 0.0
    )
    a0, a1 = te[k - 1] - mid[k - 2], te[k] - mid[k - 2]
    if slope < -1e-9:
        pred = d[k - 2] * (math.exp(slope * a1) - math.exp(slope * a0)) / slope
    else:
        pred = d[k - 2] * (a1 - a0)
    return float(est[k - 1][0]) - pred


def rules(rows, zs=(1.5, 2.0, 2.5, 3.0)):
    """How each statistic separates the silently collapsed columns (std
    ratio < 0.5, no warning) from the in-band, unnamed ones."""
    stats = []
    for r in rows:
        s = statistics(r)
        if s is None or r["named"]:
            continue
        group = "silent" if r["std"] < 0.5 else "band" if r["std"] <= 2 else None
        if group:
            key = f"{r['table']} {r['eps']:g} s{r['seed']} {r['col']}"
            stats.append((group, s, key))
    n = {g: sum(1 for x, _, _ in stats if x == g) for g in ("silent", "band")}
    lines = [
        "| statistic | > z | silent collapsed named | in band named |",
        "|---|---|---|---|",
    ]
    for key in ("z_top", "z_both", "z_far", "z_slope"):
        for z in zs + ((4.0, 6.0) if key == "z_slope" else ()):
            hit = {g: sum(1 for x, s, _ in stats if x == g and s[key] > z) for g in n}
            lines.append(
                f"| {key} | {z:g} | {hit['silent']}/{n['silent']} | "
                f"{hit['band']}/{n['band']} "
                f"({100 * hit['band'] / max(n['band'], 1):.1f} %) |"
            )
    lines.append("\nsilent collapsed columns, by z_both:\n")
    lines.append("| fit | z_top | z_past | z_both | (T̂ - K) / n̂ |")
    lines.append("|---|---|---|---|---|")
    for _, s, key in sorted(
        (x for x in stats if x[0] == "silent"), key=lambda x: -x[1]["z_both"]
    ):
        lines.append(
            f"| {key} | {s['z_top']:.2f} | {s['z_past']:.2f} | {s['z_both']:.2f} "
            f"| {s['share']:.3f} |"
        )
    return "\n".join(lines)


def open_window():
    """Open the tentative window past every upper cap where growth stopped
    (``_fences.overflow_window`` with its gate ``OVERFLOW_Z`` at ``-inf``),
    each window leaf given at least ``b`` (the pooled count may be
    negative), so that only the release's test of the window's bin
    (``TENTATIVE_SUPPORT_Z``) decides: this run only."""
    from skdp_synth.preprocessing import _fences, _numeric_domain

    orig = _fences.overflow_window
    _fences.OVERFLOW_Z = -math.inf

    def ungated(out, raw, edges, atom, tentative, hi_x, scale):
        before = np.asarray(tentative, bool).copy()
        new, hi = orig(out, raw, edges, atom, tentative, hi_x, scale)
        added = np.asarray(tentative, bool) & ~before
        if added.any() and not new[added].sum() > 0:
            te = _fences._t(np.asarray(edges, float))
            span = np.minimum(te[1:], _fences._t(hi)) - te[:-1]
            new = new.copy()
            new[added] = scale * span[added] / span[added].sum()
        return new, hi

    _numeric_domain.overflow_window = ungated


def wide_tail_in_t():
    """Decode an outermost tail leaf wider than ``GAP_T`` in ``t`` with a
    density decaying in ``t`` from its inner neighbour's mean density in
    ``t`` (the rate that holds its noisy count: ``d0 (1 - exp(-r span)) / r
    = c``, uniform in ``t`` where even ``r = 0`` holds too little) instead of
    in ``x`` from the neighbour's density in ``x``: this run only."""
    from skdp_synth.preprocessing import _decoding
    from skdp_synth.preprocessing._numeric_domain import GAP_T, _t

    orig = _decoding._tail_models

    def models(hist, cap_lo, cap_hi):
        out = orig(hist, cap_lo, cap_hi)
        e, c = hist.edges, hist.counts
        pos = np.flatnonzero(c > 0)
        for leaf, (inner, side, _, _, flat) in list(out.items()):
            if flat == "t" or leaf not in (pos[0], pos[-1]) or pos.size < 2:
                continue
            lo, hi = max(e[leaf], cap_lo), min(e[leaf + 1], cap_hi)
            span = float(_t(hi) - _t(lo))
            if span <= GAP_T:
                continue
            nb = pos[1] if leaf == pos[0] else pos[-2]
            d0 = c[nb] / max(float(_t(e[nb + 1]) - _t(e[nb])), 1e-300)
            ratio = c[leaf] / d0 if d0 > 0 else span
            rate = 0.0
            if 0 < ratio < span:
                rate = 1.0 / _decoding._decay_scale(ratio, span)
            out[leaf] = (inner, side, span, rate, "t")
        return out

    _decoding._tail_models = models


def diagnose(tables, eps_list, seeds, names):
    """Per fit: the cap, the real rows past it, the release's top bin."""
    from benchmarks.bench_suite import context, numeric_scores

    for table in tables:
        ctx = context(table)
        for eps in eps_list:
            for seed in range(seeds):
                calls = []
                _, syn, named = _fit(ctx, eps, seed, calls)
                std = numeric_scores(syn, ctx["test"], ctx["cats"])["std"]
                for c in calls:
                    spec, h = c["spec"], c["domain"]
                    if str(spec.name) not in names or h is None:
                        continue
                    k = spec.n_levels
                    e = np.asarray(spec.levels, float)
                    fe = np.asarray(h.edges, float)
                    real = pd.to_numeric(ctx["train"][spec.name], errors="coerce")
                    real = real.dropna().to_numpy(float)
                    cap = float(h.cap[1])
                    inside = (fe[1:] > e[k - 1]) & (fe[:-1] < e[k] + h.integer)
                    past = np.flatnonzero(fe[:-1] >= cap)[:3]
                    true = np.histogram(np.clip(real, fe[0], fe[-1]), fe)[0]
                    raw = c.get("raw")
                    leaves = ", ".join(
                        f"[{fe[i]:.0f}, {fe[i + 1]:.0f}) {true[i]} real"
                        + ("" if raw is None else f" / {raw[i] / h.scale:+.2f} b")
                        for i in past
                    )
                    top, sd = c["estimates"][k - 1] if c["estimates"] else (np.nan,) * 2
                    print(
                        f"| {table} | {eps:g} | {seed} | {spec.name} | "
                        f"{std[spec.name]:.2f} | {h.scale:.0f} | {cap:.0f} | "
                        f"{int((real >= cap).sum())} | [{e[k - 1]:.0f}, {e[k]:.0f}] "
                        f"{top:.0f} ± {sd:.0f} "
                        f"({int((real >= e[k - 1]).sum())} real) | "
                        f"{h.counts[inside].sum():.0f} | {leaves} | "
                        f"{'yes' if spec.name in named else 'no'} |",
                        flush=True,
                    )


def fence_leaf_end():
    """An upper fence that lands inside a kept leaf moves to that leaf's
    outer edge (past the inter-decile limit: the leaf passed ``2 b``, so its
    rows lie somewhere in it): this run only."""
    from skdp_synth.preprocessing import _fences

    orig = _fences._extend

    def extend(te, body, fence, limit, side, raw=None, scale=None):
        f = orig(te, body, fence, limit, side, raw, scale)
        j = int(np.searchsorted(te, f, side="right") - 1)
        if side > 0 and 0 <= j < body.size and body[j] > 0 and te[j] < f < te[j + 1]:
            f = float(te[j + 1])
        return f

    _fences._extend = extend


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--diagnose", metavar="COLUMNS", help="comma-separated")
    p.add_argument("--columns", metavar="OUT")
    p.add_argument("--rules", metavar="PKL")
    p.add_argument("--open-window", action="store_true")
    p.add_argument("--wide-tail-t", action="store_true")
    p.add_argument("--fence-leaf-end", action="store_true")
    p.add_argument("--suite", action="store_true", help="the rest to bench_suite")
    p.add_argument("--fit-tables", default="loans")
    p.add_argument("--fit-eps", default="1,0.3")
    p.add_argument("--fit-seeds", type=int, default=5)
    a, rest = p.parse_known_args(argv)
    tables = a.fit_tables.split(",")
    eps = [float(e) for e in a.fit_eps.split(",")]
    if a.open_window:
        open_window()
    if a.wide_tail_t:
        wide_tail_in_t()
    if a.fence_leaf_end:
        fence_leaf_end()
    if a.diagnose:
        print(
            "| table | ε | seed | column | std ratio | b | cap | real rows past "
            "the cap | top bin: release's estimate | domain's kept mass there "
            "| leaves past the cap: real rows / raw noisy count | named |"
        )
        print("|---" * 12 + "|")
        diagnose(tables, eps, a.fit_seeds, a.diagnose.split(","))
    if a.columns:
        with open(a.columns, "wb") as f:
            pickle.dump(columns(tables, eps, a.fit_seeds), f)
    if a.rules:
        with open(a.rules, "rb") as f:
            print(rules(pickle.load(f)))
    if a.suite:
        from benchmarks import bench_suite

        bench_suite.main(rest)


if __name__ == "__main__":
    main()
