"""
A census-style release: exact totals, noisy details, rows that agree
=====================================================================

A census publishes a few tables *exactly* -- the total population and the
population of each region, by sex -- and everything else with noise. Its data
often arrive as a contingency table of counts, not as one row per person.

The table below is a census-like public table of counts by region x age group
x sex (illustrative numbers in the shape of a census summary table; 4 x 5 x 2
cells, about 1.1 million people). We

* fit :class:`~skdp_synth.ProjectedGaussianRelease` on the **cells and their
  counts** (``fit(X, sample_weight=counts)``: no row per person is ever
  built; the release is the one of the expanded table);
* hold the total, the region table and the region x sex table as
  **invariants** (:cite:`Gao2022`): released exactly, with the other 2-way
  tables (region x age, age x sex) released with Gaussian noise of the
  extension framework;
* read what the guarantee says: *induced subspace* DP, with the exact tables
  listed -- not a plain (epsilon, delta) guarantee, because the invariants
  are published without protection;
* draw synthetic people: at the census total every invariant table is
  reproduced exactly; at a 1 % sample each cell is within one count of the
  scaled table.
"""

# %%
import itertools

import numpy as np
import pandas as pd

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.preprocessing import BooleanEncoder

regions = ["North", "South", "East", "West"]
ages = ["0-17", "18-34", "35-54", "55-74", "75+"]
sexes = ["female", "male"]
# people per region and, within a region, the share of each age group (the
# same for both sexes up to a slight excess of women among the oldest)
region_size = {"North": 412_000, "South": 305_500, "East": 251_250, "West": 148_900}
age_share = {
    "North": [0.20, 0.22, 0.27, 0.22, 0.09],
    "South": [0.24, 0.25, 0.26, 0.18, 0.07],
    "East": [0.18, 0.28, 0.28, 0.19, 0.07],
    "West": [0.21, 0.20, 0.25, 0.24, 0.10],
}
records = []
for r, (a, age), s in itertools.product(regions, enumerate(ages), sexes):
    female = 0.5 + (0.08 if age == "75+" else 0.0)
    share = female if s == "female" else 1 - female
    count = int(round(region_size[r] * age_share[r][a] * share))
    records.append({"region": r, "age": age, "sex": s, "count": count})
table = pd.DataFrame(records)
total = int(table["count"].sum())
print(f"{len(table)} cells, {total} people")

# %%
# Fit on the cells with their counts; region and region x sex are invariants.
categories = {"region": regions, "age": ages, "sex": sexes}
pipe = make_synthesis_pipeline(
    BooleanEncoder(categories=categories),
    ProjectedGaussianRelease(
        epsilon=0.5,
        delta=1e-9,
        invariants=[("region",), ("region", "sex")],
        framework="extension",
        max_model_rows=20_000,  # the generator's table; post-processing only
        random_state=0,
    ),
)
pipe.fit(table[["region", "age", "sex"]], sample_weight=table["count"])
release = pipe[-1]
guarantee = release.privacy_guarantee_
print("guarantee kind:", guarantee.kind)
print("published exactly:", ", ".join(guarantee.invariants))
print(
    f"epsilon={guarantee.epsilon:g}, delta={guarantee.delta:g}, "
    f"{guarantee.neighbouring} neighbours"
)


def cross(frame, columns, weights=None):
    """The table of ``columns`` (counts), in the categories' order."""
    index = pd.MultiIndex.from_product([categories[c] for c in columns])
    w = frame[weights] if weights else pd.Series(1, index=frame.index)
    return w.groupby([frame[c] for c in columns]).sum().reindex(index, fill_value=0)


true_region_sex = cross(table, ["region", "sex"], "count")
released_region_sex = release.marginal_table(["region", "sex"])
print(
    "region x sex, largest |released - true|:",
    float(np.abs(released_region_sex.to_numpy() - true_region_sex.to_numpy()).max()),
)
true_region_age = cross(table, ["region", "age"], "count")
released_region_age = release.marginal_table(["region", "age"])
noise = released_region_age.to_numpy() - true_region_age.to_numpy()
print(f"region x age (noisy), rms error per cell: {np.sqrt(np.mean(noise**2)):.1f}")

# %%
# Synthetic people: the full census, and a 1 % sample.
people = pipe.sample(total, random_state=1)
for columns in (["region"], ["region", "sex"]):
    same = np.array_equal(
        cross(people, columns).to_numpy(), cross(table, columns, "count").to_numpy()
    )
    print(f"{' x '.join(columns)} reproduced exactly by {total} rows: {same}")
m = total // 100
sample = pipe.sample(m, random_state=2)
off = np.abs(
    cross(sample, ["region", "sex"]).to_numpy() - true_region_sex.to_numpy() * m / total
)
print(f"{m} rows: region x sex within {off.max():.3f} of the scaled table")

# %%
try:
    import matplotlib.pyplot as plt
except ImportError:
    plt = None

if plt is not None:
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(8, 3.5), gridspec_kw={"width_ratios": [20, 8]}, sharey=True
    )
    diff = cross(people, ["region", "age"]).to_numpy() - true_region_age.to_numpy()
    left.bar(np.arange(diff.size), diff)
    left.set_xticks(np.arange(diff.size))
    left.set_xticklabels(
        [f"{r[0]} {a}" for r, a in true_region_age.index], rotation=90, fontsize=7
    )
    left.set_title("region x age (noisy)", fontsize=9)
    left.set_ylabel("synthetic - true (people)")
    exact = cross(people, ["region", "sex"]).to_numpy() - true_region_sex.to_numpy()
    right.bar(np.arange(exact.size), exact, color="tab:green")
    right.set_xticks(np.arange(exact.size))
    right.set_xticklabels(
        [f"{r[0]} {s[0]}" for r, s in true_region_sex.index], rotation=90, fontsize=7
    )
    right.set_title("region x sex (invariant)", fontsize=9)
    fig.tight_layout()
