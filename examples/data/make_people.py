"""Write ``people.csv`` and ``people_holdout.csv``: the README's command-line example.

Made-up people (no real person's data), drawn with a fixed seed: 2,000 rows to
synthesize from and 500 other rows of the same population to score the
synthetic rows against (held out: never seen by the fit)::

    python examples/data/make_people.py

Columns: ``age`` (integer), ``education`` (ordinal), ``sector`` (categorical,
sometimes missing), ``hours`` (integer) and ``wage`` (float); ``people.schema.json``
next to it declares their public domain.
"""

from pathlib import Path

import numpy as np
import pandas as pd


def make_people(n=2500, seed=0):
    """The table: wage grows with age, education and hours; sector is 3 % missing."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    education = rng.choice(["none", "school", "degree"], n, p=[0.1, 0.6, 0.3])
    sector = rng.choice(["public", "private", "self-employed"], n, p=[0.3, 0.6, 0.1])
    sector = np.where(rng.random(n) < 0.03, None, sector)
    hours = np.clip(rng.normal(38, 8, n).round(), 5, 80).astype(int)
    level = pd.Series(education).map({"none": 0.0, "school": 0.3, "degree": 0.7})
    wage = np.exp(5.5 + level + 0.01 * np.minimum(age, 60) + rng.normal(0, 0.4, n))
    wage = (wage * hours / 38).round(2)
    return pd.DataFrame(
        {
            "age": age,
            "education": education,
            "sector": sector,
            "hours": hours,
            "wage": wage,
        }
    )


if __name__ == "__main__":
    here = Path(__file__).parent
    people = make_people()
    people[:2000].to_csv(here / "people.csv", index=False)
    people[2000:].to_csv(here / "people_holdout.csv", index=False)
