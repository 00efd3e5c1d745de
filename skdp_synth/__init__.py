"""skdp_synth: provably private synthetic data as scikit-learn estimators.

Estimators (each ``fit / sample / transform / score``):

* ``CovarianceLossMicroaggregator`` -- (n/k)-anonymous microaggregation with
  a covariance-loss certificate (:cite:`Boedihardjo2024` §3-4, :cite:`SahSawhney` §2).
* ``DampedPrivateSynthesizer`` -- epsilon-DP synthetic data (:cite:`Boedihardjo2024`
  §5).
* ``PrivateSampler`` -- noiseless epsilon-DP sampling on the Boolean cube
  (:cite:`Boedihardjo2022`).
* ``ProjectedGaussianRelease`` -- (epsilon, delta)-DP marginal release with
  correlated Gaussian noise and exact invariants (:cite:`Nikolov2013`, :cite:`Gao2022`).

Shared pieces: :mod:`skdp_synth.preprocessing` (encoders),
:mod:`skdp_synth.metrics` (marginal errors, scorers),
:mod:`skdp_synth.mechanisms` (noise), :mod:`skdp_synth.privacy` (guarantees
and budgets), :mod:`skdp_synth.geometry` (coverings and partitions).
"""

from .damped import DampedPrivateSynthesizer
from .datasets import load_binary_digits
from .gaussian_release._release import ProjectedGaussianRelease
from .microaggregation._microaggregator import CovarianceLossMicroaggregator
from .pipeline import SynthesisPipeline, make_synthesis_pipeline
from .privacy import BudgetAccountant, PrivacyGuarantee
from .private_sampling._sampler import PrivateSampler, marginal_correction
from .release import Release
from .resampling import SyntheticResampler

# The package version: pyproject.toml reads it from here (one source).
__version__ = "0.1.0.dev0"

__all__ = [
    "BudgetAccountant",
    "CovarianceLossMicroaggregator",
    "DampedPrivateSynthesizer",
    "PrivacyGuarantee",
    "ProjectedGaussianRelease",
    "PrivateSampler",
    "Release",
    "SynthesisPipeline",
    "SyntheticResampler",
    "__version__",
    "load_binary_digits",
    "make_synthesis_pipeline",
    "marginal_correction",
]
