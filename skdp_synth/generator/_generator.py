"""From noisy marginal measurements to synthetic rows (post-processing only).

Every function here reads *released* statistics -- noisy linear measurements
of attribute-level marginal tables and their public noise scales -- and
never the private data (the signatures take no data; ``tests/test_generator``
checks this by construction). So whatever it returns costs no privacy beyond
the release it is given (post-processing, Dwork & Roth 2014, Prop. 2.1).

What it computes
----------------
Measurements ``y_m = Q_m T_{A_m} + e_m`` of marginal tables ``T_A`` of a
categorical table, with independent noise ``e_m ~ N(0, σ_m² I)``. The
maximum-likelihood synthetic table of ``N`` rows minimises the
noise-weighted squared loss (generalised least squares in the noise metric,
the objective of Private-PGM, McKenna, Sheldon & Miklau 2019)::

    loss(R) = Σ_m || Q_m T_{A_m}(R) - y_m ||² / σ_m²

over tables ``R`` of ``N`` *valid rows* (each attribute one of its levels).
Instead of a graphical model whose cliques would have to cover every measured
pair (with all 2-way tables measured the triangulated graph is complete and
the model is the full domain), the model here is the synthetic table itself:
``N`` integer rows, improved by exact local search.

* **Loss per clique.** Every measurement is folded into one *clique* (a
  maximal measured attribute set containing it) as a quadratic form of the
  clique's table ``T_S``: ``T_Sᵀ H_S T_S - 2 b_Sᵀ T_S + const`` with
  ``H_S = Σ M_mᵀ M_m / σ_m²``, ``b_S = Σ M_mᵀ y_m / σ_m²`` and ``M_m = Q_m``
  composed with the marginalisation ``T_S -> T_{A_m}``.
* **Moves.** Changing attribute ``j`` of one row moves it from cell ``o`` to
  cell ``c`` of every clique containing ``j``; the exact change of the loss
  is ``Σ_S g_S[c] - g_S[o] + H_S[c,c] + H_S[o,o] - 2 H_S[c,o]`` with
  ``g_S = 2(H_S T_S - b_S)``. For one attribute at a time the best level of
  every row is found at once (vectorised over rows); a fraction of the
  improving moves is applied, the loss is recomputed and the step is undone
  and halved if the loss did not decrease -- so the loss never increases.
* **Swaps.** When no single move helps, pairs of rows exchange the level
  of one attribute (which keeps its 1-way table), with the same exact
  gain and the same safeguard; the two kinds alternate until neither helps.
* **Start.** Rows drawn from a Chow--Liu tree over the pair tables implied
  by the measurements (least squares, clipped at 0), by controlled
  rounding, so the search starts from the strongest dependences.

Turning the model into ``n`` rows
---------------------------------
The fitted ``N`` rows are an equal-weight distribution. ``n`` rows are taken
by *controlled rounding* of the expected counts ``n/N`` per fitted row
(:func:`controlled_rows`): every fitted row appears ``floor(n/N)`` times and
the remainder is a simple random subset, so for ``n = N`` the output is the
fitted table itself (shuffled) and its marginals carry no sampling error at
all -- unlike ``n`` i.i.d. draws, which add the TV of the sampling floor.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._progress import Ticker

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import ArrayLike, NDArray

__all__ = [
    "Measurement",
    "GeneratorResult",
    "auto_model_rows",
    "controlled_rows",
    "fit_rows",
]

#: largest dense clique matrix H_S (cells²) held in memory, in entries
_MAX_CLIQUE_ENTRIES = 4_000_000
#: the most cells a clique (a measured table) may have: ``cells² <=``
#: ``_MAX_CLIQUE_ENTRIES``; estimators check their tables against it when
#: they plan, before the data is read (issue 23, finding 6)
MAX_TABLE_CELLS = 2_000
#: a sweep that lowers the loss by less than this fraction ends the descent
_REL_TOL = 1e-3
#: ... or by less than this many noise variances per measured value (changes
#: far below the noise: statistically invisible)
_NOISE_TOL = 0.01
#: tables up to this many rows try every pair of rows in the swap phase
_ALL_PAIRS_ROWS = 400
#: rows examined per attribute step of the descent (a random subset of a
#: larger model table; ``max(BATCH_ROWS, N // 16)``). Smaller steps move
#: fewer rows per sweep, so the descent ends, at the same 2-way fit, with more
#: of the start's (Chow--Liu tree) higher-order structure and in fewer row
#: evaluations. Measured (issue 21, round eight, 4 seeds, default release;
#: 16384 before, model tables of 14k-43k rows): TV3 of the rows nass_cds
#: ε = 1 / 3 .0220 -> .0193 / .0166 -> .0133, mpls_stops .0264 -> .0224 /
#: .0189 -> .0170, diamonds .0512 -> .0468 / .0368 -> .0344; TV2 within
#: ±2 %; train-on-synthetic scores +.000 to +.009 (2 seeds, 6 targets);
#: fit + sample 35-64 % faster. 2048 was about as good on TV3 with a
#: slightly worse TV1; 8192 in between. Tables of at most BATCH_ROWS rows
#: are fitted as before (every all-tables release at ε = 0.3 on those
#: tables). Where selection leaves pairs unmeasured the model keeps n̂ rows
#: and AIM's rounds refitted 6,000 (``selection.AIM_MODEL_ROWS``, 4096
#: since round nine): nass_cds ε = 0.1 (MST, 2 seeds) TV2 .0320
#: -> .0315; diamonds ε = 0.1 (AIM, 6 seeds) TV1 .0096 -> .0105, TV2 .0516
#: -> .0503, TV3 .1074 -> .1043 (each within about one standard error),
#: 6.5 s -> 4.9 s.
BATCH_ROWS = 4096
#: κ of :func:`auto_model_rows`: the rounding of the model table may add at
#: most this fraction of the noise's standard deviation per cell
ROUNDING_SHARE = 0.05
#: τ of :func:`auto_model_rows`: the rounding of the model table moves no
#: measured table by more than about this much total variation
ROUNDING_TV = 2.5e-4


@dataclass(frozen=True)
class Measurement:
    """One released linear measurement of an attribute-level marginal table.

    Parameters
    ----------
    attributes : tuple of int
        The attribute set ``A`` (sorted); ``()`` measures the total count.
    query : ndarray of shape (k, cells) or None
        ``Q``: rows are linear functions of the flattened table ``T_A`` (C order
        over ``attributes``); ``None`` is the identity (the table itself).
    values : ndarray of shape (k,)
        The noisy answers ``y = Q T_A + e``.
    sigma : float
        Standard deviation of each entry of ``e`` (independent entries).
    """

    attributes: tuple
    query: object
    values: object
    sigma: float

    def __post_init__(self):
        object.__setattr__(self, "attributes", tuple(int(j) for j in self.attributes))
        if list(self.attributes) != sorted(set(self.attributes)):
            raise ValueError("measurement attributes must be sorted and distinct")
        values = np.asarray(self.values, dtype=np.float64).ravel()
        object.__setattr__(self, "values", values)
        if self.query is not None:
            Q = np.asarray(self.query, dtype=np.float64)
            if Q.ndim != 2 or Q.shape[0] != values.size:
                raise ValueError("query must have one row per value")
            object.__setattr__(self, "query", Q)
        if not (np.isfinite(self.sigma) and self.sigma > 0):
            raise ValueError("sigma must be positive and finite")


@dataclass
class GeneratorResult:
    """The fitted synthetic table and how well it matches the measurements."""

    rows: np.ndarray  # (N, a) int level indices
    loss: float  # Σ_m ||Q_m T(R) - y_m||² / σ_m² at the end
    initial_loss: float
    n_measured: int  # number of measured values (excluding the total)
    sweeps: int


# ------------------------------------------------------------------ cliques
class _Clique:
    """The loss of the measurements folded into one attribute set ``S``."""

    def __init__(self, S, n_levels):
        self.S = S
        self.shape = tuple(int(n_levels[j]) for j in S)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.strides = {
            j: int(np.prod(self.shape[i + 1 :], dtype=np.int64))
            for i, j in enumerate(S)
        }
        self.H = np.zeros((self.size, self.size))
        self.b = np.zeros(self.size)
        self.const = 0.0
        self._grids = {}

    def add(self, m):
        M = _marginalisation(self.S, m.attributes, self.shape)
        if m.query is not None:
            if m.query.shape[1] != M.shape[0]:
                raise ValueError(
                    f"measurement on {m.attributes}: query has {m.query.shape[1]} "
                    f"columns, the table has {M.shape[0]} cells"
                )
            M = m.query @ M
        elif m.values.size != M.shape[0]:
            raise ValueError(
                f"measurement on {m.attributes}: {m.values.size} values for a "
                f"table of {M.shape[0]} cells"
            )
        w = 1.0 / m.sigma**2
        self.H += w * (M.T @ M)
        self.b += w * (M.T @ m.values)
        self.const += w * float(m.values @ m.values)

    def finish(self):
        self.diag = np.ascontiguousarray(np.diag(self.H))

    def grid(self, j):
        """``(cells/L_j, L_j)`` cell indices: rows = configurations of the others."""
        g = self._grids.get(j)
        if g is None:
            st, L = self.strides[j], self.shape[self.S.index(j)]
            cells = np.arange(self.size)
            level = (cells // st) % L
            base = cells - level * st
            compact = (base // (st * L)) * st + base % st
            g = np.empty((self.size // L, L), dtype=np.int64)
            g[compact, level] = cells
            self._grids[j] = g
        return g

    def cells(self, R):
        index = np.zeros(R.shape[0], dtype=np.int64)
        for j in self.S:
            index = index * self.shape[self.S.index(j)] + R[:, j]
        return index

    def loss(self, T):
        return float(T @ self.H @ T - 2.0 * self.b @ T + self.const)


def _marginalisation(S, A, shape):
    """Matrix summing the flattened table over ``S`` down to its sub-table ``A``."""
    M = np.ones((1, 1))
    for j, L in zip(S, shape):
        M = np.kron(M, np.eye(L) if j in A else np.ones((1, L)))
    return M  # (cells of A, cells of S): T_A = M @ T_S


def _maximal_sets(measurements):
    """The measured attribute sets contained in no other, by size then order,
    and the home of every measured set: the first maximal set containing it.

    Proper subsets of each set are marked (``2^|S|`` each) instead of
    comparing every pair of sets (quadratic in the number of tables).
    """
    sets = {m.attributes for m in measurements if m.attributes}
    covered = set()
    for S in sets:
        for k in range(1, len(S)):
            covered.update(itertools.combinations(S, k))
    maximal = sorted((S for S in sets if S not in covered), key=lambda S: (len(S), S))
    home = {}
    for S in maximal:
        for k in range(1, len(S) + 1):
            for A in itertools.combinations(S, k):
                home.setdefault(A, S)
    return maximal, home


def _build_cliques(measurements, n_levels):
    maximal, homes = _maximal_sets(measurements)
    cliques = {S: _Clique(S, n_levels) for S in maximal}
    total = 0.0
    for m in measurements:
        if not m.attributes:
            continue
        home = homes[m.attributes]
        cliques[home].add(m)
        total += m.values.size
    for c in cliques.values():
        if c.size**2 > _MAX_CLIQUE_ENTRIES:
            raise ValueError(
                f"the clique {c.S} has {c.size} cells; its quadratic form would need "
                f"{c.size**2 * 8 / 2**30:.1f} GiB (limit {_MAX_CLIQUE_ENTRIES} entries)"
            )
        c.finish()
    return list(cliques.values()), int(total)


# ------------------------------------------------- the two bookkeepings
class _DenseState:
    """Per-clique bookkeeping with dense ``H_S`` (any linear measurement).

    One clique at a time, as the generator did before the vectorised
    :class:`_KronState`; used when a measurement's ``Q_mᵀ Q_m`` is not of
    the Kronecker form that :class:`_KronState` needs (e.g. the bit tables of
    the bit-level mechanisms), or on request (``vectorised=False``).
    """

    def __init__(self, cliques, R):
        self.cliques, self.R = cliques, R
        a = R.shape[1]
        self.by_attr = [
            [i for i, c in enumerate(cliques) if j in c.S] for j in range(a)
        ]
        self.reset()

    def reset(self):
        R = self.R
        self.cells = [c.cells(R) for c in self.cliques]
        self.tables = [
            np.bincount(ix, minlength=c.size).astype(np.float64)
            for c, ix in zip(self.cliques, self.cells)
        ]
        self.grads = [2.0 * (c.H @ T - c.b) for c, T in zip(self.cliques, self.tables)]
        self.losses = [c.loss(T) for c, T in zip(self.cliques, self.tables)]

    def has_members(self, j):
        return bool(self.by_attr[j])

    def loss(self):
        return float(sum(self.losses))

    def move_deltas(self, j, L, rows):
        """Exact loss change when each of ``rows`` moves to each level of ``j``."""
        R, cells, grads = self.R, self.cells, self.grads
        cur = R[rows, j]
        delta = np.zeros((rows.size, L))
        for i in self.by_attr[j]:
            c = self.cliques[i]
            st = c.strides[j]
            base = cells[i][rows] - cur * st
            # compact index of the other attributes' configuration
            compact = (base // (st * L)) * st + base % st
            grid = c.grid(j)  # (cells/L, L) cell index of (configuration, level)
            g, dg = grads[i][grid], c.diag[grid]
            table = g[:, None, :] - g[:, :, None] + dg[:, None, :] + dg[:, :, None]
            table -= 2.0 * c.H[grid[:, :, None], grid[:, None, :]]
            # [configuration, current level, new level] -> one row per synthetic row
            delta += table.reshape(-1, L)[compact * L + cur]
        return delta

    def swap_bound(self, j):
        return None  # no cheap bound on the interaction: every pair is tried

    def swap_gains(self, j, r1, r2):
        """Exact loss change of exchanging attribute ``j`` between ``r1`` and ``r2``."""
        R, cells, grads = self.R, self.cells, self.grads
        lv1, lv2 = R[r1, j], R[r2, j]
        gain = np.zeros(r1.size)
        sign = (1.0, -1.0, 1.0, -1.0)
        for i in self.by_attr[j]:
            c = self.cliques[i]
            st = c.strides[j]
            o1, o2 = cells[i][r1], cells[i][r2]
            n1, n2 = o1 + (lv2 - lv1) * st, o2 + (lv1 - lv2) * st
            idx = (n1, o1, n2, o2)
            g = grads[i]
            gain += g[n1] - g[o1] + g[n2] - g[o2]
            for x in range(4):
                for y in range(4):
                    gain += sign[x] * sign[y] * c.H[idx[x], idx[y]]
        return gain

    def trial(self, j, chosen, new_level):
        """``(old, new, state)``: the members' loss before and after the moves."""
        members = self.by_attr[j]
        old_loss = sum(self.losses[i] for i in members)
        trial = {}
        for i in members:
            c = self.cliques[i]
            ix = self.cells[i].copy()
            ix[chosen] += (new_level - self.R[chosen, j]) * c.strides[j]
            T = (
                self.tables[i]
                + np.bincount(ix[chosen], minlength=c.size)
                - np.bincount(self.cells[i][chosen], minlength=c.size)
            )
            trial[i] = (ix, T, c.loss(T))
        return old_loss, sum(v[2] for v in trial.values()), trial

    def commit(self, j, chosen, new_level, trial):
        self.R[chosen, j] = new_level
        for i, (ix, T, lo) in trial.items():
            c = self.cliques[i]
            self.cells[i], self.tables[i], self.losses[i] = ix, T, lo
            self.grads[i] = 2.0 * (c.H @ T - c.b)

    def over_filled(self):
        over = np.zeros(self.R.shape[0], dtype=bool)
        for i in range(len(self.cliques)):
            over |= self.grads[i][self.cells[i]] > 1e-9
        return over


def _kron_coefficients(m, n_levels):
    """``β`` with ``Q_mᵀ Q_m = Σ_{B⊆A} β_B ⊗_{j∈B} I ⊗_{j∈A∖B} J``, or ``None``.

    ``J`` is the all-ones matrix; ``B`` is a bit mask over the positions of
    ``A = m.attributes``. An identity query is ``β = e_A``. A residual query
    ``⊗ Q_jᵀ`` (Helmert rows) gives ``⊗ (I - J/L_j)``, of this form too. For a
    general ``Q`` the coefficients are read off one column of ``QᵀQ``
    (``G[c, 0]`` depends only on the set ``B`` of positions where the cell
    ``c`` and the cell 0 agree: ``h(B) = Σ_{C⊆B} β_C``, Möbius inversion) and
    the form is then checked on two random vectors; ``None`` when it fails.
    """
    A = m.attributes
    k = len(A)
    beta = np.zeros(1 << k)
    if m.query is None:
        beta[-1] = 1.0
        return beta
    shape = tuple(int(n_levels[j]) for j in A)
    if any(L < 2 for L in shape):
        return None
    Q = m.query
    size = Q.shape[1]
    strides = [int(np.prod(shape[q + 1 :], dtype=np.int64)) for q in range(k)]
    col = Q.T @ Q[:, 0]
    h = np.array(
        [
            col[sum(strides[q] for q in range(k) if not (B >> q) & 1)]
            for B in range(1 << k)
        ]
    )
    for B in range(1 << k):
        sub = B
        while True:  # Σ_{C ⊆ B} (-1)^{|B∖C|} h(C)
            beta[B] += (-1) ** (bin(B ^ sub).count("1")) * h[sub]
            if sub == 0:
                break
            sub = (sub - 1) & B
    probe = np.random.default_rng(0).standard_normal((size, 2))
    lhs = Q.T @ (Q @ probe)
    rhs = np.zeros_like(lhs)
    V = probe.T.reshape(2, *shape)
    for B in range(1 << k):
        axes = tuple(1 + q for q in range(k) if not (B >> q) & 1)
        part = V.sum(axis=axes, keepdims=True) if axes else V
        rhs += beta[B] * np.broadcast_to(part, V.shape).reshape(2, size).T
    scale = np.abs(lhs).max() + np.abs(Q).max() ** 2
    if not np.allclose(lhs, rhs, rtol=1e-9, atol=1e-9 * scale):
        return None
    return beta


class _KronFamily:
    """Cliques of one shape whose ``H_S`` are sums of Kronecker products of
    ``I`` and ``J`` (the all-ones matrix), held as stacked arrays.

    ``H_S = Σ_{B⊆S} α_B K_B`` with ``K_B = ⊗_{j∈B} I ⊗_{j∈S∖B} J`` (``B`` a bit
    mask over the clique's axes). Then ``K_B T = `` the sub-table of ``T`` on
    ``B``, spread back over the other axes, so ``H_S T`` and ``Tᵀ H_S T`` cost
    ``2^|S|`` marginalisations of ``T`` instead of a dense ``cells²`` matrix,
    and ``H_S[c, o] = Σ_{B⊆agree(c, o)} α_B`` (``agree``: the axes where the
    cells ``c`` and ``o`` have the same level). All cliques of the family
    are updated at once (one array operation per ``B``).
    """

    def __init__(self, shape, attrs, alpha, b, const):
        self.shape = tuple(int(L) for L in shape)
        self.k = len(self.shape)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.strides = np.array(
            [int(np.prod(self.shape[q + 1 :], dtype=np.int64)) for q in range(self.k)]
        )
        self.attrs = np.asarray(attrs, dtype=np.int64).reshape(-1, self.k)
        self.alpha = np.asarray(alpha, dtype=np.float64)  # (n_f, 2^k)
        self.b = np.asarray(b, dtype=np.float64)  # (n_f, cells)
        self.const = np.asarray(const, dtype=np.float64)  # (n_f,)
        full = (1 << self.k) - 1
        # h[f, M] = Σ_{B ⊆ M} α_B: the entry H[c, o] when c, o agree on M
        self.h = np.zeros_like(self.alpha)
        for M in range(full + 1):
            for B in range(full + 1):
                if B & ~M == 0:
                    self.h[:, M] += self.alpha[:, B]

    def _margins(self, D, idx):
        Dr = D.reshape(idx.size, *self.shape)
        for B in range(1 << self.k):
            axes = tuple(1 + q for q in range(self.k) if not (B >> q) & 1)
            yield B, (Dr.sum(axis=axes, keepdims=True) if axes else Dr)

    def hmul(self, D, idx):
        """``H_S D_S`` for the cliques ``idx`` (rows of ``D``)."""
        out = np.zeros((idx.size, *self.shape))
        col = (idx.size,) + (1,) * self.k
        for B, part in self._margins(D, idx):
            out += self.alpha[idx, B].reshape(col) * part
        return out.reshape(idx.size, self.size)

    def quad(self, D, idx):
        """``D_Sᵀ H_S D_S`` for the cliques ``idx``."""
        out = np.zeros(idx.size)
        for B, part in self._margins(D, idx):
            out += self.alpha[idx, B] * np.square(part).reshape(idx.size, -1).sum(
                axis=1
            )
        return out

    def cells(self, R, idx):
        """``(rows, cliques)`` cell index of every row of ``R`` in cliques ``idx``."""
        out = np.zeros((R.shape[0], idx.size), dtype=np.int64)
        for q in range(self.k):
            out = out * self.shape[q] + R[:, self.attrs[idx, q]]
        return out


def _all_coefficients(measurements, n_levels):
    """:func:`_kron_coefficients` of every measurement (``None`` for the
    total), or ``None`` if some measurement is not of the Kronecker form.

    Equal queries on equal shapes (e.g. the residuals of every pair of
    10-level attributes) are examined once.
    """
    seen, out = {}, []
    for m in measurements:
        if not m.attributes:
            out.append(None)
            continue
        _spread_back(m, n_levels)  # size checks first
        shape = tuple(int(n_levels[j]) for j in m.attributes)
        key = (shape, None if m.query is None else m.query.tobytes())
        if key not in seen:
            seen[key] = _kron_coefficients(m, n_levels)
        if seen[key] is None:
            return None
        out.append(seen[key])
    return out


def _spread_back(m, n_levels):
    """``Q_mᵀ y_m`` as a table on ``m.attributes`` (sizes checked)."""
    shape_A = tuple(int(n_levels[j]) for j in m.attributes)
    size_A = int(np.prod(shape_A, dtype=np.int64))
    vals = m.values
    if m.query is None:
        if vals.size != size_A:
            raise ValueError(
                f"measurement on {m.attributes}: {vals.size} values for a "
                f"table of {size_A} cells"
            )
        return vals.reshape(shape_A)
    if m.query.shape[1] != size_A:
        raise ValueError(
            f"measurement on {m.attributes}: query has {m.query.shape[1]} "
            f"columns, the table has {size_A} cells"
        )
    return (m.query.T @ vals).reshape(shape_A)


def _kron_fold(slot, m, beta, S, n_levels):
    """Add ``m`` (on ``A ⊆ S``) to the accumulators ``[α, b, const]`` of ``S``.

    ``M = Q ∘ (marginalise S -> A)``, so ``MᵀM = QᵀQ ⊗ J_{S∖A}`` has the
    coefficients ``β`` on the masks of ``A`` read as masks of ``S``, and
    ``Mᵀ y = Qᵀ y`` spread over ``S ∖ A``.
    """
    pos = [S.index(j) for j in m.attributes]
    w = 1.0 / m.sigma**2
    for B in range(1 << len(pos)):
        if beta[B] != 0.0:
            mask = sum(1 << pos[t] for t in range(len(pos)) if (B >> t) & 1)
            slot[0][mask] += w * beta[B]
    spread = [1] * len(S)
    back = _spread_back(m, n_levels)
    for t, p in enumerate(pos):
        spread[p] = back.shape[t]
    slot[1] += w * back.reshape(spread)  # broadcast over S ∖ A
    slot[2] += w * float(m.values @ m.values)


def _new_slot(S, n_levels):
    return [np.zeros(1 << len(S)), np.zeros(tuple(int(n_levels[j]) for j in S)), 0.0]


def _build_kron(measurements, n_levels, betas=None):
    """The cliques as :class:`_KronFamily` stacks, or ``None`` when some
    measurement is not of the Kronecker form (see :func:`_kron_coefficients`)."""
    if betas is None:
        betas = _all_coefficients(measurements, n_levels)
        if betas is None:
            return None
    maximal, home = _maximal_sets(measurements)
    acc = {S: _new_slot(S, n_levels) for S in maximal}
    for m, beta in zip(measurements, betas):
        if m.attributes:
            S = home[m.attributes]
            _kron_fold(acc[S], m, beta, S, n_levels)
    groups = {}
    for S in maximal:
        shape = tuple(int(n_levels[j]) for j in S)
        groups.setdefault(shape, []).append(S)
    families = []
    for shape, Ss in groups.items():
        families.append(
            _KronFamily(
                shape,
                Ss,
                np.stack([acc[S][0] for S in Ss]),
                np.stack([acc[S][1].ravel() for S in Ss]),
                np.array([acc[S][2] for S in Ss]),
            )
        )
    return families


def _kron_solve(alpha, b, ridge, prior):
    """``(H + ridge I)⁻¹ (b + ridge prior)`` for ``H = Σ_B α_B K_B`` (table shape).

    ``H`` is diagonal in the components of the residual basis: on the
    subspace ``⊗_{q∈A}(1^⊥) ⊗_{q∉A} 1`` (``A`` a mask) ``K_B`` acts as
    ``Π_{q∉B} L_q`` if ``A ⊆ B`` and as 0 otherwise, so the eigenvalue is
    ``λ_A = Σ_{B⊇A} α_B Π_{q∉B} L_q``; the projection onto it is
    ``P_A v = Σ_{C⊆A} (-1)^{|A∖C|} K_C v / Π_{q∉C} L_q``
    (``⊗_{q∈A}(I - J/L_q) ⊗_{q∉A} J/L_q`` expanded). Cost ``4^|S|``
    marginalisations instead of a dense ``cells³`` solve.
    """
    shape = b.shape
    k = len(shape)
    full = (1 << k) - 1
    rhs = b + ridge * prior
    margins = {}
    for C in range(full + 1):
        axes = tuple(q for q in range(k) if not (C >> q) & 1)
        part = rhs.sum(axis=axes, keepdims=True) if axes else rhs
        outside = float(np.prod([shape[q] for q in axes])) if axes else 1.0
        margins[C] = part / outside
    T = np.zeros(shape)
    for A in range(full + 1):
        lam = ridge
        for B in range(full + 1):
            if A & ~B == 0:
                lam += alpha[B] * float(
                    np.prod([shape[q] for q in range(k) if not (B >> q) & 1])
                )
        proj = np.zeros(shape)
        C = A
        while True:
            proj = proj + (-1) ** bin(A ^ C).count("1") * margins[C]
            if C == 0:
                break
            C = (C - 1) & A
        T += proj / lam
    return T


class _AttributePlan:
    """Index arrays that put every clique containing one attribute ``j`` side
    by side, whatever its family (shape), so that a step on ``j`` is a few
    array operations instead of a loop over families.

    Per member clique ``m`` (``tot`` of them): ``base`` (offset of its table
    in the flat buffers), the columns/multipliers of its full cell index and
    of its context (the other attributes), ``stride_p`` (the stride of
    ``j``), ``bitval`` (the bit of each context axis in the clique's masks),
    ``h`` padded to ``2^kmax``; per *term* ``(m, B)`` with ``B ∋ j`` (the only
    masks on which a move of ``j`` changes ``marg_B ΔT``): the columns and
    multipliers of the projection onto ``B``, its offset in one counts vector
    and ``α_B``; and for the gradient update every cell of every member with
    the counts entries of its terms.
    """

    def __init__(self, members, j):
        kmax = max(f.k for f, *_ in members)
        base, cols, mult, ccols, cmult, bitval, hs, pbit, stride_p = (
            [] for _ in range(9)
        )
        ctx_off, G_off = [], 0
        tcols, tmult, toff, talpha, tsize = [], [], [], [], []
        upd_idx, upd_terms, upd_alpha = [], [], []
        T_off = 0
        for f, idx, p, _ in members:
            others = [q for q in range(f.k) if q != p]
            nctx = f.size // f.shape[p]
            for i in idx:
                attrs = f.attrs[i]
                base.append(f.off + i * f.size)
                cols.append([attrs[q] for q in range(f.k)] + [0] * (kmax - f.k))
                mult.append(list(f.strides) + [0] * (kmax - f.k))
                cm = [
                    int(np.prod([f.shape[o] for o in others[t + 1 :]]))
                    for t in range(len(others))
                ]
                ccols.append(
                    [attrs[q] for q in others] + [0] * (kmax - 1 - len(others))
                )
                cmult.append(cm + [0] * (kmax - 1 - len(others)))
                bitval.append([1 << q for q in others] + [0] * (kmax - 1 - len(others)))
                hpad = np.zeros(1 << kmax)
                hpad[: 1 << f.k] = f.h[i]
                hs.append(hpad)
                pbit.append(1 << p)
                stride_p.append(f.strides[p])
                ctx_off.append(G_off)
                G_off += nctx
                # terms: masks B containing p
                cells = np.arange(f.size)
                digits = [(cells // f.strides[q]) % f.shape[q] for q in range(f.k)]
                uidx_terms, uidx_alpha = [], []
                for B in range(1 << f.k):
                    if not (B >> p) & 1:
                        continue
                    axes = [q for q in range(f.k) if (B >> q) & 1]
                    bm = [
                        int(np.prod([f.shape[o] for o in axes[t + 1 :]]))
                        for t in range(len(axes))
                    ]
                    size = int(np.prod([f.shape[q] for q in axes]))
                    tcols.append([attrs[q] for q in axes] + [0] * (kmax - len(axes)))
                    tmult.append(bm + [0] * (kmax - len(axes)))
                    toff.append(T_off)
                    talpha.append(f.alpha[i, B])
                    tsize.append(size)
                    proj = sum(digits[q] * bm[t] for t, q in enumerate(axes))
                    uidx_terms.append(T_off + proj)
                    uidx_alpha.append(np.full(f.size, f.alpha[i, B]))
                    T_off += size
                while len(uidx_terms) < 1 << (kmax - 1):
                    uidx_terms.append(np.zeros(f.size, dtype=np.int64))
                    uidx_alpha.append(np.zeros(f.size))
                upd_idx.append(f.off + i * f.size + cells)
                upd_terms.append(np.stack(uidx_terms, axis=1))
                upd_alpha.append(np.stack(uidx_alpha, axis=1))
        as_int = lambda v: np.asarray(v, dtype=np.int64)  # noqa: E731
        self.tot = len(base)
        self.base = as_int(base)
        self.cols, self.mult = as_int(cols).T, as_int(mult).T  # (kmax, tot)
        self.ccols, self.cmult = as_int(ccols).T, as_int(cmult).T
        self.bitval = as_int(bitval).T
        self.h = np.stack(hs)  # (tot, 2^kmax)
        self.pbit = as_int(pbit)
        full_h = np.array([h[pb | sum(bv)] for h, pb, bv in zip(hs, pbit, bitval)])
        nop_h = np.array([h[sum(bv)] for h, bv in zip(hs, bitval)])
        self.quad_single = 4.0 * (full_h - nop_h)  # both rows' curvatures
        self.stride_p = as_int(stride_p)
        self.ctx_off = as_int(ctx_off)
        self.n_ctx = G_off
        self.tcols, self.tmult = as_int(tcols).T, as_int(tmult).T
        self.toff = as_int(toff)
        self.n_counts = T_off
        self.alpha_rep = np.repeat(np.asarray(talpha, dtype=np.float64), tsize)
        self.upd_idx = np.concatenate(upd_idx)
        self.upd_terms = np.concatenate(upd_terms)
        self.upd_alpha = np.concatenate(upd_alpha)

    @staticmethod
    def index(R, cols, mult, offset):
        out = np.broadcast_to(offset, (R.shape[0], offset.size)).copy()
        for q in range(cols.shape[0]):
            out += R[:, cols[q]] * mult[q]
        return out


class _KronState:
    """Vectorised bookkeeping: the cliques of one shape move together.

    Same arithmetic as :class:`_DenseState` (exact loss changes), with
    ``H_S`` in the ``I``/``J`` Kronecker form of :class:`_KronFamily`:

    * a move of attribute ``j`` from level ``o`` to ``c`` changes the loss by
      ``Σ_S g_S[c] - g_S[o] + κ_S`` with the constant curvature
      ``κ_S = H[c,c] + H[o,o] - 2 H[c,o] = 2 Σ_{B∋j} α_B``; the ``Σ_S g_S[·]``
      of every row and level is one sparse product: rows' one-hot context
      (the other attributes of each clique) times the stacked gradients;
    * a swap of ``j`` between two rows changes ``Σ_S`` of the gradient part
      plus ``4 (h_full - h_{S∖j} + h_M - h_{M∪j})`` with ``M`` the other axes
      where the two rows agree (``h`` as in :class:`_KronFamily`);
    * applied moves update the tables and gradients by the exact
      ``ΔL = gᵀΔT + ΔTᵀ H ΔT`` and ``g += 2 H ΔT``.
    """

    def __init__(self, families, R):
        from scipy.sparse import csr_matrix

        self._csr = csr_matrix
        self.families, self.R = families, R
        a = R.shape[1]
        self.by_attr = [[] for _ in range(a)]
        self._bound = np.zeros(a)
        self._curv = np.zeros(a)
        for f in families:
            for p in range(f.k):
                col = f.attrs[:, p]
                for j in np.unique(col):
                    idx = np.flatnonzero(col == j)
                    kappa = 2.0 * sum(
                        f.alpha[idx, B].sum() for B in range(1 << f.k) if (B >> p) & 1
                    )
                    self.by_attr[int(j)].append((f, idx, p, float(kappa)))
                    self._curv[int(j)] += kappa
                    self._bound[int(j)] += 4.0 * sum(
                        np.abs(f.alpha[idx, B]).sum()
                        for B in range(1 << f.k)
                        if (B >> p) & 1
                    )
        # every clique's table and gradient in two flat buffers; each family
        # holds (n_f, cells) views of its segment
        off = 0
        for f in families:
            f.off = off
            off += f.attrs.shape[0] * f.size
        self.flat = off
        self.T, self.g = np.zeros(off), np.zeros(off)
        for f in families:
            n_f = f.attrs.shape[0]
            f.T = self.T[f.off : f.off + n_f * f.size].reshape(n_f, f.size)
            f.g = self.g[f.off : f.off + n_f * f.size].reshape(n_f, f.size)
        self._plans = [None] * a
        self.reset()

    def _plan(self, j):
        if self._plans[j] is None:
            self._plans[j] = _AttributePlan(self.by_attr[j], j)
        return self._plans[j]

    def reset(self):
        for f in self.families:
            every = np.arange(f.attrs.shape[0])
            cells = f.cells(self.R, every) + every * f.size
            f.T[...] = np.bincount(
                cells.ravel(), minlength=every.size * f.size
            ).reshape(every.size, f.size)
            f.g[...] = 2.0 * (f.hmul(f.T, every) - f.b)

    def has_members(self, j):
        return bool(self.by_attr[j])

    def loss(self):
        total = 0.0
        for f in self.families:
            every = np.arange(f.attrs.shape[0])
            total += float(
                np.sum(f.quad(f.T, every) - 2.0 * np.sum(f.b * f.T, axis=1) + f.const)
            )
        return total

    def move_deltas(self, j, L, rows):
        P = self._plan(j)
        Rr = self.R[rows]
        n = rows.size
        G = np.concatenate(
            [
                np.moveaxis(f.g[idx].reshape(idx.size, *f.shape), 1 + p, -1).reshape(
                    -1, L
                )
                for f, idx, p, _ in self.by_attr[j]
            ]
        )
        ctx = P.index(Rr, P.ccols, P.cmult, P.ctx_off)
        X = self._csr(
            (np.ones(ctx.size), ctx.ravel(), np.arange(0, ctx.size + 1, P.tot)),
            shape=(n, P.n_ctx),
        )
        D = X @ G
        at = np.arange(n)
        cur = Rr[:, j]
        delta = D - D[at, cur][:, None] + self._curv[j]
        delta[at, cur] = 0.0
        return delta

    def swap_bound(self, j):
        """Bound on a swap's gain beyond its two single moves.

        A swap's gain is the two rows' single-move gains plus the interaction
        ``4 (h_M - h_{M∪j})`` per clique (see the class docstring; the single
        moves carry ``2 (h_full - h_{S∖j})`` each), and
        ``|h_M - h_{M∪j}| = |Σ_{B ⊆ M∪j, B∋j} α_B| <= Σ_{B∋j} |α_B|``.
        """
        return self._bound[j]

    def swap_gains(self, j, r1, r2):
        P = self._plan(j)
        R1, R2 = self.R[r1], self.R[r2]
        lv1, lv2 = R1[:, j], R2[:, j]
        o1 = P.index(R1, P.cols, P.mult, P.base)
        o2 = P.index(R2, P.cols, P.mult, P.base)
        d = (lv2 - lv1)[:, None] * P.stride_p[None, :]
        g = self.g
        lin = g[o1 + d] - g[o1] + g[o2 - d] - g[o2]
        mask = np.zeros(o1.shape, dtype=np.int64)
        for q in range(P.ccols.shape[0]):
            mask += (R1[:, P.ccols[q]] == R2[:, P.ccols[q]]) * P.bitval[q]
        m = np.arange(P.tot)[None, :]
        quad = P.quad_single[None, :] + 4.0 * (
            P.h[m, mask] - P.h[m, mask | P.pbit[None, :]]
        )
        return (lin + quad).sum(axis=1)

    def trial(self, j, chosen, new_level):
        """``ΔL = gᵀΔT + Σ_{B∋j} α_B ||marg_B ΔT||²`` over every clique with ``j``
        (``marg_B ΔT = 0`` when ``j ∉ B``: the moves change ``j`` only)."""
        P = self._plan(j)
        Rc = self.R[chosen]
        Rn = Rc.copy()
        Rn[:, j] = new_level
        old = P.index(Rc, P.cols, P.mult, P.base)
        new = old + (new_level - Rc[:, j])[:, None] * P.stride_p[None, :]
        lin = float(np.sum(self.g[new] - self.g[old]))
        po = P.index(Rc, P.tcols, P.tmult, P.toff)
        pn = P.index(Rn, P.tcols, P.tmult, P.toff)
        counts = (
            np.bincount(pn.ravel(), minlength=P.n_counts)
            - np.bincount(po.ravel(), minlength=P.n_counts)
        ).astype(np.float64)
        quad = float(P.alpha_rep @ (counts * counts))
        return 0.0, lin + quad, (old, new, counts, P)

    def commit(self, j, chosen, new_level, parts):
        old, new, counts, P = parts
        self.R[chosen, j] = new_level
        self.T += np.bincount(new.ravel(), minlength=self.flat) - np.bincount(
            old.ravel(), minlength=self.flat
        )
        # g += 2 H ΔT, H ΔT = Σ_{B∋j} α_B (marg_B ΔT) spread back over S
        self.g[P.upd_idx] += 2.0 * np.sum(P.upd_alpha * counts[P.upd_terms], axis=1)

    def over_filled(self):
        over = np.zeros(self.R.shape[0], dtype=bool)
        for f in self.families:
            every = np.arange(f.attrs.shape[0])
            cells = f.cells(self.R, every) + every * f.size
            over |= (f.g.ravel()[cells] > 1e-9).any(axis=1)
        return over


# ----------------------------------------------------------- the estimate
def _one_way_estimates(measurements, n_levels, n_rows):
    """Least-squares 1-way tables implied by the measurements, as probabilities."""
    a = len(n_levels)
    probs = []
    containing = [[] for _ in range(a)]
    for m in measurements:
        for j in m.attributes:
            containing[j].append(m)
    for j in range(a):
        L = int(n_levels[j])
        rows, rhs = [], []
        for m in containing[j]:
            shape = tuple(int(n_levels[k]) for k in m.attributes)
            # measurements of a larger table inform T_j only jointly; use the
            # ones whose attribute set is {j} or, failing that, all of them
            # with the other attributes summed under a uniform assumption
            M = _marginalisation(m.attributes, (j,), shape)  # (L, cells_A)
            P = M.T / (M.sum(axis=1)[None, :] / 1.0)  # spread T_j uniformly
            Q = m.query if m.query is not None else np.eye(P.shape[0])
            rows.append((Q @ P) / m.sigma)
            rhs.append(m.values / m.sigma)
        if not rows:
            probs.append(np.full(L, 1.0 / L))
            continue
        A = np.vstack(rows)
        y = np.concatenate(rhs)
        # the total is known: T_j sums to n_rows (a soft constraint, weight 1e3)
        A = np.vstack([A, 1e3 * np.ones((1, L))])
        y = np.concatenate([y, [1e3 * n_rows]])
        t, *_ = np.linalg.lstsq(A, y, rcond=None)
        t = np.clip(t, 0.0, None)
        probs.append(t / t.sum() if t.sum() > 0 else np.full(L, 1.0 / L))
    return probs


def _inside(index, S):
    """``(position, measurement)`` of the measurements inside ``S``, in order.

    ``index`` is :func:`_index`'s ``{attribute set: [(position, m)]}``: the
    ``2^|S|`` subsets are looked up instead of every measurement scanned.
    """
    found = []
    for k in range(1, len(S) + 1):
        for A in itertools.combinations(S, k):
            found.extend(index.get(A, ()))
    return sorted(found, key=lambda t: t[0])


def _index(measurements):
    out = {}
    for i, m in enumerate(measurements):
        if m.attributes:
            out.setdefault(m.attributes, []).append((i, m))
    return out


def _local_table(index, S, n_levels, n_rows, betas=None):
    """Least-squares estimate of the table ``T_S`` from the measurements inside ``S``.

    Clipped at 0 and scaled to ``n_rows``; unidentified directions fall back
    to the independent (uniform) table through a small ridge. With the
    Kronecker coefficients ``betas`` (:func:`_all_coefficients`) the system
    is solved in the residual basis (:func:`_kron_solve`), else densely.
    """
    shape = tuple(int(n_levels[j]) for j in S)
    size = int(np.prod(shape, dtype=np.int64))
    prior = np.full(size, n_rows / size)
    if betas is not None:
        slot = _new_slot(S, n_levels)
        for i, m in _inside(index, S):
            _kron_fold(slot, m, betas[i], S, n_levels)
        ridge = 1e-6 * (float(slot[0].sum()) + 1e-12)  # the diagonal of H
        T = _kron_solve(slot[0], slot[1], ridge, prior.reshape(shape)).ravel()
    else:
        clique = _Clique(S, n_levels)
        for _, m in _inside(index, S):
            clique.add(m)
        ridge = 1e-6 * (np.trace(clique.H) / clique.size + 1e-12)
        T = np.linalg.solve(
            clique.H + ridge * np.eye(clique.size), clique.b + ridge * prior
        )
    T = np.clip(T, 0.0, None)
    total = T.sum()
    return (T * (n_rows / total) if total > 0 else prior).reshape(shape)


def _tree_start(measurements, n_levels, N, rng, betas=None):
    """Rows from a Chow--Liu tree over the estimated 2-way tables (controlled rounding).

    The tree maximises the summed mutual information of the estimated pair
    tables (Chow & Liu 1968, as in MST's structure step, but on tables
    already released); rows are drawn root first, each child's levels for
    every parent level by controlled rounding of the expected counts.
    """
    from scipy.sparse.csgraph import breadth_first_order, minimum_spanning_tree

    a = len(n_levels)
    measured = set()
    for m in measurements:
        for pair in itertools.combinations(m.attributes, 2):
            measured.add(pair)
    tables = {}
    weight = np.zeros((a, a))
    index = _index(measurements)
    for j, k in measured:
        T = _local_table(index, (j, k), n_levels, N, betas)
        P = T / max(T.sum(), 1e-300)
        pj, pk = P.sum(axis=1), P.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            mi = np.nansum(P * np.log(P / np.outer(pj, pk)))
        tables[(j, k)] = T
        weight[j, k] = weight[k, j] = -(max(mi, 0.0) + 1e-9)  # MST of -MI
    R = np.zeros((N, a), dtype=np.int64)
    one_way = _one_way_estimates(measurements, n_levels, N)
    tree = minimum_spanning_tree(weight).toarray()
    adjacency = (tree != 0) | (tree.T != 0)
    done = np.zeros(a, dtype=bool)
    for root in range(a):
        if done[root]:
            continue
        order, parents = breadth_first_order(adjacency, root, directed=False)
        for v in order:
            done[v] = True
            par = parents[v]
            if par < 0:
                R[:, v] = _controlled_levels(one_way[v], N, rng)
                continue
            T = tables[(par, v)] if (par, v) in tables else tables[(v, par)].T
            for level in range(int(n_levels[par])):
                rows = np.flatnonzero(R[:, par] == level)
                if rows.size == 0:
                    continue
                cond = T[level]
                cond = cond / cond.sum() if cond.sum() > 0 else one_way[v]
                R[rows, v] = _controlled_levels(cond, rows.size, rng)
    return R


def _controlled_levels(p, N, rng):
    """``N`` levels with counts the controlled rounding of ``N p`` (random order)."""
    counts = _round_counts(N * p, N, rng)
    out = np.repeat(np.arange(p.size), counts)
    rng.shuffle(out)
    return out


def _round_counts(expected, total, rng):
    """Integer counts summing to ``total``: floors plus a systematic remainder."""
    base = np.floor(expected).astype(np.int64)
    rest = int(total - base.sum())
    if rest > 0:
        frac = expected - base
        frac = (
            frac / frac.sum() if frac.sum() > 0 else np.full(frac.size, 1 / frac.size)
        )
        u = (rng.random() + np.arange(rest)) / rest
        picks = np.searchsorted(np.cumsum(frac), u, side="right")
        np.add.at(base, np.minimum(picks, frac.size - 1), 1)
    return base


def fit_rows(
    measurements,
    n_levels,
    n_rows,
    *,
    rng,
    max_sweeps=300,
    batch=None,
    init=None,
    kicks=0,
    warn=True,
    vectorised=None,
    check_agreement=True,
):
    """The maximum-likelihood synthetic table of ``n_rows`` valid rows.

    Parameters
    ----------
    measurements : list of Measurement
        Released measurements (noisy answers and public noise scales).
    n_levels : sequence of int
        Levels of each attribute (public domain).
    n_rows : int
        Rows of the synthetic table (e.g. the released, noisy total).
    rng : numpy.random.Generator
        Randomness of the start and of the order of moves (post-processing).
    max_sweeps : int, default=300
        Passes over the attributes.
    batch : int, default=None
        Rows examined per attribute step (a random subset when ``N`` is
        larger); ``None``: ``max(BATCH_ROWS, N // 16)`` (``BATCH_ROWS``
        = 4096; every row for tables up to that size).
    init : ndarray of shape (n_rows, a), optional
        Start rows (level indices); default: rows drawn along a Chow--Liu
        tree of the estimated 2-way tables (:func:`_tree_start`).
    kicks : int, default=0
        Rounds of iterated local search after the descent: a few attributes
        of rows in over-filled cells are re-drawn, the descent is repeated
        and the better table kept (the loss never increases). Single moves
        and swaps can stall on a cycle of +-1 cells that only a coordinated
        change of three or more rows removes; kicks escape it. Useful for
        (near) noise-free tables; with noisy tables the loss is at the noise
        level long before and kicks change little.
    warn : bool, default=True
        Warn when the measurements disagree with each other far more than
        their noise explains (the fitted table's normalised loss exceeds the
        number of measured values by more than ``6 sqrt(2 k)``).
    check_agreement : bool, default=True
        Give the ``warn`` about tables that disagree. ``False`` when the
        measurements were scaled down to a table of fewer rows than they
        count (``max_model_rows``): the loss then also holds that table's own
        coarseness (a row is ``n̂/N`` counts), so its excess would not show
        that the released tables disagree.
    vectorised : bool or None, default=None
        ``None``: the vectorised bookkeeping (:class:`_KronState`: the cliques
        of one shape move together, ``H_S`` never formed) when every
        measurement allows it -- identity queries and ResidualPlanner's
        residuals do -- else the per-clique dense one. ``False``: the
        per-clique dense bookkeeping (as before; for comparison). ``True``:
        the vectorised one or an error. Both compute the same exact loss
        changes and take the same steps.

    Returns
    -------
    GeneratorResult
    """
    n_levels = np.asarray(n_levels, dtype=np.int64)
    a = n_levels.size
    N = int(n_rows)
    if N < 1:
        raise ValueError("n_rows must be >= 1")
    n_measured = int(sum(m.values.size for m in measurements if m.attributes))
    betas = _all_coefficients(measurements, n_levels)
    families = None
    if betas is not None and vectorised is not False:
        families = _build_kron(measurements, n_levels, betas)
    if vectorised and families is None:
        raise ValueError(
            "vectorised=True needs every measurement's QᵀQ to be a sum of "
            "Kronecker products of identity and all-ones matrices"
        )
    if families is None:
        cliques, _ = _build_cliques(measurements, n_levels)
    if batch is None:
        batch = max(BATCH_ROWS, N // 16)
    if init is None:
        R = _tree_start(measurements, n_levels, N, rng, betas)
    else:
        R = np.array(init, dtype=np.int64, copy=True)
        if R.shape != (N, a):
            raise ValueError(f"init must have shape {(N, a)}")
    R = R.reshape(N, a)

    if families is not None:
        state = _KronState(families, R)
    else:
        state = _DenseState(cliques, R)
    initial = state.loss()
    fraction = np.full((2, a), 0.5)

    def single_moves(j, L):
        """Best new level of each (sampled) row; returns rows, levels, gains."""
        rows = np.arange(N) if N <= batch else rng.choice(N, size=batch, replace=False)
        delta = state.move_deltas(j, L, rows)
        best = np.argmin(delta, axis=1)
        gain = delta[np.arange(rows.size), best]
        return rows[:, None], best[:, None], gain

    def swap_moves(j, L):
        """Exchange attribute ``j`` between two rows (keeps its 1-way table).

        Rows at level ``a`` that gain most from ``b`` are paired with rows at
        ``b`` that gain most from ``a``; the exact gain of each pair is then
        computed, and pairs sharing a row are dropped (best first).
        """
        bound = state.swap_bound(j)
        if N <= _ALL_PAIRS_ROWS:  # small tables: every pair of rows
            r1, r2 = np.triu_indices(N, 1)
            keep = R[r1, j] != R[r2, j]
            r1, r2 = r1[keep], r2[keep]
            if bound is not None:
                delta = state.move_deltas(j, L, np.arange(N))
                keep = promising(delta[r1, R[r2, j]] + delta[r2, R[r1, j]], bound)
                r1, r2 = r1[keep], r2[keep]
            return swap_gains(j, r1, r2)
        rows = np.arange(N) if N <= batch else rng.choice(N, size=batch, replace=False)
        delta = state.move_deltas(j, L, rows)
        cur = R[rows, j]
        first, second = [], []
        for lo, hi in itertools.combinations(range(L), 2):
            at_lo = np.flatnonzero(cur == lo)
            at_hi = np.flatnonzero(cur == hi)
            m = min(at_lo.size, at_hi.size)
            if m == 0:
                continue
            at_lo = at_lo[np.argsort(delta[at_lo, hi], kind="stable")[:m]]
            at_hi = at_hi[np.argsort(delta[at_hi, lo], kind="stable")[:m]]
            if bound is not None:
                keep = promising(delta[at_lo, hi] + delta[at_hi, lo], bound)
                at_lo, at_hi = at_lo[keep], at_hi[keep]
            first.append(rows[at_lo])
            second.append(rows[at_hi])
        if not first:
            return np.zeros((0, 2), np.int64), np.zeros((0, 2), np.int64), np.zeros(0)
        return swap_gains(j, np.concatenate(first), np.concatenate(second))

    def promising(singles, bound):
        """Pairs whose swap can gain: the swap's exact gain is the two single
        moves' gains plus an interaction of absolute value at most ``bound``
        (:meth:`_KronState.swap_bound`), so a pair with ``singles - bound``
        above the threshold cannot improve and would be dropped by
        ``swap_gains`` anyway (the kept pairs and their order are the same)."""
        return singles - bound * (1.0 + 1e-9) - 1e-9 < -1e-6

    def swap_gains(j, r1, r2):
        """Exact gains of the swaps ``(r1, r2)``; pairs sharing a row dropped."""
        lv1, lv2 = R[r1, j], R[r2, j]
        gain = state.swap_gains(j, r1, r2)
        order = np.argsort(gain, kind="stable")
        order = order[gain[order] < -1e-6]
        used, keep = set(), []
        for t in order:
            a_, b_ = int(r1[t]), int(r2[t])
            if a_ not in used and b_ not in used:
                used.update((a_, b_))
                keep.append(t)
        keep = np.asarray(keep, dtype=np.int64)
        return (
            np.column_stack([r1[keep], r2[keep]]),
            np.column_stack([lv2[keep], lv1[keep]]),
            gain[keep],
        )

    def apply_best(kind, j, rows, levels, gain):
        """Apply the best fraction of improving moves if the exact loss decreases.

        The place for hard constraints (e.g. tables held exactly): a move or
        swap that breaks one would be filtered here, before the trial.
        """
        improving = np.flatnonzero(gain < -1e-6)
        if improving.size == 0:
            return 0.0
        while True:
            k = max(1, int(math.ceil(fraction[kind, j] * improving.size)))
            # the k best moves, ties in row order: a stable sort makes the same
            # choice on every CPU (np.argpartition's SIMD kernels order equal
            # gains by CPU, and noise-free tables have many; issue 20)
            top = improving[np.argsort(gain[improving], kind="stable")[:k]]
            chosen, new_level = rows[top].ravel(), levels[top].ravel()
            old_loss, new_loss, trial = state.trial(j, chosen, new_level)
            if new_loss < old_loss - 1e-12 or k == 1:
                break
            fraction[kind, j] = max(fraction[kind, j] / 2.0, 1.0 / N)
        if new_loss >= old_loss:
            return 0.0  # even the single best move did not help (rounding)
        state.commit(j, chosen, new_level, trial)
        fraction[kind, j] = min(1.0, fraction[kind, j] * 1.5)
        return old_loss - new_loss

    stalled = [True]

    def descend(max_sweeps):
        swapping, done = False, 0
        stalled[0] = False
        ticker = Ticker("generator sweeps", max_sweeps)
        for done in range(1, max_sweeps + 1):
            ticker.tick(done - 1)
            improved_total = 0.0
            for j in rng.permutation(a):
                L = int(n_levels[j])
                if L < 2 or not state.has_members(j):
                    continue
                moves = swap_moves if swapping else single_moves
                improved_total += apply_best(int(swapping), j, *moves(j, L))
            current = state.loss()
            if current <= 0.0:
                stalled[0] = True
                break
            if improved_total <= max(_REL_TOL * current, _NOISE_TOL * n_measured):
                if swapping:
                    stalled[0] = True
                    break
                swapping = True  # single moves are stuck: exchange values between rows
            elif swapping:
                swapping = False  # a swap helped: single moves may have gains again
        return done

    sweeps = descend(max_sweeps)
    best_rows, best_loss = R.copy(), state.loss()
    for _ in range(int(kicks)):
        if best_loss <= 0.0:
            break
        # iterated local search: re-draw a few attributes of rows that sit in
        # over-filled cells (positive gradient), descend again, keep the best
        pool = np.flatnonzero(state.over_filled())
        if pool.size == 0:
            break
        picked = rng.choice(
            pool, size=min(pool.size, 2 + int(rng.integers(0, 6))), replace=False
        )
        for r in picked:
            j = int(rng.integers(0, a))
            R[r, j] = int(rng.integers(0, int(n_levels[j])))
        state.reset()
        sweeps += descend(max_sweeps)
        if state.loss() <= best_loss:  # equal: drift along the plateau
            best_rows, best_loss = R.copy(), state.loss()
        else:
            R[:] = best_rows
            state.reset()
    loss = state.loss()
    if warn and not stalled[0]:
        warnings.warn(
            f"the generator stopped after max_sweeps={max_sweeps} sweeps while the "
            f"loss was still falling (now {loss:.4g}); raise max_sweeps for a "
            "closer fit",
            ConvergenceWarning,
            stacklevel=2,
        )
    elif (
        warn
        and check_agreement
        and n_measured > 0
        and loss > n_measured + 6.0 * math.sqrt(2.0 * n_measured)
    ):
        warnings.warn(
            f"the released tables disagree more than their noise explains: the "
            f"fitted table's normalised loss is {loss:.4g} for {n_measured} measured "
            "values (expected about that many or fewer). The synthetic rows follow a "
            "least-squares compromise between the tables.",
            UserWarning,
            stacklevel=2,
        )
    return GeneratorResult(R, loss, initial, n_measured, sweeps)


def auto_model_rows(
    n_total: float,
    cell_sd: float,
    max_cells: int,
    *,
    share: float = ROUNDING_SHARE,
    tv_ceiling: float = ROUNDING_TV,
    noise_rule: bool = True,
) -> int:
    """Rows ``N`` of the generator's model table, from public quantities only.

    The fitted table has ``N`` equal-weight rows, so every cell of every table
    it implies is a multiple of ``1/N`` of the total; on the scale of the
    released counts (total ``n̂``) a cell moves in steps of ``n̂/N``. Rounding
    the (fractional) maximum-likelihood table to ``N`` rows therefore adds to
    each cell an error in ``[-n̂/(2N), n̂/(2N)]``, of standard deviation
    ``n̂/(N sqrt(12))`` when modelled as uniform (the standard quantisation
    model). The release's own noise has standard deviation ``s`` per cell
    (``cell_sd``: the smallest over the released tables, the most demanding
    one). Independent errors add in variance, so with::

        N >= n̂ / (sqrt(12) κ s)          (κ = ``share``)

    the rounding raises the per-cell error by at most a factor
    ``sqrt(1 + κ²)`` (1.001 for the default κ = 0.05): the rows' rounding
    sits below the noise. The rule depends on the signal-to-noise ratio
    ``n̂/s`` and not on the number of rows itself: at fixed ``n̂/s`` a table of
    10⁶ rows gets the same model as one of 10⁴.

    When the noise is tiny against ``n̂`` (many rows), that rule asks for a
    huge table although the rounding is already invisible in the proportions
    users score: a cell's rounding error is at most ``1/(2N)`` of the total,
    on average ``1/(4N)``, so a table of ``C`` cells moves by about
    ``C/(8N)`` in total variation. ``N >= C/(8 τ)`` (``τ = tv_ceiling``,
    ``C = max_cells``) keeps that at ``τ = 2.5·10⁻⁴`` or less on every
    measured table, a tenth of the smallest 2-way TV any of our benchmarks
    reports; ``N`` is the smaller of the two requirements. Measured
    (issue 21, ``benchmarks/bench_generator_scale.py rows``): at 10⁶ rows the
    noise rule asked for 200k-500k rows, and the fit was both slower and
    worse than at this ceiling (20 attributes: TV2 0.0021 in 100 s against
    0.0014 in 30 s at N = 50k; nassCDS resampled to 10⁶ rows: 0.0010 in 54 s
    against 0.0004 in 10 s).

    Two bounds from the domain and the release: at least ``max_cells`` rows
    (every cell of the largest measured table can be occupied) and at most
    ``n̂`` (the table as many rows as the release counts, the generator's
    model before this rule; more rows would make ``sample(n̂)`` round again).
    Last, ``N`` is raised to ``⌈n̂/k⌉`` with ``k = ⌊n̂/N⌋``, so that
    ``n̂ = k N - δ`` with ``0 <= δ < k``: ``sample(n̂)`` is then ``k`` copies of
    the table less ``δ`` rows instead of copies plus a random subset of up to
    ``N`` rows, whose sampling error (hypergeometric, up to ``sqrt(c/4)`` on a
    cell of ``c`` rows) would exceed the rounding budget (so below ``2N₀``
    rows the table keeps all ``n̂``). A function of released and public
    values only (post-processing).

    Parameters
    ----------
    n_total : float
        The released total ``n̂`` (or the public ``n`` under replace-one).
    cell_sd : float
        Standard deviation of the noise of one cell of the released tables
        (counts; public: the noise scales). ``0`` or ``inf``-ratio: ``n̂`` rows.
    max_cells : int
        Cells of the largest measured table (public: the domain).
    share : float, default=0.05
        ``κ``: the rounding's share of the noise's standard deviation.
    tv_ceiling : float, default=2.5e-4
        ``τ``: the rounding's total variation on the largest table that is
        always small enough. ``0`` switches the ceiling off (the rule before).
    noise_rule : bool, default=True
        ``False``: no noise rule, ``N₀ = min(n̂, max(ceil(C / (8 τ)), C))``
        (``cell_sd`` and ``share`` unused). The rule bounds the rounding of
        the *measured* tables; the rows also carry the tables nobody
        measured (the 3-way tables of a 2-way release), which a small table
        coarsens: the release's default (``gaussian_release.
        MODEL_ROWS_NOISE_RULE``) has used ``False`` since round nine.

    Returns
    -------
    int
        ``N₀ = min(n̂, max(min(ceil(n̂ / (sqrt(12) κ s)), ceil(C / (8 τ))), C))``
        (at least 1), then ``N = ceil(n̂ / floor(n̂ / N₀))``.

    Examples
    --------
    >>> auto_model_rows(10**6, cell_sd=20.0, max_cells=100)  # N₀ = 50000
    50000
    >>> auto_model_rows(10**6, cell_sd=20.0, max_cells=100, tv_ceiling=0)
    333334
    >>> auto_model_rows(5000, cell_sd=20.0, max_cells=100)  # N₀ = 1444
    1667
    >>> auto_model_rows(5000, cell_sd=0.0, max_cells=100)  # noise-free: n̂
    5000
    >>> auto_model_rows(5000, cell_sd=20.0, max_cells=100, noise_rule=False)
    5000
    >>> auto_model_rows(10**6, cell_sd=20.0, max_cells=100, noise_rule=False)
    50000
    """
    n_hat = max(1, int(round(float(n_total))))
    if not (share > 0):
        raise ValueError("share must be positive")
    if not (tv_ceiling >= 0):
        raise ValueError("tv_ceiling must be >= 0")
    s = float(cell_sd)
    if not noise_rule:
        need = n_hat
    elif not (s > 0 and math.isfinite(s)):
        return n_hat
    else:
        need = math.ceil(n_hat / (math.sqrt(12.0) * share * s))
    if tv_ceiling > 0:
        need = min(need, math.ceil(int(max_cells) / (8.0 * tv_ceiling)))
    N = int(max(1, min(n_hat, max(need, int(max_cells)))))
    k = n_hat // N  # n̂ = k N' - δ with 0 <= δ < k: sample(n̂) has no remainder
    return int(-(-n_hat // k))


def controlled_rows(
    rows: NDArray[Any],
    n: int,
    rng: np.random.Generator,
    *,
    weights: ArrayLike | None = None,
) -> NDArray[Any]:
    """``n`` rows of a table by controlled rounding of their expected counts.

    The one rounding of a released table into rows, used by
    :meth:`ProjectedGaussianRelease.sample
    <skdp_synth.gaussian_release.ProjectedGaussianRelease.sample>` and
    :meth:`Release.sample <skdp_synth.release.Release.sample>`. Row ``i`` is
    expected ``n w_i`` times; it appears ``floor(n w_i)`` times or once more,
    and the output is shuffled, so the output's marginals equal the table's
    up to the rounding of the remainder (no i.i.d. sampling error).

    * ``weights=None``: an equal-weight table of ``N`` rows (the generator's
      fitted rows, ``w_i = 1/N``): each row ``floor(n/N)`` times and a simple
      random subset of ``n mod N`` rows once more.
    * ``weights`` given (non-negative, summing to 1; e.g. the distinct rows of
      that table with their frequencies, as a release holds them): the
      floors ``floor(n w_i)`` plus the remaining rows by systematic sampling
      proportional to the fractional parts ``n w_i - floor(n w_i)`` (each row
      gains one with probability its fractional part).

    Parameters
    ----------
    rows : ndarray of shape (N, ...)
    n : int
    rng : numpy.random.Generator
    weights : ndarray of shape (N,), default=None

    Returns
    -------
    ndarray of shape (n, ...)

    Examples
    --------
    >>> import numpy as np
    >>> rows = np.array([[0], [1], [2]])
    >>> out = controlled_rows(rows, 7, np.random.default_rng(0))
    >>> np.bincount(out[:, 0]).tolist() in ([3, 2, 2], [2, 3, 2], [2, 2, 3])
    True
    >>> out = controlled_rows(rows, 10, np.random.default_rng(0),
    ...                       weights=np.array([0.5, 0.3, 0.2]))
    >>> np.bincount(out[:, 0]).tolist()
    [5, 3, 2]
    """
    rows = np.asarray(rows)
    N = rows.shape[0]
    n = int(n)
    if weights is not None:
        counts = _round_counts(n * np.asarray(weights, dtype=np.float64), n, rng)
        index = np.repeat(np.arange(N), counts)
        rng.shuffle(index)
        return rows[index]
    reps, rest = divmod(n, N)
    parts = [np.tile(np.arange(N), reps)] if reps else []
    if rest:
        parts.append(rng.choice(N, size=rest, replace=False))
    index = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    rng.shuffle(index)
    return rows[index]
