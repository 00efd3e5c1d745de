"""Columns whose synthetic rows came back entirely missing, from
``bench_suite`` caches.

For each (table, ε, method) in each cache: the fits, and the columns whose
synthetic rows are at least 99.9 % missing (a record's ``num -> miss``)
while under 99.9 % of the training rows are (the table's ``real`` record,
``train_miss``), each with its seed and the released missing share
``(share, sd)`` (``missing_shares``).

    python -m benchmarks.count_all_missing CACHE.jsonl [CACHE.jsonl ...]

``--default TABLES EPS SEEDS`` fits ``_harness.fit_default_pipeline`` (no
declared categories: each categorical column's levels learned privately)
on each table's training rows instead and counts the same columns in
``sample(n_train)``:

    python -m benchmarks.count_all_missing --default attrition,loans 0.1,0.3 5
"""

from __future__ import annotations

import collections
import json
import sys


def count(path):
    """``{(table, eps, method): (fits, columns, [(seed, column, share)])}``."""
    with open(path) as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    real = {r["table"]: r.get("train_miss", {}) for r in rows if r["method"] == "real"}
    out, seen = {}, set()
    for r in rows:
        if r["method"] == "real" or not r.get("num"):
            continue
        key = (r["table"], r["eps"], r["method"], r.get("oww"), r["seed"])
        if key in seen:
            continue
        seen.add(key)
        fits, cols, found = out.get(key[:3], (0, 0, []))
        miss = r["num"].get("miss", {})
        for c, v in miss.items():
            if v >= 0.999 and real.get(r["table"], {}).get(c, 0.0) < 0.999:
                share = [round(x, 2) for x in r.get("missing_shares", {}).get(c, [])]
                found.append((r["seed"], c, share))
        out[key[:3]] = (fits + 1, cols + len(miss), found)
    return out


def default_fits(tables, eps_list, seeds):
    """All-missing columns of the default pipeline's rows, per table."""
    import pandas as pd

    from benchmarks import bench_suite
    from benchmarks._harness import fit_default_pipeline

    for table in tables:
        train = bench_suite.context(table)["train"]
        found = []
        for eps in eps_list:
            for seed in range(seeds):
                pipe = fit_default_pipeline(train, eps, seed)
                syn = pd.DataFrame(pipe.sample(len(train), random_state=seed + 1))
                for c in syn.columns:
                    if syn[c].isna().mean() >= 0.999 > train[c].isna().mean():
                        found.append((eps, seed, str(c)))
        fits = len(eps_list) * seeds
        print(f"{table}: {fits} fits, {len(found)} all-missing columns", found)


def main(paths):
    for path in paths:
        print(path)
        total = collections.Counter()
        for group, (fits, cols, found) in sorted(count(path).items(), key=str):
            total.update(fits=fits, cols=cols, found=len(found))
            print(f"  {group}: {fits} fits, {len(found)} of {cols} columns", found)
        found, cols, fits = total["found"], total["cols"], total["fits"]
        print(f"  all: {found} of {cols} columns in {fits} fits")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--default"]:
        default_fits(
            sys.argv[2].split(","),
            [float(e) for e in sys.argv[3].split(",")],
            int(sys.argv[4]),
        )
    else:
        main(sys.argv[1:])
