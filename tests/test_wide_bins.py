"""A declared numeric bin far wider than its column's others warns
(``WideBinWarning``): it decodes to its midpoint, which for a long tail
inflates the column (cps1988's top wage decile [1068, 18777] came back as
9,923). Decided from the declared edges only."""

import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth.exceptions import WideBinWarning
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.preprocessing._declared_bins import WIDE_BIN_RATIO

TAIL = [50.0, 180.0, 268.0, 356.0, 437.0, 522.0, 617.0, 712.0, 855.0, 1068.0, 18777.0]


def _frame(n=200, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"wage": rng.uniform(50.0, 1500.0, n)})


def test_a_wide_declared_bin_warns_naming_the_column_and_its_edges():
    enc = BooleanEncoder(bin_edges={"wage": TAIL})
    with pytest.warns(WideBinWarning, match=r"'wage': \[1068, 18777\]") as rec:
        enc.fit(_frame())
    assert "midpoint" in str(rec[0].message)
    # the midpoint the warning is about
    back = enc.inverse_transform(enc.transform(pd.DataFrame({"wage": [1500.0]})))
    assert float(back["wage"].iloc[0]) == pytest.approx((1068.0 + 18777.0) / 2)


def test_the_warning_reads_the_edges_only_not_the_values():
    # the same edges, other rows (none in the wide bin): the same warning text
    texts = []
    for X in (_frame(seed=1), pd.DataFrame({"wage": [60.0, 200.0, 300.0]})):
        with pytest.warns(WideBinWarning) as rec:
            BooleanEncoder(bin_edges={"wage": TAIL}).fit(X)
        texts.append(str(rec[0].message))
    assert texts[0] == texts[1]


def test_uniform_decoding_is_named_in_the_warning():
    enc = BooleanEncoder(bin_edges={"wage": TAIL}, numeric_value="uniform")
    with pytest.warns(WideBinWarning, match="uniformly inside it"):
        enc.fit(_frame())


@pytest.mark.parametrize(
    "edges",
    [
        list(np.linspace(0.0, 1500.0, 11)),  # even bins
        [0.0, 1.0, 2.0],  # two bins: no median to compare with
        [0.0, 1.0, 2.0, 3.0, 3.0 + WIDE_BIN_RATIO],  # at the ratio, not above
    ],
)
def test_no_warning_without_a_bin_wider_than_the_ratio(edges):
    X = pd.DataFrame({"wage": np.linspace(edges[0], edges[-1], 50)})
    with warnings.catch_warnings():
        warnings.simplefilter("error", WideBinWarning)
        BooleanEncoder(bin_edges={"wage": edges}).fit(X)


def test_a_private_domain_never_warns():
    # bounds= learns the domain privately, with a fine histogram to decode
    X = pd.DataFrame({"wage": np.r_[np.linspace(50.0, 1000.0, 900), [18000.0] * 5]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", WideBinWarning)  # checked first
        BooleanEncoder(
            bounds={"wage": (0.0, 20000.0)}, epsilon=1.0, random_state=0
        ).fit(X)
