"""The commands ``list``, ``synthesize``, ``sample`` and ``report``.

Each ``cmd_*`` takes the parsed arguments and returns the exit status; user
errors are raised as :class:`~skdp_synth.cli._console.CLIError` for
``main`` to report. The hold-out split (``synthesize --holdout``,
:func:`_holdout_split`) and the ``--counts`` and ``--param`` readers belong to
these commands. The demo is in :mod:`skdp_synth.cli._demo`.
"""

from __future__ import annotations

import ast
import os
import sys
import time

import numpy as np

from ._console import (
    NO_SCHEMA_WARNING,
    CLIError,
    _cli_warnings,
    _privacy_spent,
    _Steps,
    _usage_error,
    _warn,
)
from ._csv import _read_csv, _warn_inferred_types
from ._out_of_core import _is_parquet, _synthesize_out_of_core
from ._output import (
    STDOUT,
    _check_distinct,
    _check_output_path,
    _shown,
    _with_decimals,
    _write_csv_atomically,
    _write_csv_chunks,
    _write_release,
    _write_rows,
)


def _parse_params(items):
    params = {}
    for item in items or []:
        if "=" not in item:
            _usage_error(f"--param expects key=value, got {item!r}")
        key, value = item.split("=", 1)
        key = key.strip()
        if key in _OWN_OPTIONS:
            # otherwise Python's "Method.build() got multiple values for
            # keyword argument 'epsilon'"
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


def _load_schema(path):
    """The schema file as a :class:`~skdp_synth.cli._schema.Schema` (both forms)."""
    from ._schema import load_schema

    return load_schema(path)


def cmd_list(args):
    """The methods as "which method when" orders and words them (the
    registry's ``need`` and ``sizes``, as README.md and the docs print
    them): the start-here one first."""
    from ._registry import METHODS, which_method_when

    if not METHODS:
        print("no methods registered")
        return 0
    width = max(len(n) for n in METHODS) + 2
    print("Which method when (the one to start with first):\n")
    for method in which_method_when():
        mark = " *" if method.recommended else ""
        name = method.name
        print(f"{name + mark:<{width}}  {method.guarantee:<20}  {method.summary}")
        if method.need:
            print(f"    for: {method.need}")
        if method.sizes:
            print(f"    table size: {method.sizes}")
    if any(m.recommended for m in METHODS.values()):
        print(
            "\n* recommended: start with it on a categorical table "
            "(skdp-synth synthesize --help has an example)"
        )
    return 0


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
    # the parameters before any cell is read: otherwise --epsilon -1 with a
    # bad cell is refused for the cell, not for the parameter
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
        if schema.rules:
            raise CLIError(
                '--schema\'s "rules" need an in-memory fit: drop --out-of-core '
                "/ Parquet"
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
            encoder,
            estimator,
            domain_share=args.domain_share,
            rules=list(schema.rules) or None,
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
            _write_release(pipe, args, schema)
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
        # a command that runs as pasted: with -o, the release just
        # written, --schema and --target
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


def _check_release_matches(release, synthetic, path, derived=()):
    """``report --release``: a pipeline's release names its table's columns
    (its decoder); the page states its guarantee only for a table with those
    columns (otherwise any release would be believed, and the page would
    state an unrelated release's ε). ``derived``: the schema's derived
    columns, computed after sampling and never in the release, allowed
    besides them."""
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
    derived = {str(c) for c in derived}
    if columns != [str(c) for c in synthetic.columns if str(c) not in derived]:
        raise CLIError(
            f"--release {path} is the release of a table with columns "
            f"{columns}, not of the synthetic table's {list(synthetic.columns)}"
        )


def cmd_sample(args):
    """Rows of the table drawn from a release file alone (post-processing),
    drawn, decoded and written ``--chunk-rows`` at a time: memory is bounded
    by a few chunks whatever ``--rows`` is."""
    from ..exceptions import MalformedReleaseError
    from ..release import Release

    _check_output_path(args.output, stdout=True)
    _check_distinct(
        [("the release", args.release), ("--schema", getattr(args, "schema", None))],
        [("-o", args.output)],
    )
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
    decimals = _sample_decimals(release, args)
    given = _parse_given(getattr(args, "given", None))
    rules = _sample_rules(release, args, given)
    t0 = time.perf_counter()
    try:
        chunks = release.iter_sample(
            args.rows, chunk_rows=args.chunk_rows, random_state=args.seed, given=given
        )
    except ValueError as exc:
        if given is None:
            raise
        raise CLIError(str(exc)) from None  # it names the condition
    if rules is not None:
        # one stream for every chunk's redraws (the rules act row by row)
        rng = np.random.default_rng(
            None if args.seed is None else [RULES_STREAM, args.seed]
        )
        chunks = (rules.enforce(frame, random_state=rng) for frame in chunks)
    written = _write_csv_chunks(
        (_rounded(frame, decimals, args.decimals) for frame in chunks), args.output
    )
    g = release.guarantee
    print(
        f"wrote {written} rows to {_shown(args.output)} in "
        f"{time.perf_counter() - t0:.1f} s; post-processing of the release, "
        f"covered by its guarantee (epsilon={g.epsilon:g}, delta={g.delta:g}, "
        f"{g.neighbouring})",
        file=sys.stderr,
    )
    return 0


#: The stream of ``sample --schema``'s rule repairs (apart from the draws').
RULES_STREAM = 0x52554C45


def _sample_rules(release, args, given):
    """``sample --schema`` with ``"rules"``: the rule set every written row
    keeps (repaired chunk by chunk, post-processing), bound to the table's
    columns -- the release's, with the derived ones (recomputed) where the
    types-only schema lists them, else after the release's."""
    if getattr(args, "schema", None) is None:
        return None
    schema = _load_schema(args.schema)
    if not schema.rules:
        return None
    from ..rules import RuleSet

    if given is not None:
        raise CLIError(
            '--given with --schema\'s "rules": draw conditional rows that keep '
            "the rules from the fitted pipeline in Python "
            "(pipe.sample(n, given=...) with rules=)"
        )
    columns = [str(spec["name"][-1]) for spec in release.plan["decoder"]["specs"]]
    derived = [r.column for r in schema.rules if r.kind == "derived"]
    order = list(schema.types) if schema.types_only else columns + derived
    missing = sorted(set(order) - set(columns) - set(derived))
    if missing:
        raise CLIError(
            f"--schema lists {missing}, which the release {args.release} has "
            f"no column of (its columns: {columns})"
        )
    try:
        return RuleSet(schema.rules, columns=order)
    except ValueError as exc:
        raise CLIError(f'--schema\'s "rules": {exc}') from None


def _parse_given(items):
    """``sample --given COLUMN=VALUE`` (repeated) as ``Release.sample``'s
    ``given``: one dict, a column given twice taking either value."""
    if not items:
        return None
    given = {}
    for item in items:
        column, sep, value = item.partition("=")
        if not sep or not column:
            raise CLIError(f"--given {item!r}: write COLUMN=VALUE or COLUMN=LO..HI")
        if column in given:
            held = given[column]
            given[column] = [*(held if isinstance(held, list) else [held]), value]
        else:
            given[column] = value
    return given


def _sample_decimals(release, args):
    """``{column: k}``: the per-column "decimals" ``sample`` writes with --
    ``--schema``'s when given (every column it names must be the
    release's), else those ``synthesize --release-out`` put in the release's
    plan; ``sample --decimals K`` rounds the float columns neither names."""
    from ._output import _release_decimals

    stored = _release_decimals(release, args.release)
    if getattr(args, "schema", None) is None:
        return stored
    schema = _load_schema(args.schema)
    decimals = schema.decimals
    columns = [str(spec["name"][-1]) for spec in release.plan["decoder"]["specs"]]
    # a derived column is not the release's: it is recomputed from the rules
    columns += [r.column for r in schema.rules if r.kind == "derived"]
    unknown = sorted(set(decimals) - set(columns))
    if unknown:
        raise CLIError(
            f"--schema gives decimals for {unknown}, which the release "
            f"{args.release} has no column of (its columns: {columns})"
        )
    return decimals


def _rounded(rows, decimals, default=None):
    """One chunk of rows as a DataFrame, its float columns rounded: those
    ``decimals`` names (``{column: k}``) to their ``k``, the others to
    ``sample --decimals``'s ``default`` (unless ``None``)."""
    import pandas as pd

    from ._output import _round_columns

    if not isinstance(rows, pd.DataFrame):
        rows = pd.DataFrame(rows)
    return _round_columns(rows, decimals, default)


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


def cmd_report(args):
    from ..report import fidelity_report

    schema = _load_schema(args.schema)
    json_out = getattr(args, "json", None)
    for path in filter(None, (args.output, args.png, json_out)):
        _check_output_path(path)
    _check_distinct(
        [
            ("the real table", args.real),
            ("the synthetic table", args.synthetic),
            ("--release", args.release),
            ("--schema", args.schema),
            ("--real-train", args.real_train),
        ],
        [("-o", args.output), ("--png", args.png), ("--json", json_out)],
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
        _check_release_matches(
            release,
            synthetic,
            args.release,
            [r.column for r in schema.rules if r.kind == "derived"],
        )
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
            # the schema's "rules": each tested on the synthetic rows
            rules=list(schema.rules),
        )
        steps.step()
        report.to_html(args.output)
        written = [args.output]
        try:
            if args.png:
                report.plot(args.png)
                written.append(args.png)
            if json_out:
                report.to_json(json_out)
                written.append(json_out)
        except BaseException:
            for path in written:
                os.remove(path)  # no output on any failure
            raise
    print(
        f"wrote {' and '.join(written)}: score "
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
    print(report.verdict, file=sys.stderr)
    for alert in report.alerts:
        print(f"  alert ({alert.kind}): {alert.message}", file=sys.stderr)
    return 0


def _model_note(model):
    """The report's model score for the line ``report`` prints (not on the
    page only)."""
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
