"""Opt-in progress of long fits: the ``skdp_synth`` logger."""

import logging
import re

import numpy as np
import pandas as pd
import pytest

from skdp_synth import ProjectedGaussianRelease, _progress, make_synthesis_pipeline
from skdp_synth.preprocessing import BooleanEncoder

#: every line a fit may log: a stage name, then "...", its seconds, or a loop
#: counter (sweeps, rounds: public) with seconds -- nothing else, so no line
#: can carry a count, size or value of the data
ALLOWED = re.compile(
    r"^(counting \(one pass over the data\)|selection \((mst|aim|one-way)\)"
    r"|fitting the generator|generator sweeps|AIM rounds)"
    r"( \.\.\.|: done in \d+\.\d s|: \d+( of at most \d+)? \(\d+\.\d s\))$"
)


def _frame(n=1237, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    df = pd.DataFrame(
        {"a": a, "b": (a + (rng.random(n) < 0.3)) % 3, "c": rng.integers(0, 2, n)}
    ).astype(str)
    return df, {col: sorted(df[col].unique()) for col in df}


def _pipe(cats, verbose=False, **kw):
    return make_synthesis_pipeline(
        BooleanEncoder(categories=cats),
        ProjectedGaussianRelease(epsilon=1.0, random_state=0, **kw),
        verbose=verbose,
    )


@pytest.mark.parametrize("selection", ["none", "aim"])
def test_fit_logs_its_stages_and_nothing_else(selection, caplog, monkeypatch):
    monkeypatch.setattr(_progress, "TICK_SECONDS", 0.0)  # every loop step
    df, cats = _frame()
    with caplog.at_level(logging.INFO, logger="skdp_synth"):
        _pipe(cats, selection=selection).fit(df)
    lines = [r.getMessage() for r in caplog.records if r.name == "skdp_synth"]
    assert "counting (one pass over the data) ..." in lines
    assert any(x.startswith("fitting the generator: done in") for x in lines)
    assert any(x.startswith("generator sweeps: 1 of at most") for x in lines)
    if selection == "aim":
        assert any(x.startswith("AIM rounds: ") for x in lines)
    bad = [x for x in lines if not ALLOWED.match(x)]
    assert bad == []


def test_off_by_default_and_verbose_prints_on_stderr(capsys):
    df, cats = _frame()
    logger = logging.getLogger("skdp_synth")
    level, propagate = logger.level, logger.propagate
    _pipe(cats).fit(df)
    assert "[skdp_synth]" not in capsys.readouterr().err
    _pipe(cats, verbose=True).fit(df)
    err = capsys.readouterr().err
    assert "[skdp_synth] counting (one pass over the data) ..." in err
    assert "[skdp_synth] fitting the generator: done in" in err
    # the handler is gone and the logger as it was
    assert (logger.level, logger.propagate) == (level, propagate)
    assert not any(
        isinstance(h, logging.StreamHandler) and h.formatter is not None
        for h in logger.handlers
    )
