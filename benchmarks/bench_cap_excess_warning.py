"""Can the release tell a numeric column whose tail the private cap cut
from one whose rows are in band? A candidate warning rule, measured and not
shipped (``benchmarks/results/bench_suite.md``, "A wide tail leaf cut by
the cap decays at its fitted rate").

For every numeric column of every ``auto`` fit (``bench_trunc_tail.fit``,
ε 1 and 0.3) it records, from released quantities only, what the rule
would read:

* ``zr``: the release's estimate ``T̂ ± σ`` of the top coarse bin less the
  fine histogram's *raw* noisy counts of the bin's leaves (a leaf the bin's
  end cuts counted by its share in ``t``), in sds of the difference
  ``sqrt(σ² + 2 m b²)``: rows the release measured past the cap;
* ``lever``: the rows' std (the model's bin shares over the released
  leaves, ``_spread.release_pieces``) with that excess, as a share of the
  column, moved from the top bin to the cap, over the rows' std as decoded:
  how much those rows would change the spread at the least.

and, from the real rows (to score the rule only), the std ratio of the
synthetic rows against the held-out rows and whether a warning named the
column. It then prints, per ``(zr, lever)`` threshold, the silent columns
under 0.5 of the data's std that the rule would name against the columns
in band it would name.

    PYTHONPATH=. python -m benchmarks.bench_cap_excess_warning \\
        --tables credit,hmda,cps1988,acs12,attrition,loans,credit_card,nmes1988,\\
workinghours --seeds 6 --cache cap_excess.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import os

import numpy as np


def _read(spec, estimates, level_shares, domain):
    """``(zr, lever)`` of one numeric column (module docstring), or ``None``."""
    from skdp_synth.preprocessing._count_tail import _t_moments
    from skdp_synth.preprocessing._fences import top_bin_excess
    from skdp_synth.preprocessing._numeric_domain import _t
    from skdp_synth.preprocessing._spread import release_pieces

    top = top_bin_excess(spec, estimates, domain)
    hist = domain if domain is not None else spec.fine
    raw = getattr(hist, "raw", None)
    if top is None or raw is None or level_shares is None:
        return None
    edges, k, est, sd, kept, noise, excess = top
    fe = np.asarray(hist.edges, dtype=np.float64)
    raw = np.asarray(raw, dtype=np.float64)
    lo, right = edges[k - 1], edges[k] + (1.0 if hist.integer else 0.0)
    inside, m = 0.0, 0
    for j in range(raw.size):
        a, b = fe[j], fe[j + 1]
        if b <= lo or a >= right:
            continue
        share = (_t(min(b, right)) - _t(max(a, lo))) / max(_t(b) - _t(a), 1e-300)
        inside += raw[j] * share
        m += 1
    zr = (est - inside) / math.sqrt(sd * sd + 2 * m * float(hist.scale) ** 2)
    total = float(sum(max(float(e), 0.0) for e, _ in estimates[:k]))
    P = release_pieces(spec, level_shares)
    if P is None or not total > 0:
        return zr, None
    mom = np.array([_t_moments(a, b) for _, a, b, _ in P])

    def std(w, mom):
        m1, m2 = w @ mom[:, 0], w @ mom[:, 1]
        return math.sqrt(max(m2 - m1 * m1, 0.0))

    w = P[:, 0]
    s0 = std(w, mom)
    top_rows = P[:, 1] >= edges[k - 1]
    if not (s0 > 0 and top_rows.any() and w[top_rows].sum() > 0):
        return zr, None
    take = min(max(excess, 0.0) / total, float(w[top_rows].sum()))
    w2 = w.copy()
    w2[top_rows] *= 1.0 - take / w[top_rows].sum()
    cap = float(hist.cap[1])
    lever = std(np.append(w2, take), np.vstack([mom, [cap, cap * cap]])) / s0
    return zr, lever


def collect(tables, seeds, cache):
    import skdp_synth.preprocessing._decoding as decoding
    from benchmarks.bench_trunc_tail import each_fit

    seen, rule = {}, decoding.degenerate_reasons

    def recorded(spec, estimates, n, missing, kept, level_shares=None, domain=None):
        if spec.kind == "numeric" and spec.fine is not None and estimates is not None:
            got = _read(spec, estimates, level_shares, domain)
            if got is not None:
                seen[str(spec.name)] = got
        return rule(spec, estimates, n, missing, kept, level_shares, domain)

    decoding.degenerate_reasons = recorded
    done = set()
    if os.path.exists(cache):
        with open(cache) as fh:
            done = {(r["table"], r["eps"], r["seed"]) for r in map(json.loads, fh)}
    try:
        with open(cache, "a") as out:
            for t, eps, seed, std, named in each_fit(tables, seeds, skip=done):
                for c, s in std.items():
                    zr, lever = seen.get(c, (None, None))
                    rec = dict(table=t, eps=eps, seed=seed, column=c, std=s)
                    rec.update(named=c in named, zr=zr, lever=lever)
                    out.write(json.dumps(rec) + "\n")
                out.flush()
                seen.clear()
                print(t, eps, seed, flush=True)
    finally:
        decoding.degenerate_reasons = rule


def report(cache):
    with open(cache) as fh:
        rs = [r for r in map(json.loads, fh) if r["zr"] is not None]
    silent = [r for r in rs if r["std"] < 0.5 and not r["named"]]
    band = [r for r in rs if 0.5 <= r["std"] <= 2.0 and not r["named"]]
    print(f"{len(silent)} silent columns under 0.5, {len(band)} in band (unnamed)")
    print("| zr > | lever > | silent named | in band named |")
    print("|---|---|---|---|")
    for z in (1.5, 2.0, 2.5):
        for lev in (1.1, 1.2, 1.3):

            def hit(r, z=z, lev=lev):
                return r["zr"] > z and (r["lever"] or 0.0) > lev

            a, b = sum(map(hit, silent)), sum(map(hit, band))
            print(f"| {z} | {lev} | {a} of {len(silent)} | {b} of {len(band)} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tables", required=True)
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--cache", default="cap_excess.jsonl")
    ap.add_argument("--no-run", action="store_true")
    a = ap.parse_args(argv)
    if not a.no_run:
        collect(a.tables.split(","), a.seeds, a.cache)
    report(a.cache)


if __name__ == "__main__":
    main()
