"""Point masses at public candidates, false ranges, and the fence's kept runs
past an empty stretch.

Two parts (``--part rates`` / ``--part fence``; both by default):

* **rates** (``privtree_histogram`` alone, integer columns unless named):
  an ``Assets``-like column (1,296 zeros and 2,304 rounded log-normal
  amounts, median 4,000) at credit's budget per column at ε = 0.3 (``b =
  138.9``): share of fits that keep the leaf at 0 (the zeros); the same
  body without zeros: share of fits with a kept leaf at 0 (a false point
  mass); an all-zero column, a 0/1 column (3,000 zeros, 500 ones) and an
  all-zero float column at ε = 0.04 (credit's nine numeric columns at ε =
  1 get about that): share of fits whose bounds reach past ±16 (tentative
  runs included: a pipeline's release still tests those), share with a
  kept leaf that is not tentative past ±16, and share with a kept finest
  leaf above ``5 b`` at a value the column does not hold (a false point
  mass).
* **fence** (the default pipeline of ``benchmarks.bench_suite``, ``auto``,
  on TUNE tables): every kept run that a fence reaches across an empty
  stretch (``_fences._confirmed``), with its noisy counts in noise sds of
  their sum, ``S / (b sqrt(2 m))``, and its true count from the training
  rows; then how many runs with under ``b / 4`` true rows ("noise") and
  with ``b`` or more ("real") each ``FENCE_CONFIRM_Z`` would cut. Run
  with the rule off (every run reaches), so the runs are those of the
  parent rule.

Run (the numbers are for the tree on ``PYTHONPATH``)::

    PYTHONPATH=. .venv/bin/python -m benchmarks.bench_atoms --part rates --fits 400
    PYTHONPATH=. .venv/bin/python -m benchmarks.bench_atoms --part fence \
        --tables credit,loans,acs12,attrition,hmda,cps1988 --eps 1,0.3 --seeds 10

Results: ``benchmarks/results/bench_atoms.md``.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

B_CREDIT_03 = 138.9  # credit's leaf-count scale at ε = 0.3 (nine columns)


def _zero_leaf(h):
    return int(np.flatnonzero(h.edges[:-1] == 0.0)[0])


def rates(fits):
    import skdp_synth.preprocessing._numeric_domain as nd
    from skdp_synth.mechanisms import NoiseSource

    rng = np.random.default_rng(0)
    assets = np.r_[np.zeros(1296), np.round(rng.lognormal(8.3, 1.0, 2304))]
    no_zeros = np.round(np.random.default_rng(1).lognormal(8.3, 1.0, 3600))
    eps = 1.0 / ((1.0 - nd.TREE_SHARE) * B_CREDIT_03)
    kept = false = 0
    for s in range(fits):
        h = nd.privtree_histogram(assets, eps, NoiseSource(s), integer=True)
        kept += h.counts[_zero_leaf(h)] > 0
        g = nd.privtree_histogram(no_zeros, eps, NoiseSource(10_000 + s), integer=True)
        false += g.counts[_zero_leaf(g)] > 0
    print(f"Assets-like zeros kept: {kept / fits:.3f} of {fits} fits")
    print(f"no zeros, kept leaf at 0: {false / fits:.4f} of {fits} fits")
    print(
        "| column (ε = 0.04) | far (bounds) | far, not tentative | false point mass |"
    )
    print("|---|---|---|---|")
    columns = (
        ("zeros", np.zeros(3500), True, (0.0,)),
        ("0/1", np.r_[np.zeros(3000), np.ones(500)], True, (0.0, 1.0)),
        ("float zeros", np.zeros(3500), False, (0.0,)),
    )
    for name, x, integer, values in columns:
        far = far_kept = atoms = 0
        for s in range(fits):
            h = nd.privtree_histogram(x, 0.04, NoiseSource(s), integer=integer)
            e = h.edges
            far += h.bounds[1] > 16 or h.bounds[0] < -16
            kept = h.counts > 0
            if h.tentative is not None:
                kept &= ~h.tentative
            far_kept += bool(np.any(kept & ((e[1:] > 17) | (e[:-1] < -16))))
            odd = kept & h.finest & ~np.isin(e[:-1], values)
            atoms += bool(np.any(odd & (h.counts > 5 * h.scale)))
        print(
            f"| {name} | {far / fits:.3f} | {far_kept / fits:.3f} "
            f"| {atoms / fits:.3f} |"
        )


def fence_runs(tables, eps_list, seeds):
    import skdp_synth.preprocessing._column_domain as cd
    import skdp_synth.preprocessing._fences as fe
    import skdp_synth.preprocessing._numeric_domain as nd
    from benchmarks import bench_suite as bs

    cur, runs = {}, []
    histogram, kept_counts, confirmed = (
        cd.privtree_histogram,
        nd._kept_counts,
        fe._confirmed,
    )

    def spy_histogram(values, *a, **k):
        cur["values"] = np.asarray(values, dtype=np.float64)
        return histogram(values, *a, **k)

    def spy_kept(edges, *a, **k):
        cur["edges"] = np.asarray(edges, dtype=np.float64)
        return kept_counts(edges, *a, **k)

    def spy_confirmed(raw, scale, run):
        edges, v = cur["edges"], cur["values"]
        v = v[~np.isnan(v)]
        true = np.histogram(np.clip(v, edges[0], edges[-1]), edges)[0]
        z = float(raw[list(run)].sum()) / (scale * math.sqrt(2.0 * len(run)))
        runs.append((cur["where"], float(edges[min(run)]), z, true[run].sum() / scale))
        return confirmed(raw, scale, run)

    default = fe.FENCE_CONFIRM_Z
    cd.privtree_histogram, nd._kept_counts = spy_histogram, spy_kept
    fe._confirmed, fe.FENCE_CONFIRM_Z = spy_confirmed, -math.inf
    try:
        for t in tables:
            ctx = bs.context(t)
            for e in eps_list:
                for s in range(seeds):
                    cur["where"] = f"{t} ε={e:g} seed {s}"
                    bs.fit_ours(ctx["train"], ctx["cats"], ctx["options"], e, s, "auto")
    finally:
        cd.privtree_histogram, nd._kept_counts = histogram, kept_counts
        fe._confirmed, fe.FENCE_CONFIRM_Z = confirmed, default
    print("| fit | run starts at | S / (b sqrt(2m)) | true rows / b |")
    print("|---|---|---|---|")
    for where, lo, z, true_b in sorted(runs, key=lambda r: r[2]):
        print(f"| {where} | {lo:.4g} | {z:.2f} | {true_b:.2f} |")
    noise = [z for _, _, z, t in runs if t < 0.25]
    real = [z for _, _, z, t in runs if t >= 1.0]
    print(f"\n{len(runs)} runs: {len(noise)} noise (< b/4 true rows), {len(real)} real")
    print("| FENCE_CONFIRM_Z | noise runs cut | real runs cut |")
    print("|---|---|---|")
    for cut in (1.0, 1.25, 1.5, 1.75, 2.0):
        n_cut = sum(z <= cut for z in noise)
        r_cut = sum(z <= cut for z in real)
        print(f"| {cut:g} | {n_cut} of {len(noise)} | {r_cut} of {len(real)} |")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", choices=("rates", "fence", "both"), default="both")
    ap.add_argument("--fits", type=int, default=400)
    ap.add_argument("--tables", default="credit,loans,acs12,attrition,hmda,cps1988")
    ap.add_argument("--eps", default="1,0.3")
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args(argv)
    if args.part in ("rates", "both"):
        rates(args.fits)
    if args.part in ("fence", "both"):
        eps = [float(e) for e in args.eps.split(",")]
        fence_runs(args.tables.split(","), eps, args.seeds)


if __name__ == "__main__":
    main()
