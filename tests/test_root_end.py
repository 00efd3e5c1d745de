"""Values past PrivTree's root are named, not clipped silently.

An undeclared numeric column's private domain lives on the root ``±2^40``
(``_numeric_domain.ROOT``, about 1.1e12; ``2^40`` past a declared side):
values beyond are clipped into its outermost leaf. Amounts in units past
1.1e12 (bytes, a currency's units) came back at most 1.0995e12 without a
word. The encoder now warns where the released domain holds mass in a root
end that no bound declares (``_domain_warnings._reaches_root_end``), from the
released fine histogram only.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth.exceptions import CoarseDomainWarning
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.preprocessing._numeric_domain import ROOT


def _frame(seed=0, n=2000, sign=1.0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "huge": sign * rng.lognormal(30.0, 1.0, n),  # median 1.1e13
            "usual": rng.lognormal(7.0, 2.0, n),
        }
    )


def _root_warnings(caught):
    return [
        str(w.message)
        for w in caught
        if issubclass(w.category, CoarseDomainWarning)
        and "outermost part" in str(w.message)
    ]


def _fit(df, **kw):
    enc = BooleanEncoder(epsilon=1.0, random_state=0, **kw)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        enc.fit(df)
    return enc, caught


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_values_past_the_root_are_named(sign):
    """The column past the root is named (on either side), the other is not,
    and the message carries no value of the data: its only numbers are the
    public root's. Its rows come back at most the root's end."""
    enc, caught = _fit(_frame(sign=sign))
    (msg,) = _root_warnings(caught)
    assert "['huge']" in msg and "usual" not in msg
    numbers = set(re.findall(r"\d[\d.e+]*", msg))
    assert numbers <= {f"{ROOT:.4g}"}
    rows = enc.inverse_transform(enc.transform(_frame(sign=sign)))
    assert np.abs(rows["huge"]).max() <= ROOT


def test_a_declared_side_is_not_named_and_holds_the_values():
    """Bounds that hold the values: no warning, and the rows come back past
    ``2^40``; one declared side leaves the other open (root ``2^40`` past
    it), which is still named."""
    df = _frame()
    enc, caught = _fit(df, bounds={"huge": (0.0, 1e15)})
    assert not _root_warnings(caught)
    rows = enc.inverse_transform(enc.transform(df))
    assert np.median(rows["huge"]) > ROOT
    _, caught = _fit(df, bounds={"huge": (0.0, None)})
    assert len(_root_warnings(caught)) == 1


@pytest.mark.parametrize("eps", [0.1, 1.0])
def test_no_warning_for_columns_far_inside_the_root(eps):
    """Columns far inside the root are not named at any of 10 seeds: an
    empty root-end leaf is kept only by noise (grown into or jumped to) or
    passes ``b ln(L / 0.01)`` with probability under 1 % per fit; 0 of 492
    column-fits named on the TUNE tables of ``benchmarks/bench_suite.py`` at
    ε = 0.3 and 1."""
    rng = np.random.default_rng(1)
    n = 2000
    df = pd.DataFrame(
        {
            "usual": rng.lognormal(7.0, 2.0, n),
            "zeros": np.where(rng.random(n) < 0.7, 0.0, rng.lognormal(8.0, 1.5, n)),
            "signed": rng.normal(0.0, 1e6, n),
        }
    )
    for seed in range(10):
        enc = BooleanEncoder(epsilon=eps, random_state=seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            enc.fit(df)
        assert not _root_warnings(caught)
