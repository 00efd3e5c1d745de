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


def test_a_discounted_tree_noise_only_moves_cells_to_the_tree(capsys):
    """A tree-noise factor below 1 lowers MST's value alone (directly, or
    through the tree margin, whose tie goes to the tree): every moved cell
    goes to the tree, and at 0.5 some do (38 of the 252 cells under the
    grouped tree price and its margin, 0.15; 63 under the price at every
    level and 0.25)."""
    pm.compare(_done(), DEFAULT_RULES, DEFAULT_RULES, tree_noise=0.5)
    moved = [line for line in capsys.readouterr().out.splitlines() if "seed=" in line]
    assert len(moved) == 38
    assert all(line.split(": ")[1].split(",")[0].endswith("-> mst") for line in moved)


def test_a_larger_margin_only_leaves_the_one_way_tables(capsys):
    """Raising ``auto_one_way_margin`` weighs the 1-way tables' estimate up
    and nothing else: every moved cell leaves the 1-way tables (33 of the
    252 at 0.2 under the grouped tree price; 29 under the price at every
    level)."""
    wider = dataclasses.replace(DEFAULT_RULES, auto_one_way_margin=0.2)
    pm.compare(_done(), DEFAULT_RULES, wider)
    moved = [line for line in capsys.readouterr().out.splitlines() if "seed=" in line]
    assert moved
    assert len(moved) == 33
    assert all(": one-way -> " in line for line in moved)


def test_a_narrower_aim_limit_only_leaves_aim(capsys):
    """A smaller ``auto_aim_max_attributes`` takes AIM away from the tables
    past it and nothing else: the cells are read with the library's wider
    gate (AIM's records are there for the library's pick), and every moved
    cell leaves AIM."""
    narrower = dataclasses.replace(DEFAULT_RULES, auto_aim_max_attributes=20)
    pm.compare(_done(), DEFAULT_RULES, narrower)
    moved = [line for line in capsys.readouterr().out.splitlines() if "seed=" in line]
    assert moved
    assert all(": aim -> " in line for line in moved)
