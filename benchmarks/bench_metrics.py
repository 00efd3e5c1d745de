"""Speed of the exact marginal error, as a ratio to one ``X.T @ X``.

Run: ``python -m benchmarks.bench_metrics`` (or
``python -m benchmarks.run metrics``).

Compares the two exact routes of :func:`skdp_synth.metrics.marginal_error`
(``"gram"``: no subset enumeration, ``O((n+m)^2 p d)``; ``"enumerate"``:
``O(C(p, d-2) (n+m) p^2)``) and what ``"auto"`` picks, on Boolean data with
``n = m`` rows and ``p`` columns. The baseline is one second-moment pass
``X.T @ X`` over the same data (float64).
"""

import math

import numpy as np

from benchmarks._harness import best_time, markdown_table
from skdp_synth.metrics import marginal_error


def main(sizes=((2000, 64), (10000, 64), (2000, 200))):
    rows = []
    rng = np.random.default_rng(0)
    for n, p in sizes:
        X = (rng.random((n, p)) < 0.3).astype(np.float64)
        Y = (rng.random((n, p)) < 0.3).astype(np.float64)
        base, _ = best_time(lambda X=X: X.T @ X, repeat=5)
        for d in (2, 3, 4):
            row = {
                "n=m": n,
                "p": p,
                "d": d,
                "subsets": math.comb(p, d),
                "X.T@X (s)": base,
            }
            for method in ("gram", "enumerate", "auto"):
                # skip routes that would take minutes
                if method == "enumerate" and math.comb(p, d - 2) * p > 2e6:
                    row[method] = "skipped"
                    continue
                if method == "gram" and n > 5000 and d > 3:
                    row[method] = "skipped"
                    continue
                t, _ = best_time(
                    lambda X=X, Y=Y, d=d, method=method: marginal_error(
                        X, Y, d, method=method
                    ),
                    repeat=1,
                )
                row[method] = f"{t:.3g}s ({t / base:.0f}x)"
            rows.append(row)
    print(
        markdown_table(
            rows, ["n=m", "p", "d", "subsets", "X.T@X (s)", "gram", "enumerate", "auto"]
        )
    )


if __name__ == "__main__":
    main()
