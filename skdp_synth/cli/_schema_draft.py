"""``skdp-synth schema data.csv``: a draft of the schema file, to complete.

The schema is public knowledge about the table -- each column's type, its
levels, bounds, bins -- and the CLI pays from ``--epsilon`` for whatever it
does not declare. A draft read off the data would make that knowledge a
function of the private rows, so the draft says only what the user must
decide:

* by default it reads **the header line only**: every column is listed
  with the type ``"?"``, which the schema loader refuses ("unknown type")
  until it is replaced by ``numeric``, ``categorical``, ``boolean``,
  ``ordinal``, ``datetime`` or ``duration``;
* ``--guess-types`` also reads the first ``--guess-rows`` rows (1000) and
  fills in the type pandas infers from them (``numeric``, with
  ``"integer": true`` for whole numbers; ``boolean``; ``datetime`` for text
  that is all ISO 8601 dates or times, with ``"unit": "D"`` for dates;
  ``categorical`` for other text; durations are not guessed: text
  ``"1 days 02:00:00"`` reads as ``categorical``). These are guesses
  from the data, said so on standard error, to be checked: codes read as
  numbers are categorical, and a numeric column with a stray marker in those
  rows reads as text.

Never a value, a level, a bound or a count of the rows is written or
printed; the output says what was read.
"""

from __future__ import annotations

import csv
import json
import re
import sys

from ..validation import DELIMITERS
from ._console import CLIError

__all__ = ["PLACEHOLDER", "cmd_schema", "draft_schema"]

#: The type of a column whose type the user has yet to choose: the schema
#: loader refuses it ("unknown type '?'")
PLACEHOLDER = "?"

#: The types a column can be given (the loader's, in the order offered).
CHOICES = "numeric, categorical, boolean, ordinal, datetime or duration"


def _header(path):
    """The column names of ``path`` (its first line), refused as the
    readers refuse them: empty, duplicated, or one name holding another
    delimiter (the header alone decides: no row is read)."""
    # (utf-8-sig: a byte-order mark is not part of the first name, as for pandas)
    with open(path, newline="", encoding="utf-8-sig") as fh:
        try:
            header = next(csv.reader(fh), None)
        except csv.Error:
            raise CLIError(
                f"{path}: its header line cannot be read as CSV (a stray "
                "quote or NUL byte)"
            ) from None
    if not header:
        raise CLIError(f"{path}: the file is empty (no header line)")
    if len(header) == 1:
        for sep, name in DELIMITERS:
            if sep in header[0]:
                raise CLIError(
                    f"{path}: its header is one field with {name} in it: the "
                    "CLI reads comma-separated files; convert it, e.g. "
                    f"pandas.read_csv(path, sep={sep!r}).to_csv(out, index=False)"
                )
    seen = set()
    duplicated = sorted({c for c in header if c in seen or seen.add(c)})
    if duplicated:
        raise CLIError(f"{path}: the header names columns {duplicated} twice")
    return header


def _guessed_type(column):
    """A column's type in the schema, from the dtype pandas inferred, and
    for text, whether every cell read is an ISO 8601 date or time (dates at
    midnight only: ``"unit": "D"``). Text dates had been guessed
    ``categorical``: each day a level, all of them too rare to keep."""
    import pandas as pd

    dtype = column.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_integer_dtype(dtype):
        return {"type": "numeric", "integer": True}
    if pd.api.types.is_numeric_dtype(dtype):
        return "numeric"
    cells = column.dropna()
    if cells.empty or not all(isinstance(v, str) for v in cells):
        return "categorical"
    try:
        stamps = pd.to_datetime(cells, format="ISO8601", utc=True)
    except (TypeError, ValueError, OverflowError):
        return "categorical"
    if (stamps == stamps.dt.floor("D")).all() and cells.str.len().max() <= 10:
        return {"type": "datetime", "unit": "D"}
    return "datetime"


#: pandas' stored index of a Parquet file written with ``index=True``: not
#: a column the readers give
_PANDAS_INDEX = re.compile(r"__index_level_\d+__")


def _parquet_type(pa_type):
    """A Parquet column's type in the schema, from its Arrow type (the
    file's own declaration: public); :data:`PLACEHOLDER` where the schema
    has no word for it. A duration is counted in seconds whatever its
    resolution: ``"s"`` is the finest unit the schema has (a coarser one is
    the user's to choose; the values, which would tell, are not read)."""
    import pyarrow as pa

    if pa.types.is_boolean(pa_type):
        return "boolean"
    if pa.types.is_integer(pa_type):
        return {"type": "numeric", "integer": True}
    if pa.types.is_floating(pa_type) or pa.types.is_decimal(pa_type):
        return "numeric"
    if pa.types.is_date(pa_type):
        return {"type": "datetime", "unit": "D"}
    if pa.types.is_timestamp(pa_type):
        if pa_type.tz is None:
            return "datetime"
        return {"type": "datetime", "timezone": pa_type.tz}
    if pa.types.is_duration(pa_type):
        return {"type": "duration", "unit": "s"}
    if pa.types.is_dictionary(pa_type) or pa.types.is_string(pa_type):
        return "categorical"
    if pa.types.is_large_string(pa_type):
        return "categorical"
    return PLACEHOLDER


def _parquet_draft(path):
    """``(schema, notice)`` of a Parquet file or folder, from its footer's
    schema alone (:func:`_parquet_type`)."""
    try:
        import pyarrow as pa
        import pyarrow.dataset as ds
    except ImportError:  # pragma: no cover - pyarrow is in the dask extra
        raise CLIError(
            "reading Parquet needs pyarrow: pip install 'skdp_synth[dask]'"
        ) from None
    try:
        schema = ds.dataset(path, format="parquet").schema
    except (OSError, ValueError, pa.ArrowException):
        raise CLIError(f"{path}: its Parquet schema cannot be read") from None
    fields = [f for f in schema if not _PANDAS_INDEX.fullmatch(f.name)]
    columns = {f.name: _parquet_type(f.type) for f in fields}
    left = [name for name, kind in columns.items() if kind == PLACEHOLDER]
    notice = (
        f"read the Parquet schema of {path} only (its footer: {len(columns)} "
        "column names and types), no row: the types are the file's own -- "
        'check each one: codes stored as numbers (zip codes) are "categorical". '
        "No value, level or bound was written; add what is public (levels, "
        "bounds, bin_edges, missing; doc/user_guide/cli.md)"
    )
    if left:
        notice += (
            f'; the columns {left} have types the schema has no word for: "?", '
            f"to replace ({CHOICES}) after converting them"
        )
    return {"columns": columns}, notice


def draft_schema(path, guess_rows=None):
    """``(schema, notice)``: the draft (a dict) and what was read to make it.

    ``guess_rows``: ``None`` reads the header only (every type
    :data:`PLACEHOLDER`); a number reads that many rows more and takes each
    column's type from the dtype pandas infers from them.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "people.csv"
    >>> _ = path.write_text("age,sex\\n31,F\\n")
    >>> draft_schema(path)[0]
    {'columns': {'age': '?', 'sex': '?'}}
    >>> draft_schema(path, guess_rows=100)[0]
    {'columns': {'age': {'type': 'numeric', 'integer': True}, 'sex': 'categorical'}}
    """
    from ._out_of_core import _is_parquet

    if _is_parquet(path):
        return _parquet_draft(path)
    header = _header(path)
    if guess_rows is None:
        columns = {name: PLACEHOLDER for name in header}
        notice = (
            f"read the header line of {path} only ({len(header)} column "
            "names): no value, level or bound. Replace every "
            f'"{PLACEHOLDER}" with the column\'s type ({CHOICES}) and add '
            "what is public about it (levels, bounds, bin_edges, integer, "
            "missing; doc/user_guide/cli.md): the CLI refuses the schema "
            f'while a "{PLACEHOLDER}" is left'
        )
        return {"columns": columns}, notice
    import pandas as pd

    from ._csv import _quiet_parser

    with _quiet_parser():
        sample = pd.read_csv(path, nrows=int(guess_rows), low_memory=False)
    if list(sample.columns) != header:  # pragma: no cover - pandas renames
        raise CLIError(f"{path}: pandas reads other column names than its header")
    columns = {name: _guessed_type(sample[name]) for name in header}
    notice = (
        f"read the header and at most the first {int(guess_rows)} rows of "
        f"{path}: the "
        "types are guesses from the data (pandas' dtypes), not public "
        "knowledge -- check each one: codes read as numbers (zip codes) are "
        '"categorical", a numeric column with a stray marker in those rows '
        'reads as "categorical", dates in another form than ISO 8601 are '
        '"datetime", and durations ("1 days 02:00:00"), never guessed, are '
        '"duration". No value, level or bound was written; add what is public '
        "(levels, bounds, "
        "bin_edges, missing; doc/user_guide/cli.md)"
    )
    return {"columns": columns}, notice


def cmd_schema(args):
    """Print the draft (or write it to ``-o``); the notice on standard error."""
    rows = args.guess_rows if args.guess_types else None
    schema, notice = draft_schema(args.input, rows)
    text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
    if args.output is None:
        sys.stdout.write(text)
    else:
        import os

        if os.path.exists(args.output):
            # a schema the user completed must not be replaced by a draft
            raise CLIError(
                f"{args.output} exists and is not overwritten (a schema you "
                "completed?); remove it or choose another -o"
            )
        from .._io import write_atomically

        write_atomically(args.output, lambda fh: fh.write(text), suffix=".json.tmp")
        notice += f"; wrote {args.output}"
    print(f"skdp-synth: {notice}", file=sys.stderr)
    return 0
