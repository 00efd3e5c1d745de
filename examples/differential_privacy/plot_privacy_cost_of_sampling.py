"""
What the pure epsilon-DP synthesizers cost, and deliver, as n grows
===================================================================

Both pure epsilon-DP methods come with theorems whose constants need very
large datasets. ``PrivateSampler`` (:cite:`Boedihardjo2022`) pays epsilon per released
row; ``DampedPrivateSynthesizer`` (:cite:`Boedihardjo2024` §5) pays a fixed epsilon and
adds Laplace noise whose scale falls with ``n``. This example prints both, so
nobody is surprised.
"""

# %%
import numpy as np

from skdp_synth import DampedPrivateSynthesizer
from skdp_synth.metrics import marginal_error
from skdp_synth.private_sampling import sampling_epsilon, walsh_dimension

p, d = 10, 1
D = walsh_dimension(p, d)
m = int(np.ceil(np.e ** (2 * d) * D))
print("PrivateSampler, p=10, d=1: epsilon per released row")
for n in (10**3, 10**5, 10**7, 10**9):
    eps = sampling_epsilon(1, n, p, d, m, 0.25, 2.5)
    print(f"  n = {n:>10}: {eps:.3g}")

# %%
rng = np.random.default_rng(0)
print("DampedPrivateSynthesizer, p=5, epsilon=1: 2-way marginal error")
for n in (10**3, 10**4, 10**5):
    X = (rng.random((n, 5)) < [0.1, 0.3, 0.5, 0.7, 0.9]).astype(int)
    est = DampedPrivateSynthesizer(epsilon=1.0, random_state=0).fit(X)
    err = marginal_error(X, est.sample(n), d=2)
    print(f"  n = {n:>7}: error = {err:.3f}")
