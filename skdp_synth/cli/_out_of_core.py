"""``synthesize --out-of-core`` (and Parquet): tables beyond memory, with Dask.

The input is read as a Dask DataFrame of chunks, each checked as
:func:`~skdp_synth.cli._csv._read_csv` checks a whole file; the pipeline fits
from sufficient statistics chunk by chunk -- the private domains of a
types-only schema's columns too, from merged chunk counts, identical to the
in-memory ones (``preprocessing._domain_stats``) -- and the synthetic rows are drawn,
decoded and written a chunk at a time into a file renamed into place when
complete. Memory is bounded by a few chunks, not by the table.
"""

from __future__ import annotations

import csv
import os
import sys
import time

import numpy as np

from .._io import write_atomically
from ._console import CLIError, _bar, _cli_warnings, _privacy_spent, _progress
from ._csv import (
    _as_datetimes,
    _as_durations,
    _as_numbers,
    _as_schema,
    _check_delimiter,
    _declared_levels,
    _quiet_parser,
)
from ._output import _with_decimals, _write_release


def _is_parquet(path):
    path = os.fspath(path)
    return path.endswith((".parquet", ".pq")) or (
        os.path.isdir(path) and any(f.endswith(".parquet") for f in os.listdir(path))
    )


def _read_chunked(path, schema, blocksize):
    """A Dask DataFrame over ``path`` (Parquet: its row groups; CSV: blocks).

    Nothing is read here but the schema (and, for Parquet, the row counts
    in the file metadata; for CSV, the header and a sample of the first
    lines). CSV cells of columns the schema declares as
    ``categories``/``ordinal`` are read as text and mapped to the declared
    levels chunk by chunk, exactly as :func:`_read_csv` does in memory; and
    every row of every chunk must have as many fields as the header
    (:func:`_check_fields`), as :func:`_read_csv` requires in memory.
    """
    try:
        import dask
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "out-of-core input needs dask: in a clone of skdp_synth, "
            "pip install -e '.[dask]'"
        ) from None
    with dask.config.set({"dataframe.convert-string": False}):
        if _is_parquet(path):
            frame = dd.read_parquet(path, split_row_groups=True)
            schema = _as_schema(schema)
            types = _chunk_types(schema, frame.columns)
            if not types:
                return frame
            zones = schema.timezones
            meta = _with_types(frame._meta, types, path, zones)
            return frame.map_partitions(
                _parquet_chunk, types, path, zones, meta.dtypes, meta=meta
            )
        return _read_csv_chunks(path, schema, blocksize)


def _chunk_types(schema, columns):
    """``{column: "numeric" | "integer" | "datetime" | "duration"}`` of a
    types-only schema."""
    return {
        c: t
        for c, t in (schema.types or {}).items()
        if c in columns and t in ("numeric", "integer", "datetime", "duration")
    }


def _parquet_chunk(frame, types, where, zones, dtypes):
    """One Parquet row group in the schema's dtypes (:func:`_with_types`)."""
    return _with_types(frame, types, where, zones, dtypes)


def _with_types(frame, types, where, zones=None, dtypes=None):
    """A chunk's numeric, datetime and duration columns in the schema's dtypes
    (``float64``, ``Int64`` for ``integer``, ``datetime64[ns]`` -- with the
    schema's ``"timezone"`` --, ``timedelta64[ns]``), as :func:`_read_csv`
    reads them in memory (not the dtypes pandas guesses: with those an
    ``integer`` column came back as bin midpoints 0.5, 1.5). ``dtypes``:
    those of the first chunk (the Dask meta), which every datetime column
    must have (None: this is the first chunk)."""
    frame = frame.copy()
    for col, kind in types.items():
        if kind == "datetime":
            frame[col] = _chunk_datetimes(
                frame[col],
                col,
                where,
                (zones or {}).get(col),
                None if dtypes is None else dtypes[col],
            )
        elif kind == "duration":
            frame[col] = _as_durations(frame[col], col, where)
        else:
            frame[col] = _as_numbers(frame[col], col, where, integer=kind == "integer")
    return frame


def _chunk_datetimes(values, col, where, tz, dtype):
    """A chunk's column declared ``datetime``, as :func:`_as_datetimes` reads
    the whole column in memory (the same refusals, naming the chunk and the
    column, never a cell), in the first chunk's dtype ``dtype``.

    The dtype is fixed by the schema -- ``datetime64[ns]``, in the declared
    ``"timezone"`` -- except where no zone is declared and the cells carry
    one offset: in memory the zone is then read from the cells (with a
    :class:`PrivacyLeakWarning`, said once, by the first chunk); out of core
    a chunk whose zone (or lack of one) is not the first chunk's is refused,
    asking for the ``"timezone"`` (in memory, cells of two offsets are
    refused too; only a first chunk without a date could tell them apart).
    A chunk without a date takes the first chunk's dtype.
    """
    import pandas as pd

    from ._csv import DATETIME_UNIT

    first = dtype is None
    if pd.api.types.is_datetime64_any_dtype(values):
        # Parquet's timestamps: typed by the file (a naive one is UTC, as a
        # cell without an offset is in memory)
        stamps = values
        if tz is not None:
            if stamps.dt.tz is None:
                stamps = stamps.dt.tz_localize("UTC")
            stamps = stamps.dt.tz_convert(tz)
        elif first and stamps.dt.tz is not None:
            import warnings

            from ..exceptions import PrivacyLeakWarning

            warnings.warn(
                f"column {col!r}: its time zone was read from the file; "
                'declare it in the schema ("timezone")',
                PrivacyLeakWarning,
                stacklevel=2,
            )
        try:
            stamps = stamps.dt.as_unit(DATETIME_UNIT)
        except (OverflowError, ValueError):
            # pandas' OutOfBoundsDatetime quotes the (private) date
            raise CLIError(
                f"{where}: column {col!r} has dates outside datetime64[ns]'s "
                "years 1677-2262 (not shown: they may be private); clip or "
                "drop them before synthesizing"
            ) from None
    else:
        stamps = _as_datetimes(values, col, where, tz=tz, warn=first)
    if first or stamps.dtype == dtype:
        return stamps
    if stamps.isna().all():
        return pd.Series(pd.NaT, index=stamps.index, dtype=dtype)
    raise CLIError(
        f"{where}: column {col!r} has dates in another time zone (or none) "
        "than the first chunk's (not shown: they may be private); declare "
        'the column\'s "timezone" in the schema (e.g. "UTC" or '
        '"America/New_York") to read it out of core'
    )


def _read_csv_chunks(path, schema, blocksize):
    """A chunked CSV file as a Dask DataFrame whose chunks check their rows.

    The file is cut into blocks of about ``blocksize`` bytes at line ends
    (:func:`dask.bytes.read_bytes`, as :func:`dask.dataframe.read_csv`
    does); each block, with the header line in front, is one chunk, parsed
    by :func:`_csv_chunk` -- which first counts every row's fields: pandas
    pads a short row with missing values and so would pass it to the
    encoder as a row of missing cells (accepted where missing values are
    declared). A bad chunk raises a :class:`CLIError` naming the chunk and
    the column, never a value. Column types are those pandas infers on the
    first lines; a chunk's integer column is widened to a float column of
    the first lines, as :func:`_read_csv` reads the whole file.
    """
    import io

    import dask.dataframe as dd
    import fsspec
    import pandas as pd
    from fsspec.utils import read_block
    from pandas._libs.parsers import STR_NA_VALUES

    files = fsspec.open_files(path, mode="rb")
    if not files:
        raise CLIError(f"{path}: no such file")
    with files[0] as fh:
        # a prefix of chunk 0, so that a bad row in it is named as in chunk 0
        sample = read_block(fh, 0, min(blocksize, 1 << 18), delimiter=b"\n")
    header = sample.split(b"\n", 1)[0] + b"\n"
    if not header.strip():
        raise CLIError(f"{path}: the file is empty (no header line)")
    columns = list(pd.read_csv(io.BytesIO(header), nrows=0).columns)
    lines = sample.decode("utf-8", "replace").splitlines()
    first = next(csv.reader(lines[1:2]), None) if len(lines) > 1 else None
    _check_delimiter([str(c) for c in columns], first, path)
    schema = _as_schema(schema)
    schema.check_columns(columns, where=str(path))
    declared = {c: v for c, v in schema.levels().items() if c in columns}
    options = {
        "dtype": {c: object for c in declared},
        "keep_default_na": False,
        "na_values": {c: sorted(STR_NA_VALUES) for c in columns if c not in declared},
        "on_bad_lines": "error",
        "low_memory": False,
    }
    spec = (
        path,
        header,
        columns,
        options,
        declared,
        _chunk_types(schema, columns),
        schema.timezones,
    )
    meta = _csv_chunk(sample, 0, spec, first=True, dtypes=None).iloc[:0]
    blocks = []
    for file in files:
        size = file.fs.size(file.path)
        for offset in range(0, max(size, 1), blocksize):
            blocks.append((file.fs, file.path, offset, offset == 0))
    # dd.from_map, not from_delayed: a from_delayed frame turned into a Dask
    # array loses a key in dask 2026.8's graph fusion ("Missing dependency")
    return dd.from_map(
        _csv_block,
        [(i, *b) for i, b in enumerate(blocks)],
        blocksize=blocksize,
        spec=spec,
        dtypes=meta.dtypes,
        meta=meta,
        enforce_metadata=False,
        label="read-csv-chunk",
    )


def _csv_block(item, blocksize, spec, dtypes):
    """Chunk ``index`` of a CSV file: its block of lines, parsed and checked."""
    from fsspec.utils import read_block

    index, fs, name, offset, first = item
    with fs.open(name, "rb") as fh:
        data = read_block(fh, offset, blocksize, delimiter=b"\n")
    return _csv_chunk(data, index, spec, first=first, dtypes=dtypes)


def _csv_chunk(data, index, spec, *, first, dtypes):
    """One CSV chunk (bytes) parsed and checked; errors name chunk and column."""
    import io

    import pandas as pd

    path, header, columns, options, declared, types, zones = spec
    if not first:
        data = header + data
    _check_fields(data, index, path, columns)
    try:
        with _quiet_parser():
            frame = pd.read_csv(io.BytesIO(data), **options)
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise CLIError(
            f"{path}, chunk {index}: cannot be parsed as CSV "
            f"({type(exc).__name__}; rows not shown)"
        ) from None
    if types:
        frame = _with_types(frame, types, f"{path}, chunk {index}", zones, dtypes)
    if dtypes is not None:
        for col, dtype in dtypes.items():
            if col in types:
                continue  # already the schema's dtype
            have = frame[col].dtype
            if have != dtype and np.can_cast(have, dtype, "safe"):
                frame[col] = frame[col].astype(dtype)
    if declared:
        frame = _declared_levels(frame, declared)
    return frame


def _commas_per_line(buf, starts, ends, piece=1 << 22):
    """The number of commas in ``buf[starts[i]:ends[i]]`` for every line ``i``.

    By a cumulative count (``uint32``) over pieces of about ``piece`` bytes
    of whole lines: exact, and the temporary is 4 bytes per byte of a piece,
    not of the chunk.
    """
    counts = np.empty(starts.size, dtype=np.int64)
    first = np.searchsorted(starts, np.arange(0, buf.size, piece))
    bounds = np.unique(np.concatenate([first, [starts.size]]))
    for a, b in zip(bounds[:-1], bounds[1:]):
        lo, hi = int(starts[a]), int(ends[b - 1])
        cum = np.zeros(hi - lo + 1, dtype=np.uint32)
        np.cumsum(buf[lo:hi] == ord(","), dtype=np.uint32, out=cum[1:])
        counts[a:b] = cum[ends[a:b] - lo] - cum[starts[a:b] - lo]
    return counts


def _check_fields(data, index, path, columns):
    """Every non-blank line of ``data`` (CSV bytes) has ``len(columns)`` fields.

    Counted on the raw bytes (commas per line) when the chunk has no quote
    character, else by :func:`csv.reader` (quoted fields may hold commas
    and line breaks). A short or long row raises a :class:`CLIError`
    naming the chunk and the first column it lacks (or the last one it
    overruns), never a value.
    """
    import io

    width = len(columns)
    if b'"' in data:
        reader = csv.reader(io.StringIO(data.decode("utf-8"), newline=""))
        counts = np.array([len(row) for row in reader if row], dtype=np.int64)
    else:
        buf = np.frombuffer(data, dtype=np.uint8)
        if buf.size == 0:
            return
        ends = np.flatnonzero(buf == ord("\n"))
        if buf[-1] != ord("\n"):
            ends = np.append(ends, buf.size)
        starts = np.concatenate([[0], ends[:-1] + 1])
        length = ends - starts
        # a blank line ("" or "\r") is skipped, as pandas skips it
        last = buf[np.maximum(ends - 1, 0)]
        blank = (length == 0) | ((length == 1) & (last == ord("\r")))
        starts, ends = starts[~blank], ends[~blank]
        if starts.size == 0:
            return
        counts = _commas_per_line(buf, starts, ends) + 1
    bad = np.flatnonzero(counts != width)
    if bad.size == 0:
        return
    # how many rows, and how many fields they have, are not said: counts of
    # the private rows
    where = f"{path}, chunk {index}: rows with "
    if int(counts[bad[0]]) < width:
        raise CLIError(f"{where}fewer fields than the header's {width} (not shown)")
    raise CLIError(
        f"{where}more fields than the header's {width}, past column "
        f"{columns[-1]!r} (not shown)"
    )


class _TaskProgress:
    """A Dask local-scheduler callback driving a progress bar (tqdm if installed)."""

    def __init__(self, desc):
        from dask.callbacks import Callback

        outer = self
        self.desc = desc

        class _Callback(Callback):
            def _start_state(self, dsk, state):
                # no count: the number of tasks grows with the input chunks
                outer.bar = _bar(desc, total=None, counts=False)

            def _posttask(self, key, result, dsk, state, worker_id):
                outer.bar.update(1)

            def _finish(self, dsk, state, errored):
                outer.bar.close()

        self.callback = _Callback()


#: Rows of the release's model table in out-of-core mode when the user gives
#: no ``max_model_rows`` (or ``"auto"``, whose size follows n̂/σ and can be
#: large at a large ε): its memory is then bounded, not proportional to n.
OUT_OF_CORE_MODEL_ROWS = 100_000


def _synthesize_out_of_core(args, estimator, schema):
    """``synthesize`` for tables beyond memory: chunked read, fit, chunked write.

    A release (``gaussian-release``) without ``max_model_rows`` gets
    ``OUT_OF_CORE_MODEL_ROWS`` (post-processing; said on standard error).

    The table is read as a Dask DataFrame (:func:`_read_chunked`); the
    domains the schema does not give (a types-only schema) are learned
    privately from merged chunk counts (one pass, and one more where a
    numeric column needs finer counts), the rows are encoded chunk by chunk,
    and the synthesizer fits from its sufficient statistics (one or two
    passes, each chunk validated;
    memory bounded by a few chunks, not by the table). The synthetic rows
    are drawn, decoded and written ``--chunk-rows`` at a time into a
    temporary file that is renamed onto the output only when complete: a bad
    chunk (in the input or the output) leaves no partial file.
    """
    import dask
    from dask.utils import parse_bytes

    from ..pipeline import make_synthesis_pipeline
    from ..preprocessing import BooleanEncoder

    shown = _cli_warnings(schema_given=True)  # (no NO_SCHEMA_WARNING here)
    with shown:
        # read in here: a zone read from the first chunk's cells is a
        # PrivacyLeakWarning (:func:`_chunk_datetimes`), as in memory
        frame = _read_chunked(args.input, schema, parse_bytes(args.blocksize))
        if "max_model_rows" in estimator.get_params() and (
            estimator.get_params()["max_model_rows"] in (None, "auto")
        ):
            # the release's generator fits a table of n rows in memory: bound it
            estimator.set_params(max_model_rows=OUT_OF_CORE_MODEL_ROWS)
            print(
                f"out of core: the generator's table is capped at "
                f"{OUT_OF_CORE_MODEL_ROWS} rows (max_model_rows; --param "
                "max_model_rows=N to change)",
                file=sys.stderr,
            )
        encoder = BooleanEncoder(random_state=args.seed, **schema.encoder)
        pipe = make_synthesis_pipeline(
            encoder, estimator, domain_share=args.domain_share
        )
        t0 = time.perf_counter()
        progress = _TaskProgress("fit (chunks)")
        with dask.config.set(scheduler="threads"), progress.callback:
            pipe.fit(frame)
        fitted = pipe[-1]
        n_rows = fitted._check_sample_size(args.rows)
        written = _write_chunks(pipe, n_rows, args, schema)
        try:
            _write_release(pipe, args, schema)
        except BaseException:
            os.remove(args.output)
            raise
        elapsed = time.perf_counter() - t0
    spent = _privacy_spent(pipe, shown.leaked)
    print(
        # not the number of input chunks: ceil(file bytes / blocksize), a
        # function of n without noise, which neighbouring inputs show apart
        f"wrote {written} rows to {args.output} in {elapsed:.1f} s "
        f"(out of core){spent}",
        file=sys.stderr,
    )
    return 0


def _sample_chunks(pipe, n_rows, chunk_rows, seed):
    """Decoded synthetic rows, ``chunk_rows`` at a time.

    The rows of the weighted-point synthesizers are i.i.d. draws (damped) or
    controlled roundings of a public table (release): each chunk is drawn
    with its own stream (spawned from ``seed``, or secure when ``None``).
    A :class:`~skdp_synth.PrivateSampler` holds only the ``k`` rows paid for:
    they are drawn in one call and written in chunks.
    """
    fitted, encoder = pipe[-1], pipe[0]
    if hasattr(fitted, "n_draws_paid_"):
        rows = pipe.sample(n_rows, random_state=seed)
        for start in range(0, n_rows, chunk_rows):
            yield rows.iloc[start : start + chunk_rows]
        return
    sizes = [min(chunk_rows, n_rows - s) for s in range(0, n_rows, chunk_rows)]
    if seed is None:
        streams = [None] * len(sizes)
    else:
        streams = [
            int(s.generate_state(1)[0])
            for s in np.random.SeedSequence(seed).spawn(2 * len(sizes))
        ]
    saved = encoder.random_state
    try:
        for i, size in enumerate(sizes):
            if seed is not None:
                encoder.random_state = streams[2 * i + 1]
            state = None if seed is None else streams[2 * i]
            yield pipe.sample(size, random_state=state)
    finally:
        encoder.random_state = saved


def _write_chunks(pipe, n_rows, args, schema):
    """Write the synthetic rows chunk by chunk, atomically (CSV or Parquet)."""
    chunks = _sample_chunks(pipe, n_rows, args.chunk_rows, args.seed)
    chunks = (_with_decimals(frame, schema) for frame in chunks)
    total = -(-n_rows // args.chunk_rows)
    chunks = _progress(chunks, "write (chunks)", total=total)
    count = [0]
    if _is_parquet(args.output):
        import pyarrow as pa
        import pyarrow.parquet as pq

        targets = _parquet_targets(args.input, schema)

        def write(fh):
            writer = None
            try:
                for frame in chunks:
                    table = pa.Table.from_pandas(frame, preserve_index=False)
                    table = _cast_columns(table, targets)
                    if writer is None:
                        writer = pq.ParquetWriter(fh, table.schema)
                    writer.write_table(table)
                    count[0] += len(frame)
            finally:
                if writer is not None:
                    writer.close()

        write_atomically(args.output, write, binary=True, suffix=".parquet.tmp")
    else:

        def write(fh):
            for i, frame in enumerate(chunks):
                frame.to_csv(fh, index=False, header=i == 0)
                count[0] += len(frame)

        write_atomically(args.output, write, suffix=".csv.tmp")
    return count[0]


def _parquet_targets(path, schema):
    """``{column: Arrow type}``: the types of a Parquet input that the
    written Parquet columns are cast back to -- exactly, except that a
    narrow number type holds what it holds (below) -- a date column counted
    in days (midnights) to its
    ``date32``/``date64``, a timestamp (whole seconds or coarser) to its
    resolution and zone, a duration (whole seconds or coarser) to its
    resolution, text to its dictionary or large string, a narrow integer
    (``int8``-``int32``, unsigned) or ``float32`` column to its type (the
    rows' whole numbers first clipped to what it holds, as the library
    clips to a column's NumPy dtype: :func:`_cast_columns`; ``float32``
    rounds, as the input's own values were; numbers with decimals in a
    narrow integer column stay 64-bit). Only where a
    types-only schema declares the column as that kind of type: declared
    ``numeric``, a timestamp is written as numbers (a cast of them to a
    timestamp raised pyarrow's ArrowNotImplementedError, after the fit).
    Empty where the input is not Parquet. From the file's schema only
    (public)."""
    if not _is_parquet(path):
        return {}
    import pyarrow as pa
    import pyarrow.dataset as ds

    try:
        source = ds.dataset(path, format="parquet").schema
    except (OSError, ValueError, pa.ArrowException):  # pragma: no cover - read before
        return {}
    units = schema.encoder.get("datetime_unit", "s")
    declared = schema.types or {}
    targets = {}
    for field in source:
        t = field.type
        unit = units.get(field.name, "s") if isinstance(units, dict) else units
        # None: not declared (a full-domain schema), pandas' type is kept
        kind = declared.get(field.name)
        text = pa.types.is_large_string(t) or (
            pa.types.is_dictionary(t) and pa.types.is_string(t.value_type)
        )
        time = pa.types.is_timestamp(t) or (pa.types.is_date(t) and unit == "D")
        if (
            (time and kind in (None, "datetime"))
            or (pa.types.is_duration(t) and kind in (None, "duration"))
            or (text and kind in (None, "categorical", "ordinal"))
            or (_narrow_number(t) and kind in (None, "numeric", "integer"))
        ):
            targets[field.name] = t
    return targets


def _narrow_number(t):
    """Whether Arrow type ``t`` is a number type narrower than the 64-bit
    ones the written rows hold (``int8``-``int32``, any unsigned, or
    ``float32``; not ``float16``, which older pyarrow cannot cast to)."""
    import pyarrow as pa

    if pa.types.is_integer(t):
        return t.bit_width < 64 or pa.types.is_unsigned_integer(t)
    return pa.types.is_float32(t)


def _cast_columns(table, targets):
    """``table`` with the columns of ``targets`` cast to their types
    (:func:`_parquet_targets`: time and text casts exact by construction,
    so not checked). A narrow integer type takes an integer column only,
    clipped to the type's range first (public: the type), so that every
    chunk of the file gets the same type whatever its values; a float
    column (numbers with decimals) stays 64-bit there. A ``float32`` target
    rounds each value to the nearest ``float32``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = []
    for name, column in zip(table.column_names, table.columns):
        t = targets.get(name)
        if t is not None and pa.types.is_integer(t):
            if not pa.types.is_integer(column.type):
                t = None  # decimals: not cast, in every chunk alike
            elif column.type != t:
                info = np.iinfo(t.to_pandas_dtype())
                low = pa.scalar(max(int(info.min), -(2**63)), column.type)
                high = pa.scalar(min(int(info.max), 2**63 - 1), column.type)
                # a missing cell stays missing (skip_nulls=True made it low)
                floor = pc.max_element_wise(column, low, skip_nulls=False)
                column = pc.min_element_wise(floor, high, skip_nulls=False)
        if t is not None and column.type != t:
            if pa.types.is_date(t) and pa.types.is_timestamp(column.type):
                # a zoned midnight is the zone's date: drop the zone first
                column = column.cast(pa.timestamp(column.type.unit), safe=False)
            column = column.cast(t, safe=False)
        columns.append(column)
    return pa.Table.from_arrays(columns, names=table.column_names)
