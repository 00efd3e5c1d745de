"""The unresolved-spread grid (``benchmarks/bench_unresolved_spread.py``)
counts, at each ratio, the column-fits the rule would name per class and the
fits left silent."""

from __future__ import annotations

import json

from benchmarks.bench_unresolved_spread import classify, grid


def _rec(table, seed, std, named=(), seen=None):
    return {
        "table": table,
        "eps": 1.0,
        "seed": seed,
        "method": "auto",
        "num": {"std": std, "std_seen": seen or {}},
        "warnings": [{"class": "DegenerateColumnWarning", "columns": list(named)}],
    }


def test_classes_and_grid_counts(tmp_path):
    recs = [
        _rec("t", 0, {"a": 4.6, "b": 1.0}),  # a above 2, b in band
        _rec("t", 1, {"a": 0.1, "b": 0.2}, seen={"a": 0.7, "b": 0.3}),
        _rec("t", 2, {"a": 9.0}, named=["a"]),  # named: not counted
    ]
    assert [classify(recs[0], c) for c in "ab"] == ["above 2", "in band"]
    assert [classify(recs[1], c) for c in "ab"] == ["under 0.5, unseen", "under 0.5"]
    assert classify(recs[2], "a") == "named" and classify(recs[0], "z") is None
    cache, log = tmp_path / "c.jsonl", tmp_path / "l.jsonl"
    cache.write_text("".join(json.dumps(r) + "\n" for r in recs))
    ratios = {(0, "a"): 5.0, (0, "b"): 3.0, (1, "a"): 100.0, (1, "b"): 1.0}
    ratios[(2, "a")] = 50.0
    lines = [
        {"table": "t", "eps": 1.0, "seed": s, "method": "auto", "col": c, "ratio": x}
        for (s, c), x in ratios.items()
    ]
    # an earlier check of the same column is superseded by the last one
    lines.insert(0, dict(lines[0], ratio=0.5))
    log.write_text("".join(json.dumps(r) + "\n" for r in lines))
    out = grid([str(log)], [str(cache)], ratios=(2.5, 4.0)).splitlines()
    assert out[0].startswith("| ratio | above 2 (of 1) | under 0.5 (of 1) |")
    assert out[2] == "| off | 0 | 0 | 0 | 0 | 2 of 3 |"
    assert out[3] == "| 2.5 | 1 | 0 | 1 | 1 | 1 of 3 |"
    assert out[4] == "| 4 | 1 | 0 | 1 | 0 | 1 of 3 |"
