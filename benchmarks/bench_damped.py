"""DampedPrivateSynthesizer and its Bingham sampler: speed, error rate, TV error.

Run: ``python -m benchmarks.bench_damped`` (or ``python -m benchmarks.run damped``).

The synthesizer is :cite:`Boedihardjo2024` §5. Tables (markdown), every speed
figure a ratio to a baseline timed in the same run:

1. **Bingham acceptance** -- the Kent-Ganeiber-Mardia sampler's acceptance
   rate at concentrations 10^0..10^6 and dimensions 3..300, against the
   high-concentration limit ``~ sqrt(2/(e q))``.
2. **Scale** -- fit time at ``n = 10^6, p = 50`` as a ratio to one pass over
   the data (``X.T @ X`` on the float64 matrix).
3. **Rate** -- average 2-way marginal error squared against the rate of
   :cite:`Boedihardjo2024` Theorem 5.15,
   ``loglog n/(kappa log n) + p/(n^{1-kappa} eps) + 1/m``, as ``n`` grows from 10^3 to
   10^6.
4. **Utility against smartnoise-synth** (MST, AIM, MWEM) on binned digits at
   ``eps in {0.5, 1, 2}``: average 1-way, 2-way and 3-way total-variation
   error of the decoded tables and fit+sample time. smartnoise-synth is a
   benchmark-only dependency living in its own virtualenv (it needs
   ``opacus<0.15``, ``mbi<2``, ``opendp<0.15``, ``pandas<3``): build it with
   ``make compare-venv`` or set ``SKDP_COMPARE_PYTHON`` (see
   ``benchmarks/_compare.py``); the table is skipped with a message when it
   is missing.
5. **TV2 on real tables** (:func:`real_tables_tv2`) -- ``nass_cds`` and
   ``mpls_stops`` one-hot encoded: TV2 at eps = 1 of the default against the
   other parameter choices and the trivial baselines, at the real size and
   bootstrapped to 10^5, 10^6 rows; the crossover with noisy 1-way marginals
   at 1k..10k rows; TV2 over eps with the non-private microaggregator.
6. **Fit + sample time** (:func:`fit_sample_timing`) -- fit + sample of
   ``n = 10^6`` rows as a multiple of one ``X.T @ X``, on a bare 0/1 matrix
   and on ``nass_cds`` bootstrapped to 10^6 rows with its one-hot blocks.

``SKDP_BENCH_QUICK=1`` shrinks every size for a smoke run. On a machine
shared with other jobs run with ``OPENBLAS_NUM_THREADS=1``: multi-threaded
BLAS on oversubscribed cores made the ``X.T @ X`` baseline vary between
0.1 s and 7 s from one minute to the next, single-threaded it was stable.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
import time
import warnings

import numpy as np
import pandas as pd

from benchmarks._compare import compare_unavailable, run_snsynth
from benchmarks._harness import best_time, markdown_table
from skdp_synth import DampedPrivateSynthesizer, make_synthesis_pipeline
from skdp_synth.mechanisms import BinghamSampler
from skdp_synth.metrics import marginal_error
from skdp_synth.preprocessing import BooleanEncoder

QUICK = os.environ.get("SKDP_BENCH_QUICK", "") not in ("", "0")


# ------------------------------------------------------------ 1. Bingham
def limit_efficiency(q):
    """High-concentration acceptance limit (skdp_synth.mechanisms.bingham, step 5)."""
    from scipy.special import gammaln

    return math.exp(
        (q - 1) / 2 * math.log(2 * math.e)
        + gammaln(q / 2)
        - 0.5 * math.log(math.pi)
        - q / 2 * math.log(q)
    )


def bingham_table():
    rows = []
    draws = 200 if QUICK else 2000
    for q in (3, 10, 30, 100, 300):
        for conc in (1e0, 1e2, 1e4, 1e6):
            rng = np.random.default_rng(q)
            # one direction free, the rest penalised by `conc` (the worst case
            # of the limit), and a spread spectrum up to `conc`
            for label, lam in (
                ("gap", np.concatenate([[0.0], np.full(q - 1, conc)])),
                ("spread", np.concatenate([[0.0], rng.uniform(0, conc, q - 1)])),
            ):
                sampler = BinghamSampler(-np.diag(lam))
                t0 = time.perf_counter()
                sampler.sample(draws, rng)
                dt = time.perf_counter() - t0
                rows.append(
                    {
                        "q": q,
                        "concentration": f"{conc:.0e}",
                        "spectrum": label,
                        "acceptance": sampler.acceptance_rate,
                        "limit ~sqrt(2/(eq))": limit_efficiency(q),
                        "us per draw": 1e6 * dt / draws,
                    }
                )
    print("### Bingham sampler acceptance (Kent-Ganeiber-Mardia, ACG envelope)\n")
    print(
        markdown_table(
            rows,
            [
                "q",
                "concentration",
                "spectrum",
                "acceptance",
                "limit ~sqrt(2/(eq))",
                "us per draw",
            ],
        )
    )
    print()


# ------------------------------------------------------------- 2. scale
def latent_class_data(n, p, seed=0, k=4):
    """Boolean rows from a k-class mixture of independent Bernoullis."""
    rng = np.random.default_rng(seed)
    probs = rng.beta(0.5, 0.5, size=(k, p))
    z = rng.integers(0, k, n)
    out = np.empty((n, p), dtype=np.uint8)
    for start in range(0, n, 100_000):
        stop = min(n, start + 100_000)
        out[start:stop] = rng.random((stop - start, p)) < probs[z[start:stop]]
    return out


def scale_table():
    n, p = (10**5, 50) if QUICK else (10**6, 50)
    X = latent_class_data(n, p)
    Xf = X.astype(np.float64)
    rows = []
    for label, data in (("uint8 input", X), ("float64 input", Xf)):
        est = DampedPrivateSynthesizer(epsilon=1.0, random_state=0)
        # baseline and fit interleaved, best of 3 each: on a shared machine the
        # BLAS pass alone varied between 0.1 s and 3 s from minute to minute
        t_pass = t_fit = t_sample = math.inf
        for _ in range(3):
            t_pass = min(t_pass, best_time(lambda: Xf.T @ Xf, repeat=1)[0])
            t_fit = min(t_fit, best_time(lambda e=est, d=data: e.fit(d), repeat=1)[0])
            t_sample = min(t_sample, best_time(lambda e=est: e.sample(n), repeat=1)[0])
        rows.append(
            {
                "input": label,
                "n": n,
                "p": p,
                "t, cells": f"{est.n_components_}, {est.n_cells_}",
                "fit / pass": t_fit / t_pass,
                "sample(n) / pass": t_sample / t_pass,
                "fit (s)": t_fit,
                "pass X.T@X (s)": t_pass,
            }
        )
    print(f"### Scale: n = {n}, p = {p} (baseline: one pass, X.T @ X in float64)\n")
    print(
        markdown_table(
            rows,
            [
                "input",
                "n",
                "p",
                "t, cells",
                "fit / pass",
                "sample(n) / pass",
                "fit (s)",
                "pass X.T@X (s)",
            ],
        )
    )
    print()


# -------------------------------------------------------------- 3. rate
def rate_table():
    p, eps, kappa = 10, 1.0, 1 / 3
    ns = (10**3, 10**4, 10**5) if QUICK else (10**3, 10**4, 10**5, 10**6)
    seeds = 2 if QUICK else 3
    rows = []
    for n in ns:
        X = latent_class_data(n, p, seed=1)
        err_dist, err_sample = [], []
        for seed in range(seeds):
            est = DampedPrivateSynthesizer(
                epsilon=eps, kappa=kappa, random_state=seed
            ).fit(X)
            points, weights = est._synthetic_distribution()
            err_dist.append(
                marginal_error(X, points, d=2, synthetic_weight=weights) ** 2
            )
            err_sample.append(marginal_error(X, est.sample(n), d=2) ** 2)
        m = n
        rate = (
            math.log(math.log(n)) / (kappa * math.log(n))
            + p / (n ** (1 - kappa) * eps)
            + 1 / m
        )
        rows.append(
            {
                "n": n,
                "t, cells, b": f"{est.n_components_}, {est.n_cells_}, "
                f"{est.damping_:.0f}",
                "err^2 (released dist.)": float(np.mean(err_dist)),
                "err^2 (sample m=n)": float(np.mean(err_sample)),
                "rate (Thm 5.15)": rate,
                "err^2 / rate": float(np.mean(err_sample)) / rate,
            }
        )
    print(
        "### Error vs the rate of Theorem 5.15 (latent-class Boolean data, "
        f"p = {p}, eps = {eps}, kappa = 1/3, m = n; mean of {seeds} seeds)\n"
    )
    print(
        markdown_table(
            rows,
            [
                "n",
                "t, cells, b",
                "err^2 (released dist.)",
                "err^2 (sample m=n)",
                "rate (Thm 5.15)",
                "err^2 / rate",
            ],
        )
    )
    print()


# ------------------------------------------------- 4. smartnoise-synth
BIN_EDGES = [0, 4, 8, 12, 17]  # pixel intensities 0..16: public domain
PIXELS = [f"pixel_{i}_{j}" for i in range(2, 6) for j in range(2, 6)]


def digits_table():
    """The central 4x4 pixels of sklearn's digits, intensities binned in 4 (public)."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    names = [f"pixel_{i}_{j}" for i in range(8) for j in range(8)]
    frame = pd.DataFrame(digits.data, columns=names)[PIXELS]
    codes = frame.apply(lambda c: np.digitize(c, BIN_EDGES[1:-1])).astype(int)
    return frame, codes


def _tv_errors(real_codes, syn_codes):
    return {
        f"{d}-way TV": marginal_error(real_codes, syn_codes, d=d, kind="tv")
        for d in (1, 2, 3)
    }


def _ours(frame, codes, eps, seed, kappa, encoding):
    enc = BooleanEncoder(
        bin_edges={c: BIN_EDGES for c in PIXELS}, numeric_encoding=encoding
    )
    pipe = make_synthesis_pipeline(
        enc, DampedPrivateSynthesizer(epsilon=eps, kappa=kappa, random_state=seed)
    )
    t0 = time.perf_counter()
    syn = pipe.fit(frame).sample(len(frame), random_state=seed)
    dt = time.perf_counter() - t0
    syn_codes = syn.apply(lambda c: np.digitize(c, BIN_EDGES[1:-1])).astype(int)
    return _tv_errors(codes, syn_codes), dt


# Our variants: the encoding matters. Randomized rounding rounds every bit
# independently; a thermometer block (bits 1[x >= edge]) then decodes through
# the number of ones, which spreads a bimodal pixel (dark or bright) over the
# middle levels; a one-hot block decodes by sampling a set bit, which keeps
# the 1-way tables. Both encodings use the same public bin edges.
OURS = (
    ("damped, one-hot bins, kappa=1/3", "onehot", 1 / 3),
    ("damped, one-hot bins, kappa=1/2", "onehot", 0.5),
    ("damped, thermometer bins, kappa=1/3", "thermometer", 1 / 3),
)


def _snsynth(codes, method, eps, seed, tmp, rounds):
    return {
        kind: (_tv_errors(codes, syn), seconds)
        for kind, (syn, seconds) in run_snsynth(
            codes, method, eps, seed, tmp, rounds=rounds
        ).items()
    }


def comparison_table():
    frame, codes = digits_table()
    epsilons = (1.0,) if QUICK else (0.5, 1.0, 2.0)
    seeds = (0,) if QUICK else (0, 1)
    # AIM with fewer rounds hit NaN selection probabilities inside smartnoise
    aim_rounds = 20
    why_not = compare_unavailable()
    rows = []
    # non-private references
    rng = np.random.default_rng(0)
    indep = codes.apply(lambda c: rng.permutation(c.to_numpy()))
    rows.append({"method": "independent columns (not private)", "eps": "-",
                 **_tv_errors(codes, indep), "time (s)": math.nan})  # fmt: skip
    boot = codes.sample(len(codes), replace=True, random_state=0)
    rows.append({"method": "bootstrap of real rows (not private)", "eps": "-",
                 **_tv_errors(codes, boot), "time (s)": math.nan})  # fmt: skip
    for eps in epsilons:
        for label, encoding, kappa in OURS:
            errs = [_ours(frame, codes, eps, s, kappa, encoding) for s in seeds]
            rows.append(_mean_row(label, eps, errs))
        if why_not is not None:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            for method in ("mst", "aim", "mwem"):
                per_kind = {}
                for s in seeds:
                    for kind, res in _snsynth(
                        codes, method, eps, s, tmp, aim_rounds
                    ).items():
                        per_kind.setdefault(kind, []).append(res)
                for kind, errs in per_kind.items():
                    rows.append(_mean_row(kind, eps, errs))
    # where the noise stops dominating: the same pipeline at huge epsilons
    for eps in (1e2, 1e4, 1e6):
        errs = [_ours(frame, codes, eps, s, 1 / 3, "onehot") for s in seeds]
        rows.append(_mean_row("damped, one-hot bins, kappa=1/3 (limit)", eps, errs))
    cols = ["method", "eps", "1-way TV", "2-way TV", "3-way TV", "time (s)"]
    print(
        "### Utility vs smartnoise-synth: digits, central 4x4 pixels, intensities "
        f"binned [0,4,8,12,17) (n = {len(codes)}, 16 columns x 4 categories: 64 "
        "one-hot or 48 thermometer bits for ours); TV of the decoded tables; "
        f"mean of {len(seeds)} seeds; AIM with "
        f"rounds={aim_rounds} (its default, 16 x columns, takes many minutes); "
        "MWEM with split_factor=4 (the full 4^16 histogram cannot be "
        "allocated)\n"
    )
    if why_not is not None:
        print(f"(smartnoise-synth comparison skipped: {why_not})\n")
    print(markdown_table(rows, cols))
    print()


def _mean_row(label, eps, errs):
    keys = errs[0][0].keys()
    row = {"method": label, "eps": eps}
    for k in keys:
        row[k] = float(np.mean([e[0][k] for e in errs]))
    row["time (s)"] = float(np.mean([e[1] for e in errs]))
    return row


def _tv2_of_fit(real, cats, eval_rows, seed, estimator=None, **params):
    """TV2 of DampedPrivateSynthesizer (one-hot bits, block rounding), or of
    ``estimator`` when given, decoded, against ``eval_rows``."""
    import pandas as pd

    from benchmarks._categorical import tv
    from skdp_synth import DampedPrivateSynthesizer, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    est = (
        estimator
        if estimator is not None
        else DampedPrivateSynthesizer(random_state=seed, **params)
    )
    pipe = make_synthesis_pipeline(BooleanEncoder(categories=cats), est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # eps > 10 in the grid warns by design
        pipe.fit(real)
        syn = pd.DataFrame(pipe.sample(len(eval_rows), random_state=seed))
    return tv(eval_rows, syn, 2)


def _laplace_marginals(real, cats, eps, size, seed):
    """Noisy independent 1-way marginals, pure eps-DP (replace-one: each of the
    c column histograms moves by 2 in l1; Lap(2c/eps) per count)."""
    from benchmarks._categorical import decode, encode

    rng = np.random.default_rng(seed)
    codes = encode(real, cats)
    out = np.empty((size, codes.shape[1]), dtype=codes.dtype)
    scale = 2 * codes.shape[1] / eps
    for j, c in enumerate(real.columns):
        k = len(cats[c])
        noisy = np.bincount(codes[:, j], minlength=k) + rng.laplace(0, scale, k)
        q = np.clip(noisy, 0, None)
        q = q / q.sum() if q.sum() > 0 else np.full(k, 1 / k)
        out[:, j] = rng.choice(k, size=size, p=q)
    return decode(out, real.columns, cats)


def _uniform_rows(real, cats, size, seed):
    from benchmarks._categorical import decode

    rng = np.random.default_rng(seed)
    out = np.stack([rng.integers(0, len(cats[c]), size) for c in real.columns], 1)
    return decode(out, real.columns, cats)


def _resized(base, size, seed=0):
    if size is None:
        return base
    idx = np.random.default_rng(seed).integers(0, len(base), size)
    return base.iloc[idx].reset_index(drop=True)


TV2_SEEDS = (0, 1)


def real_tables_tv2(
    tables=("nass_cds", "mpls_stops"),
    sizes=(None, 10**5, 10**6),
    crossover_sizes=(1000, 3000, 10_000),
    epsilons=(0.5, 1, 2, 5, 10, 100),
):
    """TV2 of the block-aware default on real tables, beside other parameters and
    baselines (markdown tables).

    1. TV2 at eps = 1, at the real size and bootstrapped to 10^5, 10^6: the
       default (``parameters="optimal"``: block-aware geometry, noisy cell
       sums, centre = the blocks' centroid), the same with
       ``centre="marginals"`` (shrink toward the released sums' 1-way
       marginals), ``parameters="bound"`` (centred cube),
       the paper's variant, uniformly random rows and noisy independent 1-way
       marginals (Laplace, pure eps; ``n_components=0`` of the default is the
       same release, on the bits), with the default's plan (t, cells).
    2. Crossover: the same at the table bootstrapped to 1k, 3k, 10k rows.
    3. TV2 over eps at the real size, with the non-private
       ``CovarianceLossMicroaggregator`` (default k) as the limit.

    Every TV2 compares 30 000 synthetic rows with the first 30 000 rows of
    the real table (the same rows for every method and size, so the TV2
    sampling floor is shared), mean of ``TV2_SEEDS``.
    """
    from benchmarks._categorical import tv
    from benchmarks._tables import load_table
    from skdp_synth import CovarianceLossMicroaggregator

    n_eval = 30_000
    seeds = TV2_SEEDS if not QUICK else (0,)

    def mean_tv(**params):
        fits = [_tv2_of_fit(real, cats, ev, s, **params) for s in seeds]
        return float(np.mean(fits))

    def plan(real, **params):
        from skdp_synth import DampedPrivateSynthesizer
        from skdp_synth.preprocessing import BooleanEncoder

        enc = BooleanEncoder(categories=cats).fit(real.iloc[:10])
        X = enc.transform(real)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = DampedPrivateSynthesizer(random_state=0, **params).fit(
                X, blocks=enc.blocks_
            )
        return f"{est.n_components_}, {est.n_cells_}"

    rows, cross, grid = [], [], []
    for name in tables:
        base, cats = load_table(name)
        ev = base.iloc[:n_eval]
        for size in sizes if not QUICK else (None,):
            real = _resized(base, size)
            r = {"table": name, "n": len(real), "t, cells": plan(real, epsilon=1.0)}
            r["default"] = mean_tv(epsilon=1.0)
            r["centre=marginals"] = mean_tv(epsilon=1.0, centre="marginals")
            r["bound"] = mean_tv(epsilon=1.0, parameters="bound")
            r["paper"] = mean_tv(epsilon=1.0, parameters="paper", centre=None)
            r["uniform"] = float(np.mean(
                [tv(ev, _uniform_rows(real, cats, n_eval, s), 2) for s in seeds]
            ))  # fmt: skip
            r["noisy 1-way"] = float(np.mean(
                [tv(ev, _laplace_marginals(real, cats, 1.0, n_eval, s), 2)
                 for s in seeds]
            ))  # fmt: skip
            rows.append(r)
            print(r, flush=True)
        for size in crossover_sizes if not QUICK else ():
            real = _resized(base, size)
            c = {"table": name, "n": size, "t, cells": plan(real, epsilon=1.0)}
            c["default"] = mean_tv(epsilon=1.0)
            c["noisy 1-way"] = float(np.mean(
                [tv(ev, _laplace_marginals(real, cats, 1.0, n_eval, s), 2)
                 for s in seeds]
            ))  # fmt: skip
            cross.append(c)
            print(c, flush=True)
        real = base
        g = {"table": name}
        for eps in epsilons:
            g[f"eps={eps}"] = mean_tv(epsilon=float(eps))
        g["microaggregator (not private)"] = float(np.mean([
            _tv2_of_fit(real, cats, ev, s, estimator=CovarianceLossMicroaggregator(
                domain="boolean", random_state=s))
            for s in seeds
        ]))  # fmt: skip
        grid.append(g)
        print(g, flush=True)
    print(
        "\n### TV2 at eps = 1 on the real tables (30k synthetic vs the first 30k "
        f"real rows; mean of {len(seeds)} seeds)\n"
    )
    print(markdown_table(rows, list(rows[0])))
    if cross:
        print("\n### Crossover: default vs noisy 1-way marginals, eps = 1\n")
        print(markdown_table(cross, list(cross[0])))
    print("\n### TV2 over eps at the real size (default), and the non-private limit\n")
    print(markdown_table(grid, list(grid[0])))
    print()
    return rows, cross, grid


def fit_sample_timing(n=10**6, p=49, seed=0, table="nass_cds"):
    """Fit + sample of n rows as a multiple of one X.T @ X (float64), on a bare
    0/1 matrix (every bit binary) and on ``table`` bootstrapped to n rows, its
    one-hot blocks passed (the default then uses them: block geometry,
    per-block rounding). Baseline and fit interleaved, best of 3 each."""
    from benchmarks._tables import load_table
    from skdp_synth import DampedPrivateSynthesizer
    from skdp_synth.preprocessing import BooleanEncoder

    rng = np.random.default_rng(seed)
    X = (rng.random((n, p)) < rng.random(p)).astype(np.float64)
    base, cats = load_table(table)
    enc = BooleanEncoder(categories=cats).fit(base)
    T = np.asarray(enc.transform(_resized(base, n)), dtype=np.float64)
    rows = []
    for label, data, blocks in (("bare 0/1", X, None), (table, T, enc.blocks_)):
        gram = total = fit = math.inf
        for _ in range(3):
            t0 = time.perf_counter()
            data.T @ data
            gram = min(gram, time.perf_counter() - t0)
            est = DampedPrivateSynthesizer(random_state=seed)
            t0 = time.perf_counter()
            est.fit(data, blocks=blocks)
            t1 = time.perf_counter()
            est.sample(n)
            t2 = time.perf_counter()
            fit, total = min(fit, t1 - t0), min(total, t2 - t0)
        rows.append({"data": label, "n": n, "p": data.shape[1],
                     "t, cells": f"{est.n_components_}, {est.n_cells_}",
                     "XtX_s": gram, "fit_s": fit, "fit_sample_s": total,
                     "ratio": total / gram})  # fmt: skip
        print(rows[-1], flush=True)
    print("\n### Fit + sample of n rows / one X.T @ X (same run)\n")
    print(markdown_table(rows, list(rows[0])))
    return rows


def main():
    print(
        "Ratios to baselines measured in the same run are the figures to "
        "compare across machines.\n"
    )
    bingham_table()
    scale_table()
    rate_table()
    comparison_table()
    real_tables_tv2()
    fit_sample_timing()


if __name__ == "__main__":
    sys.exit(main())
