"""Which step of a numeric column's private domain moved its kept range.

``python -m benchmarks.trace_kept_counts TABLE EPS SEED COLUMN`` fits
``auto`` on a ``bench_suite`` table as :func:`benchmarks.bench_trunc_tail.fit`
does, captures the arguments of
:func:`skdp_synth.preprocessing._numeric_domain._kept_counts` for COLUMN (one
call per privately learned numeric column, in the encoder's
``private_domains_`` order), and replays that call under a line tracer. It
prints the leaves whose noisy count is over 1.5 ``b`` (``b`` the Laplace scale
of the counts), every source line at which the kept range ``lo_i..hi_i``
changes (with the side ``step`` and the leaf ``j`` being read), and the kept
leaves and the cap. A far noise leaf that joined shows up as the line of the
rule that took it in: attrition's ``PercentSalaryHike`` at ε = 0.3, seed 7
jumped from ``[1, 16)`` to -67,108,866 at the zero-inflated jump
(``benchmarks/results/bench_suite.md``, "Jumps from a range that holds no
point mass"). A diagnostic on public benchmark tables: it prints noisy
counts and reads nothing the release does not.
"""

import argparse
import sys
import warnings

import numpy as np


def capture(table, eps, seed, column):
    """``(args, kwargs)`` of ``_kept_counts`` for ``column`` in one fit."""
    import skdp_synth.preprocessing._numeric_domain as nd
    from benchmarks.bench_trunc_tail import context, fit

    calls, orig = [], nd._kept_counts

    def recording(*a, **k):
        calls.append((a, k))
        return orig(*a, **k)

    nd._kept_counts = recording
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe, _, _ = fit(context(table), eps, seed)
    finally:
        nd._kept_counts = orig
    names = list(pipe[0].private_domains_)
    if len(calls) != len(names):
        raise RuntimeError(f"{len(calls)} domain calls for {len(names)} columns")
    if column not in names:
        raise SystemExit(f"{column!r} is not a privately learned column: {names}")
    return calls[names.index(column)]


def replay(args, kwargs, out=sys.stdout):
    """Run ``_kept_counts(*args, **kwargs)`` again, printing where the kept
    range changes; returns its ``(counts, cap, tentative)``."""
    import skdp_synth.preprocessing._numeric_domain as nd

    edges, raw, b = np.asarray(args[0]), np.asarray(args[1]), float(args[2])
    finest = np.asarray(args[3], dtype=bool)
    print(f"b = {b:.1f} rows, {raw.size} leaves; over 1.5 b:", file=out)
    for i in np.flatnonzero(raw > 1.5 * b):
        tag = " (finest)" if finest[i] else ""
        leaf = f"[{edges[i]:.6g}, {edges[i + 1]:.6g})"
        print(f"  {i}: {leaf} {raw[i] / b:.2f} b{tag}", file=out)
    seen = {}

    def tracer(frame, event, arg):
        if frame.f_code.co_name == "_kept_counts" and event == "line":
            loc = frame.f_locals
            now = (loc.get("lo_i"), loc.get("hi_i"))
            if now != seen.get("range"):
                seen["range"] = now
                print(
                    f"  line {frame.f_lineno}: lo_i, hi_i = {now}"
                    f" (step {loc.get('step')}, j {loc.get('j')})",
                    file=out,
                )
        return tracer

    sys.settrace(tracer)
    try:
        result = nd._kept_counts(*args, **kwargs)
    finally:
        sys.settrace(None)
    kept, cap = result[0], result[1]
    leaves = ", ".join(
        f"[{edges[i]:.6g}, {edges[i + 1]:.6g}) {kept[i] / b:.2f} b"
        for i in np.flatnonzero(kept > 0)
    )
    print(f"cap {cap}; kept: {leaves}", file=out)
    return result


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("table")
    p.add_argument("eps", type=float)
    p.add_argument("seed", type=int)
    p.add_argument("column")
    a = p.parse_args(argv)
    replay(*capture(a.table, a.eps, a.seed, a.column))


if __name__ == "__main__":
    main()
