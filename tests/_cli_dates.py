"""A CLI table of 400 dates over about 8 years and a two-level column, with
its types-only schema (unit ``"D"``): shared by the CLI date tests of
``test_datetime.py`` and ``test_bounded_release.py``."""

from __future__ import annotations

import pandas as pd


def eight_years_of_dates(rng):
    """``(frame, schema)``: 400 ISO date strings from 2015-01-01 on (days
    drawn from ``rng`` first, then the levels, so a caller's later draws
    from ``rng`` are unchanged)."""
    days = pd.Timestamp("2015-01-01") + pd.to_timedelta(rng.integers(0, 3000, 400), "D")
    frame = pd.DataFrame(
        {"t": days.strftime("%Y-%m-%dT%H:%M:%S"), "g": rng.choice(["a", "b"], 400)}
    )
    g = {"type": "categorical", "levels": ["a", "b"]}
    schema = {"columns": {"t": {"type": "datetime", "unit": "D"}, "g": g}}
    return frame, schema
