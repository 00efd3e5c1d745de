"""Cost of a fidelity report against computing all 2-way tables once.

Run: ``python -m benchmarks.bench_report`` (or ``python -m benchmarks.run report``).

A categorical table of 50,000 rows x 12 columns (2-8 levels, correlated
through a latent class; public level sets) and a synthetic table of the same
size. Baseline: ``marginal_error(real, syn, d=2, kind="tv")`` -- every 2-way
contingency table of both tables built once. Measured:
``fidelity_report(real, syn, schema, d=(1, 2))`` -- 1- and 2-way TV per table,
the worst tables with their cells, the guarantee -- and, separately, its HTML
page without the figure. Target: report / baseline <= 2.
Best of 3 runs each. ``SKDP_BENCH_QUICK=1``: 10,000 rows.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from benchmarks._harness import best_time, markdown_table

QUICK = os.environ.get("SKDP_BENCH_QUICK") == "1"


def make_tables(n, p=12, seed=0):
    rng = np.random.default_rng(seed)
    sizes = [2 + (j % 7) for j in range(p)]  # 2..8 levels
    cats = {f"c{j}": [f"l{i}" for i in range(k)] for j, k in enumerate(sizes)}

    def draw(rng, shift):
        z = rng.integers(0, 3, n)
        cols = {}
        for j, (name, levels) in enumerate(cats.items()):
            k = len(levels)
            own = rng.integers(0, k, n)
            tied = (z + j + shift) % k
            cols[name] = np.asarray(levels, dtype=object)[
                np.where(rng.random(n) < 0.6, tied, own)
            ]
        return pd.DataFrame(cols)

    return draw(rng, 0), draw(np.random.default_rng(seed + 1), 1), cats


def main():
    from skdp_synth.metrics import marginal_error
    from skdp_synth.report import fidelity_report

    n = 10_000 if QUICK else 50_000
    real, syn, cats = make_tables(n)
    schema = {"categories": cats}
    t_base, _ = best_time(lambda: marginal_error(real, syn, d=2, kind="tv"))
    t_rep, rep = best_time(lambda: fidelity_report(real, syn, schema, d=(1, 2)))
    t_html, _ = best_time(lambda: rep.to_html(include_plot=False))
    rows = [
        {"step": "all 2-way tables once (marginal_error d=2)", "seconds": t_base},
        {"step": "fidelity_report d=(1, 2)", "seconds": t_rep},
        {"step": "to_html (no figure)", "seconds": t_html},
        {
            "step": "ratio report / 2-way tables (target <= 2)",
            "seconds": t_rep / t_base,
        },
    ]
    print(
        f"{n} rows x {real.shape[1]} columns (2-8 levels), synthetic {len(syn)} rows"
        f"{' [QUICK]' if QUICK else ''}\n"
    )
    print(markdown_table(rows, ["step", "seconds"]))
    return 0


if __name__ == "__main__":
    main()
