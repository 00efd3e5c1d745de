"""``benchmarks.bench_suite_compare``: two runs' caches side by side -- the
fits a change moved, the row of figures, the silent fits whose status
changed and the std ratios that crossed 10. Tiny caches written here; no
fit is run."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import bench_suite_compare as bc

REAL = {
    "table": "t",
    "eps": 0.0,
    "seed": 0,
    "method": "real",
    "oww": None,
    "rows": 10_000,
    "train_miss": {"v": 0.0, "w": 0.0},
}


def _fit(seed, tv1, std, eps=1.0, warned=()):
    return {
        "table": "t",
        "eps": eps,
        "seed": seed,
        "method": "auto",
        "oww": 4.0,
        "tv1": tv1,
        "tv2": 2 * tv1,
        "warnings": [{"class": "DegenerateColumnWarning", "columns": list(warned)}],
        "missing_shares": {},
        "num": {
            "std": std,
            "ks": {c: tv1 for c in std},
            "wiqr": {},
            "miss": {c: 0.0 for c in std},
        },
    }


def _cache(path, fits):
    with open(path, "w") as fh:
        for rec in [REAL, *fits]:
            fh.write(json.dumps(rec) + "\n")
    return str(path)


def test_the_row_and_what_moved(tmp_path):
    a = _cache(
        tmp_path / "a.jsonl",
        [
            _fit(0, 0.1, {"v": 1.0, "w": 1.0}),
            _fit(1, 0.3, {"v": 0.3, "w": 1.5}),  # silent: v collapsed, unnamed
            _fit(2, 0.2, {"v": 1.0, "w": 1.0}, eps=0.3),
        ],
    )
    b = _cache(
        tmp_path / "b.jsonl",
        [
            _fit(0, 0.1, {"v": 1.0, "w": 1.0}),
            _fit(1, 0.5, {"v": 1.0, "w": 12.0}, warned=["w"]),  # named explosion
            _fit(2, 0.2, {"v": 1.0, "w": 1.0}, eps=0.3),
        ],
    )
    out = bc.compare(a, b)
    assert out["moved"] == [("t", 1.0, 1)]
    (fig_a, silent_a, big_a), (fig_b, silent_b, big_b) = out["rows"]
    assert fig_a[1.0]["tv1"] == pytest.approx(0.2, rel=1e-12)
    assert fig_b[1.0]["tv1"] == pytest.approx(0.3, rel=1e-12)
    assert fig_b[1.0]["tv2"] == pytest.approx(0.6, rel=1e-12)
    assert fig_a[0.3]["tv1"] == fig_b[0.3]["tv1"] == 0.2
    assert list(silent_a) == [("t", 1.0, 1)] and not silent_b
    assert (big_a, big_b) == (0, 1)
    n, tv, ks = out["tables"][("t", 1.0)]
    assert n == 1 and tv == pytest.approx(50.0, rel=1e-9)
    assert ("t", 0.3) not in out["tables"]
    [(key, before, after)] = out["silent"]
    assert key == ("t", 1.0, 1)
    assert (before[0], after[0]) == ("silent", "not silent")
    assert out["std"] == [(("t", 1.0, 1), "w", 1.5, 12.0)]
    text = bc.report(out)
    assert "| A |  | .2000 / .2000 | .4000 / .4000 |" in text
    assert "| B | 1 | .2000 / .3000 |" in text and "| 1 (1) | 0 |" in text
    assert "t ε = 1 seed 1 w: 1.5 -> 12" in text
