"""A private fine histogram built by hand, for tests of the decoder and the
pipeline's level rules: the leaves, their noisy counts and the Laplace scale
given, nothing missing, the cap at the outer edges, the core found."""

import numpy as np

from skdp_synth.preprocessing._numeric_domain import FineHistogram


def fine_hist(edges, counts, *, scale=1.0, integer=True, finest=None, tentative=None):
    edges = np.asarray(edges, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    none = np.zeros(counts.size, dtype=bool)
    return FineHistogram(
        edges,
        counts,
        0.0,
        none if finest is None else np.asarray(finest, dtype=bool),
        integer,
        (float(edges[0]), float(edges[-1])),
        True,
        float(scale),
        none if tentative is None else np.asarray(tentative, dtype=bool),
    )
