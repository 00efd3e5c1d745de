"""MST and AIM on top of Private-PGM (``mbi`` 2.x), benchmark only.

Runs in its own virtualenv (``make compare-mbi-venv`` builds ``.venv-mbi`` from
``benchmarks/requirements-mbi.txt``; mbi 2.x needs JAX), never imports
skdp_synth. Usage::

    python _mbi_runner.py CONFIG.json

``CONFIG`` holds ``codes`` (path of an ``.npy`` int matrix, one column per
attribute, values ``0 .. size-1``), ``sizes`` (domain size per column),
``method`` (``"mst"`` or ``"aim"``), ``epsilon``, ``delta``, ``seed``,
``out`` (path of the ``.npz`` to write) and optionally ``rounds`` (AIM, default
32), ``max_model_size`` (AIM, MB, default 80), ``max_iters`` (AIM mirror-descent
iterations per round, default 1000), ``mst_iters`` (default 10000).
Writes one int matrix per sampler into ``out`` and prints one JSON line with
the seconds (fit, and fit + each sampler) and what the mechanism measured.

Why our own code: the PyPI ``mbi`` package ships the estimation library
(``Domain``, ``Dataset``, ``LinearMeasurement``, ``estimation.MirrorDescent``,
``junction_tree``, ``MarkovRandomField.synthetic_data``) but not the MST and
AIM mechanisms, which live in the ``mechanisms/`` folder of the Private-PGM
repository (and call an older ``estimation.mirror_descent`` function that mbi
2.0.0 no longer has). The two functions below follow the published algorithms
-- MST: McKenna, Miklau, Sheldon, "Winning the NIST contest: a scalable and
general approach to differentially private synthetic data", JPC 2021; AIM:
McKenna, Mullins, Sheldon, Miklau, "AIM: an adaptive and iterative mechanism
for differentially private synthetic data", VLDB 2022 -- with the reference
code's budget split and constants:

* both convert (ε, δ) to zCDP ρ with the Canonne-Kamath-Steinke conversion
  (the smallest ρ whose ρ-zCDP implies (ε, δ)-DP), add/remove neighbours;
* MST: ρ/3 for all 1-way marginals (σ = sqrt(3 / (2ρ)) after the ℓ2
  normalisation of the measurement weights, i.e. σ·sqrt(d) on each of the d
  marginals), levels whose noisy count is below 3σ merged into one (mbi's
  ``compress``/``decompress``), ρ/3 for choosing d-1 tree edges with the
  exponential mechanism on the L1 error of a model fitted to the 1-way
  marginals (2500 iterations), ρ/3 for measuring the tree's 2-way marginals;
  final model by mirror descent (10000 iterations);
* AIM: workload = all 2-way marginals with weight 1, candidates = its downward
  closure scored by overlap; 1-way marginals first; per round 0.9 of the
  round's budget on a Gaussian measurement and 0.1 on the exponential
  mechanism (σ = sqrt(T / (2·0.9ρ)), ε_r = sqrt(8·0.1ρ / T) for ``rounds`` T),
  the bias-corrected L1 score, the model-size filter (``max_model_size`` MB
  scaled by the budget used), σ halved when the new measurement barely moves
  the model, the last round spends whatever remains.

Samplers, both from the same fitted model: ``round`` = mbi 2.x's default
``synthetic_data(method="round")`` (columns in elimination order, expected
counts per parent configuration rounded), ``sample`` = i.i.d. draws
(``method="sample"``). mbi draws from NumPy's global generator, seeded here.
"""

# The mechanisms draw from NumPy's global generator, seeded once in main(), as
# mbi's samplers do (one seed reproduces a whole run).
# ruff: noqa: NPY002
from __future__ import annotations

import itertools
import json
import math
import sys
import time
import warnings

import jax
import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import softmax

warnings.filterwarnings("ignore", message="JAX is running in float32 mode")
# mbi compiles many small programs: a persistent cache only costs here
jax.config.update("jax_enable_compilation_cache", False)

from mbi import Dataset, Domain, LinearMeasurement, estimation, junction_tree  # noqa: E402

SAMPLERS = ("round", "sample")


# --- privacy accounting ----------------------------------------------------
def _cdp_delta(rho, eps):
    """Smallest δ with ρ-zCDP ⇒ (ε, δ)-DP (Canonne, Kamath, Steinke 2020, Prop. 12)."""
    if rho <= 0:
        return 0.0

    def log_delta(log_am1):
        a = 1.0 + math.exp(log_am1)
        return (a - 1) * (a * rho - eps) + a * math.log1p(-1 / a) - math.log(a - 1)

    res = minimize_scalar(
        log_delta, bounds=(-10, 10), method="bounded", options={"xatol": 1e-10}
    )
    return min(1.0, math.exp(res.fun))


def cdp_rho(eps, delta):
    """Largest ρ whose ρ-zCDP implies (ε, δ)-DP."""
    return brentq(lambda r: _cdp_delta(r, eps) - delta, 1e-12, eps + 1, xtol=1e-14)


# --- shared pieces ---------------------------------------------------------
def _em(scores, eps, sensitivity):
    """Exponential mechanism (ρ cost ε²/8), keys of the ``scores`` dict."""
    keys = list(scores)
    q = np.array([scores[k] for k in keys], dtype=float)
    p = softmax(0.5 * eps / sensitivity * (q - q.max()))
    return keys[np.random.choice(len(keys), p=p)]


def _measure(data, cliques, sigma):
    """Gaussian measurements with ℓ2-normalised weights (MST's ``measure``)."""
    wgt = 1.0 / math.sqrt(len(cliques))
    out = []
    for cl in cliques:
        x = np.asarray(data.project(cl).datavector())
        y = x + np.random.normal(0, sigma / wgt, x.size)
        out.append(LinearMeasurement(y, cl, stddev=sigma / wgt))
    return out


def _fit(domain, measurements, iters, warm_start=None):
    return estimation.MirrorDescent().estimate(
        domain, measurements, iters=iters, warm_start=warm_start
    )


# --- MST ---------------------------------------------------------------------
def mst(data, eps, delta, *, iters=10000):
    rho = cdp_rho(eps, delta)
    sigma = math.sqrt(3 / (2 * rho))
    attrs = list(data.domain.attributes)
    log1 = _measure(data, [(a,) for a in attrs], sigma)
    # merge the levels whose noisy count is below 3 sigma (MST's compress_domain)
    mapping = {}
    for m in log1:
        y = np.asarray(m.noisy_measurement)
        keep = y >= 3 * m.stddev
        if keep.all():
            continue
        k = int(keep.sum())
        mapping[m.clique[0]] = np.where(keep, np.cumsum(keep) - 1, k).astype(np.int64)
    cdata = data.compress(mapping) if mapping else data
    log1 = [m.compress(mapping, data.domain) for m in log1]
    # select a maximum spanning tree with the exponential mechanism (rho / 3)
    est = _fit(cdata.domain, log1, 2500)
    weights = {}
    for a, b in itertools.combinations(attrs, 2):
        xhat = np.asarray(est.project((a, b)).datavector())
        x = np.asarray(cdata.project((a, b)).datavector())
        weights[(a, b)] = float(np.abs(x - xhat).sum())
    parent = {a: a for a in attrs}

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    r = len(attrs)
    eps_em = math.sqrt(8 * (rho / 3) / (r - 1))
    edges = []
    for _ in range(r - 1):
        cand = {e: w for e, w in weights.items() if find(e[0]) != find(e[1])}
        e = _em(cand, eps_em, 1.0)
        edges.append(e)
        parent[find(e[0])] = find(e[1])
    log2 = _measure(cdata, edges, sigma)
    model = _fit(cdata.domain, log1 + log2, iters)
    return (
        model,
        (lambda ds: ds.decompress(mapping) if mapping else ds),
        {
            "rho": rho,
            "edges": [list(e) for e in edges],
            "merged_levels": {a: int(len(m) - m.max()) for a, m in mapping.items()},
        },
    )


# --- AIM ---------------------------------------------------------------------
def _downward_closure(cliques):
    out = set()
    for cl in cliques:
        for k in range(1, len(cl) + 1):
            out.update(itertools.combinations(cl, k))
    return sorted(out, key=len)


def aim(data, eps, delta, *, rounds=32, max_model_size=80.0, max_iters=1000):
    rho = cdp_rho(eps, delta)
    attrs = list(data.domain.attributes)
    workload = list(itertools.combinations(attrs, 2))
    candidates = {
        cl: float(sum(len(set(cl) & set(w)) for w in workload))
        for cl in _downward_closure(workload)
    }
    answers = {cl: np.asarray(data.project(cl).datavector()) for cl in candidates}
    oneway = [cl for cl in candidates if len(cl) == 1]
    sigma = math.sqrt(rounds / (2 * 0.9 * rho))
    eps_r = math.sqrt(8 * 0.1 * rho / rounds)
    measurements = []
    for cl in oneway:
        x = answers[cl]
        measurements.append(
            LinearMeasurement(x + np.random.normal(0, sigma, x.size), cl, stddev=sigma)
        )
    rho_used = len(oneway) * 0.5 / sigma**2
    if rho_used >= rho - 2 * (0.5 / sigma**2 + eps_r**2 / 8):
        raise ValueError(
            f"rounds={rounds} is too few for {len(oneway)} columns: the 1-way "
            "marginals alone use 0.9 * rho * columns / rounds"
        )
    model = _fit(data.domain, measurements, max_iters)
    chosen, terminate = [], False
    while not terminate:
        if rho - rho_used < 2 * (0.5 / sigma**2 + eps_r**2 / 8):
            remaining = rho - rho_used
            sigma = math.sqrt(1 / (2 * 0.9 * remaining))
            eps_r = math.sqrt(8 * 0.1 * remaining)
            terminate = True
        rho_used += eps_r**2 / 8 + 0.5 / sigma**2
        size_limit = max_model_size * rho_used / rho
        free = set(_downward_closure(model.cliques))
        small = {
            cl: w
            for cl, w in candidates.items()
            if cl in free
            or junction_tree.hypothetical_model_size(
                data.domain, list(model.cliques) + [cl]
            )
            <= size_limit
        }
        errors = {}
        for cl, w in small.items():
            bias = math.sqrt(2 / math.pi) * sigma * data.domain.size(cl)
            xest = np.asarray(model.project(cl).datavector())
            errors[cl] = w * (np.abs(answers[cl] - xest).sum() - bias)
        cl = _em(errors, eps_r, max(abs(w) for w in small.values()))
        chosen.append(list(cl))
        x = answers[cl]
        n_cl = x.size
        measurements.append(
            LinearMeasurement(x + np.random.normal(0, sigma, n_cl), cl, stddev=sigma)
        )
        z = np.asarray(model.project(cl).datavector())
        model = _fit(data.domain, measurements, max_iters, warm_start=model)
        # every round compiles new XLA programs (the cliques are static); drop
        # the old ones, or the process runs out of memory mappings after a few
        # hundred compilations (vm.max_map_count, "LLVM compilation error:
        # Cannot allocate memory", then a crash)
        jax.clear_caches()
        w_new = np.asarray(model.project(cl).datavector())
        if np.abs(w_new - z).sum() <= sigma * math.sqrt(2 / math.pi) * n_cl:
            sigma /= 2
            eps_r *= 2
    model = _fit(data.domain, measurements, max_iters, warm_start=model)
    return (
        model,
        (lambda ds: ds),
        {
            "rho": rho,
            "rounds_param": rounds,
            "rounds_run": len(chosen),
            "rho_used": rho_used,
            "chosen": chosen,
        },
    )


def main(argv):
    with open(argv[0]) as fh:
        cfg = json.load(fh)
    codes = np.load(cfg["codes"])
    sizes = [int(s) for s in cfg["sizes"]]
    names = [f"c{j}" for j in range(codes.shape[1])]
    domain = Domain(names, sizes)
    data = Dataset({c: codes[:, j] for j, c in enumerate(names)}, domain)
    np.random.seed(int(cfg["seed"]))  # mbi samples from the global generator
    method = cfg["method"]
    t0 = time.perf_counter()
    if method == "mst":
        model, undo, info = mst(
            data, cfg["epsilon"], cfg["delta"], iters=int(cfg.get("mst_iters", 10000))
        )
    elif method == "aim":
        model, undo, info = aim(
            data,
            cfg["epsilon"],
            cfg["delta"],
            rounds=int(cfg.get("rounds", 32)),
            max_model_size=float(cfg.get("max_model_size", 80.0)),
            max_iters=int(cfg.get("max_iters", 1000)),
        )
    else:
        raise SystemExit(f"unknown method {method!r}")
    t_fit = time.perf_counter() - t0
    out, seconds = {}, {"fit": t_fit}
    for sampler in SAMPLERS:
        t0 = time.perf_counter()
        syn = undo(model.synthetic_data(rows=len(codes), method=sampler))
        out[sampler] = np.stack([np.asarray(syn.data[c]) for c in names], axis=1)
        seconds[sampler] = t_fit + time.perf_counter() - t0
    np.savez(cfg["out"], **out)
    print(json.dumps({"method": method, "seconds": seconds, "info": info}))


if __name__ == "__main__":
    main(sys.argv[1:])
