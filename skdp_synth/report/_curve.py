"""Privacy--utility curves: average TV against epsilon, with references.

:func:`curve` fits an estimator factory at several epsilons and measures the
average 1-, 2- and 3-way TV against two references from the same run: a
baseline (noisy independent 1-way marginals at the same guarantee,
:func:`noisy_marginals_baseline`) and the sampling floor (a bootstrap of the
real rows); :func:`plot_curve` draws the result. **Not private**: an
experiment for choosing a mechanism, computed from the real rows.
"""

from __future__ import annotations

import itertools
import math
import numbers
import sys
from typing import TYPE_CHECKING

import numpy as np

from ..metrics._coding import _average_tvs, _discretize
from ._fidelity import _as_frame, _check_schema
from ._figures import _figure_class, _save_figure
from ._guarantee import _final_step

if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    import pandas as pd
    from matplotlib.figure import Figure
    from numpy.typing import ArrayLike, NDArray

__all__ = ["curve", "noisy_marginals_baseline", "plot_curve"]


def noisy_marginals_baseline(
    codes: ArrayLike,
    sizes: Sequence[int],
    epsilon: float,
    delta: float,
    neighbouring: str,
    n_samples: int,
    rng: np.random.Generator,
) -> NDArray[np.int64]:
    """Rows with independent columns drawn from noisy 1-way histograms.

    The usual baseline of the field: every column's counts plus noise, as
    one mechanism on the concatenated histograms. A row is in one cell of
    each of the ``p`` histograms, so its ``l1``/``l2`` sensitivity is ``p`` /
    ``sqrt(p)`` under add/remove and twice / ``sqrt(2)`` times that under
    replace-one. ``delta > 0``: Gaussian noise with
    ``analytic_gaussian_sigma(epsilon, delta, l2)`` (Balle--Wang 2018, exact
    for this sensitivity); ``delta = 0``: Laplace noise of scale
    ``l1 / epsilon``. Noisy counts are clipped at 0 and normalised (an
    all-zero histogram counts as uniform); ``n_samples`` rows are drawn
    column by column. Seeded NumPy noise from ``rng``: for experiments.

    Returns
    -------
    ndarray of shape (n_samples, p), int codes
    """
    from ..mechanisms import analytic_gaussian_sigma

    p = codes.shape[1]
    factor = 2.0 if neighbouring == "replace-one" else 1.0
    if delta > 0:
        sigma = analytic_gaussian_sigma(epsilon, delta, math.sqrt(factor * p))
    out = np.empty((n_samples, p), dtype=np.int64)
    for j in range(p):
        k = sizes[j]
        counts = np.bincount(codes[:, j], minlength=k)
        if delta > 0:
            noisy = counts + rng.normal(0, sigma, k)
        else:
            noisy = counts + rng.laplace(0, factor * p / epsilon, k)
        q = np.clip(noisy, 0, None)
        q = q / q.sum() if q.sum() > 0 else np.full(k, 1 / k)
        out[:, j] = rng.choice(k, size=n_samples, p=q)
    return out


def curve(
    estimator_factory: Callable[..., Any],
    epsilons: Sequence[float],
    X: pd.DataFrame,
    *,
    schema: Mapping[str, Any] | None = None,
    repeats: int = 3,
    d: Sequence[int] = (1, 2, 3),
    n_samples: int | None = None,
    baseline: bool = True,
    floor: bool = True,
    progress: bool = False,
    X_eval: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Privacy--utility curve: average TV against epsilon, with references.

    **Not private** (computed from ``X``), and each point spends its own
    budget: an experiment for choosing a mechanism, not for a release.

    For each ``epsilon`` and seed ``r in range(repeats)``,
    ``estimator_factory(epsilon=epsilon, random_state=r)`` must return an
    unfitted estimator or pipeline; it is fitted on ``X`` and
    ``n_samples`` rows (``len(X)`` by default) are drawn with
    ``random_state=r``. References from the same run: the noisy 1-way
    marginals baseline (:func:`noisy_marginals_baseline`) at the guarantee
    the fitted estimator states (its public ``privacy_guarantee_``), and the
    sampling floor, a bootstrap of ``X``'s rows (no privacy).

    Every method is scored against ``X_eval`` when it is given (a held-out
    sample of the same population), else against ``X`` itself. In-sample,
    the floor is optimistic: a bootstrap of ``X`` scored against ``X``
    only measures resampling noise, while a synthesizer that generalises is
    penalised for not reproducing ``X``'s own sampling noise. Held out, all
    three references face the same population and the comparison is fair.

    Parameters
    ----------
    estimator_factory : callable
    epsilons : sequence of float
    X : DataFrame
        The real table, in the columns the estimator's samples have.
    schema : dict, default=None
        Public domain (see :func:`fidelity_report`).
    repeats : int, default=3
    d : tuple of int, default=(1, 2, 3)
    n_samples : int, default=None
    baseline, floor : bool, default=True
    progress : bool, default=False
        Print one line per fit on standard error.
    X_eval : DataFrame, default=None
        Held-out rows, in ``X``'s columns, to score every method against.

    Returns
    -------
    DataFrame
        One row per method, epsilon and repeat: ``method``, ``epsilon``,
        ``repeat`` and ``TV1``/``TV2``/``TV3`` (for the floor, ``epsilon`` is
        NaN). :func:`plot_curve` draws it.
    """
    import pandas as pd

    if not isinstance(X, pd.DataFrame):
        raise TypeError("X must be a pandas DataFrame")
    if X_eval is None:
        ref = X
    else:
        if not isinstance(X_eval, pd.DataFrame):
            raise TypeError("X_eval must be a pandas DataFrame")
        if list(X_eval.columns) != list(X.columns):
            raise ValueError("X_eval must have the columns of X, in the same order")
        if len(X_eval) == 0:
            raise ValueError("X_eval has no rows")
        ref = X_eval
    ds = tuple(
        k for k in ((d,) if isinstance(d, numbers.Integral) else d) if k <= X.shape[1]
    )
    schema = _check_schema(schema)
    n = len(X) if n_samples is None else int(n_samples)
    rows = []
    real_codes = None
    for eps, r in itertools.product(epsilons, range(repeats)):
        if progress:
            print(f"[curve] epsilon={eps:g}, repeat {r + 1}/{repeats}", file=sys.stderr)
        est = estimator_factory(epsilon=eps, random_state=r)
        est.fit(X)
        syn = _as_frame(est.sample(n, random_state=r), X)
        cx, cy, sizes, _, _ = _discretize(ref, syn, schema)
        rows.append(
            {"method": "estimator", "epsilon": float(eps), "repeat": r}
            | _average_tvs(cx, cy, sizes, ds)
        )
        if baseline:
            if real_codes is None:
                real_codes = _training_and_reference_codes(X, X_eval, schema)
            g = getattr(_final_step(est), "privacy_guarantee_", None)
            delta, rel = (
                (g.delta, g.neighbouring) if g is not None else (0.0, "replace-one")
            )
            rng = np.random.default_rng(10_000 + r)
            base = noisy_marginals_baseline(
                real_codes[0], real_codes[2], float(eps), delta, rel, n, rng
            )
            rows.append(
                {
                    "method": "baseline: noisy 1-way marginals",
                    "epsilon": float(eps),
                    "repeat": r,
                }
                | _average_tvs(real_codes[1], base, real_codes[2], ds)
            )
    if floor:
        if real_codes is None:
            real_codes = _training_and_reference_codes(X, X_eval, schema)
        for r in range(repeats):
            rng = np.random.default_rng(20_000 + r)
            boot = real_codes[0][rng.integers(0, len(X), n)]
            rows.append(
                {
                    "method": "floor: bootstrap of the real rows",
                    "epsilon": np.nan,
                    "repeat": r,
                }
                | _average_tvs(real_codes[1], boot, real_codes[2], ds)
            )
    return pd.DataFrame(rows)


def _training_and_reference_codes(X, X_eval, schema):
    """``(codes of X, codes of the reference table, sizes)`` on common levels.

    The reference is ``X_eval`` when given, else ``X`` (then both codes are
    the same array, as :func:`curve` computed them before ``X_eval``).
    """
    if X_eval is None:
        cx, _, sizes, _, _ = _discretize(X, X.iloc[:1], schema)
        return cx, cx, sizes
    cx, cy, sizes, _, _ = _discretize(X, X_eval, schema)
    return cx, cy, sizes


def plot_curve(
    frame: pd.DataFrame, path: str | os.PathLike[str] | None = None, *, dpi: int = 100
) -> Figure:
    """Plot a :func:`curve` frame: one panel per TVd, mean and min-max band
    over the repeats against epsilon (log scale), the floor as a line.

    Returns
    -------
    matplotlib.figure.Figure
    """
    Figure = _figure_class()
    tvs = [c for c in ("TV1", "TV2", "TV3") if c in frame.columns]
    fig = Figure(figsize=(4 * len(tvs), 3.5), dpi=dpi, layout="constrained")
    axes = fig.subplots(1, len(tvs), squeeze=False)[0]
    for ax, col in zip(axes, tvs):
        for method, part in frame.groupby("method", sort=False):
            if part["epsilon"].isna().all():
                ax.axhline(part[col].mean(), color="grey", ls="--", label=method)
                continue
            g = part.groupby("epsilon")[col]
            eps = g.mean().index.to_numpy()
            ax.plot(eps, g.mean().to_numpy(), marker="o", label=method)
            ax.fill_between(eps, g.min().to_numpy(), g.max().to_numpy(), alpha=0.2)
        ax.set_xscale("log")
        ax.set_xlabel("epsilon")
        ax.set_ylabel(f"average {col}")
        ax.set_title(f"{col} against epsilon")
    axes[0].legend(fontsize=8, loc="upper right")  # not "best": see _report
    if path is not None:
        _save_figure(fig, path, dpi)
    return fig
