"""Utilities for people who write synthesizers.

* :mod:`skdp_synth.utils.estimator_checks` -- the checks every synthesizer of
  this package passes, published so that a new or third-party synthesizer is
  checked by one call (:func:`~skdp_synth.utils.estimator_checks.check_synthesizer`)
  or one pytest decorator
  (:func:`~skdp_synth.utils.estimator_checks.parametrize_with_checks`).
"""

__all__: list[str] = []
