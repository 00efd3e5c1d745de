"""The mass beyond a private numeric domain's cap (``_capped_tails``):
what the fine histogram records there and when a pipeline names the
column (doc/privacy/encoder.md, "Mass beyond the cap")."""

import math
import warnings

import numpy as np
import pandas as pd

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.exceptions import DegenerateColumnWarning
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.preprocessing._numeric_domain import FineHistogram


def test_capped_tail_constants_are_pinned():
    """The window ends at Tukey's outer fence (3 IQR), its pooled count
    counts above 2 noise sds, and the tolerance is the project's std
    factor 2: the derivation in doc/privacy/encoder.md assumes these."""
    ct = _ct()
    assert ct.OUTER_FENCE_IQR == 3.0
    assert ct.CAPPED_TAIL_Z == 2.0
    assert ct.CAPPED_SPREAD == 2.0
    assert ct.ATOM_LEVEL == 0.01


def _ct():
    # imported here: the pipeline test below runs (and fails) without it
    from skdp_synth.preprocessing import _capped_tails

    return _capped_tails


def _hist():
    ct = _ct()
    # leaves in t: [0,1) [1,2) ... [9,10); kept 2..5, the rest emptied
    t = np.arange(11.0)
    edges = ct._x(t)
    raw = np.array([-3.0, 4.0, 50.0, 200.0, 180.0, 60.0, 25.0, 9.0, -7.0, 30.0])
    kept = np.where((t[:-1] >= 2) & (t[:-1] <= 5), raw, 0.0)
    return edges, raw, kept


def test_beyond_cap_pools_the_leaves_up_to_the_outer_fence():
    """``S`` is the sum of the raw counts of the leaves wholly beyond the
    cap and starting before the outer fence, ``m`` their number, ``x`` the
    window's middle in ``t`` (exact identities of the definition)."""
    ct = _ct()
    edges, raw, kept = _hist()
    cap = (float(edges[2]), float(edges[6]))
    lo, hi = ct.beyond_cap(edges, raw, kept, np.zeros(10, bool), cap, 1.0)
    q1, q3 = ct._quartiles_t(edges, kept)
    far_hi = q3 + 3.0 * (q3 - q1)
    far_lo = q1 - 3.0 * (q3 - q1)
    t0 = ct._t(edges)
    up = [j for j in range(6, 10) if t0[j] < far_hi]
    down = [j for j in range(0, 2) if t0[j + 1] > far_lo]
    assert hi[:2] == (float(raw[up].sum()), len(up))
    assert lo[:2] == (float(raw[down].sum()), len(down))
    assert math.isclose(hi[2], float(ct._x(0.5 * (6.0 + far_hi))), rel_tol=1e-12)
    assert math.isclose(lo[2], float(ct._x(0.5 * (2.0 + far_lo))), rel_tol=1e-12)


def test_capped_tail_bound_is_the_mixture_std():
    """The bound is the std of the kept histogram (uniform inside each leaf,
    cut to the cap) mixed with ``S`` rows at ``x`` where ``S > z b sqrt(2
    m)``, over the kept std: checked against the mixture computed
    directly; a side under its noise bounds nothing."""
    ct = _ct()
    edges, raw, kept = _hist()
    cap = (float(edges[2]), float(edges[6]))
    scale = 5.0
    # below: under 2 sds of its noise (10 sqrt(4) = 20); above: past them
    beyond = ((19.0, 2, 3.0), (64.0, 3, 200.0))
    hist = FineHistogram(
        edges, kept, 0.0, np.zeros(10, bool), False, cap, True, scale, None, beyond
    )
    a, b = edges[2:6], edges[3:7]
    p = kept[2:6] / kept[2:6].sum()
    m1 = p @ ((a + b) / 2)
    m2 = p @ ((a * a + a * b + b * b) / 3)
    n = kept.sum()
    worst = 1.0
    s, x = 64.0, 200.0
    assert s > 2.0 * scale * math.sqrt(6.0) and 19.0 < 2.0 * scale * 2.0
    w = s / (n + s)
    mean, sec = (1 - w) * m1 + w * x, (1 - w) * m2 + w * x * x
    worst = max(worst, math.sqrt((sec - mean**2) / (m2 - m1**2)))
    assert math.isclose(ct.capped_tail_bound(hist), worst, rel_tol=1e-9)
    # an empty window (m = 0) bounds nothing
    none = FineHistogram(
        edges,
        kept,
        0.0,
        np.zeros(10, bool),
        False,
        cap,
        True,
        scale,
        None,
        ((5.0, 0, 1.0), (5.0, 0, 1e9)),
    )
    assert ct.capped_tail_bound(none) == 1.0


def _heavy_tail_frame(n=8000, seed=0):
    """A column like openintro loans' ``paid_total``: a log-normal body and
    3 % of the rows spread over 15,000-60,000 (a repaid principal)."""
    rng = np.random.default_rng(seed)
    body = rng.lognormal(7.3, 0.9, size=n)
    far = rng.random(n) < 0.03
    body[far] = rng.uniform(15_000.0, 60_000.0, size=far.sum())
    return pd.DataFrame({"paid": body, "grade": rng.choice(list("ABC"), size=n)})


def test_a_cut_heavy_tail_is_named():
    """The spread of the tail the cap cuts collapses (std ratio under 1/2
    over three seeds at epsilon = 1), and the pipeline names the column
    in a DegenerateColumnWarning. Before the mass beyond the cap was
    recorded, these fits raised no warning naming ``paid``."""
    df = _heavy_tail_frame()
    collapsed = named = 0
    for seed in range(3):
        enc = BooleanEncoder(epsilon="auto", random_state=seed)
        rel = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pipe = make_synthesis_pipeline(enc, rel).fit(df)
            syn = pd.DataFrame(pipe.sample(len(df), random_state=seed + 1))
        ratio = syn["paid"].astype(float).std() / df["paid"].std()
        collapsed += ratio < 0.5
        named += any(
            issubclass(w.category, DegenerateColumnWarning)
            and "'paid'" in str(w.message)
            for w in caught
        )
    assert collapsed >= 1
    assert named >= collapsed
