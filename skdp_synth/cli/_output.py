"""Where the CLI writes: output paths checked before a fit, files written whole.

Outputs are checked before the (budget-spending) fit, may never overwrite an
input or each other, and are written atomically (never a partial file), or to
standard output for ``-o -``. Shared by the in-memory and out-of-core
``synthesize``.
"""

from __future__ import annotations

import csv
import dataclasses
import os
import sys

from .._io import write_atomically
from ._console import CLIError

#: ``-o -``: the rows go to standard output (``synthesize`` in memory,
#: ``sample``), not a file named "-"
STDOUT = "-"


def _check_output_path(path, stdout=False):
    """The output's directory must exist and be writable, and path not a
    directory; ``-`` is standard output where ``stdout`` allows it."""
    if path == STDOUT:
        if stdout:
            return
        raise CLIError(
            "'-' (standard output) is only for the rows of synthesize and "
            "sample (-o -); give a file name"
        )
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise CLIError(f"output directory {directory!r} does not exist")
    if os.path.isdir(path):
        raise CLIError(f"output path {path!r} is a directory")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise CLIError(f"output directory {directory!r} is not writable")


def _check_distinct(inputs, outputs):
    """No output may overwrite an input or another output (inputs may be the
    same file: a table reported against itself). ``[(what, path or None)]``;
    the same file (after links) is an error before anything is read or
    written (otherwise ``-o`` could replace the real input or the
    release)."""
    seen = []
    for what, path in [*outputs, *inputs]:
        if path is None or path == STDOUT:
            continue
        key = os.path.realpath(path)
        for other, other_key, other_is_output in seen:
            same = key == other_key or (
                os.path.exists(key)
                and os.path.exists(other_key)
                and os.path.samefile(key, other_key)
            )
            if same and other_is_output:
                raise CLIError(f"{other} and {what} are the same file ({path})")
        seen.append((what, key, (what, path) in outputs))


def _write_csv_atomically(frame, path):
    """Write ``frame`` as CSV to ``path`` atomically (never a partial file),
    or to standard output for ``-``."""
    if path == STDOUT:
        frame.to_csv(sys.stdout, index=False)
        sys.stdout.flush()
        return
    write_atomically(path, lambda fh: frame.to_csv(fh, index=False), suffix=".csv.tmp")


def _write_csv_chunks(frames, path):
    """Write the DataFrames ``frames`` (consecutive rows of one table, drawn
    lazily) as one CSV file, chunk by chunk, atomically (never a partial
    file), or to standard output for ``-``; the header once. Returns the
    number of rows written."""
    written = 0

    def write(fh):
        nonlocal written
        for frame in frames:
            frame.to_csv(fh, index=False, header=written == 0)
            written += len(frame)

    if path == STDOUT:
        write(sys.stdout)
        sys.stdout.flush()
    else:
        write_atomically(path, write, suffix=".csv.tmp")
    return written


def _shown(path):
    return "standard output" if path == STDOUT else path


def _write_release(pipe, args, schema=None):
    """``--release-out``: the pipeline's release -- the last step's, its
    guarantee composed with the encoder's private domains (the whole budget
    spent), and the encoder's decoder, so that ``skdp-synth sample`` draws
    rows of the table from the file alone. The schema's ``"decimals"`` go
    into its plan (``plan["decimals"]``, public formatting the user wrote,
    nothing read from the data), so that ``sample`` writes the columns as
    ``synthesize`` did."""
    path = getattr(args, "release_out", None)
    if path is None:
        return
    final = pipe[-1]
    if not hasattr(final, "to_release"):
        raise CLIError(
            f"--release-out: the method {args.method!r} has no release to write"
        )
    release = pipe.to_release()
    decimals = getattr(schema, "decimals", None)
    if decimals:
        release = dataclasses.replace(
            release, plan={**release.plan, DECIMALS_KEY: dict(decimals)}
        )
    release.save(path)


#: The key of a release's plan holding the schema's ``"decimals"``
#: (``{column: k}``), written by ``synthesize --release-out``.
DECIMALS_KEY = "decimals"


def _release_decimals(release, path):
    """``{column: k}`` from a release's plan (``{}`` when it holds none),
    checked: the file is untrusted, so a malformed entry is a one-line
    error naming the file, not a crash while writing."""
    decimals = release.plan.get(DECIMALS_KEY, {})
    columns = {str(spec["name"][-1]) for spec in release.plan["decoder"]["specs"]}
    if not (
        isinstance(decimals, dict)
        and all(
            col in columns
            and isinstance(k, int)
            and not isinstance(k, bool)
            and 0 <= k <= 15
            for col, k in decimals.items()
        )
    ):
        raise CLIError(
            f"{path}: plan.decimals must map columns of the release to whole "
            "numbers 0-15"
        )
    return decimals


def _write_rows(path, mask, out):
    """Copy the header and the rows ``mask`` selects (non-blank rows, in the
    order pandas read them) of the CSV file ``path`` to ``out``, atomically:
    the cells as written in the input, not as parsed."""

    def write(fh):
        with open(path, newline="", encoding="utf-8") as src:
            reader = csv.reader(src)
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(next(reader))
            rows = (row for row in reader if row)
            for row, selected in zip(rows, mask, strict=True):
                if selected:
                    writer.writerow(row)

    write_atomically(out, write, suffix=".csv.tmp")


def _with_decimals(frame, schema):
    """The schema's ``"decimals"`` columns rounded for writing."""
    return _round_columns(frame, schema.decimals)


def _round_columns(frame, decimals, default=None):
    """``frame`` with each float column ``col`` of ``decimals`` (``{col: k}``)
    rounded to ``k`` decimals, and the other float columns to ``default``
    ones (unless ``None``): how ``synthesize`` and ``sample`` write them
    (with 0 decimals as whole numbers)."""
    floats = [c for c in frame.columns if frame[c].dtype.kind == "f"]
    rounding = {
        c: decimals.get(str(c), default)
        for c in floats
        if decimals.get(str(c), default) is not None
    }
    if not rounding:
        return frame
    frame = frame.copy()  # (a chunk may be a slice of a larger one)
    for col, k in rounding.items():
        # 0 decimals: whole numbers ("881", not "881.0"), missing cells kept
        frame[col] = (
            frame[col].round(k).astype("Int64") if k == 0 else frame[col].round(k)
        )
    return frame
