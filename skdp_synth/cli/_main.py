"""``skdp-synth``: synthesize a CSV file, report on one, list the methods, run the demo.

Examples (shell)::

    skdp-synth list
    skdp-synth synthesize people.csv --method gaussian-release --epsilon 1 \\
        --delta 1e-6 --schema schema.json --holdout 0.2 \\
        --holdout-out heldout.csv -o synthetic.csv
    skdp-synth report heldout.csv synthetic.csv --held-out --schema schema.json \\
        -o report.html --png report.png
    skdp-synth demo

The schema file (JSON, or YAML when PyYAML is installed) says what each
column is: its type only, with what is public about it (the rest is learned
privately from the same budget; :mod:`skdp_synth._cli_schema`)::

    {"columns": {"age": "numeric",
                 "sex": {"type": "categorical", "levels": ["F", "M"]},
                 "education": {"type": "ordinal",
                               "levels": ["none", "school", "degree"]}}}

or the full public domain, as keyword arguments of
:class:`~skdp_synth.preprocessing.BooleanEncoder`::

    {"categories": {"sex": ["F", "M"]},
     "ordinal":    {"education": ["none", "school", "degree"]},
     "bin_edges":  {"age": [0, 18, 30, 45, 65, 120]},
     "missing": "infer"}

Without a schema the domain is learned from the data, and the CLI says so
(:class:`~skdp_synth.exceptions.PrivacyLeakWarning`).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import csv
import itertools
import math
import os
import re
import sys
import time
import warnings

import numpy as np

from .._io import write_atomically

__all__ = ["main"]


def _usage_error(message):
    """A user error found while reading the arguments: one line, exit status 2
    (as argparse's own errors and every other user error; issue 23): ``main``
    turns this ``SystemExit(message)`` into the one error format and returns 2."""
    raise SystemExit(message)


def _parse_params(items):
    params = {}
    for item in items or []:
        if "=" not in item:
            _usage_error(f"--param expects key=value, got {item!r}")
        key, value = item.split("=", 1)
        key = key.strip()
        if key in _OWN_OPTIONS:
            # "Method.build() got multiple values for keyword argument
            # 'epsilon'" (a walk-through, round twenty)
            _usage_error(
                f"--param {key}=...: give it as {_OWN_OPTIONS[key]}, the "
                "command's own option"
            )
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key] = value
    return params


#: parameters with their own options, never a ``--param``
_OWN_OPTIONS = {"epsilon": "--epsilon", "delta": "--delta", "random_state": "--seed"}


def _domain_share(text):
    """``--domain-share``: ``auto`` or a number in (0, 1)."""
    if text == "auto":
        return text
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(
            f"expected auto or a number in (0, 1), got {text!r}"
        )
    return value


def _load_schema(path):
    """The schema file as a :class:`~skdp_synth._cli_schema.Schema` (both forms)."""
    from ._schema import load_schema

    return load_schema(path)


def _as_schema(schema):
    """A :class:`~skdp_synth._cli_schema.Schema` from one, a dict or ``None``."""
    from ._schema import Schema, parse_schema

    if isinstance(schema, Schema):
        return schema
    return parse_schema(schema or {})


def _progress(iterable, desc, total=None):
    """tqdm when installed (extra 'cli'), otherwise plain progress lines."""
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - depends on the environment

        def plain():
            for i, item in enumerate(iterable):
                print(f"[{desc}] {i + 1}/{total or '?'}", file=sys.stderr, flush=True)
                yield item

        return plain()
    # disable=None: no bar when stderr is not a terminal (a log file got
    # every redraw; a walk-through, round eighteen)
    return tqdm(iterable, desc=desc, total=total, file=sys.stderr, disable=None)


def _bar(desc, total, *, counts=True):
    """A manual progress bar (``update``/``close``): tqdm, or plain lines.

    ``counts=False`` shows the elapsed time only: a count of tasks done
    that grows with the input's size (the out-of-core fit's chunks) is a
    function of ``n`` (a neighbour-diff audit, round nineteen)."""
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - depends on the environment

        class Plain:
            done = 0

            def update(self, k):
                self.done += k
                if counts:
                    print(f"[{desc}] {self.done}/{total}", file=sys.stderr, flush=True)
                elif self.done == k:
                    print(f"[{desc}] running", file=sys.stderr, flush=True)

            def close(self):
                pass

        return Plain()
    if not counts:
        return tqdm(
            desc=desc,
            total=None,
            file=sys.stderr,
            disable=None,
            bar_format="{desc}: {elapsed}",
        )
    return tqdm(desc=desc, total=total, file=sys.stderr, disable=None)


#: ``-o -``: the rows go to standard output (``synthesize`` in memory,
#: ``sample``); it wrote a file named "-" (a walk-through, round twenty)
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
    written (a walk-through, round eighteen: ``-o`` could replace the real
    input or the release)."""
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


def _decimals(text):
    """``sample --decimals``: a whole number of decimals, 0 to 15."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 <= value <= 15:
        raise argparse.ArgumentTypeError(f"must be between 0 and 15, got {value}")
    return value


def _check_delimiter(header, first, path):
    """A header of one field holding ``;``, a tab or ``|``, over a first row
    that splits the same way, is a file with another delimiter: said so,
    rather than "d=2 exceeds the number of attributes (1)" or a schema error
    about a column named ``'a;b;c'`` (a walk-through, round twenty). A
    one-column file whose name holds one of them, over plain cells, is
    read as it is (a review, round twenty). Neither the header's names nor
    the row's cells are shown."""
    if len(header) != 1 or first is None or len(first) != 1:
        return
    for sep, name in ((";", "semicolons"), ("\t", "tabs"), ("|", "'|'")):
        if sep in header[0] and first[0].count(sep) == header[0].count(sep):
            raise CLIError(
                f"{path}: its header and rows are one field with {name} in "
                "them: the CLI reads comma-separated files; convert it, e.g. "
                f"pandas.read_csv(path, sep={sep!r}).to_csv(out, index=False)"
            )


def _positive_int(text):
    """``--rows``: a positive integer, checked when the command line is read
    (not after a fit that spends the budget)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


@contextlib.contextmanager
def _quiet_parser():
    """pandas' reader warnings off: whether it warns depends on the values
    (``DtypeWarning``, "Columns (0) have mixed types": one text cell in a
    later chunk of a numeric-looking column), and the CLI prints warnings,
    so one row would show (a neighbour-diff audit, round nineteen). The
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
    a ``datetime`` one as dates and times (ISO 8601). ``counts``: the
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
                    # an unclosed quote is the file's length, n (a privacy
                    # audit, round eighteen)
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
    return frame


def _warn_inferred_types(data, schema):
    """A schema without ``"columns"`` leaves the types of the columns it
    gives no levels to pandas, which reads them from the values: one empty
    cell turns ``int64`` into ``float64`` and ``bool`` into ``object``, and
    the bits and the release's decoder with them (a privacy audit, round
    eighteen). Said, naming the columns; a types-only schema declares them."""
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


def _as_datetimes(values, col, path, tz=None):
    """A column declared ``datetime``: ISO 8601 text as ``datetime64``
    (an offset such as ``+01:00``, the same on every cell, keeps its zone).
    With the schema's ``"timezone"`` the cells may have any offsets (a zone
    with daylight saving, as pandas writes it: -05:00 and -04:00) and come
    back in that zone; a cell without an offset is read as UTC."""
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
    except (TypeError, ValueError, AttributeError):
        stamps = None
    if tz is None and getattr(getattr(stamps, "dt", None), "tz", None) is not None:
        # the offset came from the cells, not the schema (a privacy audit,
        # round eighteen): it is in the rows and the release's decoder
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
        values = values.astype("Int64")
    return values


def _write_csv_atomically(frame, path):
    """Write ``frame`` as CSV to ``path`` atomically (never a partial file),
    or to standard output for ``-``."""
    if path == STDOUT:
        frame.to_csv(sys.stdout, index=False)
        sys.stdout.flush()
        return
    write_atomically(path, lambda fh: frame.to_csv(fh, index=False), suffix=".csv.tmp")


def _shown(path):
    return "standard output" if path == STDOUT else path


class CLIError(ValueError):
    """A user error: reported in one line, exit status 2."""


# ----------------------------------------------------------------- commands
def cmd_list(args):
    from ._registry import METHODS

    if not METHODS:
        print("no methods registered")
        return 0
    width = max(len(n) for n in METHODS) + 2
    for name, method in sorted(METHODS.items()):
        mark = " *" if method.recommended else ""
        print(f"{name + mark:<{width}}  {method.guarantee:<20}  {method.summary}")
    if any(m.recommended for m in METHODS.values()):
        print(
            "\n* recommended: start with it on a categorical table "
            "(skdp-synth synthesize --help has an example)"
        )
    return 0


def _privacy_spent(pipe, leaked=False):
    """``"; privacy spent: ..."`` for a private pipeline, else ``""``.

    The pipeline's composed guarantee: its encoder's private domains and the
    synthesizer together (the ε and δ written), not the synthesizer's part;
    none where the pipeline records none (a last step that is not private:
    the last step's own would be claimed for rows it does not cover). When a
    warning said something was learned from the data without privacy
    (``leaked``), the line says the guarantee does not cover it (a second
    walk-through, round seventeen: "privacy spent: epsilon=1" after such a
    warning read as the whole truth).
    """
    g = getattr(pipe, "privacy_guarantee_", None)
    if g is None:
        return ""
    caveat = (
        "; it does not cover what the warnings above say was learned from the data"
        if leaked
        else ""
    )
    return (
        f"; privacy spent: epsilon={g.epsilon:g}, "
        f"delta={g.delta:g} ({g.neighbouring} neighbours){caveat}"
    )


def cmd_synthesize(args):
    import pandas as pd

    from ..pipeline import make_synthesis_pipeline
    from ..preprocessing import BooleanEncoder
    from ._registry import get_method

    method = get_method(args.method)
    params = _parse_params(args.param)
    estimator = method.build(
        epsilon=args.epsilon, delta=args.delta, random_state=args.seed, **params
    )
    if estimator.get_params().get("domain") not in (None, "boolean"):
        estimator.set_params(domain="boolean")
    schema = _load_schema(args.schema)
    # the parameters before any cell is read: --epsilon -1 with a bad cell
    # was refused for the cell (a canary audit, round twenty)
    for step in (estimator, BooleanEncoder(**schema.encoder)):
        validate = getattr(step, "_validate_params", None)
        if callable(validate):
            validate()
    # before the (long, budget-spending) fit; standard output in memory only
    _check_output_path(
        args.output,
        stdout=not (
            args.out_of_core or _is_parquet(args.input) or _is_parquet(args.output)
        ),
    )
    _check_distinct(
        [("the input", args.input), ("--schema", args.schema)],
        [
            ("-o", args.output),
            ("--release-out", args.release_out),
            ("--holdout-out", args.holdout_out),
            ("--train-out", args.train_out),
        ],
    )
    _check_holdout(args)
    if args.release_out is not None:
        _check_output_path(args.release_out)
        if not hasattr(estimator, "to_release"):
            raise CLIError(
                f"--release-out: the method {args.method!r} has no release to write"
            )
    if args.out_of_core or _is_parquet(args.input) or _is_parquet(args.output):
        if args.holdout is not None:
            raise CLIError(
                "--holdout needs an in-memory fit: drop --out-of-core / Parquet"
            )
        if args.counts is not None:
            raise CLIError(
                "--counts needs an in-memory fit: a table of counts is small "
                "(one line per cell), so drop --out-of-core / Parquet"
            )
        return _synthesize_out_of_core(args, estimator, schema)
    names = ["read", "fit", "sample", "write"]
    shown = _cli_warnings(
        schema_given=args.schema is not None, types_only=schema.types_only
    )
    with _Steps("synthesize", names) as steps, shown:
        steps.step()
        data = _read_csv(args.input, schema, counts=args.counts)
        fit_params = {}
        if args.counts is not None:
            data, fit_params["sample_weight"] = _split_counts(data, args.counts)
        _warn_inferred_types(data, schema)  # the table's columns, not the counts
        if args.schema is None:  # (after the file passed its checks)
            _warn(NO_SCHEMA_WARNING)
        held_out = None
        if args.holdout is not None:
            # the declarations hold for the whole input, not for the rows the
            # split happens to keep (the same command failed 6 times in 8)
            BooleanEncoder(**schema.encoder).check_declarations(data)
            keep = _holdout_split(len(data), args.holdout, args.seed)
            data, held_out = data[keep].reset_index(drop=True), ~keep
        encoder = BooleanEncoder(random_state=args.seed, **schema.encoder)
        pipe = make_synthesis_pipeline(
            encoder, estimator, domain_share=args.domain_share
        )
        t0 = time.perf_counter()
        steps.step()
        try:
            pipe.fit(data, **fit_params)
        except TypeError as exc:
            if "sample_weight" not in str(exc):
                raise
            raise CLIError(f"--counts: {exc}") from None
        steps.step()
        synthetic = pipe.sample(args.rows, random_state=args.seed)
        elapsed = time.perf_counter() - t0
        if not isinstance(synthetic, pd.DataFrame):
            synthetic = pd.DataFrame(synthetic, columns=data.columns)
        synthetic = _with_decimals(synthetic, schema)
        steps.step()
        _write_csv_atomically(synthetic, args.output)
        try:
            if held_out is not None:
                _write_rows(args.input, held_out, args.holdout_out)
                if args.train_out is not None:
                    _write_rows(args.input, ~held_out, args.train_out)
            _write_release(pipe, args)
        except BaseException:
            os.remove(args.output)  # no output on any failure
            for extra in (args.holdout_out, args.train_out):
                if held_out is not None and extra and os.path.exists(extra):
                    os.remove(extra)
            raise
    fitted = pipe[-1]
    spent = _privacy_spent(pipe, shown.leaked)
    print(
        f"wrote {len(synthetic)} rows{_default_rows_note(args, fitted)} to "
        f"{_shown(args.output)} in {elapsed:.1f} s{spent}",
        file=sys.stderr,
    )
    if held_out is not None:
        # a command that runs as pasted (a walk-through, round nineteen:
        # it lacked -o, the release just written, --schema and --target)
        rows_file = "SYNTHETIC.csv" if args.output == STDOUT else args.output
        command = ["skdp-synth report", args.holdout_out, rows_file, "--held-out"]
        if args.schema is not None:
            command += ["--schema", args.schema]
        if args.release_out is not None:
            command += ["--release", args.release_out]
        if args.train_out is not None:
            command += ["[--target COLUMN --real-train", f"{args.train_out}]"]
        command += ["-o report.html"]
        print(
            f"wrote the held-out real rows (never fitted) to {args.holdout_out}"
            + (
                ""
                if args.train_out is None
                else f" and the fitted ones to {args.train_out}"
            )
            + f": score against them with '{' '.join(command)}'; they are "
            "real data, NOT private: keep them with the input",
            file=sys.stderr,
        )
    return 0


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


def _check_release_matches(release, synthetic, path):
    """``report --release``: a pipeline's release names its table's columns
    (its decoder); the page states its guarantee only for a table with those
    columns (a walk-through, round eighteen: any release was believed, and
    the page stated an unrelated release's ε)."""
    if release is None:
        return
    decoder = release.plan.get("decoder")
    if decoder is None:
        raise CLIError(
            f"--release {path} holds a {release.estimator} release without a "
            "decoder, so it does not say which table it is the guarantee of; "
            "write the release with 'synthesize --release-out'"
        )
    columns = [str(spec["name"][-1]) for spec in decoder["specs"]]
    if columns != [str(c) for c in synthetic.columns]:
        raise CLIError(
            f"--release {path} is the release of a table with columns "
            f"{columns}, not of the synthetic table's {list(synthetic.columns)}"
        )


def cmd_sample(args):
    """Rows of the table drawn from a release file alone (post-processing)."""
    import pandas as pd

    from ..exceptions import MalformedReleaseError
    from ..release import Release

    _check_output_path(args.output, stdout=True)
    _check_distinct([("the release", args.release)], [("-o", args.output)])
    try:
        release = Release.load(args.release)
    except MalformedReleaseError as exc:
        raise CLIError(str(exc)) from None  # it names the file
    if "decoder" not in release.plan:
        raise CLIError(
            f"{args.release} holds a {release.estimator} release without a "
            "decoder (written before this version, or not by a synthesis "
            "pipeline): its rows are encoded bits, not a table; write the "
            "release again with 'synthesize --release-out'"
        )
    if args.rows is None and release.plan.get("default_n_samples") is None:
        raise CLIError(
            f"{args.release} does not fix a number of rows (its guarantee is "
            "under add/remove neighbours); pass --rows"
        )
    t0 = time.perf_counter()
    rows = release.sample(args.rows, random_state=args.seed)
    if not isinstance(rows, pd.DataFrame):
        rows = pd.DataFrame(rows)
    if args.decimals is not None:
        # the schema's per-column "decimals" are not in the release (they
        # format the output file): one number for every float column here
        floats = [c for c in rows.columns if rows[c].dtype.kind == "f"]
        rows[floats] = rows[floats].round(args.decimals)
    _write_csv_atomically(rows, args.output)
    g = release.guarantee
    print(
        f"wrote {len(rows)} rows to {_shown(args.output)} in "
        f"{time.perf_counter() - t0:.1f} s; post-processing of the release, "
        f"covered by its guarantee (epsilon={g.epsilon:g}, delta={g.delta:g}, "
        f"{g.neighbouring})",
        file=sys.stderr,
    )
    return 0


def _check_holdout(args):
    """``--holdout`` and ``--holdout-out`` go together (``--train-out`` needs
    them); checked before any read."""
    if (args.holdout is None) != (args.holdout_out is None):
        raise CLIError("--holdout FRACTION and --holdout-out FILE go together")
    if args.train_out is not None and args.holdout is None:
        raise CLIError(
            "--train-out writes the rows --holdout kept for the fit: give "
            "--holdout FRACTION --holdout-out FILE too"
        )
    if args.holdout is None:
        return
    if not 0.0 < args.holdout < 1.0:
        raise CLIError(f"--holdout must be a fraction in (0, 1), got {args.holdout}")
    if args.counts is not None:
        raise CLIError(
            "--holdout splits rows, and with --counts a line is a cell of many "
            "records: hold out records before counting them"
        )
    _check_output_path(args.holdout_out)
    if args.train_out is not None:
        _check_output_path(args.train_out)
    paths = {os.path.abspath(p) for p in (args.input, args.output, args.holdout_out)}
    if len(paths) < 3:
        raise CLIError("--holdout-out must differ from the input and the output")


def _holdout_split(n, fraction, seed):
    """Rows kept for the fit: each row independently, with probability
    ``1 - fraction`` (Bernoulli sampling; ``doc/privacy.md``, "Held-out rows").

    Independent per-row coins, not a fixed-size split: the fit then reads a
    subsample whose rows are neighbours (or equal) whenever the inputs are,
    under either relation, so the fit's guarantee holds for the whole input.
    The coins come from ``seed`` (its own stream, not the fit's) or, without
    one, from the operating system.
    """
    rng = np.random.default_rng(None if seed is None else [seed, HOLDOUT_STREAM])
    return rng.random(n) >= fraction


#: Tags the seeded stream of the hold-out coins, apart from the fit's noise.
HOLDOUT_STREAM = 0x484F4C44


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


#: Said (once, before the fit) when ``synthesize`` has no ``--schema``.
NO_SCHEMA_WARNING = (
    "no --schema: pandas reads each column's type from its values, and a "
    "domain the method cannot learn privately is taken from the input itself: "
    "that part is NOT covered by the privacy guarantee. Declare the column "
    "types (and any public levels or bin edges) in a schema file (see "
    "'skdp-synth synthesize --help')."
)


#: Appended to the encoder's leak warning: where a schema file declares it.
FULL_SCHEMA_HINT = "the schema file's keys of the same names"
TYPES_ONLY_HINT = (
    'in the schema\'s "columns": a column\'s "levels", "bin_edges" or '
    '"missing"; a method with a budget (--epsilon) learns numeric domains '
    "privately, and with a --delta categorical levels too"
)


def _warn(message):
    """One warning line on standard error, in the CLI's format.

    Through ``tqdm.write`` when tqdm is installed, so that a progress bar on
    the terminal is not cut by the line.
    """
    line = f"skdp-synth: warning: {' '.join(str(message).split())}"
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - depends on the environment
        print(line, file=sys.stderr)
    else:
        tqdm.write(line, file=sys.stderr)


class _cli_warnings(warnings.catch_warnings):
    """Warnings shown as one ``skdp-synth: warning:`` line, not Python's format.

    They stay Python warnings (``warnings.catch_warnings(record=True)``, e.g.
    ``pytest.warns``, still records them): only ``warnings.formatwarning`` is
    replaced while the command runs, by a formatter that writes the CLI's
    line itself (through :func:`_warn`, so that a progress bar is not cut)
    and hands Python an empty text. Without a schema the encoder's
    :class:`~skdp_synth.exceptions.PrivacyLeakWarning` (which advises Python
    keyword arguments) is not repeated: :data:`NO_SCHEMA_WARNING` said it for
    the command line.
    """

    def __init__(self, *, schema_given, types_only=False):
        super().__init__()
        self.leaked = False  # a PrivacyLeakWarning was shown
        self.schema_given = schema_given
        self.hint = TYPES_ONLY_HINT if types_only else FULL_SCHEMA_HINT

    def __enter__(self):
        from ..exceptions import CoarseDomainWarning, PrivacyLeakWarning

        result = super().__enter__()
        warnings.simplefilter("always")
        self.leaked = False
        shown = warnings.showwarning  # restored by the base's __exit__

        def showwarning(message, category, *args, **kwargs):
            if issubclass(category, PrivacyLeakWarning):
                self.leaked = True
            return shown(message, category, *args, **kwargs)

        warnings.showwarning = showwarning

        def formatwarning(message, category, filename, lineno, line=None):
            if issubclass(category, PrivacyLeakWarning):
                if not self.schema_given:
                    return ""
                if "Declare them via" in str(message):
                    # the encoder's domains, said in Python keywords: where
                    # they go in the schema (not after a time zone's or a
                    # type's warning, which say it; a walk-through, round
                    # twenty)
                    message = f"{message} ({self.hint})"
            text = _in_schema_terms(str(message))
            if issubclass(category, CoarseDomainWarning) and "no level" in text:
                # a date read as text is a categorical column of many rare
                # levels: all "other" (a walk-through, round twenty)
                text += (
                    ' A column of dates is of type "datetime" in the schema; '
                    "without it, it is read as text."
                )
            _warn(text)
            return ""

        self._saved_format = warnings.formatwarning  # (not saved by the base)
        warnings.formatwarning = formatwarning
        return result

    def __exit__(self, *exc_info):
        warnings.formatwarning = self._saved_format
        return super().__exit__(*exc_info)


def _default_rows_note(args, fitted):
    """Why the row count is what it is, when ``--rows`` was not given."""
    if args.rows is not None:
        return ""
    if getattr(fitted, "neighbouring_", None) == "add-remove-one":
        return (
            " (no --rows: the method's released noisy row count; the exact "
            "count of the input is private under add/remove neighbours)"
        )
    return " (no --rows: the method's default row count)"


class _Steps:
    """Progress over named steps (tqdm when installed, else plain lines).

    A context manager: the bar is closed on the way out, so that an error
    line starts on a line of its own. With tqdm, the bar names the running
    step and its seconds so far, redrawn every ``TICK`` seconds by a daemon
    thread, so that a long fit is seen to be running (issue 24).
    """

    #: Seconds between redraws of the running step's time.
    TICK = 1.0

    def __init__(self, desc, names):
        self.desc, self.names, self.done = desc, list(names), 0
        self._started, self._stop, self._ticker = None, None, None
        try:
            from tqdm.auto import tqdm
        except ImportError:  # pragma: no cover - depends on the environment
            self.bar = None
        else:
            self.bar = tqdm(
                total=len(self.names), desc=desc, file=sys.stderr, disable=None
            )

    def __enter__(self):
        if self.bar is not None:
            import threading

            self._stop = threading.Event()
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()
        return self

    def _tick(self):
        while not self._stop.wait(self.TICK):
            self._show()

    def _show(self):
        started, done = self._started, self.done
        if started is None or not done:
            return
        seconds = time.perf_counter() - started
        self.bar.set_postfix_str(f"{self.names[done - 1]} {seconds:.0f} s")

    def step(self):
        """Start the next step (the previous one is done)."""
        name = self.names[self.done]
        if self.bar is None:  # pragma: no cover - depends on the environment
            print(
                f"[{self.desc}] {self.done + 1}/{len(self.names)} {name}",
                file=sys.stderr,
                flush=True,
            )
        else:
            if self.done:
                self.bar.update(1)
            self.bar.set_postfix_str(name)
        self._started = time.perf_counter()
        self.done += 1

    def __exit__(self, *exc_info):
        if self._stop is not None:
            self._stop.set()
            self._ticker.join()
        if self.bar is not None:
            if exc_info[0] is None and self.done:
                self.bar.update(1)
            else:
                self.bar.leave = False  # the error line alone, not a bar
            self.bar.close()
        return False


# ------------------------------------------------------------ out of core
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
            types = _numeric_types(_as_schema(schema), frame.columns)
            if not types:
                return frame
            meta = _with_types(frame._meta, types, path)
            return frame.map_partitions(_with_types, types, path, meta=meta)
        return _read_csv_chunks(path, schema, blocksize)


def _numeric_types(schema, columns):
    """``{column: "numeric" | "integer"}`` of a types-only schema."""
    return {
        c: t
        for c, t in (schema.types or {}).items()
        if c in columns and t in ("numeric", "integer")
    }


def _with_types(frame, types, where):
    """A chunk's numeric columns in the schema's dtypes (``float64``,
    ``Int64`` for ``integer``), as :func:`_read_csv` reads them in memory
    (out of core they were the dtypes pandas guessed: an ``integer`` column
    came back as bin midpoints 0.5, 1.5; a second walk-through, round
    seventeen)."""
    frame = frame.copy()
    for col, kind in types.items():
        frame[col] = _as_numbers(frame[col], col, where, integer=kind == "integer")
    return frame


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
    spec = (path, header, columns, options, declared, _numeric_types(schema, columns))
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

    path, header, columns, options, declared, types = spec
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
        frame = _with_types(frame, types, f"{path}, chunk {index}")
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
    # the private rows (a privacy audit, round eighteen)
    where = f"{path}, chunk {index}: rows with "
    if int(counts[bad[0]]) < width:
        raise CLIError(f"{where}fewer fields than the header's {width} (not shown)")
    raise CLIError(
        f"{where}more fields than the header's {width}, past column "
        f"{columns[-1]!r} (not shown)"
    )


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
    writes an integer column with missing values as floats; a walk-through,
    round nineteen, had a 0-7 ordinal refused for it) or ``"2.50"``, are the
    level, as are ``true``/``TRUE``/``1`` for a level ``True``; a missing marker
    is ``None``; anything else (``"1e0"``, ``" 4"``,
    ``"1.0000000000000001"``) stays as it is and is refused as undeclared
    later. Exact decimal equality: no rounding makes a cell a level."""
    from decimal import Decimal

    lookup = {str(v): v for v in levels if v is not None}
    # a true/false level in any case (R writes TRUE, JSON true; a
    # walk-through, round twenty)
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

    The table is read as a Dask DataFrame (:func:`_read_chunked`), encoded
    chunk by chunk from the declared schema, and the synthesizer fits from
    its sufficient statistics (one or two passes, each chunk validated;
    memory bounded by a few chunks, not by the table). The synthetic rows
    are drawn, decoded and written ``--chunk-rows`` at a time into a
    temporary file that is renamed onto the output only when complete: a bad
    chunk (in the input or the output) leaves no partial file.
    """
    import dask
    from dask.utils import parse_bytes

    from ..pipeline import make_synthesis_pipeline
    from ..preprocessing import BooleanEncoder

    if schema.types_only:
        dated = [c for c, t in schema.types.items() if t == "datetime"]
        if dated:
            raise CLIError(
                f"datetime columns {dated} are read in memory only: drop "
                "--out-of-core, or give them as numbers"
            )
        learned = [
            c
            for c in schema.types
            if c not in schema.levels() and c not in schema.encoder.get("bin_edges", {})
        ]
        if learned:
            raise CLIError(
                f"out of core, every column's domain must be public, and the "
                f'schema gives none for {learned}: "levels" for a categorical '
                'column, "bin_edges" for a numeric one (private domains are '
                "learned in memory only)"
            )
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
    pipe = make_synthesis_pipeline(encoder, estimator, domain_share=args.domain_share)
    shown = _cli_warnings(schema_given=True)  # (no NO_SCHEMA_WARNING here)
    with shown:
        t0 = time.perf_counter()
        progress = _TaskProgress("fit (chunks)")
        with dask.config.set(scheduler="threads"), progress.callback:
            pipe.fit(frame)
        fitted = pipe[-1]
        n_rows = fitted._check_sample_size(args.rows)
        written = _write_chunks(pipe, n_rows, args, schema)
        try:
            _write_release(pipe, args)
        except BaseException:
            os.remove(args.output)
            raise
        elapsed = time.perf_counter() - t0
    spent = _privacy_spent(pipe, shown.leaked)
    print(
        # not the number of input chunks: ceil(file bytes / blocksize), a
        # function of n without noise (a neighbour-diff audit, round nineteen)
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


def _with_decimals(frame, schema):
    """The schema's ``"decimals"`` columns rounded for writing."""
    if not schema.decimals:
        return frame
    frame = frame.copy()
    for col, k in schema.decimals.items():
        if col in frame.columns and frame[col].dtype.kind == "f":
            frame[col] = frame[col].round(k)
    return frame


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

        def write(fh):
            writer = None
            try:
                for frame in chunks:
                    table = pa.Table.from_pandas(frame, preserve_index=False)
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


def cmd_report(args):
    from ..report import fidelity_report

    schema = _load_schema(args.schema)
    for path in filter(None, (args.output, args.png)):
        _check_output_path(path)
    _check_distinct(
        [
            ("the real table", args.real),
            ("the synthetic table", args.synthetic),
            ("--release", args.release),
            ("--schema", args.schema),
            ("--real-train", args.real_train),
        ],
        [("-o", args.output), ("--png", args.png)],
    )
    if args.real_train is not None and args.target is None:
        # it was ignored (no model, no reference; a review, round nineteen)
        raise CLIError(
            "--real-train is the reference of a model's score: give the "
            "column it predicts with --target COLUMN"
        )
    if args.png:
        # before anything is read or written: no HTML left behind without PNG
        from ..report import _figure_class

        _figure_class()
    ds = tuple(int(k) for k in args.d.split(","))
    release = None
    if args.release is not None:
        from ..exceptions import MalformedReleaseError
        from ..release import Release

        try:
            release = Release.load(args.release)
        except (OSError, MalformedReleaseError) as exc:
            raise CLIError(f"--release: {exc}") from None  # exc names the file
    names = ["read the real table", "read the synthetic table", "compare", "write"]
    with _Steps("report", names) as steps:
        steps.step()
        real = _read_csv(args.real, schema)
        steps.step()
        synthetic = _read_csv(args.synthetic, schema)
        _check_release_matches(release, synthetic, args.release)
        steps.step()
        real_train = None
        if args.real_train is not None:
            real_train = _read_csv(args.real_train, schema)
        report = fidelity_report(
            real,
            synthetic,
            schema.encoder,
            d=ds,
            held_out=args.held_out,
            release=release,
            target=args.target,
            real_train=real_train,
        )
        steps.step()
        report.to_html(args.output)
        if args.png:
            try:
                report.plot(args.png)
            except BaseException:
                os.remove(args.output)  # no output on any failure
                raise
    print(
        f"wrote {args.output}{' and ' + args.png if args.png else ''}: score "
        f"{report.score:.3f} ("
        + ", ".join(f"average TV{d} {report.average_tv(d):.4f}" for d in report.tv)
        + (
            "), against held-out rows"
            if args.held_out
            else "), in-sample if the synthesizer was fitted on these real rows "
            "(synthesize --holdout, then report --held-out, scores on rows it "
            "never saw)"
        )
        + _model_note(report.model)
        + "; the report reads the real data and is NOT private",
        file=sys.stderr,
    )
    return 0


def _model_note(model):
    """The report's model score for the line ``report`` prints (it was on the
    page only; a walk-through, round nineteen)."""
    if model is None:
        return ""
    reference = (
        "the real training rows"
        if model.get("reference") == "real_train"
        else "half of REAL (a weaker reference; --real-train FILE for the "
        "like-for-like one)"
    )
    return (
        f"; a model of {model['target']} trained on the synthetic rows: "
        f"{model['metric']} {model['synthetic']:.3f}, trained on {reference}: "
        f"{model['real']:.3f}"
    )


def _reference_rows(X, rng):
    """Non-private references that frame the demo's numbers."""
    n = X.shape[0]
    bootstrap = X[rng.integers(0, n, size=n)]
    independent = (rng.random(X.shape) < X.mean(axis=0)).astype(X.dtype)
    return [
        ("real rows, bootstrap", "none (not private)", bootstrap),
        ("independent columns", "none (not private)", independent),
    ]


#: Above this epsilon the demo says the guarantee protects no one in practice
#: (a likelihood ratio of e^10, about 22,000, between neighbouring inputs).
VACUOUS_EPSILON = 10.0

#: The demo's tables: error columns are distances, so lower is better.
_ERROR_NOTE = "error (lower is better)"


def _demo_table(rows, labels):
    """Print ``(label, privacy, errors, seconds)`` rows under one header."""
    header = f"{'method':<26} {'privacy':<22} " + " ".join(f"{x:>7}" for x in labels)
    header += f" {'time':>8}"
    print(f"{'':<49}{_ERROR_NOTE:^23}")
    print(header)
    print("-" * len(header))
    for label, privacy, errs, elapsed in rows:
        t = f"{elapsed:7.2f}s" if elapsed else "      -"
        print(
            f"{label:<26} {privacy:<22} "
            + " ".join(f"{e:7.4f}" for e in errs)
            + f" {t}"
        )


def cmd_demo(args):
    from ..datasets import load_binary_digits
    from ..metrics import marginal_error
    from ._registry import METHODS, get_method

    X = load_binary_digits()
    names = sorted(METHODS) if args.methods is None else args.methods.split(",")
    methods = [get_method(name) for name in names]  # unknown names: exit 2 now
    rng = np.random.default_rng(args.seed)
    n, p = X.shape
    print(
        f"Part 1 -- every method on {n:,} images of handwritten digits (8x8 "
        f"pixels, each on or off: {p} yes/no columns).\nEach method makes {n:,} "
        "synthetic rows; the error is how far their 1-, 2- and 3-way tables are "
        "from the real ones\n(average over all tables, Boedihardjo2024 eq. 1.2; "
        "0 = identical, lower is better).\n"
    )
    rows = []
    for label, privacy, Y in _reference_rows(X, rng):
        rows.append((label, privacy, Y, 0.0, None))
    # the bar names the method being fitted (one takes minutes on 2 cores)
    with _Steps("methods", [m.name for m in methods]) as steps:
        for method in methods:
            steps.step()
            rows.append(_demo_row(method, X, args.seed))

    table = [
        (label, privacy, [marginal_error(X, Y, d) for d in (1, 2, 3)], elapsed)
        for label, privacy, Y, elapsed, _ in rows
    ]
    _demo_table(table, ["1-way", "2-way", "3-way"])
    if any(eps is not None and eps > VACUOUS_EPSILON for *_, eps in rows):
        print(
            f"\n[1] epsilon above {VACUOUS_EPSILON:g}: no meaningful protection. "
            "The private sampler pays epsilon for every row it releases;\n    "
            "shown for comparison (user guide: PrivateSampler)."
        )
    if not METHODS:
        print("\n(no synthesis methods registered yet)")
    else:
        _demo_conclusion(table, rows)
    if args.table != "none":
        return _demo_categorical(args.table, args.seed)
    return 0


def _demo_row(method, X, seed):
    """``(name, privacy, rows, seconds, epsilon_)`` of one method on ``X``."""
    est = method.build(random_state=seed, **method.demo_params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        est.fit(X)
        Y = np.asarray(est.sample(X.shape[0]))
        elapsed = time.perf_counter() - t0
    eps = getattr(est, "epsilon_", None)
    if eps is not None:
        privacy = f"eps={eps:.3g}"
        if est.delta_:
            privacy += f", delta={est.delta_:.0e}"
        if eps > VACUOUS_EPSILON:
            privacy = f"eps={eps:.1e} [1]"
    else:
        privacy = getattr(est, "privacy_summary_", "anonymity")
    return method.name, privacy, Y, elapsed, eps


def _demo_conclusion(table, rows):
    """One plain sentence on part 1: the best method with a real DP guarantee."""
    floor = table[0][2][1]
    private = [
        (errs[1], label)
        for (label, _, errs, _), (*_, eps) in zip(table, rows)
        if eps is not None and eps <= VACUOUS_EPSILON
    ]
    if not private:
        return
    best_err, best = min(private)
    print(
        f"\nIn short: of the methods with a meaningful differential-privacy "
        f"guarantee, {best} comes closest on the 2-way tables\n(error "
        f"{best_err:.4f}; {floor:.4f} for a random resample of the real rows, "
        "which protects no one)."
    )


def _demo_categorical(name, seed):
    """A real categorical table through the pipeline, against references.

    Rows from ``make_synthesis_pipeline(BooleanEncoder(categories=public),
    ProjectedGaussianRelease(epsilon=1, delta=1e-6, d=2))``, the release's own
    tables, the trivial private baseline (noisy independent 1-way marginals
    at the same budget) and the non-private sampling floor (n rows drawn from
    the real table). MST/AIM need their own environment: ``make
    bench-generator``.
    """
    from .. import ProjectedGaussianRelease, make_synthesis_pipeline
    from ..datasets import load_categorical_table
    from ..mechanisms import analytic_gaussian_sigma
    from ..metrics import marginal_error
    from ..preprocessing import BooleanEncoder

    try:
        df, cats = load_categorical_table(name)
    except ImportError as exc:
        print(f"\n(categorical demo skipped: {exc})")
        return 0
    n, p = df.shape
    eps, delta = 1.0, 1e-6
    rng = np.random.default_rng(seed)
    print(
        f"\nPart 2 -- a real table: {name}, {n:,} rows, {p} categorical columns "
        f"({min(map(len, cats.values()))} to {max(map(len, cats.values()))} "
        "declared levels each).\nThe error is the total variation distance "
        "between the real and the synthetic d-way tables, averaged over all "
        "tables\n(0 = identical, 1 = nothing in common; lower is better); "
        f"{n:,} synthetic rows each, epsilon=1, delta=1e-6.\n"
    )
    rows = []
    floor = df.iloc[rng.integers(0, n, n)].reset_index(drop=True)
    rows.append(("real rows, bootstrap", "none (not private)", floor, 0.0))
    # noisy independent 1-way marginals: the p count vectors have joint
    # l2-sensitivity sqrt(p) under add/remove
    t0 = time.perf_counter()
    sigma = analytic_gaussian_sigma(eps, delta, float(np.sqrt(p)))
    cols = {}
    for c in df.columns:
        counts = df[c].value_counts().reindex(cats[c], fill_value=0).to_numpy()
        noisy = np.clip(counts + rng.normal(0, sigma, counts.size), 0, None)
        prob = noisy / noisy.sum() if noisy.sum() > 0 else None
        cols[c] = rng.choice(np.asarray(cats[c], dtype=object), size=n, p=prob)
    rows.append(
        (
            "noisy 1-way, independent",
            "eps=1, delta=1e-06",
            pd_frame(cols, df.columns),
            time.perf_counter() - t0,
        )
    )
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories=cats),
        ProjectedGaussianRelease(epsilon=eps, delta=delta, d=2, random_state=seed),
    )
    t0 = time.perf_counter()
    synthetic = pipe.fit(df).sample(n)
    rows.append(
        (
            "gaussian-release rows",
            "eps=1, delta=1e-06",
            synthetic,
            time.perf_counter() - t0,
        )
    )
    table = [
        (label, privacy, [marginal_error(df, Y, d, kind="tv") for d in (1, 2, 3)], t)
        for label, privacy, Y, t in rows
    ]
    _demo_table(table, ["TV1", "TV2", "TV3"])
    boot, base, release = (errs for _, _, errs, _ in table)
    print(
        f"\nIn short: at the same budget, the release's rows keep the 2-way "
        f"tables {base[1] / max(release[1], 1e-12):.0f} times closer than "
        f"independent noisy columns (TV2 {release[1]:.4f} vs {base[1]:.4f})."
    )
    below = [f"{d}-way" for d in (1, 2) if release[d - 1] < boot[d - 1]]
    if below:
        print(
            f"They even come below the resample of the real rows on the "
            f"{' and '.join(below)} tables: the release measures exactly those\n"
            "tables and fits its rows to them, with no random draw of rows, "
            "while a resample of n rows carries sampling error.\nOn 3-way "
            "tables, which it does not measure, "
            + (
                "the resample is closer."
                if boot[2] < release[2]
                else "it is still as close as the resample."
            )
        )
    print(
        "\nMST and AIM on the same tables: make bench-generator (benchmarks/README.md)"
    )
    return 0


def pd_frame(columns, order):
    import pandas as pd

    return pd.DataFrame({c: columns[c] for c in order})


def _split_counts(data, column):
    """``(cells, counts)``: the table without its counts column, and the counts.

    ``--counts COLUMN``: every line of the input is a cell of a contingency
    table and ``COLUMN`` holds how many records it stands for; the cells are
    fitted with these counts (``fit(X, sample_weight=counts)``), never
    expanded.
    """
    from ..validation import check_counts

    if column not in data.columns:
        raise CLIError(f"--counts: the input has no column {column!r}")
    counts = data[column].to_numpy()
    try:
        counts = check_counts(counts, len(counts))
    except ValueError as exc:
        raise CLIError(f"--counts {column}: {exc}") from None
    return data.drop(columns=[column]), counts


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Examples kept as written; every option with a default says it."""

    def _get_help_string(self, action):
        text = action.help or ""
        if (
            "%(default)" not in text
            and "default" not in text
            and action.option_strings
            and action.default not in (None, False, argparse.SUPPRESS)
        ):
            text += " (default: %(default)s)"
        return text


SCHEMA_HELP = """\
The schema file (JSON; YAML with PyYAML) says what each column is. The
short form lists the type of every column, with what is public about it:

  {"columns": {"age": {"type": "numeric", "bounds": [0, 120]},
               "sex": {"type": "categorical", "levels": ["F", "M"]},
               "region": "categorical",
               "education": {"type": "ordinal",
                             "levels": ["none", "school", "degree"]},
               "hired": {"type": "datetime", "unit": "D"}}}

numeric: private bounds and bins, paid from --epsilon ("bounds": public
bounds, "bin_edges": public bins, "integer": true for whole numbers);
categorical: its "levels" (null: it may be missing), or its frequent levels
discovered privately (needs --delta; rare ones become "other"); ordinal:
its "levels", in order; datetime: ISO 8601 dates or times as whole "unit"s
("D", "h", "min" or "s", the default), "bounds"/"bin_edges" as ISO strings;
any column: "missing": true or false. The other
form gives the full public domain as the arguments of
skdp_synth.preprocessing.BooleanEncoder ("categories", "ordinal",
"bin_edges", "missing"): doc/user_guide/cli.md."""


class _UsageError(Exception):
    """A command line argparse refused: shown as the CLI's one error line."""


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors are the CLI's one line (exit status
    2) naming the command and where its help is, not a usage block followed
    by the error (a walk-through: every usage or data error was promised
    one line, and usage errors printed three or four)."""

    def error(self, message):
        command = self.prog.partition(" ")[2]
        where = f"{command}: " if command else ""
        raise _UsageError(f"{where}{message} (see '{self.prog} --help')")


def _sub(sub, name, help, example, epilog=""):
    return sub.add_parser(
        name,
        help=help,
        description=help[:1].upper() + help[1:] + ".",
        epilog="example:\n  " + example + ("\n\n" + epilog if epilog else ""),
        formatter_class=_HelpFormatter,
    )


def build_parser():
    from .. import __version__

    parser = _Parser(
        prog="skdp-synth",
        description="Provably private synthetic data from the command line.",
        epilog="examples:\n"
        "  skdp-synth list\n"
        "  skdp-synth synthesize people.csv --schema schema.json "
        "--method gaussian-release \\\n"
        "      --epsilon 1 --delta 1e-6 -o synthetic.csv\n"
        "  skdp-synth report heldout.csv synthetic.csv --held-out "
        "--schema schema.json -o report.html\n"
        "  skdp-synth demo\n\n"
        "'skdp-synth COMMAND --help' for a command's options and an example.\n"
        "Exit status: 0 on success; 2 on a usage or data error (one line\n"
        "'skdp-synth: error: ...', nothing written); 130 when interrupted.",
        formatter_class=_HelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {__version__}"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p_list = _sub(
        sub,
        "list",
        "list the synthesis methods (* marks the recommended one)",
        "skdp-synth list",
    )
    p_list.set_defaults(func=cmd_list)

    p_syn = _sub(
        sub,
        "synthesize",
        "synthesize a CSV file",
        "skdp-synth synthesize people.csv --schema schema.json "
        "--method gaussian-release \\\n"
        "      --epsilon 1 --delta 1e-6 --holdout 0.2 --holdout-out heldout.csv "
        "-o synthetic.csv",
        SCHEMA_HELP,
    )
    p_syn.add_argument("input", help="input CSV file (or Parquet, out of core)")
    p_syn.add_argument(
        "--method", required=True, help="synthesis method (see 'skdp-synth list')"
    )
    p_syn.add_argument(
        "--epsilon",
        type=float,
        default=None,
        help="privacy budget (default: the method's own)",
    )
    p_syn.add_argument(
        "--delta",
        type=float,
        default=None,
        help="delta, for (epsilon, delta)-DP (default: the method's own)",
    )
    p_syn.add_argument(
        "--rows",
        type=_positive_int,
        default=None,
        help="synthetic rows (default: the method's own; for a method private "
        "under add/remove neighbours, the noisy row count it released, since "
        "the exact count of the input is private)",
    )
    p_syn.add_argument("-o", "--output", required=True, help="output CSV file")
    p_syn.add_argument(
        "--schema",
        default=None,
        help="JSON/YAML file with the public domain (see below; without it the "
        "domain is read from the data, which is not private)",
    )
    p_syn.add_argument(
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="estimator parameter, repeatable (e.g. --param d=3)",
    )
    p_syn.add_argument(
        "--domain-share",
        type=_domain_share,
        default="auto",
        metavar="SHARE",
        help="share of epsilon (and of delta where levels are discovered) paid "
        "for the domains the schema does not give: a number in (0, 1), or "
        "auto, make_synthesis_pipeline's domain_share (default: auto)",
    )
    p_syn.add_argument(
        "--seed",
        type=int,
        default=None,
        help="integer seed: reproducible but NOT hardened noise (default: none, "
        "secure noise)",
    )
    p_syn.add_argument(
        "--holdout",
        type=float,
        default=None,
        metavar="FRACTION",
        help="keep about this fraction of the rows (each row by its own coin) "
        "out of the fit, and write them to --holdout-out: real rows to score "
        "the synthetic ones against ('report --held-out')",
    )
    p_syn.add_argument(
        "--holdout-out",
        default=None,
        metavar="FILE",
        help="CSV file for the held-out rows (real data: NOT private)",
    )
    p_syn.add_argument(
        "--train-out",
        default=None,
        metavar="FILE",
        help="with --holdout: also write the rows that were fitted, for "
        "'report --real-train FILE' (the like-for-like reference of a "
        "model's score; real data: NOT private)",
    )
    p_syn.add_argument(
        "--release-out",
        default=None,
        metavar="FILE",
        help="also write the method's release (.npz: what it measured and "
        "the guarantee, the whole epsilon and delta spent), the file to "
        "publish; 'report --release FILE' puts its guarantee on the page",
    )
    p_syn.add_argument(
        "--counts",
        default=None,
        metavar="COLUMN",
        help="the input is a contingency table: each line a cell, COLUMN its "
        "count of records (fitted as counts, never expanded; in-memory fits "
        "with methods that take sample_weight; the schema declares every "
        'domain, "levels" or "bin_edges", and lists COLUMN as numeric)',
    )
    p_syn.add_argument(
        "--out-of-core",
        action="store_true",
        help="read, fit and write in chunks (needs the dask extra and a --schema "
        "declaring every column); implied by a Parquet input or output",
    )
    p_syn.add_argument(
        "--blocksize",
        default="64MB",
        help="CSV bytes per input chunk out of core (Parquet chunks are its row "
        "groups)",
    )
    p_syn.add_argument(
        "--chunk-rows",
        type=int,
        default=100_000,
        help="synthetic rows drawn and written per output chunk, out of core",
    )
    p_syn.set_defaults(func=cmd_synthesize)

    p_sam = _sub(
        sub,
        "sample",
        "draw rows of the table from a release file alone (free: post-processing)",
        "skdp-synth sample release.npz --rows 10000 -o synthetic.csv",
        "The release is what 'synthesize --release-out FILE' wrote: the noisy "
        "measurements, the decoder (levels, private bins, dtypes) and the "
        "guarantee. Sampling reads nothing else and spends nothing.",
    )
    p_sam.add_argument(
        "release", help="release file (.npz) from synthesize --release-out"
    )
    p_sam.add_argument(
        "--rows",
        type=_positive_int,
        default=None,
        help="rows to draw (default: the release's own public number, where "
        "it fixes one)",
    )
    p_sam.add_argument("-o", "--output", required=True, help="output CSV file")
    p_sam.add_argument(
        "--seed", type=int, default=None, help="integer seed (default: none)"
    )
    p_sam.add_argument(
        "--decimals",
        type=_decimals,
        default=None,
        metavar="K",
        help="write every non-integer numeric column with K decimals (as a "
        'schema\'s "decimals" does for synthesize; default: full floats)',
    )
    p_sam.set_defaults(func=cmd_sample)

    p_rep = _sub(
        sub,
        "report",
        "fidelity report of synthetic rows against the real table (NOT private)",
        "skdp-synth report heldout.csv synthetic.csv --held-out --schema "
        "schema.json -o report.html --png report.png",
        "The report reads the real table: keep it with the real data. Scored "
        "against the rows the synthesizer was fitted on, it is in-sample: "
        "hold rows out with 'synthesize --holdout 0.2 --holdout-out "
        "heldout.csv', then 'report heldout.csv synthetic.csv --held-out'.",
    )
    p_rep.add_argument("real", help="real CSV file")
    p_rep.add_argument("synthetic", help="synthetic CSV file, same columns")
    p_rep.add_argument(
        "--schema",
        default=None,
        help="JSON/YAML file with the public domain (as for synthesize)",
    )
    p_rep.add_argument(
        "--held-out",
        action="store_true",
        help="REAL holds rows the fit never saw (synthesize --holdout-out): "
        "the scores are out-of-sample, and the page says so (without it, it "
        "says that scores on the fitted rows are in-sample)",
    )
    p_rep.add_argument(
        "--release",
        default=None,
        metavar="FILE",
        help="the release 'synthesize --release-out' wrote: the page states its "
        "privacy guarantee (without it: not known)",
    )
    p_rep.add_argument(
        "--target",
        default=None,
        metavar="COLUMN",
        help="also train a model predicting COLUMN on the synthetic rows and "
        "score it on the real ones (the page gives the real-trained reference)",
    )
    p_rep.add_argument(
        "--real-train",
        default=None,
        metavar="FILE",
        help="with --target: the real rows the synthesizer was fitted on, so "
        "the reference is the same model trained on them (else on half of REAL)",
    )
    p_rep.add_argument("-o", "--output", required=True, help="output HTML file")
    p_rep.add_argument(
        "--png",
        default=None,
        help="also write the figure as PNG (needs matplotlib: in a clone, "
        "pip install -e '.[plot]')",
    )
    p_rep.add_argument("--d", default="1,2", help="table degrees, comma-separated")
    p_rep.set_defaults(func=cmd_report)

    p_demo = _sub(
        sub,
        "demo",
        "run every method on the embedded digits data, then on a real table",
        "skdp-synth demo --methods damped,gaussian-release --table none",
    )
    p_demo.add_argument(
        "--methods", default=None, help="comma-separated subset (default: all)"
    )
    p_demo.add_argument("--seed", type=int, default=0, help="seed of every method")
    p_demo.add_argument(
        "--table",
        default="nass_cds",
        help="real categorical table for the second part (mpls_stops, nass_cds, "
        "diamonds; 'none' to skip; needs the datasets extra)",
    )
    p_demo.set_defaults(func=cmd_demo)
    return parser


#: The encoder's remedies in Python terms, said in the schema file's.
_SCHEMA_TERMS = {
    "declare it (missing={column: True})": 'declare it in the schema: "missing": true',
    "Declare their domains (bin_edges= or bounds=, categories=)": (
        'Declare their domains in the schema ("bin_edges" or "bounds", "levels")'
    ),
    "declare it (None among its categories or ordinal levels, or "
    "missing={column: True})": (
        'declare it in the schema: null among its "levels", or "missing": true'
    ),
    "declare it (missing={column: True}, or None among its categories or "
    "ordinal levels)": (
        'declare it in the schema: "missing": true, or null among its "levels"'
    ),
}


def _in_schema_terms(text):
    """The library's remedies said in the schema file's terms."""
    for python, schema in _SCHEMA_TERMS.items():
        text = text.replace(python, schema)
    return text


def _error(message):
    """The CLI's one error format (as argparse's): one line, exit status 2."""
    print(f"skdp-synth: error: {message}", file=sys.stderr)
    return 2


def main(argv=None):
    """Entry point of the ``skdp-synth`` console script."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except _UsageError as exc:
        return _error(str(exc))
    try:
        return args.func(args)
    except UnicodeDecodeError:
        # str(exc) quotes the byte and its position in the private file
        return _error(
            "the input is not UTF-8 text (the byte and its position are not "
            "shown: they may be private); convert the file to UTF-8"
        )
    except (ValueError, TypeError, OSError, ImportError) as exc:
        # every user error (bad file, parameter, schema, budget, data) is one
        # line and exit status 2; no traceback
        text = _in_schema_terms(" ".join(str(exc).split()))
        return _error(text or type(exc).__name__)
    except SystemExit as exc:
        # a helper's SystemExit("message"): the same line and status as any
        # other usage or data error (SystemExit's own convention is status 1)
        if isinstance(exc.code, str):
            return _error(" ".join(exc.code.split()))
        raise
    except KeyboardInterrupt:
        print(
            "skdp-synth: interrupted (no partial output left behind)", file=sys.stderr
        )
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
