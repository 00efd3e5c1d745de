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
assert np.all(np.isfinite(scores))
