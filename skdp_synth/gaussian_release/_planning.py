"""Planning: everything the release fixes before it reads the data.

The first of :class:`~skdp_synth.gaussian_release.ProjectedGaussianRelease`'s
four stages. From the parameters, the public blocks and the public sizes
alone it resolves the mechanism, calibrates the noise magnitude ``c``,
states the guarantee, builds the workload and the invariants, shapes and
verifies the noise (:mod:`skdp_synth.mechanisms.additive`, or
ResidualPlanner's scales for ``"residual"``) and fixes what ``selection``
decides before the data is read. The result is the frozen
:class:`~skdp_synth.plan.ReleasePlan` the estimator publishes as ``plan_``,
and :func:`stage_plan` wraps it with the parameters and rules the later
stages read. Nothing here sees the data, so a plan is identical on
neighbouring datasets (``doc/privacy.md``).
"""

from __future__ import annotations

import itertools
import math
import warnings
from numbers import Integral

import numpy as np

from .._linalg import orth_basis
from ..exceptions import CoarseDomainWarning
from ..generator import MAX_TABLE_CELLS
from ..mechanisms import gaussian_delta, gaussian_sigma
from ..mechanisms.additive import (
    AdditiveNoise,
    MaskWhitening,
    MatrixWhitening,
    explicit_whitening,
    gaussian_lower_bound,
    orbit_whitening,
    points_of,
    replace_one_offset,
    verify_sensitivity,
)
from ..plan import ReleasePlan
from ..privacy import INDUCED_SUBSPACE, PrivacyGuarantee
from ..validation import (
    check_degree,
    check_dense_size,
    format_count,
    user_stacklevel,
)
from ..workloads import (
    AttributeMarginalWorkload,
    ExplicitWorkload,
    MarginalWorkload,
)
from ._coarse_pairs import ordinal_levels
from ._dependence import measures_dependence
from ._invariants import AttributeInvariants, running_intersection_order
from ._plan_choice import auto_rule
from ._selection import (
    MAX_CANDIDATE_CELLS,
    allocated_scales,
    candidate_tables,
    with_one_way_tables,
)
from ._values import StagePlan

__all__ = ["make_plan", "stage_plan"]


def mechanism_of(spec):
    """The mechanism ``"auto"`` stands for (public: depends on parameters only).

    ``"residual"`` -- the Gaussian-optimal noise on the attribute-level
    tables -- for the default marginal workload without invariants or
    with invariants over attributes, ``"correlated-weighted"``
    (Gaussian-optimal on the bit-level marginal workload, near-optimal
    otherwise) for explicit workloads and invariant matrices.
    """
    if spec.mechanism != "auto":
        return spec.mechanism
    if (spec.workload is None or isinstance(spec.workload, dict)) and (
        spec.invariants is None or AttributeInvariants.is_spec(spec.invariants)
    ):
        return "residual"
    return "correlated-weighted"


def noise_magnitude(spec):
    """``(c, achieved δ)``: Gaussian σ at sensitivity 1 and the δ it gives."""
    if mechanism_of(spec) == "laplace":
        return 1.0 / spec.epsilon, 0.0
    if not spec.delta < 0.5:
        raise ValueError(
            f"delta must be < 0.5 for a Gaussian mechanism, got {spec.delta}"
        )
    with warnings.catch_warnings():
        # the gao2022 warning is raised once, by guarantee()
        warnings.simplefilter("ignore", UserWarning)
        c = gaussian_sigma(spec.epsilon, spec.delta, 1.0, spec.calibration)
    achieved = gaussian_delta(c, spec.epsilon, 1.0)
    return c, max(float(spec.delta), achieved)


def guarantee(spec, delta):
    """The guarantee of the noise calibrated by :func:`noise_magnitude`."""
    if mechanism_of(spec) != "laplace" and delta > spec.delta:
        warnings.warn(
            f"calibration={spec.calibration!r} is not valid at epsilon="
            f"{spec.epsilon:g}, delta={spec.delta:g}: the noise achieves only "
            f"delta={delta:.3g}, which is what is recorded and charged. Use "
            "calibration='analytic'.",
            UserWarning,
            stacklevel=5,
        )
    names = {
        "residual": "Gaussian noise on attribute-level marginal residuals, "
        "optimal variances (ResidualPlanner, Xiao2023)",
        "correlated": "correlated Gaussian noise (Nikolov2013 Alg. 2)",
        "correlated-weighted": "weighted correlated Gaussian noise (Nikolov2013 "
        "Alg. 1-2)",
        "mee": "MEE-shaped Gaussian noise (Nikolov2013 Cor. 8)",
        "isotropic-gaussian": "Gaussian mechanism (Nikolov2013 Lemma 4)",
        "laplace": "Laplace mechanism (Gao2022 Lemma 16)",
    }
    text = names[mechanism_of(spec)]
    if spec.invariants is None:
        return PrivacyGuarantee(spec.epsilon, delta, spec.neighbouring, text)
    # Gao2022 Def. 6: exact invariants, (ε, δ)-DP only orthogonal to them
    text += (
        f"; induced subspace DP with exact invariants (Gao2022 Def. 6, "
        f"{spec.framework} framework)"
    )
    return PrivacyGuarantee(
        spec.epsilon,
        delta,
        spec.neighbouring,
        text,
        kind=INDUCED_SUBSPACE,
        invariants=invariant_labels(spec),
    )


def attribute_invariants(spec):
    """The invariants as :class:`AttributeInvariants`, or ``None`` (a matrix)."""
    if spec.invariants is None or not AttributeInvariants.is_spec(spec.invariants):
        return None
    return AttributeInvariants.parse(spec.invariants, spec.blocks.names)


def invariant_labels(spec):
    """What the invariants publish exactly, for the recorded guarantee."""
    inv = attribute_invariants(spec)
    if inv is not None:
        return inv.labels()
    C = np.atleast_2d(np.asarray(spec.invariants, dtype=np.float64))
    return (f"{C.shape[0]} linear equalities C y = C A x (Gao2022 Def. 2)",)


def make_plan(spec, rules, n_samples, n_features):
    """The whole noise model, calibrated and verified before the data is read.

    The mechanism, the workload, the invariants, the noise magnitude ``c``
    and the guarantee; for the bit-level mechanisms the whitening
    (:class:`AdditiveNoise`) with its whitened sensitivity checked on the
    whole sensitivity set; for ``"residual"`` ResidualPlanner's scales.
    Under add/remove neighbours ``n`` is private: the plan does not
    record it and nothing here depends on it (not even a comparison with
    the public bound ``n_rows``: ``doc/privacy.md``, "Errors").
    """
    c, delta = noise_magnitude(spec)
    common = {
        "n_samples": n_samples if spec.neighbouring == "replace-one" else None,
        "n_features": n_features,
        "guarantee": guarantee(spec, delta),
        "mechanism": mechanism_of(spec),
        "calibration": spec.calibration,
        "neighbouring": spec.neighbouring,
        "noise_sigma": c,
    }
    if common["mechanism"] == "residual":
        return with_model_rows_rule(spec, residual_plan(spec, rules, n_samples, common))
    if isinstance(spec.workload, dict) or spec.target is not None:
        raise ValueError(
            "a workload of attribute tables (dict) and target= are released "
            "by mechanism='residual' (or 'auto')"
        )
    if spec.selection in ("mst", "aim", "one-way"):
        raise ValueError(
            f"selection={spec.selection!r} needs mechanism='residual' (or 'auto')"
        )
    workload = make_workload(spec, n_features)
    C = check_invariants(spec, workload)
    check_n_rows(spec, n_samples)
    sparse = spec.n_rows is not None and common["mechanism"] in (
        "correlated",
        "correlated-weighted",
    )
    if sparse and C is not None:
        raise ValueError(
            "the least-squares step (n_rows) and invariants cannot be combined: "
            "each post-processing step would undo the other"
        )
    return with_model_rows_rule(spec, noise_plan(spec, workload, C, sparse, common))


def with_model_rows_rule(spec, plan):
    """The plan with the public rule of the generator's table size.

    ``max_model_rows="auto"`` (:func:`~skdp_synth.generator.auto_model_rows`)
    needs the noise per cell and the largest table, both fixed here
    before the data is read; the released total comes later.
    """
    if spec.max_model_rows != "auto":
        return plan
    if plan.mechanism == "residual":
        sd = residual_cell_sd(plan.workload, plan.noise_sigma * plan.residual_scales)
    elif isinstance(plan.workload, MarginalWorkload):
        sd = math.sqrt(plan.expected_error / plan.workload.n_queries)
    else:
        return plan
    if plan.mechanism == "residual":
        # the largest table of the (weighted, possibly 3-way) workload
        floor = max(int(plan.workload.n_cells(S)) for S in plan.workload.tables)
    else:
        levels = np.sort(np.asarray(spec.blocks.n_levels, dtype=np.int64))[::-1]
        floor = int(np.prod(levels[: min(int(spec.d), levels.size)]))
    return plan.replace(model_rows_cell_sd=sd, model_rows_floor=floor)


def check_n_rows(spec, n_samples):
    # Under add/remove neighbours n is private: a refusal that depends on
    # n > n_rows would answer that comparison exactly, for free (a binary
    # search over n_rows finds n). The least-squares
    # step is post-processing of the noisy answers, so its privacy does
    # not need n <= n_rows (only its accuracy bound does): not checked.
    if spec.neighbouring != "replace-one":
        return
    if spec.n_rows is not None and n_samples > spec.n_rows:
        raise ValueError(
            f"n_rows={spec.n_rows} is declared a public upper bound on the "
            "number of rows, but X has more rows"
        )


def make_workload(spec, p):
    W = spec.workload
    if W is None:
        check_degree(spec.d, p)
        n_tables = math.comb(p, int(spec.d))
        n_queries = n_tables * 2 ** int(spec.d)
        widest = max(spec.blocks.blocks, key=lambda b: b.width)
        # at least the tables' column indices and one answer per cell
        check_dense_size(
            n_tables * int(spec.d) + n_queries,
            f"the bit-level {spec.d}-way marginal workload over p={p} bits "
            f"({format_count(n_queries)} answers; the widest block is "
            f"{widest.name!r} with {widest.width} bits)",
            "Use mechanism='residual' (attribute-level tables), declare "
            "fewer levels for the widest columns, or lower d.",
        )
        return MarginalWorkload(p, spec.d)
    if isinstance(W, (MarginalWorkload, ExplicitWorkload)):
        if W.n_features != p:
            raise ValueError(f"the workload is over {W.n_features} features, X has {p}")
        return W
    return ExplicitWorkload(W, p)


def check_invariants(spec, workload):
    if spec.invariants is None:
        return None
    inv = attribute_invariants(spec)
    if inv is not None:
        return bit_invariants(spec, workload, inv)
    C = np.asarray(spec.invariants, dtype=np.float64)
    if C.ndim == 1:
        C = C[None, :]
    if C.ndim != 2 or C.shape[1] != workload.n_queries:
        raise ValueError(
            f"invariants must have shape (n_c, q) with q = {workload.n_queries} "
            f"answers; got {C.shape}"
        )
    if not np.all(np.isfinite(C)):
        raise ValueError("invariants must be finite")
    return C


def bit_invariants(spec, workload, inv):
    """Attribute invariants as :cite:`Gao2022`'s ``C`` on the bit-level tables.

    With every attribute a single bit (``blocks_`` all binary), the table of
    an attribute set ``S`` with ``|S| <= d`` is a marginal of the first
    ``d``-way table ``t ⊇ S`` of the workload: each cell of ``T_S`` is the
    sum of the cells of ``t`` whose bits at ``S`` match (``S = ()``: all
    of them, the total). Other encodings would need the joint table of a
    block's bits, which the bit-level workload does not hold.
    """
    if not isinstance(workload, MarginalWorkload) or not spec.blocks.is_all_binary:
        raise ValueError(
            "invariants over attributes need mechanism='residual' (the "
            "default) unless every attribute is one bit of the default "
            "marginal workload"
        )
    if inv.max_size > workload.d:
        raise ValueError(
            f"an invariant table has more attributes than d={workload.d}; "
            "raise d or name smaller tables"
        )
    rows = []
    tables = [tuple(int(u) for u in t) for t in workload.tables]
    for S in inv.sets:
        t = next(i for i, T in enumerate(tables) if set(S) <= set(T))
        T = tables[t]
        cells = np.array(list(itertools.product((0, 1), repeat=workload.d)))
        pos = [T.index(j) for j in S]
        key = cells[:, pos] @ (1 << np.arange(len(S) - 1, -1, -1)) if S else 0
        for value in range(2 ** len(S)):
            row = np.zeros(workload.n_queries)
            row[t * workload.n_cells : (t + 1) * workload.n_cells] = key == value
            rows.append(row)
    return np.array(rows)


def noise_plan(spec, workload, C, sparse, common):
    """The (public, data-independent) noise model of the bit-level mechanisms.

    The workload is asked one thing, its sensitivity set
    (:meth:`~skdp_synth.workloads.MarginalWorkload.sensitivity_set`); the
    noise is shaped from it and verified on it by
    :mod:`skdp_synth.mechanisms.additive`.
    """
    c = common["noise_sigma"]
    nb, mech = spec.neighbouring, common["mechanism"]
    # Gao2022: the extension framework builds the mechanism on the invariants'
    # null space; the projection framework projects afterwards
    ext = C if (C is not None and spec.framework == "extension") else None
    space = "cells" if mech in ("isotropic-gaussian", "laplace") else "coords"
    ord_ = 1 if mech == "laplace" else 2
    # the workload's answers: the sensitivity sets the noise is shaped from
    # and verified on, and the invariants' basis in the noise's space
    shaped = workload.sensitivity_set(nb, invariants=ext, space=space, ord=ord_)
    whole = shaped if ext is None else workload.sensitivity_set(nb, space=space)
    bound = None  # the set of the lower bound: in coords, restricted to C
    if mech != "laplace":
        if space == "coords" and (C is None or ext is not None):
            bound = shaped
        else:
            bound = workload.sensitivity_set(nb, invariants=C)
    inv_basis = None
    if C is not None:
        inv_basis = orth_basis(C.T if space == "cells" else workload.to_coords(C.T))
    to_cells = np.asarray if space == "cells" else workload.to_cells

    # the mechanism: shaped, calibrated and verified from the sets alone
    decomposition = None
    if space == "cells":
        q = workload.n_queries
        if ext is not None:
            H = points_of(shaped)
            sens = float(np.max(np.linalg.norm(H, ord=ord_, axis=0)))
            R = shaped.restriction
            whitening = MatrixWhitening(R, np.full(R.shape[0], sens))
        else:
            sens = shaped.max_norm
            whitening = MaskWhitening(q, np.arange(q), np.full(q, sens))
        kind = "gaussian" if ord_ == 2 else "laplace"
    else:
        if shaped.orbits is not None:
            whitening, decomposition = orbit_whitening(shaped.orbits, mech)
        else:
            T, scales, info = explicit_whitening(points_of(shaped), mech)
            if shaped.restriction is not None:
                T = T @ shaped.restriction
            decomposition = info.get("decomposition")
            whitening = MatrixWhitening(T, scales)
        if inv_basis is not None and inv_basis.shape[1] >= workload.rank:
            raise ValueError("the invariants fix every answer; nothing is private")
        kind = "gaussian"
    noise = AdditiveNoise(space, whitening, kind, c, to_cells, inv_basis)
    verified = verify_sensitivity(noise, whole)
    noise.offset = replace_one_offset(noise, whole)
    expected = noise.expected_error()
    lower = None if bound is None else gaussian_lower_bound(bound, c)
    return ReleasePlan(
        **common,
        workload=workload,
        invariants=C,
        sparse=sparse,
        space=space,
        noise=noise,
        decomposition=decomposition,
        residual_scales=None,
        sensitivity=verified,
        expected_error=expected,
        lower_bound=lower,
    )


def residual_plan(spec, rules, n_samples, common):
    """ResidualPlanner's scales for the attribute-level tables (no data)."""
    inv = attribute_invariants(spec)
    if (spec.workload is not None and not isinstance(spec.workload, dict)) or (
        spec.invariants is not None and inv is None
    ):
        raise ValueError(
            "mechanism='residual' releases the attribute-level marginal "
            "workload and takes no explicit workload or invariant matrix "
            "(name invariant tables by attributes, e.g. [('region',)]); use "
            "mechanism='correlated-weighted' (or 'auto')"
        )
    blocks = spec.blocks
    if not isinstance(spec.workload, dict):
        # a column of one level or bin has no bits and is no attribute; a
        # pipeline's private domains can leave too few (iris, 150 rows,
        # at epsilon=1: every numeric domain collapsed on some seeds)
        hint = (
            "; a column with a single level or bin carries no attribute. "
            "If an encoder learned the domains (see its CoarseDomainWarning),"
            " declare them (bounds=, bin_edges=, categories=) or give them "
            "a larger share of the budget (domain_share=)"
        )
        a = blocks.n_attributes
        if 1 <= a < spec.d:  # a table of one column needs d=1
            hint += f"; or measure tables of at most {a} attributes (d={a})"
        check_degree(spec.d, blocks.n_attributes, of="attributes", hint=hint)
    check_n_rows(spec, n_samples)
    if not isinstance(spec.workload, dict) and not spec.levels_learned:
        check_table_cells(blocks, spec.d)  # before the workload allocates
    tables, weights = attribute_tables(spec, rules)
    W = AttributeMarginalWorkload(
        blocks.n_levels, max(len(S) for S in tables), tables=tables, weights=weights
    )
    c = common["noise_sigma"]
    exact = ()
    if inv is not None:
        exact = exact_residuals(W, inv)
    # ResidualPlanner's allocation and its whitened ℓ2-sensitivity, computed
    # once (the replace-one maximum enumerates the attribute sets); dividing
    # it out gives sensitivity exactly 1 (homogeneity, see
    # AttributeMarginalWorkload.optimal_scales), so c is the Gaussian σ at
    # sensitivity 1. These are optimal_scales' τ, bit for bit. Invariants
    # (Gao2022, doc/privacy.md "Census-style releases"): the extension
    # framework allocates over the other residuals only; the projection
    # framework keeps the unconstrained allocation and drops the noise of
    # the exact residuals.
    ext = exact if spec.framework == "extension" else ()
    plain = inv is None and spec.neighbouring == "add-remove-one"
    plan_W = one_way_weighted(spec, rules, W, inv)
    if plan_W is None:
        tau, sens = W.calibrated_scales(spec.neighbouring, ext)  # public
    else:
        # the default pairs: the noise is allocated for the pairs and the
        # 1-way tables (ReleaseRules.one_way_weight). Same residuals, hence the same
        # sensitivity weights s_A: τ indexes W's residuals and its
        # sensitivity on W is the one divided out (exactly 1)
        tau, sens = allocated_scales(W, plan_W, spec.neighbouring, ext)
    guard_residual(sens)
    kept = np.array([A not in set(exact) for A in W.subsets])
    expected = W.expected_error(tau * kept, c)
    optimum = expected
    if plan_W is not None and plain:
        # the pairs' own optimum, c² (Σ_A sqrt(s_A v_A))² (module
        # docstring of attribute_workload; no sensitivity enumeration)
        K = float(np.sum(np.sqrt(W.sensitivity_weights() * W.variance_weights())))
        optimum = c**2 * K**2
    return ReleasePlan(
        **common,
        workload=W,
        invariants=inv,
        sparse=False,
        space="residuals",
        noise=None,
        decomposition=None,
        residual_scales=tau,
        sensitivity=1.0,  # the allocation's sensitivity is divided out
        expected_error=expected,
        lower_bound=optimum if plain else None,
        selection=selection_plan(spec, rules, W, tau, c, n_samples, inv),
    )


def one_way_weighted(spec, rules, W, inv):
    """The workload the default pairs' noise is allocated for, or ``None``.

    The default (no ``workload``, ``target`` or invariants, ``d = 2``, at
    least ``ReleaseRules.one_way_min_attributes`` attributes) measures every pair.
    ResidualPlanner's optimum for the pairs alone spends little on the
    1-way residuals, which each pair's cells share ``1/L_k``-fold, while
    each pair's TV counts them in full. Adding every 1-way table with
    ``ReleaseRules.one_way_weight`` moves the allocation (public: the levels); the
    released tables stay the pairs. ``expected_error_`` is then the
    pairs' error under this allocation and ``gaussian_optimal_error_``
    the pairs' optimum.
    """
    if (
        rules.one_way_weight <= 0
        or len(W.n_levels) < rules.one_way_min_attributes
        or spec.workload is not None
        or spec.target is not None
        or inv is not None
        or spec.d != 2
    ):
        return None
    return with_one_way_tables(W, rules.one_way_weight)


def exact_residuals(W, inv):
    """The residuals the invariant tables fix: their downward closure."""
    if inv.max_size > W.d:
        raise ValueError(
            f"an invariant table has more attributes than d={W.d}; raise d "
            "or name smaller tables"
        )
    if running_intersection_order(inv.sets) is None:
        raise ValueError(
            "the invariant tables must have a running intersection order "
            "(e.g. nested tables, or tables sharing one attribute) so that "
            "synthetic rows can hold all of them exactly"
        )
    exact = tuple(A for A in W.subsets if A in inv.closure())
    if len(exact) == len(W.subsets):
        raise ValueError("the invariants fix every answer; nothing is private")
    return exact


def attribute_tables(spec, rules):
    """The workload's tables and weights (public: parameters and blocks).

    ``workload`` as a dict, else all ``d``-way tables with weight 1; with
    ``target`` the tables containing it weigh ``ReleaseRules.target_weight`` times
    more and, for the default ``d = 2`` workload, its 3-way tables join.
    """
    levels = spec.blocks.n_levels
    a = len(spec.blocks.names)
    index = spec.attribute_index

    if isinstance(spec.workload, dict):
        weight = {}
        for key, w in spec.workload.items():
            keys = (key,) if isinstance(key, (str, Integral)) else tuple(key)
            S = tuple(sorted(index(k) for k in keys))
            if not S or len(set(S)) != len(S):
                raise ValueError(f"workload table {key!r} is empty or repeats")
            w = float(w)
            if not (math.isfinite(w) and w > 0):
                raise ValueError(f"workload weight of {key!r} must be positive")
            weight[S] = weight.get(S, 0.0) + w
        if not weight:
            raise ValueError("the workload dict is empty")
    else:
        weight = {S: 1.0 for S in itertools.combinations(range(a), spec.d)}
        if spec.levels_learned:
            weight = fitting_tables(spec.blocks, spec.d, weight)
    if spec.target is not None:
        t = index(spec.target)
        if spec.workload is None and spec.d == 2:
            others = [j for j in range(a) if j != t]
            for i, j in itertools.combinations(others, 2):
                S = tuple(sorted((t, i, j)))
                cells = int(levels[t]) * int(levels[i]) * int(levels[j])
                if cells <= MAX_CANDIDATE_CELLS:
                    weight.setdefault(S, 1.0)
        weight = {
            S: w * (rules.target_weight if t in S else 1.0) for S, w in weight.items()
        }
    tables = sorted(weight, key=lambda S: (len(S), S))
    return tables, [weight[S] for S in tables]


def selection_plan(spec, rules, W, tau, c, n_samples, inv=None):
    """What ``selection`` fixes before the data is read (public).

    With invariants every table is measured (the exact residuals fix
    tables that selection could leave out): ``"auto"`` keeps all tables,
    an explicit rule is refused.

    The rule (or ``"auto"`` when it waits for the noisy total, or under
    replace-one for the pairs' measured dependence), the candidates and
    their weights, the budget shares, and for ``"auto"`` the share of the
    noisy total ``f_0 = s_∅/τ_∅²`` -- its share in the all-tables plan, so
    that the all-tables branch is that plan exactly (0 with a public ``n``).
    """
    rule = spec.selection
    if inv is not None:
        if rule not in ("auto", "none"):
            raise ValueError(
                f"selection={rule!r} cannot be combined with invariants: "
                "use selection='none' (or 'auto', which then keeps all tables)"
            )
        return {"rule": "none"}
    levels = spec.blocks.n_levels
    public_n = n_samples if spec.neighbouring == "replace-one" else spec.n_rows
    auto = rule == "auto"
    public = (W, tau, c, public_n, rules, spec.neighbouring, spec.target)
    default_pairs = spec.workload is None and spec.d == 2
    # the tree's pairs priced at the levels its final step measures them on
    keep = () if spec.target is None else (spec.attribute_index(spec.target),)
    ordinal = ordinal_levels(spec.blocks, levels, keep=keep)
    # a public n decides before the data is read, except where auto would
    # measure the pairs' dependence first (replace-one: n is the rows' own
    # count; n_rows under add/remove only bounds it, so the measured mean
    # could not be put on the rows' scale)
    dependence_first = (
        auto
        and spec.neighbouring == "replace-one"
        and measures_dependence(*public, default_pairs, ordinal=ordinal)
    )
    if auto and public_n is not None and not dependence_first:
        rule = auto_rule(*public, default_pairs, ordinal=ordinal)
    if rule == "none":
        return {"rule": "none"}
    cand, cw = candidate_tables(levels, dict(zip(W.tables, W.weights)))
    if not cand:
        return {"rule": "none"}
    out = {
        "rule": rule,
        "candidates": cand,
        "candidate_weights": cw,
        "shares": {
            r: dict(rules.auto_mst_shares if (auto and r == "mst") else v)
            for r, v in rules.selection_shares.items()
            if rule in ("auto", r)
        },
        # auto chose the rule: its 1-way tables with a target keep the
        # target's pairs that are worth their noise (_dependence.
        # target_pairs_by_worth; an explicit "one-way" keeps every one),
        # and its AIM joins the columns its rounds leave in no pair
        "auto": auto,
        "public_n": public_n,
    }
    if rule == "auto":
        # the noisy total's share of the all-tables plan; none with a
        # public n (the measured dependence comes first, at its own share)
        i0 = W.subsets.index(())
        out["count_share"] = 0.0 if dependence_first else float(1.0 / tau[i0] ** 2)
    return out


def guard_residual(sens):
    """The allocation's sensitivity must be a positive finite number."""
    if not (0.0 < sens < math.inf):  # pragma: no cover - defensive
        raise RuntimeError(
            f"whitened sensitivity {sens} of the residual allocation is not a "
            "positive finite number; refusing to release"
        )


def fitting_tables(blocks, d, weight):
    """The default ``d``-way tables ``weight`` without those too large for
    the generator, when an encoder learned the levels.

    The release's plan-time refusal (:func:`check_table_cells`) would come
    after the encoder's fit has spent its budget, for level counts that the
    noise decides (the hotel table at epsilon 0.1: 22 x 91 = 2,002 cells on
    one seed). Those tables are left out and named in a
    :class:`~skdp_synth.exceptions.CoarseDomainWarning`; an attribute left
    in no table keeps its 1-way table. Refused (as before) when no
    ``d``-way table fits or an attribute alone does not. Public: the
    released domains' level counts.
    """
    levels = [int(v) for v in blocks.n_levels]
    big = [S for S in weight if math.prod(levels[j] for j in S) > MAX_TABLE_CELLS]
    if not big:
        return weight
    if len(big) == len(weight):
        check_table_cells(blocks, d)  # raises: no d-way table fits
    check_table_cells(blocks, 1)  # raises when an attribute alone does not fit
    kept = {S: w for S, w in weight.items() if S not in big}
    covered = {j for S in kept for j in S}
    alone = [j for j in range(len(levels)) if j not in covered and levels[j] >= 2]
    kept.update({(j,): 1.0 for j in alone})

    def shown(S):
        cols = " x ".join(
            f"{blocks.names[j]!r} ({format_count(levels[j])} levels)" for j in S
        )
        cells = format_count(math.prod(levels[j] for j in S))
        return f"{cols}: {cells} cells"

    listed = "; ".join(shown(S) for S in big[:5])
    if len(big) > 5:
        listed += f"; and {len(big) - 5} more"
    widest = blocks.names[max({j for S in big for j in S}, key=lambda j: levels[j])]
    warnings.warn(
        f"with the levels the encoder learned, {len(big)} of the "
        f"{len(weight)} {d}-way tables {'has' if len(big) == 1 else 'have'} "
        f"more cells than the {MAX_TABLE_CELLS} the generator can fit and "
        f"{'is' if len(big) == 1 else 'are'} left out of the workload "
        f"({listed}); their attributes are measured in their other tables"
        + (" or alone" if alone else "")
        + f". Declare fewer levels for {widest!r} (categories=; merge rare "
        "levels, or bin it) to measure them.",
        CoarseDomainWarning,
        stacklevel=user_stacklevel(),
    )
    return kept


def check_table_cells(blocks, d):
    """Refuse, at plan time, attribute tables too large for the generator.

    The generator holds a dense ``cells x cells`` matrix per maximal table
    (:data:`~skdp_synth.generator.MAX_TABLE_CELLS`); the largest ``d``-way
    table is that of the ``d`` attributes with the most levels. The sizes
    are the declared domain's (public), so the check names the columns.
    """
    levels = [int(v) for v in blocks.n_levels]
    order = sorted(range(len(levels)), key=lambda j: -levels[j])[: int(d)]
    cells = math.prod(levels[j] for j in order)
    if cells > MAX_TABLE_CELLS:
        names = [blocks.names[j] for j in order]
        shown = " x ".join(
            f"{n!r} ({format_count(levels[j])} levels)" for n, j in zip(names, order)
        )
        raise ValueError(
            f"the {d}-way table of {shown} has {format_count(cells)} cells, more "
            f"than the {MAX_TABLE_CELLS} the generator can fit (checked before "
            f"the data is read). Declare fewer levels for {names[0]!r} (merge "
            "rare levels, or bin it), or lower d."
        )


def residual_cell_sd(W, scales):
    """Smallest noise standard deviation of one cell over the released tables.

    A cell of the table ``T_S`` rebuilt from the residuals has the variance
    ``Σ_{A⊆S} σ_A² Π_{j∈A}(1 - 1/L_j) Π_{j∈S∖A} 1/L_j²`` (σ_A = ``scales``;
    :meth:`AttributeMarginalWorkload.cell_variance`), the same for all cells
    of ``S``. Public (the noise scales and the levels).
    """
    sigma = dict(zip(W.subsets, np.asarray(scales, dtype=np.float64)))
    L = np.asarray(W.n_levels, dtype=np.float64)
    best = math.inf
    for S in W.tables:
        var = 0.0
        for k in range(len(S) + 1):
            for A in itertools.combinations(S, k):
                sa = sigma.get(A)
                if not sa:
                    continue
                inside = np.prod([1.0 - 1.0 / L[j] for j in A])
                outside = np.prod([1.0 / L[j] ** 2 for j in S if j not in A])
                var += sa**2 * inside * outside
        best = min(best, var)
    return math.sqrt(best) if math.isfinite(best) else 0.0


def stage_plan(plan, spec, rules):
    """The published ``plan`` with what the later stages read besides it
    (:class:`~._values.StagePlan`; public: parameters and blocks only)."""
    target = None
    if plan.mechanism == "residual" and spec.target is not None:
        target = spec.attribute_index(spec.target)
    return StagePlan(plan, spec, rules, attribute_invariants(spec), target)
