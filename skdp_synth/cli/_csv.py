"""Reading a CSV file in memory, the column types taken from the schema.

The schema, not pandas, decides what a column is: declared levels are read
as those levels, declared numbers as ``float64``/``Int64``, declared dates as
``datetime64``, declared durations as ``timedelta64``; ragged rows are
refused without showing them (rows are private). The out-of-core reader
reuses the cell-level helpers here so that a chunk is read exactly as the
whole file is.
"""

from __future__ import annotations

import contextlib
import csv
import itertools
import math
import re
import warnings

import numpy as np

from ._console import CLIError


def _as_schema(schema):
    """A :class:`~skdp_synth.cli._schema.Schema` from one, a dict or ``None``."""
    from ._schema import Schema, parse_schema

    if isinstance(schema, Schema):
        return schema
    return parse_schema(schema or {})


def _check_delimiter(header, first, path):
    """A header of one field holding ``;``, a tab or ``|``, over a first row
    that splits the same way, is a file with another delimiter: said so,
    rather than "d=2 exceeds the number of attributes (1)" or a schema error
    about a column named ``'a;b;c'``. A one-column file whose name holds
    one of them, over plain cells, is read as it is. Neither the header's
    names nor the row's cells are shown."""
    if len(header) != 1 or first is None or len(first) != 1:
        return
    for sep, name in ((";", "semicolons"), ("\t", "tabs"), ("|", "'|'")):
        if sep in header[0] and first[0].count(sep) == header[0].count(sep):
            raise CLIError(
                f"{path}: its header and rows are one field with {name} in "
                "them: the CLI reads comma-separated files; convert it, e.g. "
                f"pandas.read_csv(path, sep={sep!r}).to_csv(out, index=False)"
            )


@contextlib.contextmanager
def _quiet_parser():
    """pandas' reader warnings off: whether it warns depends on the values
    (``DtypeWarning``, "Columns (0) have mixed types": one text cell in a
    later chunk of a numeric-looking column), and the CLI prints warnings,
    so one row would show in whether the command warns. The
    reads use ``low_memory=False`` (no chunked type guess) as well; the
    schema, not pandas, decides what a column is."""
    import pandas as pd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pd.errors.DtypeWarning)
        warnings.simplefilter("ignore", pd.errors.ParserWarning)
        yield


def _read_csv(path, schema=None, counts=None):
    """Read ``path``, rejecting ragged rows (never saying which, or how many:
    the rows, their positions and the file's length are private).

    pandas fills short rows with missing values silently and, for long ones,
    depends on ``on_bad_lines``; every row must have as many fields as the
    header here. Blank lines are skipped (as pandas does).

    Columns the schema declares as ``categories`` or ``ordinal`` are read as
    their declared levels: a cell whose text is ``str(level)`` becomes that
    level (so ``0``/``1`` match levels ``"0"``/``"1"`` or ``0``/``1``, and a
    declared level ``"NA"`` is not turned into a missing value); other
    pandas missing markers become missing; anything else stays text, for the
    encoder to reject.

    With a types-only schema (``"columns"``) the file must have exactly the
    listed columns; a categorical column without declared levels is read
    as text (a missing marker, missing), a numeric one as numbers -- a cell
    that is not a number is an error naming the column, never the cell --
    and an ``integer`` one as ``Int64`` (integral values, missing allowed),
    a ``datetime`` one as dates and times (ISO 8601), a ``duration`` one as
    time spans (:func:`_as_durations`). ``counts``: the
    ``--counts`` column, which such a schema need not list (it is not a
    column of the records).
    """
    import pandas as pd

    schema = _as_schema(schema)
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        try:
            header = next(reader, None)
            if not header:
                raise CLIError(f"{path}: the file is empty (no header line)")
            width = len(header)
            first = next(reader, None)
            _check_delimiter(header, first, path)
            for row in itertools.chain([] if first is None else [first], reader):
                if row and len(row) != width:
                    # no line number, field count or row: the line number of
                    # an unclosed quote is the file's length, n, which is
                    # private
                    raise CLIError(
                        f"{path}: a row does not have the header's {width} "
                        "fields (not shown: rows are private); check the "
                        "delimiters and that every quote is closed"
                    )
        except csv.Error:
            raise CLIError(
                f"{path}: cannot be read as CSV (a field over the size limit, "
                "or a stray quote or NUL byte; not shown: rows are private)"
            ) from None
    try:
        with _quiet_parser():
            frame = pd.read_csv(path, on_bad_lines="error", low_memory=False)
    except pd.errors.ParserError:
        raise CLIError(
            f"{path}: cannot be parsed as CSV (rows not shown: they are private)"
        ) from None
    listed = [c for c in frame.columns if c != counts or c in (schema.types or {})]
    schema.check_columns(listed, where=str(path))
    declared = {c: v for c, v in schema.levels().items() if c in frame.columns}
    types = schema.types or {}
    # categorical columns without levels: text, as declared ones are read
    declared.update(
        {c: [] for c, t in types.items() if t == "categorical" and c not in declared}
    )
    if declared:
        from pandas._libs.parsers import STR_NA_VALUES

        with _quiet_parser():
            raw = pd.read_csv(
                path,
                on_bad_lines="error",
                dtype=str,
                keep_default_na=False,
                usecols=list(declared),
                low_memory=False,
            )
        for col, levels in declared.items():
            frame[col] = pd.Series(
                _cells_as_levels(raw[col], levels, STR_NA_VALUES),
                dtype=object,
                index=frame.index,
            )
    for col, kind in types.items():
        if kind in ("numeric", "integer"):
            frame[col] = _as_numbers(frame[col], col, path, integer=kind == "integer")
        elif kind == "datetime":
            frame[col] = _as_datetimes(
                frame[col], col, path, tz=schema.timezones.get(col)
            )
        elif kind == "duration":
            frame[col] = _as_durations(frame[col], col, path)
    return frame


def _warn_inferred_types(data, schema):
    """A schema without ``"columns"`` leaves the types of the columns it
    gives no levels to pandas, which reads them from the values: one empty
    cell turns ``int64`` into ``float64`` and ``bool`` into ``object``, and
    the bits and the release's decoder with them: a type that depends on
    the values is read from private data. Said, naming the columns; a
    types-only schema declares them."""
    from ..exceptions import PrivacyLeakWarning

    if schema.types_only or not schema.encoder:
        return  # types declared, or no schema at all (NO_SCHEMA_WARNING)
    levels = schema.levels()
    inferred = [c for c in data.columns if c not in levels]
    if inferred:
        warnings.warn(
            f"the types of columns {inferred} (number, whole number, true/false "
            "or text) were read from the data: this schema gives no column a "
            'type. Give each its type with the types-only form, {"columns": '
            '{"name": {"type": "numeric", "integer": true}, ...}} (cli.md)',
            PrivacyLeakWarning,
            stacklevel=2,
        )


#: The resolution of a column declared ``datetime`` or ``duration``, whatever
#: pandas infers from the text (pandas 3 infers it per call, from the cells)
#: or a Parquet file declares: the same dtype for the whole file in memory
#: and for every chunk out of core.
DATETIME_UNIT = "ns"


def _as_durations(values, col, path):
    """A column declared ``duration``, as ``timedelta64``: text in pandas'
    form (``"1 days 02:00:00"``, as the output is written) or ISO 8601
    (``"PT30M"``), read by :func:`~skdp_synth._datetime.parse_durations`
    (pandas alone reads ``"5"`` as five nanoseconds and ``"P1M"``, a month,
    as a minute); a Parquet duration as it is. Always in
    :data:`DATETIME_UNIT`. A cell that is none of these is refused, as a
    datetime column's are: the column named, the cell never shown."""
    import pandas as pd

    from .._datetime import parse_durations

    try:
        # (pandas' overflow error quotes the value: caught, not shown)
        if pd.api.types.is_timedelta64_dtype(values):
            return values.dt.as_unit(DATETIME_UNIT)
        spans = parse_durations(values)
    except (TypeError, ValueError, OverflowError):
        spans = None
    if spans is None or (spans.isna() & values.notna()).any():
        raise CLIError(
            f"{path}: column {col!r} is declared duration in the schema but has "
            "cells that are not durations within +-292 years (not shown: they "
            'may be private); write them as pandas does ("1 days 02:00:00") or '
            'in ISO 8601 ("P1DT2H", "PT30M"; no months or years: they have no '
            "fixed length)"
        )
    return spans.dt.as_unit(DATETIME_UNIT)


def _as_datetimes(values, col, path, tz=None, *, warn=True):
    """A column declared ``datetime``: ISO 8601 text as ``datetime64``
    (an offset such as ``+01:00``, the same on every cell, keeps its zone).
    With the schema's ``"timezone"`` the cells may have any offsets (a zone
    with daylight saving, as pandas writes it: -05:00 and -04:00) and come
    back in that zone; a cell without an offset is read as UTC. Always in
    :data:`DATETIME_UNIT` (a cell out of its range is refused as a bad cell).
    ``warn=False``: no :class:`PrivacyLeakWarning` for a zone read from the
    cells (out of core, a chunk's zone is checked against the first chunk's,
    which warned)."""
    import warnings

    import pandas as pd

    text = values.astype(object).where(values.notna(), None)
    try:
        with warnings.catch_warnings():
            # mixed offsets: pandas warns of a future error; ours says it
            warnings.simplefilter("ignore", FutureWarning)
            stamps = pd.to_datetime(
                text, errors="coerce", format="ISO8601", utc=tz is not None
            )
        if tz is not None:
            stamps = stamps.dt.tz_convert(tz)
        if pd.api.types.is_datetime64_any_dtype(stamps):
            stamps = stamps.dt.as_unit(DATETIME_UNIT)
    except (TypeError, ValueError, AttributeError):
        stamps = None
    zone = getattr(getattr(stamps, "dt", None), "tz", None)
    if warn and tz is None and zone is not None:
        # the offset came from the cells, not the schema: it is in the rows
        # and the release's decoder
        from ..exceptions import PrivacyLeakWarning

        warnings.warn(
            f"column {col!r}: its time zone was read from the cells' offsets; "
            'declare it in the schema ("timezone")',
            PrivacyLeakWarning,
            stacklevel=2,
        )
    if (
        stamps is None
        or not pd.api.types.is_datetime64_any_dtype(stamps)
        or (stamps.isna() & text.notna()).any()
    ):
        raise CLIError(
            f"{path}: column {col!r} is declared datetime in the schema but has "
            "cells that are not ISO 8601 dates in one time zone (not shown: "
            "they may be private); write them with one offset, e.g. all in "
            'UTC (+00:00), or declare the column\'s "timezone" (e.g. '
            '"America/New_York") to read cells with different offsets'
        )
    return stamps


#: the largest float64 an int64 holds (2**63 - 1024): the clip bound of a
#: column declared integer
INT64_MAX_FLOAT = float(np.nextafter(2.0**63, 0))


def _as_numbers(values, col, path, *, integer):
    """A column declared numeric, as ``float64`` (``Int64`` for ``integer``).

    Always these dtypes, whatever pandas inferred: the encoder reads a NumPy
    integer dtype as "whole numbers, never missing", and pandas infers it
    from the values -- knowledge that must come from the schema
    (``"integer"``, ``"missing"``), not from the data.
    """
    import pandas as pd

    if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        numbers = pd.to_numeric(values, errors="coerce")
        if (numbers.isna() & values.notna()).any():
            raise CLIError(
                f"{path}: column {col!r} is declared numeric in the schema but "
                "has cells that are not numbers (not shown: they may be private)"
            )
        values = numbers
    values = values.astype(float)
    if integer:
        v = values.to_numpy(dtype=float, na_value=np.nan)
        finite = v[~np.isnan(v)]
        if np.any(~np.isfinite(finite) | (finite != np.round(finite))):
            raise CLIError(
                f"{path}: column {col!r} is declared integer in the schema but "
                "has cells that are not whole numbers (not shown)"
            )
        # a whole number beyond int64 (1e20) is clipped to the int64 range, as
        # the encoder clips any value to the column's range: one such row
        # must not turn exit 0 into a refusal (and a cast warning)
        values = values.clip(-(2.0**63), INT64_MAX_FLOAT).astype("Int64")
    return values


def _declared_levels(frame, declared):
    """Cells of declared categorical columns as their levels (see _read_csv)."""
    from pandas._libs.parsers import STR_NA_VALUES

    frame = frame.copy()
    for col, levels in declared.items():
        frame[col] = _cells_as_levels(frame[col], levels, STR_NA_VALUES)
        frame[col] = frame[col].astype(object)
    return frame


#: A plain decimal (ASCII digits, an optional point and fraction): the only
#: spellings of a number that :func:`_cells_as_levels` reads as a level.
_PLAIN_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]*)?")


def _cells_as_levels(cells, levels, na_values):
    """CSV cells (text) as the declared levels they spell: ``"4"`` and, for a
    numeric level, a plain decimal of exactly its value, ``"4.0"`` (pandas
    writes an integer column with missing values as floats, and a 0-7
    ordinal written so would otherwise be refused) or ``"2.50"``, are the
    level, as are ``true``/``TRUE``/``1`` for a level ``True``; a missing marker
    is ``None``; anything else (``"1e0"``, ``" 4"``,
    ``"1.0000000000000001"``) stays as it is and is refused as undeclared
    later. Exact decimal equality: no rounding makes a cell a level."""
    from decimal import Decimal

    lookup = {str(v): v for v in levels if v is not None}
    # a true/false level in any case (R writes TRUE, JSON true)
    lookup.update(
        {
            spelling: v
            for v in levels
            if isinstance(v, bool)
            for spelling in (str(v).lower(), str(v).upper(), str(int(v)))
        }
    )
    numbers = {
        Decimal(repr(v)) if isinstance(v, float) else Decimal(v): v
        for v in levels
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    }

    def level(v):
        if v in lookup:
            return lookup[v]
        if v in na_values:
            return None
        if numbers and isinstance(v, str) and _PLAIN_DECIMAL.fullmatch(v):
            return numbers.get(Decimal(v), v)
        return v

    return [level(v) for v in cells]
