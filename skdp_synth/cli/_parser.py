"""The command line's grammar: ``build_parser`` and its argument types.

Argument types check values when the command line is read (before any fit
spends the budget), and the parser's own errors are the CLI's one line with
exit status 2 (:class:`_Parser`). The parser binds each subcommand to its
``cmd_*`` function, so it sits above the commands.
"""

from __future__ import annotations

import argparse

from ._commands import cmd_list, cmd_report, cmd_sample, cmd_synthesize
from ._demo import cmd_demo
from ._schema_draft import cmd_schema


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


def _decimals(text):
    """``sample --decimals``: a whole number of decimals, 0 to 15."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 <= value <= 15:
        raise argparse.ArgumentTypeError(f"must be between 0 and 15, got {value}")
    return value


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
duration: time spans ("1 days 02:00:00", or ISO 8601 "PT30M") as whole
"unit"s, "bounds"/"bin_edges" as ISO 8601 durations ("P1D"); any column:
"missing": true or false. A "rules" list beside "columns" declares public
rules every row keeps, free in epsilon ("derived",
"inequality", "implies", "structural_zero", "fixed_combinations":
doc/user_guide/rules.md). The other
form gives the full public domain as the arguments of
skdp_synth.preprocessing.BooleanEncoder ("categories", "ordinal",
"bin_edges", "missing"): doc/user_guide/cli.md."""


class _UsageError(Exception):
    """A command line argparse refused: shown as the CLI's one error line."""


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors are the CLI's one line (exit status
    2) naming the command and where its help is, not a usage block followed
    by the error: every usage or data error is one line (argparse's own
    would print three or four)."""

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
        "  skdp-synth schema people.csv -o schema.json   # then fill in its types\n"
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
        "--chunk-rows",
        type=_positive_int,
        default=100_000,
        metavar="K",
        help="rows drawn and written per chunk: memory is bounded by a few "
        "chunks, not by --rows (default: 100000)",
    )
    p_sam.add_argument(
        "--decimals",
        type=_decimals,
        default=None,
        metavar="K",
        help="write the non-integer numeric columns with K decimals, those "
        'the "decimals" of the release or of --schema do not name (default: '
        "full floats)",
    )
    p_sam.add_argument(
        "--schema",
        default=None,
        help='JSON/YAML schema file whose per-column "decimals" format the '
        "output (default: those the release holds, written there by "
        "'synthesize --schema ... --release-out') and whose \"rules\" every "
        "row keeps (repaired after drawing); nothing else of it is used",
    )
    p_sam.add_argument(
        "--given",
        action="append",
        default=None,
        metavar="COLUMN=VALUE",
        help="draw only rows with this value (repeat for more columns; the "
        "same column twice: either value); a numeric or date column takes a "
        "range LO..HI (either end may be left out). Rows come from the "
        "release's conditional distribution, every one matching (free: "
        "post-processing)",
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
        help="the real rows the synthesizer was fitted on: the independent-"
        "columns reference is drawn from them (else from half of REAL, scored "
        "on the other half, with --held-out), and with --target the model's "
        "reference is trained on them (else on half of REAL)",
    )
    p_rep.add_argument("-o", "--output", required=True, help="output HTML file")
    p_rep.add_argument(
        "--png",
        default=None,
        help="also write the figure as PNG (needs matplotlib: in a clone, "
        "pip install -e '.[plot]')",
    )
    p_rep.add_argument(
        "--json",
        default=None,
        metavar="FILE",
        help="also write the report's content as JSON (the verdict, its "
        "references, the alerts, every column's shares), for a CI to read",
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

    # ``schema``: a draft of the schema file from the header (its own block)
    p_schema = _sub(
        sub,
        "schema",
        "draft the schema file of a CSV file from its header (of a Parquet file "
        "from its column types), for you to complete",
        "skdp-synth schema people.csv -o schema.json",
        epilog='Reads the header line only: every column gets the type "?", '
        "which\nthe other commands refuse until you replace it. --guess-types "
        "fills in\nthe types pandas infers from the first rows instead (guesses "
        "from the\ndata, said so). A Parquet file's draft takes the types stored "
        "in its\nfooter and reads no row. No value, level or bound is ever written.",
    )
    p_schema.add_argument(
        "input",
        help="the CSV file (only its header is read) or Parquet file or folder "
        "(only its schema is read)",
    )
    p_schema.add_argument(
        "-o",
        "--output",
        default=None,
        help="write the draft here (never over an existing file); default: "
        "standard output",
    )
    p_schema.add_argument(
        "--guess-types",
        action="store_true",
        help="take each column's type from the dtypes pandas infers from the "
        "first --guess-rows rows: guesses from the data, to be checked",
    )
    p_schema.add_argument(
        "--guess-rows",
        type=_positive_int,
        default=1000,
        metavar="ROWS",
        help="how many rows --guess-types reads",
    )
    p_schema.set_defaults(func=cmd_schema)
    return parser
