"""``benchmarks/bench_plan_moves.py``: the library's picks re-read from the
committed records of every plan, and a variant's moves against them.

Reads ``benchmarks/results/suite_tune_plans_2026-12-07.jsonl`` (scores only);
fits nothing.
"""

import dataclasses
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import bench_plan_moves as pm
from benchmarks import bench_suite as bs
from skdp_synth.gaussian_release._rules import DEFAULT_RULES

RECORDS = (
    Path(__file__).resolve().parent.parent
    / "benchmarks/results/suite_tune_plans_2026-12-07.jsonl"
)


def _done():
    return bs.read_cache(str(RECORDS))


def test_the_library_against_itself_moves_nothing(capsys):
    """With the library's own rules both picks are :func:`bench_suite.choose`'s
    in every cell: no moved cell is printed, and each ε's scores are the
    same both ways (the same records, the same means)."""
    out = pm.compare(_done(), DEFAULT_RULES, DEFAULT_RULES)
    assert "seed=" not in capsys.readouterr().out
    assert sorted(out) == [0.1, 0.3, 1.0, 3.0]
    for before, after in out.values():
        assert np.array_equal(before, after)


def test_a_tree_noise_factor_of_one_is_the_library_rule():
    """``pick`` without a factor is ``bench_suite.choose``; MST's estimate
    recomputed by hand at factor 1 (the branch a factor takes) gives the
    same pick in every cell."""
    usable = bs._plan_cells(_done(), set(bs.TUNE), 4.0, DEFAULT_RULES)
    assert len(usable) == 252
    for est, _ in usable.values():
        lib = bs.choose(est, DEFAULT_RULES.auto_tree_reach, DEFAULT_RULES)
        assert pm.pick(est, DEFAULT_RULES) == lib
        assert pm.pick(est, DEFAULT_RULES, 1.0) == lib


def test_a_larger_margin_only_leaves_the_one_way_tables(capsys):
    """Raising ``auto_one_way_margin`` weighs the 1-way tables' estimate up
    and nothing else: every moved cell leaves the 1-way tables."""
    wider = dataclasses.replace(DEFAULT_RULES, auto_one_way_margin=0.2)
    pm.compare(_done(), DEFAULT_RULES, wider)
    moved = [line for line in capsys.readouterr().out.splitlines() if "seed=" in line]
    assert moved
    assert all(": one-way -> " in line for line in moved)
