"""Warnings about the domains a :class:`BooleanEncoder` learned privately.

Each reads only what the fit released -- the kept levels, the fine
histograms and their caps -- the parameters, the schema (names, dtypes) and
public constants, so warning costs no budget and names no private count or
value (post-processing; ``doc/privacy.md``, "Private domains"). Mixed into
:class:`._column_domain._ColumnDomainMixin`, whose budget methods
(``_domain_budget``, ``_levels_budget``) they read for the advice.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from ..exceptions import CoarseDomainWarning, NumbersAsTextWarning
from ..validation import user_stacklevel
from ._column_spec import OTHER_LABEL
from ._floor_parts import FLOOR_PART
from ._level_selection import gaussian_selection_params
from ._natural_limits import RES_FLOOR
from ._numeric_domain import ROOT


class _DomainWarningsMixin:
    """The encoder's warnings about its released domains (module docstring)."""

    def _warn_coarse_private_domains(self, specs, private, eps_col, dtypes=None):
        """Warn where a private domain could not carry its column, rather
        than lose it silently: a numeric domain whose kept range is not
        above the noise (``FineHistogram.found``: its values may be decoded
        far from the data's), and one that kept a single bin of a numeric
        column or no level but ``"other"`` of a categorical one (credit's
        ``Debt``, 82 % zeros, came back all 0 in 6 of 8 fits at ε = 0.04 per
        column). Reads only the released domains, the public per-column
        budget, the parameters and the dtypes (``dtypes``: by column).

        The advice follows what was declared: a column with ``bounds=``
        is told to declare ``bin_edges=`` (bins inside its bounds cost no
        budget), not "declare bounds"; the others ``bounds=``/``bin_edges=``
        or ``categories=``; and the share of the budget names a value to
        try (:func:`_share_advice`)."""
        budget = f"the noise of the domain budget (epsilon {eps_col:.3g} per column)"
        lost = [
            spec.name
            for spec in specs
            if private.get(spec.name) == "numeric" and not spec.fine.found
        ]
        if lost:
            warnings.warn(
                f"the private domains of numeric columns {lost} found no range "
                f"of values clearly above {budget}: their values may be decoded "
                "far from the data's (inside bounds= where given). "
                + self._coarse_remedy(lost, private),
                CoarseDomainWarning,
                stacklevel=user_stacklevel(),
            )
        # mass in the root's outermost leaf on a side no bound declares: the
        # column's values go past the root there and were clipped to it
        declared = self.bounds or {}
        clipped = _learned_numeric(
            specs, private, lost, lambda s: _reaches_root_end(s, declared.get(s.name))
        )
        _warn_if(
            clipped,
            f"the private domains of numeric columns {clipped} hold values "
            f"in the outermost part of their range (±{ROOT:.4g}, or "
            f"{ROOT:.4g} past a declared side): any value beyond its end "
            "was clipped to it, or that part holds a noise leaf; either "
            "way rows may come back there. Declare bounds= that hold them, "
            "or rescale the columns (in thousands, millions).",
        )
        # a float column whose values live at the resolution floor's scale:
        # its values under a sixteenth of the floor come back as 0, the rest
        # of the cell's as one bin (_floor_parts; both sides of bounds=
        # declared set a finer floor, and no cell is the 2^-10 one)
        tiny = _learned_numeric(specs, private, lost, _at_resolution_floor)
        _warn_if(
            tiny,
            f"the private domains of float columns {tiny} hold values at the "
            f"fine grid's resolution near 0 ({RES_FLOOR:.3g}, one cell on "
            "each side of 0): their values inside that cell come back as "
            f"exactly 0 under {RES_FLOOR * FLOOR_PART:.2g} and, above it, "
            "drawn evenly over the rest of the cell where the release "
            "measures rows there; their shape inside it is lost. Rescale "
            "the columns (in thousandths, millionths) or declare both sides "
            "of bounds= (2^-20 of their width is then the resolution).",
        )
        # a numeric domain of one bin; discovered levels: only "other" left
        constant = [
            spec.name
            for spec in specs
            if spec.name not in lost
            and (
                (private.get(spec.name) == "numeric" and spec.n_levels < 2)
                or (private.get(spec.name) == "levels" and len(spec.levels) < 2)
            )
        ]
        if constant:
            # an integer column of one bin is often a 0/1 flag: as a number it
            # pays a domain and came back independent of every other column
            # (a hotel table's is_repeated_guest: AUC .39-.57 as int64, .61-.77
            # as bool). Its dtype is public
            flags = [
                spec.name
                for spec in specs
                if spec.name in constant
                and spec.kind == "numeric"
                and spec.integer
                and spec.time_unit is None
            ]
            hint = (
                f" If {flags} are flags or codes of a few values, cast them to "
                "bool or declare categories= (public, free)."
                if flags
                else ""
            )
            # a text column of numbers keeps no level: every value is rare
            # (its dtype, public, says it is text)
            texts = [
                c
                for c in constant
                if private.get(c) == "levels"
                and dtypes is not None
                and _is_text_dtype(dtypes[c])
            ]
            if texts:
                hint += (
                    f" If {texts} hold numbers read as text, convert them "
                    'with pd.to_numeric(df[col], errors="coerce") before '
                    "fitting (a cell that is not a number, a stray marker, "
                    "becomes missing; a numeric column's domain is bins, not "
                    "levels), or declare them numeric in the command line's "
                    "schema. If they hold dates (date text, or datetime.date "
                    "objects), convert them with pd.to_datetime(df[col]) "
                    "before fitting, counted in days (datetime_unit={col: "
                    '"D"}): a date column\'s domain is bins of time.'
                )
            if any(private.get(c) == "levels" for c in constant):
                hint += self._level_rows_hint(private)
            warnings.warn(
                f"the private domains of columns {constant} kept a single bin "
                "(numeric) or no level (categorical): their values will come "
                "back from that bin alone, or as 'other'; the rest were below "
                f"{budget}. " + self._coarse_remedy(constant, private) + hint,
                CoarseDomainWarning,
                stacklevel=user_stacklevel(),
            )

    def _level_threshold(self, private, scale=1.0):
        """The threshold ``τ`` (rows) a level's noisy count must pass, with
        the encoder's ``epsilon`` times ``scale``: the joint selection's
        (:func:`gaussian_selection_params`) or the per-column stability
        histogram's ``1 + (Δ/ε_c) ln(Δ/(2δ_c))``. Public: the parameters and
        the schema only."""
        paid, n_levels, eps_col, delta_col, sens = self._domain_budget(private)
        budget = self._levels_budget(private)
        if budget is not None:
            columns, eps, delta = budget
            return gaussian_selection_params(
                scale * eps, delta, len(columns), self.neighbouring
            )[1]
        return 1.0 + sens / (scale * eps_col) * math.log(sens / (2.0 * delta_col))

    def _level_rows_hint(self, private):
        """What a level needs to be kept, in rows, at this budget and at
        twice it (public: :meth:`_level_threshold`); a rarer level is lost
        whatever the seed, so only ``categories=`` keeps it."""
        now, twice = self._level_threshold(private), self._level_threshold(private, 2)
        return (
            f" A level that is not declared is kept (in half the fits) from "
            f"about {now:.0f} rows at this budget, {twice:.0f} with twice the "
            "encoder's epsilon; a rarer one comes back as 'other' in most fits."
        )

    def _coarse_remedy(self, columns, private):
        """What helps the columns of a :class:`CoarseDomainWarning`, by what
        was declared: ``bin_edges=`` where both sides of ``bounds=`` are
        declared, the open side where one is, else ``bounds=``/``bin_edges=``
        (numeric) or ``categories=``; then a larger share of the budget,
        with a value to try."""
        declared = self.bounds or {}
        # one side None (or infinite): learned privately, so not a box yet
        one_sided = [
            c
            for c in columns
            if c in declared
            and any(v is None or v in (np.inf, -np.inf) for v in declared[c])
        ]
        bounded = [c for c in columns if c in declared and c not in one_sided]
        numeric = [
            c
            for c in columns
            if c not in declared and private.get(c) in ("numeric", None)
        ]
        levels = [c for c in columns if private.get(c) == "levels"]
        declare = []
        if bounded:
            declare.append(
                f"bin_edges= for {bounded} (their bounds= are declared: bins "
                "inside them are public and cost no budget)"
            )
        if one_sided:
            declare.append(f"the open side of bounds= or bin_edges= for {one_sided}")
        if numeric:
            declare.append(f"bounds= or bin_edges= for {numeric}")
        if levels:
            declare.append(f"categories= for {levels}")
        head = "Declare " + "; ".join(declare) + ", or g" if declare else "G"
        return head + "ive the domains a larger share of the budget: " + _share_advice()

    def _warn_numbers_as_text(self, specs, private, dtypes):
        """Warn where a text column's kept levels say it may hold numbers.

        A numeric column that pandas read as text (``object`` or ``str``
        dtype: a stray marker such as ``"n/a"`` among the numbers, a file
        read with ``dtype=str``) is modelled as categories: every distinct
        value a level, or, learned privately, mostly ``"other"``. The
        command line refuses such a column (its schema says numeric); here
        nothing declares it, so this warns, naming the column and the fixes
        (``pd.to_numeric(df[col], errors="coerce")``, or ``categories=``
        for codes that only look like numbers: zip codes), never a value.
        :func:`_numbers_as_text` says which columns, and why.

        What decides, and why it leaks nothing new: the column's dtype
        (public) and the levels the fit keeps -- the domain it releases.
        Learned privately, those levels are the output of the private
        level discovery, so testing whether they parse, and counting them,
        is post-processing; learned without privacy, they are the levels
        already released with a :class:`PrivacyLeakWarning`. The cells
        themselves (a level dropped into ``"other"``) are never read
        here: two tables whose fits keep the same levels get the same
        warning. Columns declared with ``categories=`` or ``ordinal=`` are
        the user's word that they are levels and never warn."""
        declared = set(self.categories or {}) | set(self.ordinal or {})
        found = {"numbers": [], "mixed": [], "rare": []}
        for spec in specs:
            col = spec.name
            if (
                col in declared
                or spec.kind not in ("nominal", "binary")
                or not _is_text_dtype(dtypes[col])
            ):
                continue
            learned = private.get(col) == "levels"
            kept = [v for v in spec.levels if not (learned and v == OTHER_LABEL)]
            verdict = _numbers_as_text(kept, learned)
            if verdict is not None:
                found[verdict].append(col)
        numbers, mixed, rare = found["numbers"], found["mixed"], found["rare"]
        fix = (
            "convert them before fitting, e.g. df[col] = pd.to_numeric(df[col], "
            'errors="coerce") (a cell that is not a number becomes missing), '
            "or declare them numeric in the command line's schema"
        )
        codes = (
            "if they are codes (zip codes, identifiers), declare them with "
            "categories= to keep them as levels (this silences the warning)"
        )
        parts = []
        if numbers:
            parts.append(
                f"columns {numbers} hold text whose kept levels all read as numbers"
            )
        if mixed:
            parts.append(
                f"columns {mixed} hold text whose kept levels read as "
                "numbers, but for some that do not (a marker of a missing or "
                "unknown value among the numbers makes pandas read the column "
                "as text)"
            )
        if rare:
            parts.append(
                f"columns {rare} hold text of which the private domain kept "
                "nothing but a marker of a missing value and 'other': every "
                "other value was too rare to keep. A column of many distinct "
                "numbers read as text because of the marker looks like this "
                "(free text with that marker does too)"
            )
        if parts:
            warnings.warn(
                "; ".join(parts)
                + ". They are modelled as categories, not numbers. If they are "
                f"numbers, {fix}; {codes}.",
                NumbersAsTextWarning,
                stacklevel=user_stacklevel(),
            )


#: Text that stands for a missing or unknown value in files (compared
#: stripped and in lower case). pandas' ``read_csv`` reads some of them as
#: missing already (``"n/a"``, ``"null"``); the others (``"unknown"``,
#: ``"?"``, ``"-"``) make it read a column of numbers as text.
MISSING_MARKERS = frozenset(
    {
        "",
        "-",
        "--",
        ".",
        "?",
        "n/a",
        "na",
        "nan",
        "none",
        "null",
        "missing",
        "unknown",
        "unk",
        "not available",
        "not known",
        "#n/a",
    }
)


def _numbers_as_text(kept, learned):
    """Why a text column's kept levels suggest numbers, or ``None``.

    ``kept`` is the released levels (``"other"`` left out when ``learned``,
    the private discovery's catch-all). ``"numbers"``: every kept level
    reads as a number. ``"mixed"``: some read as numbers and the others
    are markers of a missing value (:data:`MISSING_MARKERS`), or more than
    half of them, and at least two, read as numbers. ``"rare"``: learned
    privately, nothing kept but markers -- what a column of many distinct
    numbers with a frequent marker gives (each number too rare for the
    stable histogram, :cite:`Korolova2009`; the marker kept); free text
    with a frequent marker gives it too, so the warning says both. A
    genuine text column whose kept levels are words does not warn; one
    that kept no level but ``"other"`` is told by the
    :class:`CoarseDomainWarning` (its dtype says text). A function of
    ``kept`` and ``learned`` only."""
    numbers = [_spells_a_number(v) for v in kept]
    markers = [_is_marker(v) for v in kept]
    n = sum(numbers)
    words = len(kept) - n - sum(markers)
    if kept and n == len(kept):
        return "numbers"
    if (n >= 1 and words == 0) or (n >= 2 and 2 * n > len(kept)):
        return "mixed"
    if learned and kept and n == 0 and words == 0:
        return "rare"
    return None


def _is_marker(value):
    """Whether a kept level is text that marks a missing value."""
    return isinstance(value, str) and value.strip().lower() in MISSING_MARKERS


def _is_text_dtype(dtype):
    """An ``object`` or string dtype (not categorical, not bool): public."""
    if isinstance(dtype, pd.CategoricalDtype):
        return False
    return pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)


def _spells_a_number(value):
    """Whether a kept level is text that reads as a finite number."""
    if not isinstance(value, str):
        return False
    try:
        return bool(np.isfinite(float(value.strip())))
    except ValueError:
        return False


#: A root-end leaf's raw noisy count above ``b ln(L / ROOT_END_LEVEL)``
#: (``L`` leaves) is mass there even where the keep rules dropped it: all
#: ``L`` empty leaves pass it with probability under 1 %.
ROOT_END_LEVEL = 0.01


def _reaches_root_end(spec, declared=None):
    """Whether a numeric column's private domain holds mass in an outermost
    leaf of PrivTree's root on a side that no finite bound declares (the
    default root ``±2^40``, or ``2^40`` past a declared side): the rows
    past the root were clipped into that leaf. Mass: the leaf was kept, or
    its raw noisy count passes ``b ln(L / ROOT_END_LEVEL)``; a noise leaf
    kept there (ames' ``Misc_Val``, 97 % zeros, ε = 1, seed 1: ``[2^36,
    2^40)`` at 2.6 ``b``, the one column-fit of 522 on the REPORT tables)
    is named too, since rows may be decoded there as well. Reads the
    released fine histogram and the parameters only (post-processing): an
    amount in units beyond ``1.1e12`` came back at most ``1.0995e12``,
    without a word, before this was named."""
    hist = spec.fine
    counts = np.asarray(hist.counts, dtype=np.float64)
    if counts.size == 0 or getattr(spec, "time_unit", None) is not None:
        return False  # a date/time column's root is its calendar's, in its units
    raw = getattr(hist, "raw", None)
    level = hist.scale * math.log(counts.size / ROOT_END_LEVEL)
    lo, hi = (None, None) if declared is None else declared

    def open_side(v):  # a declared side (a number, or a date string) closes it
        return v is None or (isinstance(v, (int, float)) and not math.isfinite(v))

    for leaf, side in ((0, lo), (counts.size - 1, hi)):
        if not open_side(side):
            continue
        heavy = raw is not None and np.isfinite(level) and raw[leaf] > level
        if counts[leaf] > 0 or heavy:
            return True
    return False


def _learned_numeric(specs, private, lost, test):
    """The names of the privately learned numeric columns not in ``lost``
    whose spec passes ``test``."""
    return [
        spec.name
        for spec in specs
        if private.get(spec.name) == "numeric" and spec.name not in lost and test(spec)
    ]


def _warn_if(columns, text):
    """A :class:`CoarseDomainWarning` saying ``text``, where ``columns``."""
    if columns:
        warnings.warn(text, CoarseDomainWarning, stacklevel=user_stacklevel())


#: A float column is named where its private domain keeps the resolution
#: floor's cell beside 0 (``[0, RES_FLOOR)`` or ``[-RES_FLOOR, 0)``, decoded
#: as exactly 0) and, next to it, a leaf narrower than this many floors: the
#: column's values live at the floor's scale, not at a point mass at 0
#: (:func:`_at_resolution_floor`). Public, not searched: 16 floors
#: (0.0156). Values of 0-0.003 in the default pipeline came back 62 %
#: exactly 0 at ε = 1 (``tests/test_resolution_floor.py``); a zero-inflated
#: amount (credit's ``Assets``) keeps its floor cell beside empty leaves.
NEAR_FLOOR_SPAN = 16.0
#: ... and only where the floor cell holds at least this share of the
#: column's kept noisy mass: a standard normal's floor cell beside its
#: finely split centre holds 0.04 % of the rows, and 20,000 rows of N(0, 1)
#: at ε = 0.5 were named in 8 of 10 fits (seeds 0-9) without it, and in
#: none with it; the rates of 0-0.003 hold 63 % there. Public, not searched.
FLOOR_MASS_SHARE = 0.01


def _at_resolution_floor(spec):
    """Whether float column ``spec``'s private domain holds values at the
    resolution floor's scale beside 0: a kept floor cell (``[0, RES_FLOOR)``
    or ``[-RES_FLOOR, 0)``, a finest leaf decoded as 0) touching a kept leaf
    narrower than :data:`NEAR_FLOOR_SPAN` floors on its far side, the floor
    cell holding at least :data:`FLOOR_MASS_SHARE` of the kept noisy mass.
    Then the values under the floor are not a point mass, yet come back as
    exactly 0 under a sixteenth of it, the rest as one bin
    (:mod:`._floor_parts`). Not integer or date/time columns (their floor is a unit).
    Reads the released leaves only."""
    hist = getattr(spec, "fine", None)
    if hist is None or spec.integer or getattr(spec, "time_unit", None) is not None:
        return False
    e = np.asarray(hist.edges, dtype=np.float64)
    counts = np.asarray(hist.counts, dtype=np.float64)
    kept = counts > 0
    heavy = counts >= FLOOR_MASS_SHARE * counts[kept].sum()
    width = np.diff(e)
    up = np.flatnonzero((e[:-1] == 0.0) & (e[1:] == RES_FLOOR))  # [0, floor)
    down = np.flatnonzero((e[:-1] == -RES_FLOOR) & (e[1:] == 0.0))  # [-floor, 0)
    pairs = [(i, i + 1) for i in up] + [(i, i - 1) for i in down]
    if any(
        0 <= j < kept.size
        and kept[i]
        and heavy[i]
        and kept[j]
        and width[j] < NEAR_FLOOR_SPAN * RES_FLOOR
        for i, j in pairs
    ):
        return True
    # both floor cells heavy and confirmed on their own counts (b ln(L /
    # 0.01): two kept noise leaves are not): values on either side of 0
    # inside the floor, which a point mass at 0 (one cell, [0, floor)) is
    # not -- N(0, 1e-9) on 3,000 rows at ε = 1 kept only these two cells, and
    # its rows came back as 0 with a few from the bottom bin's excess placed
    # below it (std x5.7e7; tests/test_resolution_floor.py). Without the
    # confirmation four column-fits of the TUNE half of
    # benchmarks/bench_suite.py were named on two kept noise cells
    # (hmda's lvrat, nhefs' price82: no value within 1 of 0)
    from ._spread import _confirmed_count

    sure = _confirmed_count(hist)
    return bool(
        up.size
        and down.size
        and heavy[up[0]]
        and heavy[down[0]]
        and counts[up[0]] >= sure
        and counts[down[0]] >= sure
    )


def _share_advice():
    """A ``domain_share`` to try: 0.7, above the ``"auto"`` share's cap
    (``pipeline.DOMAIN_SHARE_MAX``, 0.55)."""
    from .._pipeline_budget import DOMAIN_SHARE_MAX

    return (
        f"e.g. domain_share=0.7 in make_synthesis_pipeline (--domain-share "
        f"0.7 on the command line; 'auto' gives them at most {DOMAIN_SHARE_MAX}), "
        "or a larger epsilon."
    )
