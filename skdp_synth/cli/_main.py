"""``skdp-synth``: draft a schema, synthesize a CSV file, report on one, list the
methods, run the demo.

Examples (shell)::

    skdp-synth list
    skdp-synth schema people.csv -o schema.json
    skdp-synth synthesize people.csv --method gaussian-release --epsilon 1 \\
        --delta 1e-6 --schema schema.json --holdout 0.2 \\
        --holdout-out heldout.csv -o synthetic.csv
    skdp-synth report heldout.csv synthetic.csv --held-out --schema schema.json \\
        -o report.html --png report.png
    skdp-synth demo

The schema file (JSON, or YAML when PyYAML is installed) says what each
column is: its type only, with what is public about it (the rest is learned
privately from the same budget; :mod:`skdp_synth.cli._schema`)::

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

import sys

from ._console import _error, _in_schema_terms
from ._parser import _UsageError, build_parser

__all__ = ["main"]


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
