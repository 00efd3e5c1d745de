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
of its 8 highest-variance coordinates (``_kdtree.py``; integer
sums, so its compiled and NumPy paths give the same groups).
``division="input_order"`` cuts runs of rows in input order instead, for
comparison (see ``benchmarks/bench_microaggregation``).

Which division? At ``n = 10^6, p = 50, k = 10^5`` the k-d tree reaches
covariance loss 0.02082 against bisection's 0.02236 (``SSE/SST`` 0.576
against 0.599) and on the 24 MDAV cases of the benchmark it beats MDAV in
12 (bisection: 11), geometric mean of the loss ratio 0.990 (bisection:
0.999). With numba its division takes about a fifth of bisection's time
(2.8 against 14-15 ``X.T @ X``; fit + transform 8.3 against 18.4); without
numba its NumPy path gives the same groups about 9 times slower than
bisection (19 s against 2.1 s for the division at ``n = 10^6``). ``"bisection"``
stays the default (its groups are pinned, and it needs no optional
dependency); choose ``"kdtree"`` when ``skdp_synth[fast]`` is installed.

Cost (``n`` rows, ``p`` columns, ``k`` groups, ``q = min(p, 16)``)
------------------------------------------------------------------
``S = U^T U / n``: ``O(n p^2)`` (one pass, BLAS). Eigenvectors:
``O(p^3)``. Projection and nearest covering point: ``O(n p t)`` plus a KD-tree
query for the rows whose rounded lattice point leaves the ball. Pinning:
``O(n p)`` per draw. Sizes plan: ``O(#cells)``. Sketch: ``O(n p q)``
(``division="kdtree"`` with the spectral cells takes the sketch and the
covering projection from the same products, one pass over the data).
Bisection: ``O(n q + n log n)`` per level, ``ceil(log2(k / #cells))`` levels
(about ``log2 k``). k-d tree (compiled): ``O(n (q + 36))`` integer operations
per level for the node moments and the ``8 x 8`` cross sums, ``O(n)``
expected for the selection and the partition, the same number of levels,
depth first so the late levels run in cache; the NumPy path sorts ``n``
keys per level. Group means and the loss: ``O(n p + k p^2)``. Row keys
for ``transform``: ``O(n p)``; their sorted index, ``O(n log n)``, is built
on the first ``transform`` of other rows. ``transform`` of the training rows
in their order: ``O(n p)`` (their keys are compared, nothing is matched); of
other rows: ``O(m log m + m log n)`` to match them, plus ``O(m k p)`` for
the nearest group mean of rows not seen in ``fit``. ``sample(m)``: ``O(m p)``.

Where the time goes (``benchmarks/bench_microaggregation.py``, which gives
every step as a multiple of one single-threaded ``X.T @ X`` of the same run):
at ``n = 10^6, p = 50, k = 10^5`` the recursive bisection is more than half
of ``fit`` + ``transform``. It has about ``log2(k / #cells)`` (here 15)
levels, and each level makes some twenty vectorised passes over the
``n x q`` sketch (node means and variances, two power iterations, the
projection, one sort, the reordering); the other steps are about one pass
each. ``division="bisection"`` keeps its exact partition (pinned against
the earlier code in ``tests/test_microaggregation.py``). ``division="kdtree"``
cuts that step to about 3 ``X.T @ X`` (the scale table of the benchmark
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

from .._chunked import (
    ChunkedRows,
    SubBlocks,
    as_dask_array,
    graph_constant,
    import_dask,
    is_dask_collection,
    map_rows,
    reduce_rows,
)
from .._sklearn_compat import Interval, StrOptions
from ..base import SynthesizerMixin, _seeded_source, lazy_seed_sequence
from ..geometry import second_moment
from ..mechanisms import NoiseSource
from ..plan import MicroaggregationPlan
from ..validation import from_cube
from . import _partition
from ._chunk_stats import (
    _covering_cell_ids,
    _gram_and_sums,
    _labelled_sums,
    _pinning_chunk,
    _row_map,
)

if TYPE_CHECKING:
    from typing import Any, Literal

    import pandas as pd
    from numpy.typing import ArrayLike, NDArray

    from ..blocks import BlocksLike

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
    **Dask input.** ``fit`` also takes a ``dask.array.Array`` or a
    ``dask.dataframe.DataFrame``, with every partition and division, and for
    the same parameters (and ``random_state``) gives the in-memory fit: bit
    for bit on Boolean data, up to the order of summation on box data. Three
    passes over the chunks: (1) one reduction of ``U^T U`` and the column
    sums -- with ``partition="pinning"`` also the cell sums of all
    ``n_draws`` draws, which are taken from the random stream before any data
    is read; (2) a map returning each row's cell, its row key and, with
    ``division="bisection"``, its ``min(16, p)``-dimensional principal sketch;
    (3) one reduction of the per-cell and per-group sums. Between (2) and
    (3) the driver runs the same equipartition as in memory: the bisection
    (and the k-d tree) orders the rows of all cells in one global pass and
    merges every cell's residual rows, so it cannot be computed cell by cell
    on the workers; the sketch it needs is gathered instead.

    *Memory on the driver* (``n`` rows, ``k`` groups, ``p`` columns): the
    fitted estimator keeps ``labels_`` and the keys of the training rows
    for :meth:`transform` (16 bytes a row, as in memory; the first
    ``transform`` of other rows adds their sorted index, up to 32 bytes a
    row). During the
    fit the driver also holds each row's cell id and row key (16 bytes a
    row) and, with ``division="bisection"``, the float32 sketch (64 bytes a
    row for ``p >= 16``), and the equipartition -- the in-memory code --
    works on reordered copies of the sketch and a few index arrays. Measured
    on ``10^7 x 50`` Boolean rows with ``k = 10^6``
    (``benchmarks/bench_dask.py``, job ``microagg``): the driver process
    peaked at about 4.5 GiB resident, about 450 bytes a row, 2.5 GiB of it
    the equipartition's working arrays. The sums are ``(k, p)`` and
    ``(#cells, p)`` tables; each chunk returns only the rows of the groups
    it holds. ``partition="pinning"`` adds, on the driver and in each
    chunk's task, one table of ``2^l`` rows of ``p`` sums per draw
    (``2^l <= k``). What the driver sees is the
    release itself (group means of at least ``floor(n/k)`` rows) and, during
    the fit, per-row sketches and keys: anonymity, not differential privacy,
    as in memory.

    **Lazy transform.** :meth:`transform` of a Dask array or DataFrame
    returns a lazy Dask array (a Dask DataFrame when the estimator was fitted
    on a frame) whose computed value is the in-memory ``transform`` of the
    same rows, value for value (the dtypes are those of the in-memory
    transform of the training data). One eager pass returns each row's 64-bit
    key to the driver (each chunk validated on the way, a bad chunk raising
    a ``ValueError`` that names ``chunk i of X`` and the columns); the driver
    matches them to the training rows (the ``j``-th occurrence of a value in
    the whole of ``X`` gets the ``j``-th training row with that value: a
    global order, so not chunk by chunk) and holds 8 bytes of key and 8 of
    label a row (while the matching sorts them, about 66 bytes a row more:
    tracemalloc at ``10^6`` rows); the labels are then embedded in the
    graph, one slice per chunk. Each output chunk is one task: the group
    means of its labels, and for rows not matched (label ``-1``) the nearest
    group mean, computed in the task, which reads that chunk a second time
    (chunks whose rows were all matched are not read again). With
    ``rounding="random"`` each chunk is rounded from its own child
    ``SeedSequence`` of the transform stream
    (``skdp_synth.base.lazy_seed_sequence``): reproducible for an
    integer seed whatever the scheduler, but a **different stream** from the
    in-memory transform (same distribution, other draws). ``fit_transform``
    of Dask input needs no key pass: it gathers ``centroids_[labels_]``
    lazily, chunk by chunk, and computes to ``fit(X).transform(X)``.

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

    #: every partition and division fits from Dask input (see Notes)
    _supports_chunked = True

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
            # neither n nor a k computed from it: a refusal carries no count
            # of the data
            raise ValueError(
                f"k={k!r} is the NUMBER OF GROUPS (Boedihardjo2024), not the minimum "
                "group size of k-anonymity; it must satisfy 1 <= k <= n_samples. "
                "For groups of at least g rows pass k = n_samples // g (or "
                f"k=None: groups of about {DEFAULT_GROUP_SIZE})."
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
            return self._fit_chunked(U, plan, source)
        n = U.shape[0]
        k = plan.n_groups
        boolean = self._domain() == "boolean"
        S_cube = second_moment(U)  # Boedihardjo2024 Alg. 1 step 1, cube scale (ball
        # scale: /p)

        # 0/1 data: u^2 = u, so diag(S) IS the column mean (exact integer
        # sums over the same n: bit for bit U.mean(axis=0), one pass saved)
        mean = None
        if self.division != "input_order":
            mean = np.diag(S_cube).copy() if boolean else U.mean(axis=0)
        sketch = None
        if self.partition == "spectral":
            t, alpha = plan.n_components, plan.alpha
            if self.division == "kdtree":  # the sketch and the cells in one pass
                V, residual_norm, covering = _partition.spectral_basis(S_cube, t, alpha)
                W = _partition.sketch_basis(S_cube, mean, _partition.KDTREE_SKETCH_DIM)
                sketch, cells = _partition.kdtree_sketch_and_cells(U, W, V, covering)
            else:
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

        if self.division == "kdtree" and sketch is None:
            sketch = _partition.principal_sketch(
                U, S_cube, mean, _partition.KDTREE_SKETCH_DIM, quantised=True
            )
        elif self.division == "bisection":
            sketch = _partition.principal_sketch(U, S_cube, mean)
        labels, pieces, residual_mass = _partition.equipartition(
            cells, k, sketch, division=self.division
        )
        del sketch

        keys = _partition.row_keys(U, boolean)  # for transform, and the sums
        bits = keys if boolean and U.shape[1] <= 64 else None  # exact bit patterns
        sums, sizes = _partition.group_sums(U, labels, k, bits)
        if cell_loss is None:
            cell_sums, cell_sizes = _partition.cell_sums_from_groups(
                U, cells, pieces, sums
            )
            cell_loss = _partition.cell_loss(S_cube, cell_sums, cell_sizes, n)
        fitted = (t, alpha, pinned, residual_norm, covering_term, cell_loss)
        self._set_fitted(S_cube, labels, sums, sizes, cells, residual_mass, fitted)
        self._index_training_rows(keys)

    def _fit_chunked(self, U, plan, source):
        """The fit from Dask input, equal to the in-memory fit; three passes.

        1. One reduction: ``U^T U`` and the column sums, hence ``S`` and the
           mean. With ``partition="pinning"`` the ``n_draws`` draws of
           ``(l, T)`` come from the random stream before any data is read, so
           the same reduction also sums the rows of every draw's cells; the
           best draw is then chosen on the driver as in memory
           (:meth:`_pinning`).
        2. A map over chunks, gathered on the driver: each row's cell (its
           covering point, or its key on the chosen ``T``), its row key, and
           with ``division="bisection"`` its principal sketch
           ``(u - mean) W`` (``W`` the sketch basis from ``S`` and the mean,
           computed once on the driver; float32). The sketch of a row is a
           function of that row alone, so the gathered sketch is the
           in-memory :func:`~skdp_synth._partition.principal_sketch` row for
           row (bit for bit: pinned in ``tests/test_dask.py``).
        3. On the driver the same :func:`~skdp_synth._partition.equipartition`
           as in memory (global sort, merged residuals); then one reduction
           of the per-cell and per-group sums.

        Boolean data (integer sums) gives the in-memory fit bit for bit; box
        data agrees up to the order of summation of ``S``, the mean and the
        sums.
        """
        n, p = U.shape
        k = plan.n_groups
        boolean = self._domain() == "boolean"
        W = None
        if self.partition == "spectral":
            gram, column_sums = reduce_rows(U, _gram_and_sums)
            S_cube, mean = gram / n, column_sums / n
            t, alpha = plan.n_components, plan.alpha
            V, residual_norm, covering = _partition.spectral_basis(S_cube, t, alpha)
            cell_map, pinned = (_covering_cell_ids, V, covering), None
            covering_term = 4.0 * alpha**2 if t >= 1 else 0.0
        else:
            draws = list(_pinning_draws(source.rng, self.n_draws, k, p))
            S_cube, mean, pinned, cell_loss = _chunked_pinning(U, draws, k)
            cell_map = (_partition.pinning_keys, pinned)
            t, alpha, residual_norm, covering_term = 0, None, math.nan, math.nan
        quantised = self.division == "kdtree"
        if self.division == "bisection":
            W = _partition.sketch_basis(S_cube, mean)
        elif quantised:
            W = _partition.sketch_basis(S_cube, mean, _partition.KDTREE_SKETCH_DIM)
        gathered = map_rows(U, _row_map, cell_map, W, mean, boolean, quantised)
        cell_ids, keys = gathered[:2]
        sketch = gathered[2] if W is not None else None
        del gathered
        _, cells = np.unique(cell_ids, return_inverse=True)
        del cell_ids
        cells = cells.ravel()
        n_cells = int(cells.max()) + 1
        labels, _, residual_mass = _partition.equipartition(
            cells, k, sketch, division=self.division
        )
        del sketch
        cell_sums, cell_sizes, sums, sizes = _labelled_sums(
            U, cells, n_cells, labels, k
        )
        if self.partition == "spectral":
            cell_loss = _partition.cell_loss(S_cube, cell_sums, cell_sizes, n)
        fitted = (t, alpha, pinned, residual_norm, covering_term, cell_loss)
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
        best = None
        for T in _pinning_draws(rng, self.n_draws, k, p):
            cells = _partition.pinning_cells(U, T)
            sums, sizes = _partition.group_sums(U, cells, cells.max() + 1)
            score, loss = _pinning_score(S_cube, sums, sizes, n, k)
            if best is None or score < best[0]:
                best = (score, cells, T, loss)
        return best[1], best[2], best[3]

    # ------------------------------------------------------ transform
    def _index_training_rows(self, keys):
        """Keep the training rows' keys (row order); their index is built lazily.

        ``transform`` of the training rows themselves (the same keys in the
        same order) needs no index: it returns ``labels_`` directly
        (:meth:`transform`). The sorted index of :meth:`_training_index` is
        built on the first ``transform`` of other rows, so ``fit`` does not
        pay for its sort.
        """
        self._train_row_keys = keys
        self._train_index = None

    def _training_index(self):
        """``(keys, start, count, labels)``: the distinct training keys, sorted,
        the start and length of each key's run of training rows (in occurrence
        order) and the labels of those rows."""
        if self._train_index is None:
            keys = self._train_row_keys
            order = _partition.stable_argsort(keys)
            sorted_keys = keys[order]
            # runs of equal keys (what np.unique would return, without sorting again)
            new_key = np.ones(sorted_keys.size, dtype=bool)
            new_key[1:] = sorted_keys[1:] != sorted_keys[:-1]
            start = np.flatnonzero(new_key)
            count = np.diff(np.append(start, sorted_keys.size))
            self._train_index = (
                sorted_keys[start],
                start,
                count,
                self.labels_[order],
            )
        return self._train_index

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
        X : array-like, DataFrame or Dask collection of shape (n_rows, n_features)
            A ``dask.array.Array`` or ``dask.dataframe.DataFrame`` gives a
            lazy output, computed chunk by chunk after one eager pass that
            matches the rows (see "Lazy transform" in the class Notes; with
            ``rounding="random"`` another random stream than in memory).

        Returns
        -------
        X_release : ndarray, DataFrame or Dask collection of shape (n_rows, n_features)
            In the units, columns and (where lossless) dtypes of ``X``; lazy
            (Dask) for Dask input.
        """
        check_is_fitted(self)
        if is_dask_collection(X):
            return self._transform_lazy(X)
        U = self._to_cube(X)
        boolean = self._domain() == "boolean"
        keys = _partition.row_keys(U, boolean)
        if np.array_equal(keys, self._train_row_keys):
            # the training rows in their order: the j-th occurrence of a key is
            # the j-th training row with it, i.e. row i itself, so matching
            # (below) would return labels_ exactly; skip its sort and search
            labels = self.labels_.copy()
        else:
            labels = self._match_training_rows(keys)
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
        row keys, their sort and the search of :meth:`transform`. Dask input:
        the same gather, lazy, one task per chunk of ``X`` (no key pass), equal
        once computed to ``fit(X).transform(X)`` of the same chunks.
        """
        self.fit(X, y, **fit_params)
        if is_dask_collection(X):
            arr, _ = self._check_lazy_input(X)
            return self._lazy_release(arr, self.labels_.copy())
        return self._release(self.labels_.copy())

    def _random_rounding(self):
        return self.rounding == "random" and self._domain() == "boolean"

    def _release(self, labels):
        """The group means of ``labels`` (rounded with ``rounding="random"``)."""
        rng = None
        if self._random_rounding():
            rng = NoiseSource(self.random_state, stream=TRANSFORM_STREAM).rng
        return self._wrap_output(self._release_values(labels, rng))

    def _release_values(self, labels, rng):
        """``centroids_[labels]``, or (``rng`` given) its random rounding."""
        if rng is not None:
            means = self._centroids_cube[labels]
            out = self.blocks_.round(means, rng).astype(np.float64)
            return from_cube(out, *self.bounds_)
        # np.take: the same rows as ``centroids_[labels]``, about twice as fast
        return np.take(self.centroids_, labels, axis=0)

    # ------------------------------------------------- lazy transform (Dask)
    def _check_lazy_input(self, X):
        """``(array, rows)`` of a Dask ``X`` given to ``transform``: the Dask
        array (one chunk along the columns) and its :class:`ChunkedRows`,
        validated against the fitted bounds chunk by chunk as
        :meth:`_to_cube` validates in memory."""
        arr, names, _ = as_dask_array(X)
        n, p = (int(s) for s in arr.shape)
        if p != self.n_features_in_:
            raise ValueError(
                f"X has {p} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )
        fitted_names = getattr(self, "feature_names_in_", None)
        if (
            names is not None
            and fitted_names is not None
            and list(names) != [str(c) for c in fitted_names]
        ):
            raise ValueError(
                "The feature names should match those that were passed during "
                f"fit: got {names}, expected {list(fitted_names)}."
            )
        if n < 1:
            raise ValueError(
                f"Found array with 0 sample(s) (shape={arr.shape}) while a "
                "minimum of 1 is required."
            )
        shown = names or [str(j) for j in range(p)]
        rows = ChunkedRows(
            arr, self._domain(), self.bounds_, self.blocks_, shown, new_rows=True
        )
        return arr, rows

    def _transform_lazy(self, X):
        """:meth:`transform` of a Dask array or DataFrame: a lazy one.

        1. One eager pass (:meth:`ChunkedRows.map`): each chunk is validated
           (a bad chunk raises naming the chunk and the columns) and each row's
           64-bit key returned to the driver; there
           :meth:`_match_training_rows` gives every row its training group or
           ``-1``. The occurrence order is global (the ``j``-th occurrence of
           a value in the whole of ``X``), so this step cannot be done chunk
           by chunk.
        2. The output is built lazily, one task per input chunk, from that
           chunk's slice of the labels: rows with label ``-1`` get their
           nearest group mean computed in the task (which reads the chunk a
           second time); a chunk whose rows were all matched needs only its
           labels, not the data.
        """
        arr, rows = self._check_lazy_input(X)
        boolean = self._domain() == "boolean"
        (keys,) = map_rows(rows, _transform_keys, boolean)
        if np.array_equal(keys, self._train_row_keys):
            labels = self.labels_.copy()  # the training rows in order: as in memory
        else:
            labels = self._match_training_rows(keys)
        del keys
        return self._lazy_release(arr, labels, rows)

    def _lazy_release(self, arr, labels, rows=None):
        """The lazy release of ``labels`` (``-1``: nearest group mean), one
        task per chunk of ``arr``, each chunk rounded from its own stream."""
        dask = import_dask("transform of Dask input")
        import copy

        import dask.array as da

        sizes = [int(c) for c in arr.chunks[0]]
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        seeds = [None] * len(sizes)
        secure = self.random_state is None
        if self._random_rounding():
            root = lazy_seed_sequence(self.random_state, stream=TRANSFORM_STREAM)
            seeds = root.spawn(len(sizes))
            meta = self._lazy_meta()
        else:
            meta = self._wrap_output(self.centroids_)[:0]
        # the snapshot: a later fit does not change the output
        fitted = graph_constant(copy.copy(self), "transform of Dask input")
        checks = None if rows is None else rows._checks
        blocks = arr.to_delayed().ravel()
        task = dask.delayed(_lazy_transform_chunk, pure=False)
        parts = []
        for c, (start, stop) in enumerate(zip(offsets[:-1], offsets[1:])):
            part = labels[start:stop]
            unseen = bool((part < 0).any())
            block = blocks[c] if unseen else None
            parts.append(
                task(fitted, block, c, checks, part, seeds[c], secure, int(start), meta)
            )
        if isinstance(meta, np.ndarray):
            return da.concatenate(
                [
                    da.from_delayed(part, shape=(size, meta.shape[1]), dtype=meta.dtype)
                    for part, size in zip(parts, sizes)
                ],
                axis=0,
            )
        import dask.dataframe as dd

        return dd.from_delayed(parts, meta=meta, verify_meta=False)

    def _match_training_rows(self, keys):
        """Group of the training row matched by occurrence order, or ``-1``."""
        m = keys.shape[0]
        train_keys, train_start, train_count, train_labels = self._training_index()
        order = _partition.stable_argsort(keys)
        sorted_keys = keys[order]
        new_value = np.ones(m, dtype=bool)
        new_value[1:] = sorted_keys[1:] != sorted_keys[:-1]
        run_start = np.maximum.accumulate(np.where(new_value, np.arange(m), 0))
        occurrence = np.empty(m, dtype=np.int64)
        occurrence[order] = np.arange(m) - run_start
        pos = np.empty(m, dtype=np.intp)  # sorted queries: cache-friendly search
        pos[order] = np.searchsorted(train_keys, sorted_keys)
        pos = np.minimum(pos, train_keys.size - 1)
        found = (train_keys[pos] == keys) & (occurrence < train_count[pos])
        labels = np.full(m, -1, dtype=np.intp)
        labels[found] = train_labels[train_start[pos[found]] + occurrence[found]]
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


# ---------------------------------------------------- lazy transform
def _transform_keys(U, first_row, boolean):
    """Per-row map of :meth:`CovarianceLossMicroaggregator._transform_lazy`."""
    return (_partition.row_keys(U, boolean),)


def _lazy_transform_chunk(
    estimator, block, index, checks, labels, seed, secure, offset, meta
):
    """One chunk of a lazy ``transform``: the group means of its labels.

    Rows with label ``-1`` (not matched to a training row) get the nearest
    group mean in the cube scale, as in memory (``pairwise_distances_argmin``,
    ties to the lowest index); their cube rows are read from ``block`` (only
    given when the chunk has such rows), validated as in the first pass.
    With ``seed`` the means are rounded from that chunk's own stream.
    """
    labels = labels.copy()
    unseen = labels < 0
    if unseen.any():
        for start, U in SubBlocks(np.asarray(block), index, offset, checks):
            sub = unseen[start : start + U.shape[0]]
            if sub.any():
                labels[start : start + U.shape[0]][sub] = pairwise_distances_argmin(
                    U[sub], estimator._centroids_cube
                )
    rng = None if seed is None else _seeded_source(seed, secure).rng
    out = estimator._wrap_output(estimator._release_values(labels, rng))
    if isinstance(meta, np.ndarray):
        return out.astype(meta.dtype, copy=False)
    out = out.astype(meta.dtypes.to_dict())
    out.index = out.index + offset  # the eager output's RangeIndex, in pieces
    return out


# ------------------------------------------------------------ pinning
def _pinning_draws(rng, n_draws, k, p):
    """The ``n_draws`` draws of ``T`` (:cite:`SahSawhney` §2), from ``rng`` only.

    ``l`` uniform in ``{0, ..., L}`` with ``L = floor(log2 k)`` (capped at
    ``p``), ``T`` a uniform ``l``-subset of the columns, sorted. The draws use
    no data, so a fit from chunks takes them all before the first pass and
    gets the same ones as the in-memory fit.
    """
    L = min(_partition.pinning_depth(k), p)
    for _ in range(n_draws):
        ell = int(rng.integers(0, L + 1))
        yield np.sort(rng.choice(p, size=ell, replace=False))


def _pinning_score(S_cube, sums, sizes, n, k):
    """``(L(C) + |G|/n, L(C))`` of a draw's cells from their sums and sizes."""
    loss = _partition.cell_loss(S_cube, sums, sizes, n)
    *_, residual, _ = _partition.plan_equipartition(sizes, k)
    return loss + residual.sum() / n, loss


def _chunked_pinning(U, draws, k):
    """``(S, mean, T, L(C))`` of the best draw, in one pass over the chunks.

    Each chunk returns ``U^T U``, the column sums and, for every draw, the
    sums and sizes of the cells (keys ``0 .. 2^l - 1``) that occur in it;
    the driver adds them into one table of ``2^l`` rows per draw, keeps the
    non-empty cells (in key order: the numbering of
    :func:`~skdp_synth._partition.pinning_cells`) and scores the draws as
    :meth:`CovarianceLossMicroaggregator._pinning` does.
    """
    n, p = U.shape
    gram, column_sums = np.zeros((p, p)), np.zeros(p)
    tables = [
        (np.zeros((1 << T.size, p)), np.zeros(1 << T.size, np.int64)) for T in draws
    ]
    for _, (g, c, parts) in U.stream(_pinning_chunk, None, draws):
        gram += g
        column_sums += c
        for (total, count), (keys, part, size) in zip(tables, parts):
            total[keys] += part
            count[keys] += size
    S_cube, mean = gram / n, column_sums / n
    best = None
    for T, (total, count) in zip(draws, tables):
        present = count > 0
        score, loss = _pinning_score(S_cube, total[present], count[present], n, k)
        if best is None or score < best[0]:
            best = (score, T, loss)
    return S_cube, mean, best[1], best[2]
