"""(n/k)-anonymous microaggregation with a covariance-loss certificate.

:cite:`Boedihardjo2024` (Boedihardjo, Strohmer & Vershynin, *Covariance's loss is
privacy's gain*) §3-4 and Algorithm 1; :cite:`SahSawhney` §2 for the
pinning partition.

Microaggregation replaces every record by the mean of its group. If every
group has at least ``g`` records, the release is ``g``-anonymous: each
released row is shared by at least ``g`` people. :cite:`Boedihardjo2024` parametrises by
the **number of groups** ``k``: ``n`` records in ``k`` groups of (about) ``n/k``
records give ``(n/k)``-anonymity -- *not* ``k``-anonymity.

The certificate (Boedihardjo2024 §3)
------------------------------------
Write ``X`` for a uniformly random row on the unit-ball scale
(``x_i = u_i / sqrt(p)``, ``||x_i|| <= 1``), ``S = E XX^T``, and for a
partition ``F`` let ``Y = E[X | F]`` (the group means). The covariance loss is
``L(F) = ||Sigma_X - Sigma_Y||_F = ||E XX^T - E YY^T||_F`` (Lemma 3.1). The
estimator builds its groups in three steps and the bound follows them:

1. **Cells** ``C`` (spectral): ``P`` projects on the ``t`` leading
   eigenvectors of ``S``; each row goes to the nearest point of an
   ``alpha``-covering of the unit ball of ``ran(P)``. Lemma 3.2 gives
   ``L(C) <= E||PX - PY||^2 + ||(I-P)S(I-P)||_F`` and Lemma 3.6 gives
   ``||PX - PY|| <= 2 alpha``, so ``L(C) <= 4 alpha^2 + ||(I-P)S(I-P)||_F``.
   (``t = 0``: one cell and ``P = 0``, so ``L(C) <= ||S||_F``, no covering
   term.) For the pinning cells there is no a-priori bound with a known
   constant, so ``L(C)`` itself is computed.
2. **Pieces** ``C'``: every cell is cut into blocks of ``b = floor(n/k)`` or
   ``b + 1`` rows and one residual piece (see "Sizes" below). ``C'`` refines
   ``C``, so ``L(C') <= L(C)`` (Lemma 3.8, monotonicity).
3. **Groups** ``I``: the residual pieces are merged into one set ``G``
   (``C''``) and ``G`` is cut into blocks. Lemma 3.9 (merger) gives
   ``L(C'') <= L(C') + P(G)`` with ``P(G) = |G|/n``; ``I`` refines ``C''``, so
   ``L(I) <= L(C'')`` (Lemma 3.8 again).

Chained: ``L(I) <= 4 alpha^2 [t >= 1] + ||(I-P)S(I-P)||_F + |G|/n`` for the
spectral partition (``covariance_loss_bound_``), and
``L(I) <= L(C) + |G|/n`` for the pinning partition. :cite:`Boedihardjo2024` §3.6 bounds
``|G|/n < k'/k <= 1/sqrt(k)`` when ``k`` divides ``n``; here ``|G|`` is
simply counted, which also covers the remainder below.

*How tight is it?* The paper's ``alpha = (log log k' / log k')^{1/4}`` falls
very slowly: ``4 alpha^2 >= 1`` unless ``k' > 10^30``. So for every
practical ``k`` with ``t >= 1`` the a-priori certificate exceeds 1 and says
nothing (any loss is at most ``||Sigma_X||_F <= ||S||_F <= 1``). The
data-dependent chain through the computed cell loss,
``L(I) <= L(C) + |G|/n`` (``cell_loss_ + residual_mass_``), holds for both
partitions and is the informative bound; ``covariance_loss_bound_`` keeps the
paper's form for the spectral partition because it is the quantity the
theorems control.

Sizes (Boedihardjo2024 Remark 4.2)
----------------------------------
With ``n = k b + r``, ``0 <= r < k``, the groups are ``r`` groups of ``b + 1``
rows and ``k - r`` groups of ``b`` rows: the remainder is spread one row per
group instead of being added to a single group, so no group is larger than
``ceil(n/k)``. The anonymity level is ``floor(n/k)`` (``anonymity_level_``).
Blocks of ``b + 1`` rows are carved in cells whose leftover rows allow it;
the rest come from the merged residual.

Why the cells are cut compactly
-------------------------------
The theorem allows any cut of a cell into blocks (Lemma 3.8). The loss that
remains is the within-block spread, so the estimator cuts along the data's
remaining variance: recursive bisection along the principal direction of
each node's rows (computed in a sketch of the ``16`` leading principal
coordinates of the data). ``division="kdtree"`` cuts the same nodes (the
same slots, the same sizes) with a k-d tree on a ``uint16`` sketch of the
``32`` leading principal coordinates: each node at the order statistic of
its rows along the direction of 8 power iterations on the exact covariance
of its 8 highest-variance coordinates (``skdp_synth/_kdtree.py``; integer
sums, so its compiled and NumPy paths give the same groups).
``division="input_order"`` cuts runs of rows in input order instead, for
comparison (see ``benchmarks/bench_microaggregation``).

Which division? At ``n = 10^6, p = 50, k = 10^5`` the k-d tree reaches
covariance loss 0.02082 against bisection's 0.02236 (``SSE/SST`` 0.576
against 0.599) and on the 24 MDAV cases of the benchmark it beats MDAV in
12 (bisection: 11), geometric mean of the loss ratio 0.990 (bisection:
0.999). With numba its division takes about a quarter of bisection's time
(3.4 against 14.6 ``X.T @ X``; fit + transform 12 against 22); without numba
its NumPy path is several times slower than bisection. ``"bisection"``
stays the default (its groups are pinned, and it needs no optional
dependency); choose ``"kdtree"`` when ``skdp_synth[fast]`` is installed.

Cost (``n`` rows, ``p`` columns, ``k`` groups, ``q = min(p, 16)``)
------------------------------------------------------------------
``S = U^T U / n``: ``O(n p^2)`` (one pass, BLAS). Eigenvectors:
``O(p^3)``. Projection and nearest covering point: ``O(n p t)`` plus a KD-tree
query for the rows whose rounded lattice point leaves the ball. Pinning:
``O(n p)`` per draw. Sizes plan: ``O(#cells)``. Sketch: ``O(n p q)``.
Bisection: ``O(n q + n log n)`` per level, ``ceil(log2(k / #cells))`` levels
(about ``log2 k``). k-d tree (compiled): ``O(n (q + 36))`` integer operations
per level for the node moments and the ``8 x 8`` cross sums, ``O(n)``
expected for the selection and the partition, the same number of levels,
depth first so the late levels run in cache; the NumPy path sorts ``n``
keys per level. Group means and the loss: ``O(n p + k p^2)``. Row keys
for ``transform``: ``O(n p)`` plus one ``O(n log n)`` sort. ``transform`` of
the training rows: ``O(n p + n log n)``; of new rows: ``O(n k p)`` for their
nearest group mean. ``sample(m)``: ``O(m p)``.

Where the time goes (``benchmarks/bench_microaggregation.py``, which gives
every step as a multiple of one single-threaded ``X.T @ X`` of the same run):
at ``n = 10^6, p = 50, k = 10^5`` the recursive bisection is more than half
of ``fit`` + ``transform``. It has about ``log2(k / #cells)`` (here 15)
levels, and each level makes some twenty vectorised passes over the
``n x q`` sketch (node means and variances, two power iterations, the
projection, one sort, the reordering); the other steps are about one pass
each. ``division="bisection"`` keeps its exact partition (pinned against
the earlier code in ``tests/test_microaggregation.py``). ``division="kdtree"``
cuts that step to about 3.5 ``X.T @ X`` (the scale table of the benchmark
reports both divisions step by step).
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.metrics import pairwise_distances_argmin
from sklearn.utils.validation import check_is_fitted

from . import _partition
from ._chunked import ChunkedRows, map_rows, reduce_rows
from ._sklearn_compat import Interval, StrOptions
from .base import SynthesizerMixin
from .geometry import second_moment
from .mechanisms import NoiseSource
from .plan import MicroaggregationPlan
from .validation import from_cube

if TYPE_CHECKING:
    from typing import Any, Literal

    import pandas as pd
    from numpy.typing import ArrayLike, NDArray

    from .blocks import BlocksLike

__all__ = ["CovarianceLossMicroaggregator"]

#: random stream of ``transform``'s optional rounding (fit uses 0, sample 1)
TRANSFORM_STREAM = 2
#: default group size when ``k`` is not given
DEFAULT_GROUP_SIZE = 10


class CovarianceLossMicroaggregator(SynthesizerMixin, BaseEstimator):
    """Microaggregation into ``k`` GROUPS (not k-anonymity's minimum group size ``k``).

    Splits the ``n`` training rows into exactly ``k`` groups of
    ``floor(n/k)`` or ``ceil(n/k)`` rows and releases the group means: the
    release is ``floor(n/k)``-anonymous (``anonymity_level_``). For groups of
    at least ``g`` rows, pass ``k = n // g``. :cite:`Boedihardjo2024` (Boedihardjo,
    Strohmer & Vershynin) Algorithm 1 with the certificate of its §3, and the
    pinning partition of :cite:`SahSawhney` §2; see the module
    docstring for the derivation of the bound.

    This is anonymity, not differential privacy: the group means are exact
    functions of small groups of records.

    Parameters
    ----------
    k : int, default=None
        **Number of groups** (:cite:`Boedihardjo2024`'s ``k``), ``1 <= k <= n_samples``.
        Every group gets ``floor(n/k)`` or ``ceil(n/k)`` rows. ``None`` uses
        ``max(1, n // 10)`` groups, i.e. groups of about 10 rows.
    m : int, default=None
        Default number of rows of :meth:`sample`; ``None`` gives ``n``.
    partition : {"spectral", "pinning"}, default="spectral"
        How the cells are formed before the equipartition.
        ``"spectral"``: nearest point of a lattice covering after projecting on
        the leading eigenvectors of the second-moment matrix (:cite:`Boedihardjo2024`
        Alg. 1 steps 1-5). ``"pinning"`` (Boolean data only): rows that agree on a
        random set of coordinates (:cite:`SahSawhney` §2), best of ``n_draws`` draws.
    n_components : int, default=None
        ``t``, the number of eigenvectors of the spectral partition. ``None``:
        ``t = floor(log k' / log(7/alpha))`` with ``k' = floor(sqrt(k))``
        (:cite:`Boedihardjo2024` Alg. 1 step 2), and ``t = 0`` (one cell) when
        ``k' < 3``.
    alpha : float, default=None
        Covering radius in ``(0, 1]``. ``None``:
        ``alpha = (log log k' / log k')^{1/4}`` (:cite:`Boedihardjo2024` Alg. 1 step 2).
        That formula needs ``k' >= 3``; when ``n_components >= 1`` is forced with
        ``k < 9``, ``None`` gives ``alpha = 1``.
    n_draws : int, default=16
        Pinning partition: number of random draws ``(l, T)``; the draw with
        the smallest certificate ``L(C) + |G|/n`` is kept (:cite:`SahSawhney` §2 argues
        by Markov's inequality that each draw is within twice the expected loss
        with probability at least 1/2).
    division : {"bisection", "kdtree", "input_order"}, default="bisection"
        How a cell is cut into blocks (any cut keeps the sizes, the anonymity
        and the certificate: :cite:`Boedihardjo2024` Lemma 3.8).
        ``"bisection"``: recursive bisection along the principal direction of
        the remaining variance (compact blocks; the partition is pinned by the
        tests). ``"kdtree"``: a k-d tree in 32 principal coordinates -- each
        node cut at the order statistic of its rows along the power-iteration
        direction of its 8 highest-variance coordinates (file
        ``skdp_synth/_kdtree.py``). With numba (``pip install
        'skdp_synth[fast]'``) it is the faster and the more accurate choice
        (its division about 4x faster than ``"bisection"`` at ``n = 10^6``,
        lower loss at scale and on the MDAV benchmark); without numba it
        computes the same groups with NumPy, several times *slower* than
        ``"bisection"``.
        ``"input_order"``: runs of rows in input order (what the theorem
        allows; kept for comparison).
    rounding : {"none", "random"}, default="none"
        :meth:`transform` on Boolean data: ``"none"`` releases the group means
        (fractions; the k-anonymous release); ``"random"`` rounds each
        coordinate to ``Bernoulli(mean)`` (:cite:`Boedihardjo2024` §4.3). :meth:`sample`
        always rounds Boolean data.
    domain : {"boolean", "box"}, default="box"
        ``"boolean"``: values in ``{0, 1}``. ``"box"``: values in ``bounds``.
    bounds : tuple (lo, hi) or None, default=None
        Box bounds (scalars or per-column arrays). ``None`` reads them off the
        data, without a warning: the bounds are not part of the released group
        means, but ``bounds_`` then holds the column minima and maxima.
    blocks : "auto", None, Blocks or list, default="auto"
        %(blocks)s
        With ``domain="boolean"`` the rounding of :meth:`sample` (and of
        :meth:`transform` with ``rounding="random"``) draws one valid code per
        block from the block's fractional mean (:meth:`Blocks.round
        <skdp_synth.blocks.Blocks.round>`), so every sampled row is valid; on
        all-binary blocks this is the per-bit rounding of :cite:`Boedihardjo2024` §4.3.
        With ``domain="box"`` the blocks are only recorded; the release is the same
        group means either way.
    random_state : None, int, RandomState or Generator, default=None
        Randomness of the pinning draws, of :meth:`sample` and of the rounding
        in :meth:`transform`. The spectral partition is deterministic.

    Attributes
    ----------
    plan_ : MicroaggregationPlan
        Everything fixed before the data was read (:mod:`skdp_synth.plan`):
        ``k``, the partition and its ``(t, alpha)``.
        Public: a function of the parameters and sizes only.
    labels_ : ndarray of shape (n_samples,)
        Group of each training row, ``0..k-1``.
    centroids_ : ndarray of shape (k, n_features)
        Group means, in the units of the training data (inside the box:
        :cite:`Boedihardjo2024` Remark 4.5).
    group_sizes_ : ndarray of shape (k,)
        Rows per group; each is ``floor(n/k)`` or ``ceil(n/k)``.
    weights_ : ndarray of shape (k,)
        ``group_sizes_ / n``; ``weights_ @ centroids_`` is the data mean.
    n_groups_ : int
        ``k`` as used.
    anonymity_level_ : int
        The smallest group size, ``floor(n/k)``: the release is
        ``anonymity_level_``-anonymous.
    privacy_summary_ : str
        ``"(n/k)=10-anonymous"`` for groups of at least 10 rows (the
        privacy column of ``skdp-synth demo``).
    n_components_ : int
        ``t`` used by the spectral partition (0 for pinning).
    alpha_ : float or None
        Covering radius used (``None`` when ``t = 0`` or for pinning).
    n_cells_ : int
        Non-empty cells before the equipartition.
    pinned_features_ : ndarray or None
        The coordinates ``T`` of the chosen pinning draw.
    cell_loss_ : float
        ``L(C)``, covariance loss of the cells (unit-ball scale).
    residual_norm_ : float
        ``||(I-P)S(I-P)||_F`` (:cite:`Boedihardjo2024` Lemma 3.3; ``<= 1/sqrt(t)``),
        spectral only (``nan`` for pinning).
    covering_term_ : float
        ``4 alpha^2`` (:cite:`Boedihardjo2024` Lemma 3.6), ``0`` when ``t = 0``; ``nan``
        for pinning.
    residual_mass_ : float
        ``|G|/n``, the merger term of :cite:`Boedihardjo2024` Lemma 3.9.
    covariance_loss_ : float
        Achieved ``||Sigma_X - Sigma_Y||_F`` on the unit-ball scale.
    covariance_loss_bound_ : float
        The certificate: ``covering_term_ + residual_norm_ + residual_mass_``
        (spectral) or ``cell_loss_ + residual_mass_`` (pinning).
    bounds_ : tuple of ndarray
        The box used (``(0, 1)`` per column for Boolean data).
    blocks_ : Blocks
        The blocks used (see ``blocks``).
    n_features_in_, feature_names_in_, n_samples_fit_
        As in scikit-learn.

    See Also
    --------
    skdp_synth.metrics.covariance_loss : the loss of any partition.

    Notes
    -----
    **Dask input.** With ``partition="spectral"`` and
    ``division="input_order"``, ``fit`` takes a ``dask.array.Array`` or a
    ``dask.dataframe.DataFrame``: ``S`` and the per-cell and per-group sums are
    summed over chunks, the covering cell and row key of each row are a map
    over chunks gathered on the driver (16 bytes a row; ``labels_`` and the
    keys of :meth:`transform` are ``O(n)`` state anyway), and the equipartition
    in input order is a function of the cells alone. For the same parameters
    the fit equals the in-memory fit (bit for bit on Boolean data; box data up
    to the order of summation). The default ``division="bisection"`` refuses
    Dask input (``TypeError``): its division is not a computation per cell --
    it sorts the rows of all cells in one pass, by a key that adds the global
    index of each node, with ties among equal rows broken by the whole sort,
    and the residual rows of every cell are merged and cut again -- so a fit
    cell by cell gives other groups than the in-memory fit; reproducing it
    would gather the ``min(16, p)``-dimensional principal sketch of every row
    on the driver. ``division="kdtree"`` (a tree over the rows of each cell,
    and of the merged residual) and ``partition="pinning"`` refuse Dask input
    too. Fit those on ``X.compute()``, or on a random sample of the rows.

    References
    ----------
    :cite:`Boedihardjo2024` §3--4: Algorithm 1, the covariance-loss
    certificate (Lemmas 3.3, 3.6 and 3.9) and the rounding of §4.3.

    :cite:`SahSawhney` §2: the pinning partition (``partition="pinning"``).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp_synth import CovarianceLossMicroaggregator
    >>> rng = np.random.default_rng(0)
    >>> X = (rng.random((1000, 8)) < 0.3).astype(int)
    >>> est = CovarianceLossMicroaggregator(k=100, domain="boolean",
    ...                                     random_state=0).fit(X)
    >>> est.anonymity_level_, est.privacy_summary_
    (10, '(n/k)=10-anonymous')
    >>> bool(est.covariance_loss_ <= est.covariance_loss_bound_)
    True
    >>> release = est.transform(X)            # each row -> its group mean
    >>> np.allclose(release.mean(axis=0), X.mean(axis=0))
    True
    >>> est.sample(5).shape                   # bootstrap + randomized rounding
    (5, 8)
    """

    @property
    def _supports_chunked(self):
        """Dask input: the spectral partition cut in input order (see Notes)."""
        return self.partition == "spectral" and self.division == "input_order"

    @property
    def _chunked_refusal(self):
        if self.partition == "pinning":
            why = (
                "partition='pinning' has no Dask path (it scores n_draws "
                "partitions of the whole table)"
            )
        else:
            why = (
                f"division={self.division!r} orders the rows of all cells in "
                "one global pass (and merges the residual rows of every cell), "
                "so a fit cell by cell would give other groups than the "
                "in-memory fit"
            )
        return (
            f"needs the whole table in memory and does not fit from a Dask "
            f"collection: {why}. Pass X.compute() (a NumPy array or a pandas "
            "DataFrame) when the table fits in memory, fit on a random sample "
            "of the rows (e.g. ddf.sample(frac=0.1, random_state=0).compute(); "
            "the groups then cover the sample only), or use "
            "partition='spectral', division='input_order', which fits from "
            "Dask input."
        )

    _parameter_constraints = {
        "k": [Integral, None],
        "m": [Interval(Integral, 1, None, closed="left"), None],
        "partition": [StrOptions({"spectral", "pinning"})],
        "n_components": [Interval(Integral, 0, None, closed="left"), None],
        "alpha": [Interval(Real, 0, 1, closed="right"), None],
        "n_draws": [Interval(Integral, 1, None, closed="left")],
        "division": [StrOptions({"bisection", "kdtree", "input_order"})],
        "rounding": [StrOptions({"none", "random"})],
    }

    def __init__(
        self,
        *,
        k: int | None = None,
        m: int | None = None,
        partition: Literal["spectral", "pinning"] = "spectral",
        n_components: int | None = None,
        alpha: float | None = None,
        n_draws: int = 16,
        division: Literal["bisection", "kdtree", "input_order"] = "bisection",
        rounding: Literal["none", "random"] = "none",
        domain: Literal["boolean", "box"] = "box",
        bounds: tuple[ArrayLike, ArrayLike] | None = None,
        blocks: Literal["auto"] | BlocksLike | None = "auto",
        random_state: int | np.random.RandomState | np.random.Generator | None = None,
    ) -> None:
        self.k = k
        self.m = m
        self.partition = partition
        self.n_components = n_components
        self.alpha = alpha
        self.n_draws = n_draws
        self.division = division
        self.rounding = rounding
        self.domain = domain
        self.bounds = bounds
        self.blocks = blocks
        self.random_state = random_state

    # ------------------------------------------------------------ plan
    def _make_plan(self, n_samples, n_features):
        """``k``, the partition and its ``(t, alpha)``: parameters and sizes only."""
        k = self._n_groups(n_samples)
        self._check_options(n_features)
        if self.partition == "spectral":
            t, alpha = self._spectral_parameters(k, n_features)
        else:
            t, alpha = 0, None
        return MicroaggregationPlan(
            n_samples=n_samples,
            n_features=n_features,
            guarantee=None,
            n_groups=k,
            partition=self.partition,
            n_components=t,
            alpha=alpha,
            division=self.division,
        )

    def _n_groups(self, n):
        k = self.k
        if k is None:
            return max(1, n // DEFAULT_GROUP_SIZE)
        if isinstance(k, bool) or not 1 <= k <= n:
            raise ValueError(
                f"k={k!r} is the NUMBER OF GROUPS (Boedihardjo2024), not the minimum "
                f"group size of k-anonymity; it must satisfy 1 <= k <= n_samples = "
                f"{n}. For groups of at least g rows pass k = n_samples // g "
                f"(e.g. k={max(1, n // DEFAULT_GROUP_SIZE)} for groups of "
                f"{DEFAULT_GROUP_SIZE})."
            )
        return int(k)

    def _check_options(self, p):
        boolean = self._domain() == "boolean"
        if self.partition == "pinning" and not boolean:
            raise ValueError(
                "partition='pinning' needs Boolean data (domain='boolean'): cells "
                "are rows that agree on a set of 0/1 coordinates (SahSawhney §2)"
            )
        if self.rounding == "random" and not boolean:
            raise ValueError(
                "rounding='random' rounds to {0, 1} and needs domain='boolean'"
            )
        if self.n_components is not None and self.n_components > p:
            raise ValueError(
                f"n_components={self.n_components} exceeds the number of features {p}"
            )

    def _spectral_parameters(self, k, p):
        k_prime, alpha, t = _partition.paper_parameters(k)
        if self.n_components is not None:
            t = int(self.n_components)
        t = min(t, p)
        if self.alpha is not None:
            alpha = float(self.alpha)
            if self.n_components is None and k_prime >= 3:
                t = min(int(math.floor(math.log(k_prime) / math.log(7.0 / alpha))), p)
        if t >= 1 and alpha is None:
            alpha = 1.0  # the paper's alpha needs k' >= 3; the coarsest allowed
        return t, (alpha if t >= 1 else None)

    # ------------------------------------------------------------- fit
    def _fit(self, U, plan, source):
        if isinstance(U, ChunkedRows):
            return self._fit_chunked(U, plan)
        n = U.shape[0]
        k = plan.n_groups
        boolean = self._domain() == "boolean"
        S_cube = second_moment(U)  # Boedihardjo2024 Alg. 1 step 1, cube scale (ball
        # scale: /p)

        if self.partition == "spectral":
            t, alpha = plan.n_components, plan.alpha
            cells, residual_norm, _ = _partition.spectral_cells(U, S_cube, t, alpha)
            cells = _partition.dense_cells(cells)
            if boolean:  # exact integer sums: from the group sums, below
                cell_loss = None
            else:
                sums, sizes = _partition.group_sums(U, cells, cells.max() + 1)
                cell_loss = _partition.cell_loss(S_cube, sums, sizes, n)
            covering_term = 4.0 * alpha**2 if t >= 1 else 0.0
            pinned = None
        else:
            cells, pinned, cell_loss = self._pinning(U, S_cube, k, source.rng)
            t, alpha, residual_norm, covering_term = 0, None, math.nan, math.nan

        if self.division != "input_order":
            # 0/1 data: u^2 = u, so diag(S) IS the column mean (exact integer
            # sums over the same n: bit for bit U.mean(axis=0), one pass saved)
            mean = np.diag(S_cube).copy() if boolean else U.mean(axis=0)
            if self.division == "kdtree":
                sketch = _partition.principal_sketch(
                    U, S_cube, mean, _partition.KDTREE_SKETCH_DIM, quantised=True
                )
            else:
                sketch = _partition.principal_sketch(U, S_cube, mean)
        else:
            sketch = None
        labels, pieces, residual_mass = _partition.equipartition(
            cells, k, sketch, division=self.division
        )
        del sketch

        sums, sizes = _partition.group_sums(U, labels, k)
        if cell_loss is None:
            cell_sums, cell_sizes = _partition.cell_sums_from_groups(
                U, cells, pieces, sums
            )
            cell_loss = _partition.cell_loss(S_cube, cell_sums, cell_sizes, n)
        fitted = (t, alpha, pinned, residual_norm, covering_term, cell_loss)
        self._set_fitted(S_cube, labels, sums, sizes, cells, residual_mass, fitted)
        self._index_training_rows(_partition.row_keys(U, boolean))

    def _fit_chunked(self, U, plan):
        """The fit from Dask input (``partition="spectral"``,
        ``division="input_order"``), equal to the in-memory fit.

        1. ``S = sum over chunks of U_c^T U_c / n`` (one reduction).
        2. Per chunk (a map): the nearest covering point of each projected row
           and its row key; both come back to the driver, ``16`` bytes a row
           (the estimator keeps ``labels_`` and the keys anyway).
        3. On the driver: the equipartition of the cells in input order, a
           function of the cells alone (no data).
        4. Per-cell and per-group sums over chunks (one reduction).

        The same functions as in memory, so for Boolean data (integer sums)
        the fit is the in-memory fit bit for bit; box data agrees up to the
        order of summation of ``S`` and the group sums.
        """
        n = U.shape[0]
        k = plan.n_groups
        boolean = self._domain() == "boolean"
        S_cube = reduce_rows(U, _gram) / n
        t, alpha = plan.n_components, plan.alpha
        V, residual_norm, covering = _partition.spectral_basis(S_cube, t, alpha)
        cells, keys = map_rows(U, _cells_and_keys, V, covering, boolean)
        _, cells = np.unique(cells, return_inverse=True)
        cells = cells.ravel()
        n_cells = int(cells.max()) + 1
        labels, _, residual_mass = _partition.equipartition(cells, k, None)
        cell_sums, sums = U.reduce_indexed(
            _cell_and_group_sums, cells, n_cells, labels, k
        )
        cell_sizes = np.bincount(cells, minlength=n_cells)
        sizes = np.bincount(labels, minlength=k)
        cell_loss = _partition.cell_loss(S_cube, cell_sums, cell_sizes, n)
        covering_term = 4.0 * alpha**2 if t >= 1 else 0.0
        fitted = (t, alpha, None, residual_norm, covering_term, cell_loss)
        self._set_fitted(S_cube, labels, sums, sizes, cells, residual_mass, fitted)
        self._index_training_rows(keys)

    def _set_fitted(self, S_cube, labels, sums, sizes, cells, residual_mass, fitted):
        t, alpha, pinned, residual_norm, covering_term, cell_loss = fitted
        n, k = labels.shape[0], sums.shape[0]
        centroids_cube = sums / sizes[:, None]
        loss = _partition.cell_loss(S_cube, sums, sizes, n)
        if self.partition == "spectral":
            bound = covering_term + residual_norm + residual_mass
        else:
            bound = cell_loss + residual_mass

        self.labels_ = labels
        self._centroids_cube = centroids_cube
        self.centroids_ = from_cube(centroids_cube, *self.bounds_)
        self.group_sizes_ = sizes
        self.weights_ = sizes / n
        self.n_groups_ = k
        self.anonymity_level_ = int(sizes.min())
        self.privacy_summary_ = f"(n/k)={self.anonymity_level_}-anonymous"
        self.n_components_ = t
        self.alpha_ = alpha
        self.n_cells_ = int(cells.max()) + 1
        self.pinned_features_ = pinned
        self.cell_loss_ = cell_loss
        self.residual_norm_ = residual_norm
        self.covering_term_ = covering_term
        self.residual_mass_ = residual_mass
        self.covariance_loss_ = loss
        self.covariance_loss_bound_ = bound

    def _pinning(self, U, S_cube, k, rng):
        """:cite:`SahSawhney` §2: best of ``n_draws`` draws of ``(l, T)``, by
        certificate.

        ``l`` uniform in ``{0, ..., L}`` with ``L = floor(log2 k)`` (capped at
        ``p``), ``T`` a uniform ``l``-subset of the columns; the cells are the
        rows that agree on ``T``. Each draw is scored by its certificate
        ``L(C) + |G|/n`` (cell loss plus the mass its equipartition would
        merge), computed from the cell sums in one pass over the data.
        """
        n, p = U.shape
        L = min(_partition.pinning_depth(k), p)
        best = None
        for _ in range(self.n_draws):
            ell = int(rng.integers(0, L + 1))
            T = np.sort(rng.choice(p, size=ell, replace=False))
            cells = _partition.pinning_cells(U, T)
            sums, sizes = _partition.group_sums(U, cells, cells.max() + 1)
            loss = _partition.cell_loss(S_cube, sums, sizes, n)
            *_, residual, _ = _partition.plan_equipartition(sizes, k)
            score = loss + residual.sum() / n
            if best is None or score < best[0]:
                best = (score, cells, T, loss)
        return best[1], best[2], best[3]

    # ------------------------------------------------------ transform
    def _index_training_rows(self, keys):
        """Keys of the training rows, in occurrence order per key, with labels."""
        order = _partition.stable_argsort(keys)
        sorted_keys = keys[order]
        # runs of equal keys (what np.unique would return, without sorting again)
        new_key = np.ones(sorted_keys.size, dtype=bool)
        new_key[1:] = sorted_keys[1:] != sorted_keys[:-1]
        start = np.flatnonzero(new_key)
        count = np.diff(np.append(start, sorted_keys.size))
        self._train_keys = sorted_keys[start]
        self._train_key_start = start
        self._train_key_count = count
        self._train_key_labels = self.labels_[order]

    def transform(self, X: ArrayLike) -> NDArray[Any] | pd.DataFrame:
        """Replace each row by a group mean (row-aligned, unlike :meth:`sample`).

        * A row equal to a training row gets that training row's group mean:
          the ``j``-th occurrence of a value in ``X`` (in row order) gets the
          group of the ``j``-th training row with that value. Hence
          ``transform`` of the training data returns exactly
          ``centroids_[labels_]`` -- the ``floor(n/k)``-anonymous release --
          duplicated rows included, and ``fit_transform(X)`` equals
          ``fit(X).transform(X)``.
        * Any other row (new values, or more occurrences of a value than the
          training data has) gets the nearest group mean in the cube scale
          (Euclidean; ties to the lowest group index). A row seen in ``fit``
          can thus not be told apart from its group by ``transform``.

        With ``rounding="random"`` (Boolean data) each coordinate is then
        rounded to ``Bernoulli(mean)`` (:cite:`Boedihardjo2024` §4.3), from
        ``random_state`` -- block by block when ``blocks_`` has categorical blocks (one
        valid code per block with the block's mean, :meth:`Blocks.round
        <skdp_synth.blocks.Blocks.round>`).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_features)

        Returns
        -------
        X_release : ndarray or DataFrame of shape (n_rows, n_features)
            In the units, columns and (where lossless) dtypes of ``X``.
        """
        check_is_fitted(self)
        U = self._to_cube(X)
        boolean = self._domain() == "boolean"
        labels = self._match_training_rows(_partition.row_keys(U, boolean))
        unseen = labels < 0
        if unseen.any():
            labels[unseen] = pairwise_distances_argmin(U[unseen], self._centroids_cube)
        return self._release(labels)

    def fit_transform(
        self, X: ArrayLike, y: None = None, **fit_params: Any
    ) -> NDArray[Any] | pd.DataFrame:
        """``fit(X).transform(X)``, without matching the rows again.

        :meth:`transform` of the training rows returns exactly
        ``centroids_[labels_]`` (the ``j``-th occurrence of a row value gets the
        group of the ``j``-th training row with that value, which is that very
        row), so this gathers ``centroids_[labels_]`` directly: the same array
        (and the same random rounding, drawn from the same stream), without the
        row keys, their sort and the search of :meth:`transform`. Dask input
        goes through ``fit`` and :meth:`transform`.
        """
        if hasattr(X, "__dask_graph__"):
            return self.fit(X, y, **fit_params).transform(X)
        self.fit(X, y, **fit_params)
        return self._release(self.labels_.copy())

    def _release(self, labels):
        """The group means of ``labels`` (rounded with ``rounding="random"``)."""
        if self.rounding == "random" and self._domain() == "boolean":
            rng = NoiseSource(self.random_state, stream=TRANSFORM_STREAM).rng
            means = self._centroids_cube[labels]
            out = self.blocks_.round(means, rng).astype(np.float64)
            return self._wrap_output(from_cube(out, *self.bounds_))
        # np.take: the same rows as ``centroids_[labels]``, about twice as fast
        return self._wrap_output(np.take(self.centroids_, labels, axis=0))

    def _match_training_rows(self, keys):
        """Group of the training row matched by occurrence order, or ``-1``."""
        m = keys.shape[0]
        order = _partition.stable_argsort(keys)
        sorted_keys = keys[order]
        new_value = np.ones(m, dtype=bool)
        new_value[1:] = sorted_keys[1:] != sorted_keys[:-1]
        run_start = np.maximum.accumulate(np.where(new_value, np.arange(m), 0))
        occurrence = np.empty(m, dtype=np.int64)
        occurrence[order] = np.arange(m) - run_start
        pos = np.empty(m, dtype=np.intp)  # sorted queries: cache-friendly search
        pos[order] = np.searchsorted(self._train_keys, sorted_keys)
        pos = np.minimum(pos, self._train_keys.size - 1)
        found = (self._train_keys[pos] == keys) & (
            occurrence < self._train_key_count[pos]
        )
        labels = np.full(m, -1, dtype=np.intp)
        labels[found] = self._train_key_labels[
            self._train_key_start[pos[found]] + occurrence[found]
        ]
        return labels

    # ---------------------------------------------------------- sample
    def _sample_cube(self, n_samples, source):
        """Bootstrap from the group means (:cite:`Boedihardjo2024` §4.2), then rounding
        (§4.3).

        ``n_samples`` i.i.d. draws of a group ``j`` with probability
        ``|I_j|/n``; Boolean data: the drawn mean rounded by
        ``blocks_.round`` -- each binary coordinate to ``Bernoulli(value)``
        independently (exactly ``rng.random(shape) < Y`` when every block is
        binary), each categorical block to one valid code whose expectation
        is the block's mean (a group mean of valid codes is always feasible).
        """
        rng = source.rng
        idx = rng.choice(self.n_groups_, size=n_samples, p=self.weights_)
        Y = self._centroids_cube[idx]
        if self._domain() == "boolean":
            Y = self.blocks_.round(Y, rng).astype(np.float64)
        return Y

    def _synthetic_distribution(self):
        """The group means (cube scale) with weights ``|I_j|/n``
        (:cite:`Boedihardjo2024` eq. (4.1))."""
        return self._centroids_cube, self.weights_


# ------------------------------------------------- statistics of chunks
def _gram(U):
    """``U^T U`` (additive over rows): ``n S`` of :cite:`Boedihardjo2024` Alg. 1."""
    return U.T @ U


def _cells_and_keys(U, V, covering, boolean):
    """Per-row map: covering point of each projected row, and its row key."""
    return _partition.covering_cells(U, V, covering), _partition.row_keys(U, boolean)


def _cell_and_group_sums(U, rows, cells, n_cells, labels, k):
    """Row sums per cell and per group of the rows ``rows`` (additive)."""
    cell_sums, _ = _partition.group_sums(U, cells[rows], n_cells)
    group_sums, _ = _partition.group_sums(U, labels[rows], k)
    return cell_sums, group_sums
