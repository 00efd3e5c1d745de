"""How far the released bins leave a numeric column's spread open, against
how far the rows' spread is off: the measurement behind
``skdp_synth.preprocessing._spread.NAME_UNRESOLVED_SPREAD`` (off by
default) and its ``UNRESOLVED_SPREAD_RATIO``.

``run -- ARGS``: ``benchmarks.bench_suite`` (``ARGS``: its own options; a
cache of its own) with the unresolved-spread rule off
(``_spread.NAME_UNRESOLVED_SPREAD = False``, so the rows and every other
warning are the library's) and, for every numeric column the release
checks, one JSON line in ``--log`` (or ``$UNRESOLVED_LOG``): the table, ε,
seed, column, and :func:`~skdp_synth.preprocessing._spread.unresolved_spread`
of its release pieces -- the rows' std as the decoder draws them over
:func:`~skdp_synth.preprocessing._spread.least_spread` of the pieces.

``grid --log L1,L2 --cache C1,C2 [--ratios 2.5,4,...]``: joins the logs with
the caches' ``auto`` records and prints, at each ratio, how many column-fits
the rule would name among those no warning named: with a std ratio (rows
against held-out rows) above 2, under 0.5 (split by whether the rows the
release cannot see explain it, ``bench_suite.silent``'s ``std_seen``), and
within ``[0.5, 2]``.

The split that set the ratio (TUNE half, two processes, about 10 minutes)::

    python -m benchmarks.bench_unresolved_spread run --log A.jsonl -- \\
        --half tune --tables credit,hmda,cps1988,acs12,attrition,movies,storms,\\
    benefits,chile,fertil2 --eps 0.3,1 --seeds 10 --methods auto --tv-only \\
        --cache A-cache.jsonl
    python -m benchmarks.bench_unresolved_spread run --log B.jsonl -- \\
        --half tune --tables loans,credit_card,nmes1988,workinghours,baseball,\\
    deliveries,flchain,loanapp,nhefs --eps 0.3,1 --seeds 10 --methods auto \\
        --tv-only --cache B-cache.jsonl
    python -m benchmarks.bench_unresolved_spread grid --log A.jsonl,B.jsonl \\
        --cache A-cache.jsonl,B-cache.jsonl

The real rows only score the release; nothing here feeds back into a fit.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections import Counter

RATIOS = (2.5, 4.0, 6.0, 8.0, 16.0)


def run(log, suite_args):
    """``bench_suite`` with the rule off and every spread check logged."""
    import benchmarks.bench_suite as suite
    import skdp_synth.preprocessing._decoding as decoding
    from skdp_synth.preprocessing import _spread

    _spread.NAME_UNRESOLVED_SPREAD = False
    where = {}
    one = suite._one

    def _one(rec, ctx, name, cap):
        where.update(table=name, eps=rec["eps"], seed=rec["seed"], method=rec["method"])
        return one(rec, ctx, name, cap)

    reasons = decoding.spread_reasons

    def logged(spec, shares, estimates=None, moments=None):
        once = _spread.drawn_once(moments)  # the decoder's moments, drawn once
        out = reasons(spec, shares, estimates, None if moments is None else once)
        pieces = _spread.release_pieces(spec, shares, estimates)
        if pieces is not None:
            ratio = _spread.unresolved_spread(pieces, shares, once())
            row = dict(where, col=str(spec.name), ratio=float(ratio), named=bool(out))
            with open(log, "a") as f:
                f.write(json.dumps(row) + "\n")
        return out

    suite._one = _one
    decoding.spread_reasons = logged
    suite.main(suite_args)


def _lines(paths):
    """The JSON records of the JSON-lines files ``paths``."""
    for path in paths:
        with open(path) as f:
            for line in f:
                yield json.loads(line)


def _records(caches):
    return {
        (r["table"], r["eps"], r["seed"]): r
        for r in _lines(caches)
        if r.get("method") == "auto" and "num" in r and not r.get("dnf")
    }


def _ratios(logs):
    """The last logged ratio of each (table, ε, seed, column) of ``auto``."""
    return {
        (r["table"], r["eps"], r["seed"], r["col"]): r["ratio"]
        for r in _lines(logs)
        if r.get("method") == "auto"
    }


def classify(rec, col):
    """``'named'``, ``'in band'``, ``'above 2'``, ``'under 0.5, unseen'``
    (the held-out rows the release cannot see explain it) or ``'under
    0.5'``; ``None`` for a column the record has no std ratio of."""
    s = rec["num"]["std"].get(col)
    if s is None:
        return None
    if col in {c for w in rec["warnings"] for c in w["columns"]}:
        return "named"
    if 0.5 <= s <= 2.0:
        return "in band"
    if s > 2.0:
        return "above 2"
    seen = rec["num"].get("std_seen", {}).get(col, math.nan)
    return "under 0.5, unseen" if seen >= 0.5 else "under 0.5"


def grid(logs, caches, ratios=RATIOS):
    """Markdown: at each ratio, the column-fits the rule names per class,
    and the fits left with an unnamed column outside ``[0.5, 2]`` that the
    unseen rows do not explain (a std ratio above 2, or under 0.5 without
    them; missing shares not counted)."""
    recs, last = _records(caches), _ratios(logs)
    rows = []
    for key, ratio in last.items():
        rec = recs.get(key[:3])
        cls = None if rec is None else classify(rec, key[3])
        if cls is not None:
            rows.append((key, cls, ratio))
    classes = ["above 2", "under 0.5", "under 0.5, unseen", "in band"]
    total = Counter(c for _, c, _ in rows)
    head = "| ratio | " + " | ".join(f"{c} (of {total[c]})" for c in classes)
    head += " | fits left silent, unexplained |"
    out = [head, "|" + "---|" * (len(classes) + 2)]
    for r in [math.inf, *ratios]:
        named = Counter(c for _, c, x in rows if x > r)
        left = {k[:3] for k, c, x in rows if c in classes[:2] and not x > r}
        label = "off" if math.isinf(r) else f"{r:g}"
        out.append(
            f"| {label} | "
            + " | ".join(str(named[c]) for c in classes)
            + f" | {len(left)} of {len(recs)} |"
        )
    return "\n".join(out)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    rest = []
    if "--" in argv:
        i = argv.index("--")
        argv, rest = argv[:i], argv[i + 1 :]
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=["run", "grid"])
    p.add_argument("--log", default=os.environ.get("UNRESOLVED_LOG"))
    p.add_argument("--cache", default=None)
    p.add_argument("--ratios", default=",".join(f"{r:g}" for r in RATIOS))
    a = p.parse_args(argv)
    if not a.log:
        p.error("--log (or $UNRESOLVED_LOG) is required")
    if a.command == "run":
        run(a.log, rest)
    else:
        if not a.cache:
            p.error("grid needs --cache")
        ratios = [float(x) for x in a.ratios.split(",")]
        print(grid(a.log.split(","), a.cache.split(","), ratios))


if __name__ == "__main__":
    main()
