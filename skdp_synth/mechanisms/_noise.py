"""Random number sources and the additive noise mechanisms.

Two sources of randomness, chosen by ``random_state`` as in scikit-learn:

* **secure** (``random_state=None``, the default): Laplace and Gaussian noise
  come from OpenDP's samplers (``opendp.measurements.make_laplace`` /
  ``make_gaussian`` on a vector-of-float domain). They sample exactly on a
  discretised grid, which defeats the floating-point attacks on naive
  ``loc + scale * log(u)`` samplers (Mironov 2012, "On significance of the least
  significant bits for differential privacy"). All other randomness (bootstrap,
  rejection sampling, rounding) comes from NumPy's PCG64 seeded from operating
  system entropy: unpredictable, but not a cryptographic generator.
* **seeded** (an integer, ``RandomState`` or ``Generator``): everything from
  NumPy, reproducible, and **not hardened** -- use it for experiments and tests,
  never for a release.

The mechanisms take the *true* values and return the noisy ones, rather than
returning noise to be added: the protection of the secure samplers only holds
if the mechanism itself produces the released floating-point value.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["NoiseSource", "check_noise_source", "make_generator"]


def make_generator(random_state=None, stream=0):
    """Turn a scikit-learn style ``random_state`` into a NumPy ``Generator``.

    Parameters
    ----------
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator
        ``None`` draws fresh entropy from the operating system. An integer seeds
        a reproducible stream. A ``RandomState`` is advanced to derive a seed
        (scikit-learn semantics: the caller's state moves on). A ``Generator``
        is used as is.
    stream : int, default=0
        Independent sub-stream of an integer seed: ``fit`` and ``sample`` use
        different streams so that, with one integer ``random_state``, the noise
        drawn in ``fit`` and the draws made by ``sample`` are independent.

    Returns
    -------
    numpy.random.Generator
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        seed = random_state.randint(0, 2**32, size=4, dtype=np.uint64)
        return np.random.default_rng(np.random.SeedSequence([int(s) for s in seed]))
    if isinstance(random_state, numbers.Integral) and not isinstance(
        random_state, bool
    ):
        return np.random.default_rng(
            np.random.SeedSequence(int(random_state), spawn_key=(int(stream),))
        )
    raise ValueError(
        f"random_state must be None, an int, a numpy RandomState or Generator; "
        f"got {random_state!r}"
    )


class NoiseSource:
    """Randomness for one fit or one sample call.

    Parameters
    ----------
    random_state : None, int, RandomState or Generator
        ``None`` selects the secure source (see module docstring).
    stream : int, default=0
        Sub-stream of an integer seed (see :func:`make_generator`).

    Attributes
    ----------
    secure : bool
        Whether Laplace/Gaussian noise comes from OpenDP's exact samplers.
    rng : numpy.random.Generator
        Generator for every other random draw.

    Examples
    --------
    >>> src = NoiseSource(random_state=0)
    >>> src.secure
    False
    >>> src.laplace([0.0, 0.0], scale=1.0).shape
    (2,)
    """

    def __init__(self, random_state=None, stream=0):
        self.secure = random_state is None
        self.rng = make_generator(random_state, stream)

    def laplace(self, values, scale):
        """Return ``values + Lap(scale)`` noise, independently per entry.

        Parameters
        ----------
        values : array-like of float
            True values (any shape); must be finite.
        scale : float
            Laplace scale ``b`` (density ``exp(-|x|/b) / 2b``), ``> 0``.
        """
        values, scale = _check_values_scale(values, scale)
        if values.size == 0:
            return values.copy()
        if self.secure:
            return _opendp_vector_noise(values, scale, "laplace")
        return values + self.rng.laplace(0.0, scale, size=values.shape)

    def gaussian(self, values, scale):
        """Return ``values + N(0, scale**2)`` noise, independently per entry."""
        values, scale = _check_values_scale(values, scale)
        if values.size == 0:
            return values.copy()
        if self.secure:
            return _opendp_vector_noise(values, scale, "gaussian")
        return values + self.rng.normal(0.0, scale, size=values.shape)

    def __repr__(self):
        return f"NoiseSource(secure={self.secure})"


def check_noise_source(random_state=None, stream=0):
    """Build a :class:`NoiseSource`, passing an existing one through."""
    if isinstance(random_state, NoiseSource):
        return random_state
    return NoiseSource(random_state, stream)


def _check_values_scale(values, scale):
    values = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(values)):
        raise ValueError("the values to privatise must be finite")
    scale = float(scale)
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"noise scale must be a finite number > 0, got {scale!r}")
    return values, scale


_OPENDP_CACHE = {}


def _opendp_vector_noise(values, scale, kind):
    """Apply OpenDP's exact Laplace/Gaussian sampler to a float vector."""
    import opendp.prelude as dp  # imported lazily: it takes ~0.3 s

    key = (kind, scale)
    meas = _OPENDP_CACHE.get(key)
    if meas is None:
        dp.enable_features("contrib")
        domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
        if kind == "laplace":
            meas = dp.m.make_laplace(domain, dp.l1_distance(T=float), scale=scale)
        else:
            meas = dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=scale)
        if len(_OPENDP_CACHE) > 64:
            _OPENDP_CACHE.clear()
        _OPENDP_CACHE[key] = meas
    out = np.asarray(meas(values.ravel().tolist()), dtype=np.float64)
    return out.reshape(values.shape)
