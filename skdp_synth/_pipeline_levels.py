"""Which levels a fitted pipeline keeps, and which columns it warns about.

After the last step is fitted, the pipeline reads the release's own 1-way
estimates of the encoder's levels -- released values, with their public noise
sd -- and drops a missing, "other" or split level the release does not
support, then names the columns the released domain and release say will
come back degenerate. Post-processing of released quantities only: mixed into
:class:`~skdp_synth.pipeline.SynthesisPipeline`.
"""

from __future__ import annotations

import warnings

import numpy as np

from .exceptions import CoarseDomainWarning
from .validation import user_stacklevel

#: A *tentative* coarse bin of a numeric column (a run of leaves that joined
#: its private domain at the looser ``TENTATIVE_LEVEL`` of
#: :mod:`.preprocessing._numeric_domain`, :meth:`FineHistogram.tentative_bins`)
#: is kept only where the release's own estimate of its count is at least
#: this many of its noise sds -- stricter than the other levels'
#: ``LEVEL_SUPPORT_Z = 2``: the bin spans the emptied leaves between the
#: kept range and the run, so rows of a thin edge next to the range (not
#: of the run) pass its test, and the decoder then draws them on the run's
#: far noise leaves (a 4 % edge at 3-4 of a column of 1s and 2s came back
#: at 1,025-5,915, std x1,100); an empty bin passes ``2 σ`` in ``2.3 %``
#: of tests, ``3 σ`` in ``0.13 %``. A real tail tested this way (credit's
#: ``Debt``: 18 % of 3,563 rows) is many ``σ`` above either. 3 is the
#: usual three sds, not searched: on the TUNE half (``python -m
#: benchmarks.bench_suite --half tune --tables
#: credit,loans,acs12,attrition,hmda,cps1988 --eps 1,0.3 --seeds 5 --methods
#: auto --light``) it changed attrition at ε = 0.3 only (mean TV1 .3148 ->
#: .3156, KS .4516 -> .4558), every other fit's rows the same.
TENTATIVE_SUPPORT_Z = 3.0
#: A categorical column whose levels were discovered privately is named
#: where the release puts at least this share of the rows in its ``"other"``
#: level, ``DEGENERATE_Z`` sds below its estimate
#: (:func:`other_share_reason`). Public, not searched: a tenth. A 3-level
#: column of 1,000 rows (50 / 30 / 20 %) in the default pipeline at ε = 1
#: keeps only its commonest level: the levels of 300 and 200 rows are under
#: the discovery's threshold (about 410 rows there), and half the rows come
#: back as ``"other"`` (``tests/test_other_share.py``).
OTHER_SHARE = 0.1


class PipelineLevelsMixin:
    """The level keep rules and the degenerate-column warning of a
    :class:`~skdp_synth.pipeline.SynthesisPipeline`."""

    def _collapsed_target(self, final, blocks):
        """The last step's ``target`` when the encoder's private domain of
        that column kept one bin or level, so the column has no bits and no
        attribute: the release then refused it as an "unknown attribute",
        listing the others, and a search over ``target`` failed in the folds
        whose noise collapsed it. It is
        fitted without the target, and a warning says why. A function of
        the released domain (its bits): public."""
        target = getattr(final, "get_params", dict)(deep=False).get("target")
        encoder = self._encoder()
        if target is None or blocks is None or encoder is None:
            return None
        names = [str(name) for name in blocks.names]
        columns = [str(c) for c in getattr(encoder, "columns_", [])]
        if str(target) in names or str(target) not in columns:
            return None
        warnings.warn(
            f"the target {target!r} kept a single bin or level in this fit's "
            "private domain (its values below the noise: see the "
            "CoarseDomainWarning), so it has no table to weight: fitted "
            "without target=. Declare its domain (bin_edges=, bounds=, "
            "categories=) or give the domains a larger share (domain_share=)",
            CoarseDomainWarning,
            stacklevel=user_stacklevel(),
        )
        return target

    def _learned_levels(self, final):
        """Tell the last step, for its fit, that the encoder learned levels
        privately; return whether it was told.

        Its plan then leaves out a table too large for the generator (with
        a warning) instead of refusing the fit after the encoder spent its
        budget on the domains that decided the table's size
        (``ProjectedGaussianRelease``; the pipeline removes the mark after
        the fit). Public: whether a domain was declared."""
        encoder = self._encoder()
        if (
            encoder is None
            or not getattr(encoder, "private_domains_", None)
            or "workload" not in getattr(final, "get_params", dict)(deep=False)
        ):
            return False
        final._levels_learned = True
        return True

    def _drop_unsupported_levels(self, final, final_params):
        """Missing levels, ``"other"`` levels and one-integer bins that the
        last step's own measurement does not support are dropped from its
        rows (post-processing).

        A missing level exists because the schema declares it (``None`` in a
        column's categories, ``missing=``) or because the column's dtype can
        hold a missing value (a privately learned domain): a column with
        none has one too. A categorical
        column whose levels the encoder discovered privately always has an
        ``"other"`` level (data-independent), which holds the rare levels --
        or nothing, when every level was found (a two-level ``Status``).
        Either way, the generator gives the level rows fitted to the
        release's noise (credit's ``Job``: 2 missing of 3,563, ~1.4 % NaN in
        the rows; ``Status``: 0.5-2 % ``"other"``). Where the release's
        estimate of the level is below ``LEVEL_SUPPORT_Z`` of its noise
        (:meth:`ProjectedGaussianRelease._drop_unsupported_level`), ``sample``
        never returns it. The bins of one integer split from a heap's leaf
        (``split_heavy_leaves`` of the private numeric domains)
        are tested the same way: the empty integers beside a heap; a
        tentative run's bins at the stricter :data:`TENTATIVE_SUPPORT_Z`;
        consecutive ones that each fail but together pass
        :data:`RUN_SUPPORT_Z` of their noise are kept whole (one-integer
        bins anywhere, :func:`_supported_runs`; split bins holding a wider
        one between two kept bins and kept leaves, :func:`_interior_runs`).
        Then each numeric column's fine histogram is made to agree with the
        release's estimates of its bins (:func:`_reconcile_leaves`), its
        outer bins that the release measures as empty and the model's rows
        do not use emptied first (:func:`_empty_outer_bins`). The
        ``missing_dropped_``, ``other_dropped_``, ``integer_bins_dropped_``
        and ``outer_bins_dropped_`` attributes list what was dropped
        (public: a function of the release).
        """
        self.missing_dropped_ = []
        self.other_dropped_ = []
        self.integer_bins_dropped_ = {}
        self.outer_bins_dropped_ = {}
        self.missing_shares_ = {}
        refuted = self._refuted_far = set()  # named by _warn_degenerate
        self.degenerate_columns_ = {}
        blocks = final_params.get("blocks")
        drop = getattr(final, "_drop_unsupported_level", None)
        if blocks is None or drop is None or getattr(final, "blocks_", None) is None:
            return
        encoder = next(
            (
                step
                for _, _, step in self._iter(with_final=False)
                if getattr(step, "blocks_", None) is blocks and hasattr(step, "specs_")
            ),
            None,
        )
        if encoder is None:
            return
        names = [str(name) for name in final.blocks_.names]
        # each numeric column's fine histogram as its domain released it,
        # before _reconcile_leaves fills emptied leaves from the release:
        # what the capped-tail test compares the release with
        domains = {}
        for spec in encoder.specs_:
            if str(spec.name) not in names:
                # a column without bits (one level, never missing)
                _reconcile_bitless(final, spec)
                continue
            domains[spec.name] = spec.fine
            j = names.index(str(spec.name))
            # the missing level is each block's last (Block docstring), kept
            # on the release's estimate and the encoder's own noisy count
            # (_drop_missing_level, _missing_support)
            if spec.missing and self._drop_missing_level(final, spec, j, drop):
                self.missing_dropped_.append(spec.name)
            # a kept missing level keeps the share the model gave it when a
            # value level is dropped: the dropped level's rows go to the
            # column's other values (loans' months_since_90d_late, ε = 1,
            # seed 2: three one-month bins dropped, 169 of their 216 model
            # rows had gone to missing, 79.8 % against the released 77.8 ±
            # 0.7 %; benchmarks/results/bench_missing_keep.md)
            keep = {}
            if spec.missing and spec.name not in self.missing_dropped_:
                keep = {"keep": (int(spec.n_levels),)}
            # the catch-all of privately discovered levels is the last level
            # before the missing one (BooleanEncoder._private_spec)
            other = len(spec.levels) - 1
            if (
                getattr(spec, "other", False)
                and not _only_value_level(final, spec, j, other)
                and drop(j, other, **keep)
            ):
                self.other_dropped_.append(spec.name)
            # one-integer bins split from a heavy leaf (split_heavy_leaves):
            # the empty integers beside a heap, or past the data's end; a
            # tentative run's bins at the stricter TENTATIVE_SUPPORT_Z
            # and the parts cut from a float column's wide leaf: 16 parts,
            # most of them empty, where 2 sds kept one far from the rows in
            # 2.3 % of tests (FLOAT_PARTS of preprocessing._wide_leaves)
            strict, gone = _tentative_bins(spec) | _tail_parts(spec), []
            # a floor cell's outer part (_floor_parts) is tested alone at
            # TENTATIVE_SUPPORT_Z: a zero-inflated amount's holds no row,
            # and kept as a run between its bins it drew rows under 0.001
            floor = _floor_parts(spec)
            strict |= floor
            whole = set()
            if not getattr(spec, "integer", True):
                strict |= {int(b) for b in getattr(spec, "wide", ())}
                whole = _uncut_leaves(final, spec, j)
            else:
                # a thin run of integers the release supports only as a
                # whole (RUN_SUPPORT_Z), strict bins in it too; a strict
                # bin in no kept run keeps its own TENTATIVE_SUPPORT_Z
                whole = _supported_runs(final, spec, j)
                if UNCUT_INTEGER_LEAVES:
                    whole |= _uncut_leaves(final, spec, j, inner_only=True)
            whole |= _interior_runs(final, spec, j, strict, whole | floor)
            for b in getattr(spec, "split", ()):
                if int(b) in whole:
                    continue  # decoded as its whole leaf (_uncut_leaves)
                if _only_value_level(final, spec, j, int(b)):
                    continue  # never every bin (_only_value_level)
                z = {"z": TENTATIVE_SUPPORT_Z} if int(b) in strict else {}
                if drop(j, int(b), **z, **keep):
                    gone.append(int(b))
                    self.integer_bins_dropped_.setdefault(spec.name, []).append(
                        spec.levels[b]
                    )
            outer = _empty_outer_bins(final, spec, j, drop, gone, refuted)
            if outer:
                self.outer_bins_dropped_[spec.name] = [spec.levels[b] for b in outer]
            _reconcile_leaves(final, spec, j, gone, outer)
        self._warn_degenerate(final, encoder, names, domains)

    def _drop_missing_level(self, final, spec, j, drop):
        """Drop column ``j``'s missing level iff the release's estimate of
        its count is below ``MISSING_SUPPORT_Z`` of its noise (lower than the
        other levels' ``LEVEL_SUPPORT_Z``: a missing share of ``3 σ`` was
        lost in 16 % of fits) -- where the encoder drew its own noisy count
        of ``spec``'s missing cells, the two estimates' mean at the threshold of
        :func:`.preprocessing._missing_support.missing_support` (a complete
        column keeps a missing level less often, a missing count of at least
        ``σ`` is lost no more often); record the released share and its sd in
        ``missing_shares_``: the release's ``_one_way_share_estimate`` where
        it has one (the total's noise included), else ``(T̂ / n̂, σ / n̂)``
        (``n`` public). Post-processing of released values."""
        from .preprocessing._missing_support import missing_support, second_count

        level = int(final.blocks_.n_levels[j]) - 1
        found = final._one_way_level_estimate(j, level)
        if found is None:
            return drop(j, level)
        est, sd = found
        n_hat = _released_n(final)
        name = final.blocks_.names[j]
        share_of = getattr(final, "_one_way_share_estimate", None)
        share = share_of(j, level) if share_of is not None else None
        if share is not None:
            self.missing_shares_[name] = share
        elif n_hat:
            self.missing_shares_[name] = (max(est, 0.0) / n_hat, sd / n_hat)
        raw, variance = second_count(spec)
        value, threshold = missing_support(est, sd, raw, variance)
        # the release drops it where its own estimate is under
        # LEVEL_SUPPORT_Z sds (the threshold is at most one)
        return bool(value < threshold) and drop(j, level)

    def _warn_degenerate(self, final, encoder, names, domains=None):
        """Warn by name about the columns that the released domains and the
        release say will come back degenerate
        (:func:`~skdp_synth.preprocessing._decoding.degenerate_reasons`):
        released quantities and public scales only, recorded in
        ``degenerate_columns_``. ``domains``: each numeric column's fine
        histogram as its domain released it, before the release's estimates
        filled its emptied leaves (``_reconcile_leaves``), by name."""
        from .exceptions import DegenerateColumnWarning
        from .preprocessing._decoding import degenerate_reasons, model_level_shares

        rows = getattr(final, "_model_rows", None)
        n_hat = _released_n(final)
        n_sd = _released_n_sd(final)
        self.degenerate_columns_ = {}
        for spec in encoder.specs_:
            estimates = rows_missing = shares = None
            if str(spec.name) in names:
                j = names.index(str(spec.name))
                k = int(final.blocks_.n_levels[j])
                found = [final._one_way_level_estimate(j, lv) for lv in range(k)]
                estimates = None if None in found else found
                if spec.missing and rows is not None and len(rows):
                    rows_missing = float(np.mean(rows[:, j] == k - 1))
                shares = model_level_shares(final, rows, j, k, estimates)
            kept = spec.missing and spec.name not in self.missing_dropped_
            lost = None  # levels lost to a kept "other" level
            if spec.name not in self.other_dropped_:
                lost = other_share_reason(spec, estimates, n_hat)
            reasons = ([lost] if lost else []) + degenerate_reasons(
                spec,
                estimates,
                n_hat,
                rows_missing,
                kept,
                None if shares is None else shares[: spec.n_levels],
                domain=(domains or {}).get(spec.name),
                numeric_value=getattr(encoder, "numeric_value", "auto"),
                n_sd=n_sd,
            )
            if spec.name in getattr(self, "_refuted_far", ()):
                # the drop fixed the far rows, not the noise that kept them
                reasons.append(
                    "an outer bin of far noise leaves that the release refutes "
                    "was dropped with the rows drawn there (outer_bins_dropped_): "
                    "the rest of its domain was learned at the same noise"
                )
            if reasons:
                self.degenerate_columns_[spec.name] = reasons
        # a domain of one bin: the encoder's CoarseDomainWarning named it
        told = {
            c: [r for r in rs if r != "a single bin"]
            for c, rs in self.degenerate_columns_.items()
        }
        if any(told.values()):
            text = "; ".join(f"{c!r}: {', '.join(r)}" for c, r in told.items() if r)
            warnings.warn(
                "the released domains say these columns will come back "
                f"degenerate -- {text}. Declare their domains (bin_edges=, "
                "bounds=, categories=, missing=) or give the domains or the "
                "release a larger budget (domain_share=, epsilon=)",
                DegenerateColumnWarning,
                stacklevel=user_stacklevel(),
            )


def _empty_outer_bins(final, spec, j, drop, gone, refuted=None):
    """The outer coarse bins of numeric column ``spec`` (attribute ``j``)
    that the release measures as empty: walking in from either end of its
    private domain, past the bins already dropped (``gone``), each bin that
    the model's rows do not use and whose release estimate is under the
    support test (``drop``, the release's ``_drop_unsupported_level``: it
    moves no row, there being none), until the first bin that fails
    either; never every bin. A bin the rows use passes where it is a far
    group of noise leaves the release refutes, or noise leaves it does not
    see (:func:`_refuted_far_bin`): the release moves its rows, and where
    refuted, ``refuted`` (a set) gets the column's name, which the
    degenerate-column warning then gives (an unseen bin holds under two sds
    of the release's rows: a real tail's last few rows, as often as noise).
    Their leaves are emptied
    (:func:`.preprocessing._bin_mass.empty_outer_bins`), so the outermost
    kept leaf the rows use is the column's tail for decoding, as it would
    be had the noise leaves beyond it never been kept. Measured on
    openintro ``attrition``'s ``MonthlyIncome`` (ε = 1, seed 1 of
    ``benchmarks.bench_suite --half tune --light``): PrivTree growth kept
    ``[65536, 1048576)`` (173 noisy rows, no real one), the release put its
    bin at -60 rows and the model drew none there, but the leaf below,
    ``[16385, 65536)`` (93 real rows, all under 20,000), decoded as an
    inner leaf, uniformly in ``t``: 99 of its 116 rows above 20,000 (std
    ratio 2.15; emptied: 1.07, ``benchmarks/results/bench_outer_bins.md``).
    Only private domains (a fine histogram) and releases with
    model rows (the Gaussian release); public: a function of the release's
    estimates, its public noise sds and the model's rows."""
    hist = getattr(spec, "fine", None)
    rows = getattr(final, "_model_rows", None)
    if spec.kind != "numeric" or hist is None or rows is None or not len(rows):
        return []
    n = int(spec.n_levels)
    used = np.bincount(np.asarray(rows[:, j], dtype=np.intp), minlength=n)[:n] > 0
    gone, out = {int(b) for b in gone}, []
    for order, inwards in ((range(n - 1, -1, -1), -1), (range(n), 1)):
        for b in order:
            if b in gone or b in out:
                continue
            if n - len(gone | set(out)) <= 1:
                break
            why = _refuted_far_bin(final, spec, j, b, inwards) if used[b] else None
            if used[b] and why is None:
                break
            if not drop(j, b):
                break
            out.append(b)
            if why == "refuted" and refuted is not None:
                refuted.add(spec.name)
    return sorted(out)


#: An outer bin the model's rows use is emptied too where its kept leaves
#: are one far group of noise leaves that the release's estimate of the
#: bin refutes (:func:`.preprocessing._bin_mass.refuted_far_bin`), or noise
#: leaves the release does not see
#: (:func:`.preprocessing._bin_mass.unseen_outer_bin`), and the estimate is
#: under the support test; the release moves its rows to the column's other
#: bins. ``False``: an outer bin the rows use is kept.
REFUTED_FAR_BINS = True


def _refuted_far_bin(final, spec, j, b, inwards):
    """Whether outer bin ``b`` of numeric column ``spec`` (attribute
    ``j``) is a far group of noise leaves the release refutes
    (``"refuted"``), or noise leaves it does not see (``"unseen"``), else
    ``None`` (:data:`REFUTED_FAR_BINS`); public: the fine histogram and the
    release's estimate of the bin."""
    from .preprocessing._bin_mass import refuted_far_bin, unseen_outer_bin

    estimate = getattr(final, "_one_way_level_estimate", None)
    if not REFUTED_FAR_BINS or estimate is None:
        return None
    found = estimate(j, b)
    if refuted_far_bin(spec.fine, spec.levels, b, found, inwards):
        return "refuted"
    if unseen_outer_bin(spec.fine, spec.levels, b, found, inwards):
        return "unseen"
    return None


def other_share_reason(spec, estimates, n_hat):
    """Why categorical column ``spec`` lost levels to ``"other"``, from the
    release's estimate ``(T̂, σ)`` of that level (``estimates``, by level) and
    of the number of rows ``n_hat``, or ``None``: the levels the private
    discovery did not keep hold at least :data:`OTHER_SHARE` of the rows
    (``T̂ - DEGENERATE_Z σ >= OTHER_SHARE n̂``), and every row of them comes
    back as ``"other"``. Not where ``"other"`` is the only level (the
    encoder's ``CoarseDomainWarning`` names that), nor for a text column
    whose kept levels read as numbers (the encoder's ``NumbersAsTextWarning``
    names it, with the fix: ``pd.to_numeric``, not ``categories=``).
    Post-processing of released values."""
    from .preprocessing._decoding import DEGENERATE_Z
    from .preprocessing._domain_warnings import _is_text_dtype, _numbers_as_text

    if spec.kind == "numeric" or not getattr(spec, "other", False):
        return None
    k = len(spec.levels) - 1  # the catch-all, before the missing level
    if k < 1 or not estimates or not n_hat or estimates[k] is None:
        return None
    text = _is_text_dtype(getattr(spec, "dtype", None))
    if text and _numbers_as_text(spec.levels[:k], True) is not None:
        return None
    est, sd = (float(v) for v in estimates[k])
    if est - DEGENERATE_Z * sd < OTHER_SHARE * n_hat:
        return None
    return (
        f"about {est / n_hat:.0%} of its rows in 'other' (its levels too rare "
        "to be discovered at this budget; declare them with categories=)"
    )


def _only_value_level(final, spec, j, b):
    """Whether level ``b`` is the only value level (not missing) of column ``spec``
    (attribute ``j``) that the model's rows use: dropping it would move its rows to
    the column's other levels in the rows -- the missing level alone -- and the
    column would come back entirely missing, which no released quantity says.
    Measured on modeldata ``attrition`` (no missing value; ε = 0.1, seed 0,
    ``selection="mst"`` of ``benchmarks.bench_suite --half tune``):
    ``MonthlyRate``'s and ``TotalWorkingYears``' domains kept one one-integer bin
    each, released at 670 ± 630 and 1,035 ± 617 rows (under the tentative bins'
    ``TENTATIVE_SUPPORT_Z``), their missing levels at 989 ± 630 and 624 ± 617; the
    model's rows held 34 % and 62 % in the bin, and dropping it left both columns
    100 % missing. Kept, the rows hold the model's missing share (66 %, 38 %: within
    the released share's noise); the column's single bin is named by the encoder's
    ``CoarseDomainWarning``. The same for a categorical column's ``"other"`` level
    when the private domain found no level (the default pipeline on ``attrition`` at
    ε = 0.1, seeds 1 and 4: ``Gender``, ``PerformanceRating``, ``WorkLifeBalance``
    100 % missing). Public: a function of the model's rows."""
    rows = getattr(final, "_model_rows", None)
    if rows is None or not len(rows):
        return False
    levels = np.unique(np.asarray(rows[:, j], dtype=np.intp))
    values = {int(v) for v in levels if v < int(spec.n_levels)}
    return values == {int(b)}


def _reconcile_leaves(final, spec, j, dropped, outer=()):
    """Numeric column ``spec``'s fine histogram made to agree with what its
    release (attribute ``j``) measured: the leaves inside its ``outer`` bins
    the release measured as empty emptied
    (:func:`.preprocessing._bin_mass.empty_outer_bins`), its leaves cut at
    the bins the pipeline ``dropped`` or emptied
    (:func:`.preprocessing._bin_mass.trim_dropped_bins`),
    then the emptied leaves of each bin whose kept leaves fall short of the
    release's estimate of the bin given that shortfall
    (:func:`.preprocessing._bin_mass.fill_emptied_leaves`), so the decoder
    draws the bin's rows there -- after the far groups of kept leaves that
    the release's estimate of their bin does not need were emptied
    (:func:`.preprocessing._bin_mass.drop_unneeded_far_groups`) and the
    rows the release measured in the top bin past what its leaves inside
    the cap hold were placed past the cap
    (:func:`.preprocessing._tail_past_cap.place_capped_tail`; the bottom
    bin's below the lower cap,
    :func:`.preprocessing._tail_past_cap.place_capped_floor`).
    Post-processing of released values: the encoder's fine histogram and
    the release's 1-way estimates."""
    from .preprocessing._bin_mass import (
        drop_unneeded_far_groups,
        empty_outer_bins,
        fill_emptied_leaves,
        trim_dropped_bins,
    )
    from .preprocessing._tail_past_cap import place_capped_floor, place_capped_tail

    hist = getattr(spec, "fine", None)
    if spec.kind != "numeric" or hist is None:
        return
    edges = [float(v) for v in spec.levels]
    # a tail leaf's parts cut nothing: its rows keep the leaf's decay, read
    # inside the parts the release kept (decode_fine); trimmed to them, a
    # leaf [65, 256) of acs12's age (ages to 95, ε = 1) became [65, 130)
    # and its rows' mean 93 against 75 (a flat decay in t)
    tail = _tail_parts(spec)
    ends = set(outer)
    if OUTER_DROPPED_EMPTIED:
        run = _outer_run(int(spec.n_levels), [*dropped, *outer])
        ends |= (run - tail) & _tentative_bins(spec)
    hist = empty_outer_bins(hist, edges, sorted(ends))
    hist = trim_dropped_bins(
        hist, edges, [b for b in [*dropped, *outer] if int(b) not in tail]
    )
    estimate = getattr(final, "_one_way_level_estimate", None)
    found = (
        [None] if estimate is None else [estimate(j, v) for v in range(spec.n_levels)]
    )
    if None not in found:
        hist = drop_unneeded_far_groups(hist, edges, found)
        if getattr(spec, "time_unit", None) is None:  # a date/time cap: in time
            hist = place_capped_tail(hist, edges, found)
            hist = place_capped_floor(hist, edges, found)
        before = np.asarray(hist.counts, dtype=np.float64)
        hist = fill_emptied_leaves(hist, edges, found)
        after = np.asarray(hist.counts, dtype=np.float64)
        spec.filled = tuple(int(i) for i in np.flatnonzero((before <= 0) & (after > 0)))
    spec.fine = hist


def _reconcile_bitless(final, spec):
    """A numeric column without bits (one level, never missing): the far
    groups of its fine histogram's kept leaves that the released total does
    not need, emptied as inside any measured bin
    (:func:`.preprocessing._bin_mass.drop_unneeded_far_groups`, the core's
    bin's rule). Every row is in the column's one bin, so the release's
    estimate of that bin is its total ``n̂`` with its public noise sd
    (``ProjectedGaussianRelease._total_estimate``). Found on a constant
    integer column (all 3; 3,000 rows, ε = 1, seed 0 of
    ``benchmarks/bench_odd_columns.py``): PrivTree kept three noise leaves
    ``[-65536, -16)`` (54, 33 and 18 noisy rows at ``b`` = 16.7) beside the
    leaf ``[3, 4)``, and 3 % of the rows came back at -26 to -10,200 (std
    978 against 0). Post-processing of the fine histogram and the released
    total."""
    from .preprocessing._bin_mass import drop_unneeded_far_groups

    hist = getattr(spec, "fine", None)
    total = getattr(final, "_total_estimate", None)
    if spec.kind != "numeric" or hist is None or total is None:
        return
    if int(spec.n_levels) != 1 or spec.missing:
        return
    found = total()
    if found is None:
        return
    edges = [float(v) for v in spec.levels]
    spec.fine = drop_unneeded_far_groups(hist, edges, [found])


#: The tentative bins the pipeline dropped under their support test, in an
#: unbroken run of dropped or outer bins from either end of a numeric
#: column's domain, have their leaves emptied, as the outer bins the release
#: measures as empty (:func:`_empty_outer_bins`), a wide tail leaf's parts
#: excepted (their rows keep the leaf's decay). Before, a dropped tentative
#: bin's leaves kept their noisy counts: the rows did not use the bin, but
#: its leaves still decided the decoding beside it (the leaf next to them
#: decoded as an inner leaf). Found on modeldata ``credit_data``'s ``Debt``
#: (a TUNE table of ``benchmarks/bench_suite.py``, ε = 0.3, seed 7): with
#: :data:`.preprocessing._coarse_bins.TENTATIVE_GROUP_CUTS` its far noise
#: group became a tentative bin of its own, dropped, and its leaves left the
#: rows at std x9.08 (x2.26 emptied; x2.36 before both). Dropped one-integer
#: bins are left as they were: emptying them too made attrition's
#: ``PercentSalaryHike`` (11-25) at ε = 0.3, seed 5 lose its noise leaf
#: ``[2, 4)``, the densest, and the leaf ``[16, 65)`` then decoded up to 61
#: (std x1.65 -> x2.33, no warning; one more silent fit on the TUNE half).
#: Measured in ``benchmarks/results/bench_suite.md`` ("Tentative runs cut
#: between their groups"). ``False``: only the outer bins are emptied.
OUTER_DROPPED_EMPTIED = True


def _outer_run(n, bins):
    """The bins among ``bins`` (indices of ``n`` bins) in an unbroken run
    from bin 0 upwards or from bin ``n - 1`` downwards; never all ``n``."""
    bins = {int(b) for b in bins}
    out = set()
    for order in (range(n), range(n - 1, -1, -1)):
        for b in order:
            if b not in bins:
                break
            out.add(b)
    return out if len(out) < n else set()


#: A float column's wide leaf cut into parts (``split_wide_leaves``) stays
#: cut only where the parts that pass ``TENTATIVE_SUPPORT_Z`` carry at least
#: this share of the release's estimate of the whole leaf (the sum of its
#: parts' estimates); else the release did not locate the rows inside the
#: leaf (no part passes, or the leaf's estimate is not positive) and its
#: rows are drawn over the whole leaf (:func:`_uncut_leaves`).
#: Public, not searched: 1/2. mlc_churn's charges (rows spread evenly over
#: the leaves [16, 17.5) and [35.49, 38.72), ~45 rows a part against a
#: release noise sd of ~140) lost nearly every part to the test and the
#: rows went where the noise put them.
UNCUT_SHARE = 0.5


#: An integer column's inner wide leaf cut into parts (``split_wide_leaves``:
#: a pair's or a sole body leaf's parts; kept leaves on both sides of it)
#: falls back on the whole leaf as a float column's does
#: (:func:`_uncut_leaves`, :data:`UNCUT_SHARE`): where its passing parts
#: carry under half of the release's estimate of the leaf, no part is
#: dropped and the model's rows in its parts spread over them. Before, each
#: part was tested alone and, none passing, the leaf's rows went to the
#: column's other bins (credit's ``Assets`` at ε = 0.3, seed 7: the parts
#: of ``[4096, 16385)`` dropped, KS .379; with the rule .229). Not the
#: column's outermost kept leaves: spread over a leaf that runs past the
#: data's end, the rows came back far out (workinghours' ``education``,
#: ``[16, 256)`` at ε = 0.3, seed 2: std x1.08 -> x9.4; attrition's
#: ``HourlyRate`` silent at x2.75). On the TUNE half of
#: ``benchmarks/bench_suite.py`` (19 tables, ε 0.3 and 1, 10 seeds): 14 of
#: 380 fits moved, TV1 -0.1 % at ε = 0.3, silent fits unchanged;
#: ``benchmarks/results/bench_suite.md``, "An inner integer leaf's parts fall
#: back on the leaf". ``False``: an integer column's parts tested alone.
UNCUT_INTEGER_LEAVES = True


def _leaf_of_parts(spec, bins):
    """``{bin: leaf}``: the leaf of float column ``spec``'s released fine
    histogram (set with its cut bins, ``spec.wide``) each of ``bins``
    starts in. Public: the released edges."""
    e = np.asarray(spec.fine.edges, dtype=np.float64)
    starts = np.asarray([float(spec.levels[int(b)]) for b in bins])
    at = np.searchsorted(e, starts, side="right") - 1
    return {int(b): int(k) for b, k in zip(bins, at)}


def _uncut_leaves(final, spec, j, inner_only=False):
    """The parts of numeric column ``spec``'s (attribute ``j``) wide leaves
    (with ``inner_only``, those of leaves with kept leaves on both sides,
    :data:`UNCUT_INTEGER_LEAVES`) whose supported parts carry less than
    :data:`UNCUT_SHARE` of the release's estimate of the leaf: the model's
    rows at those parts are
    spread over the leaf's parts uniformly (equal widths), so the leaf
    decodes as one bin, as before the cut. Returns the set of those parts
    (not to be tested again). Post-processing of released values: the
    release's 1-way estimates, its noise scales and its model's rows."""
    wide = sorted(int(b) for b in getattr(spec, "wide", ()))
    rows = getattr(final, "_model_rows", None)
    estimate = getattr(final, "_one_way_level_estimate", None)
    if (
        not wide
        or rows is None
        or estimate is None
        or getattr(final, "invariants", None) is not None
        or getattr(final, "structural_zeros_", None)
    ):
        return set()
    # split_wide_leaves cuts each leaf into consecutive bins (FLOAT_PARTS of
    # a deep leaf, WIDE_PARTS of each of a pair, FLOAT_PAIR_CUT): a run is
    # the parts of one leaf of the released histogram
    leaf = _leaf_of_parts(spec, wide)
    runs, run = [], [wide[0]]
    for b in wide[1:]:
        if b == run[-1] + 1 and leaf[b] == leaf[run[-1]]:
            run.append(b)
        else:
            runs.append(run)
            run = [b]
    runs.append(run)
    whole, rng = set(), None
    held = np.flatnonzero(np.asarray(spec.fine.counts) > 0)
    for run in runs:
        if inner_only and (not held.size or not held[0] < leaf[run[0]] < held[-1]):
            continue  # an outer leaf's rows spread over it run past the data
        found = [estimate(j, b) for b in run]
        if None in found or len(run) < 2:
            continue
        total = sum(e for e, _ in found)
        kept = sum(e for e, sd in found if not e < TENTATIVE_SUPPORT_Z * sd)
        if kept > 0 and not kept < UNCUT_SHARE * total:
            continue  # the release located the leaf's rows: stays cut
        at = np.isin(rows[:, j], run)
        if at.any():
            if rng is None:
                from .base import POST_FIT_STREAM
                from .mechanisms import make_generator

                rng = make_generator(final.random_state, stream=POST_FIT_STREAM)
                rows = rows.copy()
            rows[at, j] = np.asarray(run)[rng.integers(0, len(run), int(at.sum()))]
        whole |= set(run)
    if rng is not None:
        final._model_rows = rows
    return whole


#: A run of two or more consecutive one-integer bins of an integer column
#: (``split`` bins one integer wide, the closed last bin two), each under
#: the release's level test (``LEVEL_SUPPORT_Z`` of its noise), is kept
#: whole -- none of its bins dropped -- where the release's estimates of its
#: bins sum to at least this many of their noise (``sqrt(sum σ²)``): the
#: rows are there, but spread too thinly for any one integer to pass its
#: test. Dropping them moves a thin tail into the body: weeks of gestation
#: 27-35 (5 % of 8,000 rows, 14-90 a week against ``σ = 80``) lost every
#: bin and came back at std ratio 0.46; nights of a stay lost their 6-10
#: tail (0.62). Tentative bins and a wide tail leaf's parts (``strict``,
#: tested alone at ``TENTATIVE_SUPPORT_Z``) join runs like the others where
#: they fail ``LEVEL_SUPPORT_Z``; one in no kept run (alone, in a run that
#: fails, or between the two z) keeps its own stricter test. The empty integers
#: beside a heap pass ``1 σ`` together in 16 % of fits, and then keep the
#: rows the model put there within their noise. ``None`` turns the rule off
#: (every bin tested alone). Set to 1.0 on the 9 TUNE mixed tables of
#: ``benchmarks/bench_suite.py`` (credit, hmda, cps1988, acs12, attrition,
#: loans, credit_card, nmes1988, workinghours; ε 1 and 0.3, 10 seeds, 180
#: fits; ``PYTHONPATH=. python -m benchmarks.bench_silent_mechanisms suite
#: --arm run-strict -- --half tune --eps 1,0.3 --seeds 10 --methods auto
#: --light --cache ARM.jsonl`` and ``... compare BASE.jsonl ARM.jsonl``,
#: ``benchmarks/results/bench_suite.md``): against the rule off, silent
#: fits 47 -> 46 of 180, silent column-fits 95 -> 91 (the tail integers of
#: credit_card's ``reports``, nmes1988's ``ovisits`` and ``novisits``
#: kept), mean KS per table and ε -5.6 % to +2.0 %, TV2 -4.5 % to +0.2 %,
#: mean TV1 lower or equal in 17 of 18 table-ε cells; of the 126
#: column-fits it moves, 65 have a KS better by more than .02 and 5 worse
#: (attrition's ``YearsSinceLastPromotion`` at ε = 0.3, seed 0: .196 ->
#: .281, the column that had kept the rule off when strict bins were in no
#: run; ``benchmarks/results/bench_int_levels.md``). Lowered to 0.5 on the
#: same tables (``python -m benchmarks.bench_suite --half tune --tables
#: credit,hmda,cps1988,acs12,attrition,loans,credit_card,nmes1988,workinghours
#: --eps 0.3,1 --seeds 10 --methods auto --tv-only``, and their 1,000-row
#: cuts): a body leaf cut into one-integer bins that each hold less than
#: the release's noise loses every bin to a run drawn 1 sd low, and its
#: rows go to the bins beside it (attrition's ``YearsAtCompany``, ε = 0.3,
#: seed 9, 1,366 rows: 6-15 held about 40 % of them, their run summed to
#: 0.88 of its sd, and the rows came back at 4, 5 or 16-64, std x2.32;
#: kept whole, x1.96). Against 1.0: mean TV1 per table and ε -2.2 % to
#: +0.1 % (attrition at ε = 0.3 -2.2 %, TV2 -1.9 %), on the cuts -2.2 % to
#: +0.6 %; of the column-fits it moves, 14 have a KS better by more than
#: .02 and 4 worse (cuts: 17 and 5); silent fits 48 -> 47 of 180 (cuts 24
#: -> 24 of 160); no in-band column newly named. At 0.0 (every run with a
#: positive sum): TV1 -2.4 % to +0.1 %, but 21 better and 9 worse, silent
#: 47. Post-processing of the release's 1-way estimates and their public
#: noise scales.
RUN_SUPPORT_Z = 0.5


def _supported_runs(final, spec, j):
    """The one-integer bins of integer column ``spec`` (attribute ``j``) in
    runs of bins that each fail the release's level test but together pass
    :data:`RUN_SUPPORT_Z` (not to be tested one by one); tentative bins and
    tail parts are in runs too (the caller tests the ones in no kept run
    alone at :data:`TENTATIVE_SUPPORT_Z`). Public: a function of the
    release's 1-way estimates, their noise sds and the released domain."""
    estimate = getattr(final, "_one_way_level_estimate", None)
    split = sorted(int(b) for b in getattr(spec, "split", ()))
    if RUN_SUPPORT_Z is None or estimate is None or len(split) < 2:
        return set()
    found = {b: estimate(j, b) for b in split}
    if None in found.values():
        return set()
    rules = getattr(final, "_rules", None)
    z = float(getattr(rules, "level_support_z", 2.0))
    edges = [float(v) for v in spec.levels]
    fail = [
        b for b in split if _one_integer(edges, b) and found[b][0] < z * found[b][1]
    ]
    whole = set()
    for run in _consecutive(fail):
        if len(run) >= 2 and _run_passes(found, run):
            whole |= set(run)
    return whole


def _one_integer(edges, b):
    """Whether bin ``b`` of the bin ``edges`` holds one integer (the closed
    last bin: two at most)."""
    return edges[b + 1] - edges[b] <= (2.0 if b == len(edges) - 2 else 1.0)


def _consecutive(bins):
    """The sorted ``bins`` in runs of consecutive indices."""
    runs = []
    for b in bins:
        if runs and b == runs[-1][-1] + 1:
            runs[-1].append(b)
        else:
            runs.append([b])
    return runs


def _run_passes(found, run):
    """Whether the release's estimates (``found``: ``{bin: (T̂, σ)}``) of
    ``run``'s bins sum to :data:`RUN_SUPPORT_Z` of their noise."""
    total = sum(found[b][0] for b in run)
    noise = float(np.sqrt(sum(found[b][1] ** 2 for b in run)))
    return total >= RUN_SUPPORT_Z * noise


#: A run of consecutive split bins of a numeric column (a wide leaf's
#: parts, tentative bins, one-integer bins beside them) that each fail
#: their level test but lie between two bins that are kept and between
#: kept leaves of the released fine histogram -- a hole inside the
#: column's body -- is kept whole where the release's estimates of its bins sum to
#: at least :data:`RUN_SUPPORT_Z` of their noise, as a run of one-integer
#: bins is (:func:`_supported_runs`). Inside the body the run cannot carry
#: the column's rows past its kept range, so the rows stay where the body
#: is; dropped, its rows went to the bins beside it and the column came
#: back with a hole in its middle: attrition's ``MonthlyRate`` (2,094 to
#: 26,999, close to uniform; 1,176 training rows, ε = 0.3, seed 0 of
#: ``python -m benchmarks.bench_suite --half tune``) had its domain cut
#: into parts measured at an sd of 106 rows, the parts ``[8192, 11586)``
#: and ``[11586, 16385)`` (166 and 225 real rows) came back at 1.6 and 1.7
#: sds and were dropped, and the rows' 33 % there went to ``[5792, 8192)``
#: and ``[16385, 23171)``. On the TUNE half (19 tables, ε 0.3 and 1, 10
#: seeds: ``python -m benchmarks.bench_suite --half tune --tables
#: credit,hmda,cps1988,acs12,attrition,movies,storms,benefits,chile,fertil2
#: --eps 0.3,1 --seeds 10 --methods auto --tv-only`` and the same with
#: ``--tables loans,credit_card,nmes1988,workinghours,baseball,deliveries,``
#: ``flchain,loanapp,nhefs``; with ``_tail_past_cap.CANDIDATE_CONFIRMS``,
#: against the library before both): 84 of 380 fits moved, mean TV1 -0.5
#: and -0.7 % at ε = 0.3, 0.0 and -1.4 % at ε = 1, mean KS -0.4 to -0.9 %,
#: silent fits 93 -> 93 (``benchmarks/results/bench_suite.md``, "A hole
#: inside a column's body kept whole"). Not searched: the run rule's own
#: 0.5. ``False``: each such bin tested alone.
INTERIOR_RUNS = True


def _interior_runs(final, spec, j, strict, whole):
    """The split bins of numeric column ``spec`` (attribute ``j``) in runs
    that each fail their level test (``strict`` ones at
    :data:`TENTATIVE_SUPPORT_Z`; none in ``whole``), lie between two bins
    that do not and between kept leaves of the released fine histogram
    (one starting below the run, one ending above it), hold a bin wider
    than one integer, and together pass :data:`RUN_SUPPORT_Z`
    (:data:`INTERIOR_RUNS`). A run of one-integer bins alone is
    :func:`_supported_runs`' (which tests a single one alone: an empty
    integer between two heaps passes ``0.5 σ`` in 31 % of fits). Public: a
    function of the release's 1-way estimates, their noise sds and the
    released domain."""
    estimate = getattr(final, "_one_way_level_estimate", None)
    hist = getattr(spec, "fine", None)
    split = sorted(int(b) for b in getattr(spec, "split", ()) if int(b) not in whole)
    if (
        not INTERIOR_RUNS
        or RUN_SUPPORT_Z is None
        or estimate is None
        or hist is None
        or not split
    ):
        return set()
    found = {b: estimate(j, b) for b in split}
    if None in found.values():
        return set()
    z = float(getattr(getattr(final, "_rules", None), "level_support_z", 2.0))
    fail = [
        b
        for b in split
        if found[b][0] < (TENTATIVE_SUPPORT_Z if b in strict else z) * found[b][1]
    ]
    kept, n = set(), int(spec.n_levels)
    edges = [float(v) for v in spec.levels]
    integer = getattr(spec, "integer", True)
    e = np.asarray(hist.edges, dtype=np.float64)
    held = np.flatnonzero(np.asarray(hist.counts, dtype=np.float64) > 0)
    for run in _consecutive(fail):
        if run[0] == 0 or run[-1] == n - 1:
            continue  # an outer run: the column's tail, not a hole
        if integer and all(_one_integer(edges, b) for b in run):
            continue  # one-integer bins alone: _supported_runs
        lo, hi = edges[run[0]], edges[run[-1] + 1]
        if not (held.size and e[held[0]] < lo and e[held[-1] + 1] > hi):
            continue  # past the kept leaves' range: a tail leaf, not a hole
        if _run_passes(found, run):
            kept |= set(run)
    return kept


def _tentative_bins(spec):
    """The indices of numeric column ``spec``'s tentative coarse bins
    (:meth:`FineHistogram.tentative_bins`; empty where it has none): public,
    a function of the released domain."""
    hist = getattr(spec, "fine", None)
    if getattr(spec, "kind", None) != "numeric" or hist is None:
        return set()
    edges = [float(v) for v in spec.levels]
    return {int(k) for k in hist.tentative_bins(edges)}


def _floor_parts(spec):
    """The indices of numeric column ``spec``'s outer parts of a cut floor
    cell (:func:`.preprocessing._floor_parts.floor_part_bins`; empty where
    it has none): public, a function of the released domain."""
    from .preprocessing._floor_parts import floor_part_bins

    hist = getattr(spec, "fine", None)
    if getattr(spec, "kind", None) != "numeric" or hist is None:
        return set()
    return {int(k) for k in floor_part_bins(hist, spec.levels)}


def _tail_parts(spec):
    """The indices of numeric column ``spec``'s bins cut from a wide tail
    leaf (:func:`.preprocessing._wide_leaves.tail_part_bins`; empty where it
    has none): public, a function of the released domain."""
    from .preprocessing._wide_leaves import tail_part_bins

    hist = getattr(spec, "fine", None)
    if getattr(spec, "kind", None) != "numeric" or hist is None:
        return set()
    return {int(k) for k in tail_part_bins(hist, spec.levels)}


def _released_n_sd(final):
    """The noise sd of :func:`_released_n`'s total: the Gaussian release's
    (its plan's scale of the total, or of the inverse-variance mean with the
    selection steps' noisy totals; 0 for a public total), else ``None``.
    Public: a function of the plan."""
    sd = getattr(final, "_n_estimate_sd", None)
    return None if sd is None else float(sd)


def _released_n(final):
    """The last step's released (or public) number of rows: the Gaussian
    release's ``n_estimate_``, else ``n_samples_fit_`` (public under
    replace-one, as for the damped release), else ``None``."""
    n_hat = getattr(final, "n_estimate_", None)
    return n_hat if n_hat else getattr(final, "n_samples_fit_", None)
