"""The frozen values handed between the release's stages.

:class:`~skdp_synth.gaussian_release.ProjectedGaussianRelease` runs four
stages -- planning, measuring, reconstructing, generating -- that never
call each other: each takes the values the previous ones returned and
returns a new one. Holding those values here (and not in the stage that
makes them) lets every stage read them without importing another stage,
and makes what crosses from the private data to post-processing visible in
one place: only :class:`Measurements` is computed from the data, through
the noise.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np

from ..generator import auto_model_rows
from ..workloads import AttributeMarginalWorkload

__all__ = [
    "Generated",
    "Measurements",
    "Reconstruction",
    "ReleaseSpec",
    "StagePlan",
]


@dataclass(frozen=True, eq=False)
class ReleaseSpec:
    """The estimator's parameters and public blocks, as the stages read them.

    The same names as the estimator's parameters (``blocks`` is the resolved
    ``blocks_``), so that a stage reads ``spec.target`` where the estimator
    read ``self.target``. Public: parameters and the declared domain.
    """

    epsilon: float
    delta: float
    d: int
    workload: Any
    invariants: Any
    mechanism: str
    calibration: str
    neighbouring: str
    n_rows: int | None
    framework: str
    n_candidates: int
    max_model_rows: Any
    target: Any
    selection: str
    shrinkage: str | None
    structural_zeros: Any
    random_state: Any
    blocks: Any
    #: whether an encoder learned the levels from the data (a pipeline's
    #: private domains: public once released, but only after its fit, so a
    #: table too large for the generator is left out instead of refused)
    levels_learned: bool = False

    @classmethod
    def of(cls, est):
        """The spec of estimator ``est`` (its parameters and ``blocks_``;
        ``levels_learned`` as :class:`~skdp_synth.SynthesisPipeline` sets it
        for the fit)."""
        names = [
            f for f in cls.__dataclass_fields__ if f not in ("blocks", "levels_learned")
        ]
        return cls(
            **{f: getattr(est, f) for f in names},
            blocks=est.blocks_,
            levels_learned=bool(getattr(est, "_levels_learned", False)),
        )

    def zero_cells(self):
        """``structural_zeros`` resolved against ``blocks``: a list of
        ``(attribute indices, mask)`` with the attributes sorted and the
        mask's axes in that order (:func:`skdp_synth.generator.check_zeros`).
        Raises ``ValueError`` on an unknown attribute, a mask of the wrong
        shape or one that forbids every cell. Public: parameters and the
        declared domain."""
        from ..generator import check_zeros

        if not self.structural_zeros:
            return []
        items = []
        for k, item in enumerate(self.structural_zeros):
            try:
                attrs, mask = item
            except (TypeError, ValueError):
                raise ValueError(
                    f"structural_zeros[{k}]: expected (attributes, mask), got "
                    f"{type(item).__name__}"
                ) from None
            if isinstance(attrs, (str, Integral)):
                attrs = (attrs,)
            items.append(
                (tuple(self.attribute_index(a) for a in attrs), np.asarray(mask))
            )
        return check_zeros(items, self.blocks.n_levels, self.blocks.names)

    def attribute_index(self, key):
        """The index of attribute ``key`` (a name or an index; public)."""
        names = [str(x) for x in self.blocks.names]
        if isinstance(key, Integral) and not isinstance(key, bool):
            if not 0 <= int(key) < len(names):
                raise ValueError(f"attribute index {key} out of range")
            return int(key)
        if str(key) not in names:
            import difflib

            lower = {name.lower(): name for name in names}
            close = difflib.get_close_matches(str(key).lower(), list(lower), n=1)
            hint = f" Did you mean {lower[close[0]]!r}?" if close else ""
            raise ValueError(
                f"unknown attribute {key!r} (the columns are the attributes): "
                f"{names}.{hint}"
            )
        return names.index(str(key))


@dataclass(frozen=True, eq=False)
class StagePlan:
    """The published plan and what the later stages read besides it.

    ``plan`` is the :class:`~skdp_synth.plan.ReleasePlan` published as
    ``plan_``; ``spec`` the parameters, ``rules`` the tuning, and the two
    things the stages would otherwise each derive again from them: the
    invariants over attributes (or ``None``) and the index of ``target``
    (or ``None``). Public: nothing here depends on the data.
    """

    plan: Any
    spec: ReleaseSpec
    rules: Any
    attribute_invariants: Any
    target_index: int | None

    def model_table_rows(self, W, n_estimate):
        """``N``, the rows of the generator's table, from the released total
        ``n̂`` and the plan's public rule (``max_model_rows``) for the
        released workload ``W``."""
        n_hat = max(1, int(round(n_estimate)))
        if self.spec.max_model_rows == "auto":
            plan = self.plan
            if not every_pair_measured(W, self.spec.blocks.n_levels):
                # a pair no table measures is implied by the model's rows
                # alone: from N < n̂ rows it carries the sampling error of N
                # rows (Caravan, 86 columns, 1-way tables only: TV2 0.073 at
                # N = 423 against 0.063 at N = n̂), so the table keeps n̂ rows
                return n_hat
            if plan.model_rows_cell_sd is not None:
                return auto_model_rows(
                    n_hat,
                    plan.model_rows_cell_sd,
                    plan.model_rows_floor,
                    noise_rule=self.rules.model_rows_noise_rule,
                )
            return n_hat
        if self.spec.max_model_rows is not None:
            return min(n_hat, int(self.spec.max_model_rows))
        return n_hat


def every_pair_measured(W, n_levels):
    """Whether every pair of attributes (of >= 2 levels) lies in a table of
    ``W`` (public: the plan's or the released choice's)."""
    if not isinstance(W, AttributeMarginalWorkload):
        # bit-level workloads: the size rule as before
        return True
    tables = W.tables
    levels = np.asarray(n_levels)
    live = [j for j in range(levels.size) if levels[j] >= 2]
    covered = set()
    for S in tables:
        covered.update(itertools.combinations(sorted(S), 2))
    return all(p in covered for p in itertools.combinations(live, 2))


@dataclass(frozen=True, eq=False)
class Measurements:
    """The noisy answers: the one value the measuring stage computes from
    the data, through the noise. Everything after it is post-processing.

    Bit-level mechanisms: ``released`` is the noisy answer vector in the
    plan's ``space``. ``"residual"``: ``released`` maps each residual of
    ``workload`` (the measured tables: all of them, or the chosen ones) to
    its noisy value (the invariants' residuals exactly, in ``exact``), with
    noise ``c * scales``; ``extra`` holds the selection steps' own noisy
    measurements, ``rule`` the selection rule used, ``shares`` its budget
    shares (``None``: all on the final measurement) and ``selection`` its
    :class:`~skdp_synth.gaussian_release.SelectionResult`; ``dependence``
    what ``selection="auto"`` measured of the pairs' dependence
    (:mod:`~skdp_synth.gaussian_release._dependence`: the noisy mean, its
    noise scale and the ``D`` the choice used), or ``None``; ``total_sd``
    the noise sd of ``released[()]`` where it is the inverse-variance mean
    of several noisy totals (``None``: the plan's own scale of the total);
    ``coarsened`` the chosen tables measured on coarsened levels
    (:mod:`~skdp_synth.gaussian_release._coarse_pairs`), which ``workload``
    does not hold.
    """

    released: Any
    workload: Any = None
    scales: np.ndarray | None = None
    extra: tuple | list = ()
    rule: str = "none"
    exact: frozenset | set = frozenset()
    shares: dict | None = None
    selection: Any = None
    dependence: dict | None = None
    total_sd: float | None = None
    coarsened: tuple | list = ()


@dataclass(frozen=True, eq=False)
class Reconstruction:
    """The released tables and the generator's input (post-processing).

    ``fitted``: the fitted attributes this stage determines, by name, for
    the estimator to set. ``measurements``: what the generator fits
    (``None``: explicit workloads, whose candidate rows are reweighted to
    ``coords`` instead). ``invariant_tables``: the released invariant tables
    (exact up to floating-point rounding), or ``None``. ``planned``: the
    :class:`StagePlan` the generating stage reads.
    """

    fitted: dict
    workload: Any
    n_estimate: float | None
    measurements: list | None
    coords: np.ndarray | None
    invariant_tables: dict | None
    planned: StagePlan


@dataclass(frozen=True, eq=False)
class Generated:
    """The synthetic model: the generator's rows (or weighted candidates).

    ``fitted``: the fitted attributes this stage determines, by name;
    ``rows`` the model's table of rows (``None`` for weighted candidates);
    ``invariant_tables`` the integer invariant tables every sample holds
    (or ``None``).
    """

    fitted: dict
    rows: np.ndarray | None
    invariant_tables: dict | None
