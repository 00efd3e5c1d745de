"""``skdp-synth demo``: every method on a binary table, then a real categorical one.

Apart from the commands because it is a guided comparison, not a data
operation: it prints tables of marginal errors against non-private references
(a bootstrap of the real rows, independent columns, noisy 1-way marginals).
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ._console import _Steps


def _reference_rows(X, rng):
    """Non-private references that frame the demo's numbers."""
    n = X.shape[0]
    bootstrap = X[rng.integers(0, n, size=n)]
    independent = (rng.random(X.shape) < X.mean(axis=0)).astype(X.dtype)
    return [
        ("real rows, bootstrap", "none (not private)", bootstrap),
        ("independent columns", "none (not private)", independent),
    ]


#: Above this epsilon the demo says the guarantee protects no one in practice
#: (a likelihood ratio of e^10, about 22,000, between neighbouring inputs).
VACUOUS_EPSILON = 10.0


#: The demo's tables: error columns are distances, so lower is better.
_ERROR_NOTE = "error (lower is better)"


#: The ``DP`` column: whether a row's synthetic data carry a
#: differential-privacy guarantee (``[1]``: one too weak to protect anyone).
DP_YES, DP_NO, DP_VACUOUS = "yes", "no", "yes [1]"


def _dp_mark(eps):
    """The ``DP`` column of a row whose estimator spent ``eps`` (``None``:
    no DP guarantee -- a reference, or microaggregation's anonymity)."""
    if eps is None:
        return DP_NO
    return DP_VACUOUS if eps > VACUOUS_EPSILON else DP_YES


def _demo_table(rows, labels):
    """Print ``(label, privacy, errors, seconds, dp)`` rows under one header.

    The rows that are not differentially private (``dp == "no"``: the
    references, which are the real rows or their columns, and
    microaggregation's (n/k)-anonymity) come first, above a rule; the
    private ones below it, so a non-private row never reads as the best
    private method by its place in the table."""
    header = (
        f"{'method':<26} {'DP':<7} {'privacy':<22} "
        + " ".join(f"{x:>7}" for x in labels)
        + f" {'time':>8}"
    )
    print(f"{'':<57}{_ERROR_NOTE:^23}")
    print(header)
    print("-" * len(header))
    public = [r for r in rows if r[4] == DP_NO]
    private = [r for r in rows if r[4] != DP_NO]
    for group, rule in ((public, "not private"), (private, "private")):
        if not group:
            continue
        if rule == "private" and public:
            print(f"{'-- differentially private (DP) --':-<{len(header)}}")
        for label, privacy, errs, elapsed, dp in group:
            t = f"{elapsed:7.2f}s" if elapsed else "      -"
            print(
                f"{label:<26} {dp:<7} {privacy:<22} "
                + " ".join(f"{e:7.4f}" for e in errs)
                + f" {t}"
            )
    if public:
        print(_not_private_note(public))


def _not_private_note(public):
    """What the rows above the rule are: not differentially private."""
    anonymity = [label for label, privacy, *_ in public if "not private" not in privacy]
    note = (
        "\nDP = differentially private. Rows marked 'no' carry no DP guarantee: "
        "the references are the real rows\nthemselves or their columns"
    )
    if anonymity:
        note += (
            f"; {', '.join(anonymity)} is (n/k)-anonymity, not DP: it releases "
            "means of small groups of real\nrows, which is why it sits close to "
            "them -- not because it is the best method"
        )
    return note + "."


def cmd_demo(args):
    from ..datasets import load_binary_digits
    from ..metrics import marginal_error
    from ._registry import METHODS, get_method

    X = load_binary_digits()
    names = sorted(METHODS) if args.methods is None else args.methods.split(",")
    methods = [get_method(name) for name in names]  # unknown names: exit 2 now
    rng = np.random.default_rng(args.seed)
    n, p = X.shape
    print(
        f"Part 1 -- every method on {n:,} images of handwritten digits (8x8 "
        f"pixels, each on or off: {p} yes/no columns).\nEach method makes {n:,} "
        "synthetic rows; the error is how far their 1-, 2- and 3-way tables are "
        "from the real ones\n(average over all tables, Boedihardjo2024 eq. 1.2; "
        "0 = identical, lower is better).\n"
    )
    rows = []
    for label, privacy, Y in _reference_rows(X, rng):
        rows.append((label, privacy, Y, 0.0, None))
    # the bar names the method being fitted (one takes minutes on 2 cores)
    with _Steps("methods", [m.name for m in methods]) as steps:
        for method in methods:
            steps.step()
            rows.append(_demo_row(method, X, args.seed))

    table = [
        (
            label,
            privacy,
            [marginal_error(X, Y, d) for d in (1, 2, 3)],
            elapsed,
            _dp_mark(eps),
        )
        for label, privacy, Y, elapsed, eps in rows
    ]
    _demo_table(table, ["1-way", "2-way", "3-way"])
    if any(eps is not None and eps > VACUOUS_EPSILON for *_, eps in rows):
        print(
            f"\n[1] epsilon above {VACUOUS_EPSILON:g}: no meaningful protection. "
            "The private sampler pays epsilon for every row it releases;\n    "
            "shown for comparison (user guide: PrivateSampler)."
        )
    if not METHODS:
        print("\n(no synthesis methods registered yet)")
    else:
        _demo_conclusion(table, rows)
    if args.table != "none":
        return _demo_categorical(args.table, args.seed)
    return 0


def _demo_row(method, X, seed):
    """``(name, privacy, rows, seconds, epsilon_)`` of one method on ``X``."""
    est = method.build(random_state=seed, **method.demo_params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        est.fit(X)
        Y = np.asarray(est.sample(X.shape[0]))
        elapsed = time.perf_counter() - t0
    eps = getattr(est, "epsilon_", None)
    if eps is not None:
        privacy = f"eps={eps:.3g}"
        if est.delta_:
            privacy += f", delta={est.delta_:.0e}"
        if eps > VACUOUS_EPSILON:
            privacy = f"eps={eps:.1e} [1]"
    else:
        privacy = getattr(est, "privacy_summary_", "anonymity")
    return method.name, privacy, Y, elapsed, eps


def _demo_conclusion(table, rows):
    """One plain sentence on part 1: the best method with a real DP guarantee."""
    floor = table[0][2][1]
    private = [
        (errs[1], label)
        for (label, _, errs, _, _), (*_, eps) in zip(table, rows)
        if eps is not None and eps <= VACUOUS_EPSILON
    ]
    if not private:
        return
    best_err, best = min(private)
    print(
        f"\nIn short: of the methods with a meaningful differential-privacy "
        f"guarantee, {best} comes closest on the 2-way tables\n(error "
        f"{best_err:.4f}; {floor:.4f} for a random resample of the real rows, "
        "which protects no one)."
    )


def _demo_categorical(name, seed):
    """A real categorical table through the pipeline, against references.

    Rows from ``make_synthesis_pipeline(BooleanEncoder(categories=public),
    ProjectedGaussianRelease(epsilon=1, delta=1e-6, d=2))``, the release's own
    tables, the trivial private baseline (noisy independent 1-way marginals
    at the same budget) and the non-private sampling floor (n rows drawn from
    the real table). MST/AIM need their own environment: ``make
    bench-generator``.
    """
    from .. import ProjectedGaussianRelease, make_synthesis_pipeline
    from ..datasets import load_categorical_table
    from ..mechanisms import analytic_gaussian_sigma
    from ..metrics import marginal_error
    from ..preprocessing import BooleanEncoder

    try:
        df, cats = load_categorical_table(name)
    except ImportError as exc:
        print(f"\n(categorical demo skipped: {exc})")
        return 0
    n, p = df.shape
    eps, delta = 1.0, 1e-6
    eps_none = None  # a row without a DP guarantee (the DP column's "no")
    rng = np.random.default_rng(seed)
    print(
        f"\nPart 2 -- a real table: {name}, {n:,} rows, {p} categorical columns "
        f"({min(map(len, cats.values()))} to {max(map(len, cats.values()))} "
        "declared levels each).\nThe error is the total variation distance "
        "between the real and the synthetic d-way tables, averaged over all "
        "tables\n(0 = identical, 1 = nothing in common; lower is better); "
        f"{n:,} synthetic rows each, epsilon=1, delta=1e-6.\n"
    )
    rows = []
    floor = df.iloc[rng.integers(0, n, n)].reset_index(drop=True)
    rows.append(("real rows, bootstrap", "none (not private)", floor, 0.0, eps_none))
    # noisy independent 1-way marginals: the p count vectors have joint
    # l2-sensitivity sqrt(p) under add/remove
    t0 = time.perf_counter()
    sigma = analytic_gaussian_sigma(eps, delta, float(np.sqrt(p)))
    cols = {}
    for c in df.columns:
        counts = df[c].value_counts().reindex(cats[c], fill_value=0).to_numpy()
        noisy = np.clip(counts + rng.normal(0, sigma, counts.size), 0, None)
        prob = noisy / noisy.sum() if noisy.sum() > 0 else None
        cols[c] = rng.choice(np.asarray(cats[c], dtype=object), size=n, p=prob)
    rows.append(
        (
            "noisy 1-way, independent",
            "eps=1, delta=1e-06",
            pd_frame(cols, df.columns),
            time.perf_counter() - t0,
            eps,
        )
    )
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories=cats),
        ProjectedGaussianRelease(epsilon=eps, delta=delta, d=2, random_state=seed),
    )
    t0 = time.perf_counter()
    synthetic = pipe.fit(df).sample(n)
    rows.append(
        (
            "gaussian-release rows",
            "eps=1, delta=1e-06",
            synthetic,
            time.perf_counter() - t0,
            eps,
        )
    )
    table = [
        (
            label,
            privacy,
            [marginal_error(df, Y, d, kind="tv") for d in (1, 2, 3)],
            t,
            _dp_mark(spent),
        )
        for label, privacy, Y, t, spent in rows
    ]
    _demo_table(table, ["TV1", "TV2", "TV3"])
    boot, base, release = (errs for _, _, errs, _, _ in table)
    print(
        f"\nIn short: at the same budget, the release's rows keep the 2-way "
        f"tables {base[1] / max(release[1], 1e-12):.0f} times closer than "
        f"independent noisy columns (TV2 {release[1]:.4f} vs {base[1]:.4f})."
    )
    below = [f"{d}-way" for d in (1, 2) if release[d - 1] < boot[d - 1]]
    if below:
        print(
            f"They even come below the resample of the real rows on the "
            f"{' and '.join(below)} tables: the release measures exactly those\n"
            "tables and fits its rows to them, with no random draw of rows, "
            "while a resample of n rows carries sampling error.\nOn 3-way "
            "tables, which it does not measure, "
            + (
                "the resample is closer."
                if boot[2] < release[2]
                else "it is still as close as the resample."
            )
        )
    print(
        "\nMST and AIM on the same tables: make bench-generator (benchmarks/README.md)"
    )
    return 0


def pd_frame(columns, order):
    import pandas as pd

    return pd.DataFrame({c: columns[c] for c in order})
