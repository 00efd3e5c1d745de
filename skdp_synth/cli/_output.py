"""Where the CLI writes: output paths checked before a fit, files written whole.

Outputs are checked before the (budget-spending) fit, may never overwrite an
input or each other, and are written atomically (never a partial file), or to
standard output for ``-o -``. Shared by the in-memory and out-of-core
``synthesize``.
"""

from __future__ import annotations

import csv
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


def _write_release(pipe, args):
    """``--release-out``: the pipeline's release -- the last step's, its
    guarantee composed with the encoder's private domains (the whole budget
    spent), and the encoder's decoder, so that ``skdp-synth sample`` draws
    rows of the table from the file alone."""
    path = getattr(args, "release_out", None)
    if path is None:
        return
    final = pipe[-1]
    if not hasattr(final, "to_release"):
        raise CLIError(
            f"--release-out: the method {args.method!r} has no release to write"
        )
    pipe.to_release().save(path)


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
    if not schema.decimals:
        return frame
    frame = frame.copy()
    for col, k in schema.decimals.items():
        if col in frame.columns and frame[col].dtype.kind == "f":
            frame[col] = frame[col].round(k)
    return frame
