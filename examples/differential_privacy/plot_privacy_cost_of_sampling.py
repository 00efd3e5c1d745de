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
sizes = [10**3, 10**5, 10**7, 10**9]
per_row = []
for n in sizes:
    eps = sampling_epsilon(1, n, p, d, m, 0.25, 2.5)
    per_row.append(eps)
    print(f"  n = {n:>10}: {eps:.3g}")

# %%
rng = np.random.default_rng(0)
print("DampedPrivateSynthesizer, p=5, epsilon=1: 2-way marginal error")
damped_sizes = [10**3, 10**4, 10**5]
damped_errors = []
for n in damped_sizes:
    X = (rng.random((n, 5)) < [0.1, 0.3, 0.5, 0.7, 0.9]).astype(int)
    est = DampedPrivateSynthesizer(epsilon=1.0, random_state=0).fit(X)
    err = marginal_error(X, est.sample(n), d=2)
    damped_errors.append(err)
    print(f"  n = {n:>7}: error = {err:.3f}")

# %%
# Both curves against ``n``: the sampler's epsilon per row (left; 1 or less
# only for astronomically large ``n``) and the damped synthesizer's error at a
# fixed epsilon = 1 (right; it falls as the Laplace noise per cell shrinks).
try:
    import matplotlib.pyplot as plt
except ImportError:
    plt = None

if plt is not None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3.5))
    left.loglog(sizes, per_row, "o-")
    left.axhline(1.0, color="grey", linestyle=":", label="epsilon = 1")
    left.set_xlabel("rows n")
    left.set_ylabel("epsilon per released row")
    left.set_title("PrivateSampler (p=10, d=1)")
    left.legend(fontsize=8)
    right.semilogx(damped_sizes, damped_errors, "o-", color="C1")
    right.set_xlabel("rows n")
    right.set_ylabel("average 2-way marginal error")
    right.set_title("DampedPrivateSynthesizer, epsilon = 1")
    right.set_ylim(bottom=0)
    fig.tight_layout()
