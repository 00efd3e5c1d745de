"""
Training a classifier on synthetic rows inside cross-validation
===============================================================

imbalanced-learn's ``Pipeline`` runs resampling steps only while fitting, so
wrapping a synthesizer in ``SyntheticResampler`` trains the classifier on
synthetic rows of each training fold (with the label synthesized jointly)
and scores it on the real held-out fold.
"""

# %%
import numpy as np
from imblearn.pipeline import Pipeline
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score

from skdp_synth import (
    CovarianceLossMicroaggregator,
    SyntheticResampler,
    load_binary_digits,
)

X, y = load_binary_digits(return_y=True)
keep = y < 2  # zeros against ones
X, y = X[keep], y[keep]

real = cross_val_score(LogisticRegression(max_iter=1000), X, y, cv=3)
print(f"trained on real rows:       accuracy {real.mean():.3f}")
accuracy = {"real rows": real.mean()}
for group_size in (5, 20):
    pipe = Pipeline(
        [
            (
                "synth",
                SyntheticResampler(
                    CovarianceLossMicroaggregator(domain="boolean", random_state=0),
                    classes=[0, 1],
                    random_state=0,
                ),
            ),
            ("clf", LogisticRegression(max_iter=1000)),
        ]
    )
    k = int(len(X) * 2 / 3) // group_size  # training folds hold 2/3 of the rows
    pipe.set_params(synth__synthesizer__k=k)
    scores = cross_val_score(pipe, X, y, cv=3)
    print(f"trained on {group_size}-anonymous rows: accuracy {scores.mean():.3f}")
    accuracy[f"{group_size}-anonymous rows"] = scores.mean()
assert np.all(np.isfinite(scores))

# %%
# Accuracy on the real held-out folds, by what the classifier was trained on.
try:
    import matplotlib.pyplot as plt
except ImportError:
    plt = None

if plt is not None:
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar(list(accuracy), list(accuracy.values()), color=["grey", "C0", "C1"])
    ax.set_ylim(0, 1)
    ax.set_ylabel("3-fold accuracy on real rows")
    ax.set_xlabel("training rows (digits 0 vs 1)")
    for i, value in enumerate(accuracy.values()):
        ax.text(i, value + 0.02, f"{value:.3f}", ha="center")
    fig.tight_layout()
