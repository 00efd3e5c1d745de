"""
Fitting on data beyond memory with Dask
=======================================

``ProjectedGaussianRelease``, ``DampedPrivateSynthesizer`` and
``PrivateSampler`` read their training rows only through additive
statistics (marginal counts, the second-moment matrix and per-cell sums,
Walsh sums). Given a ``dask.array.Array`` or a ``dask.dataframe.DataFrame``,
``fit`` sums those statistics over the chunks -- on a
``dask.distributed`` cluster when a client is active -- and adds the noise
once, on the driver: the same guarantee, and for the same seed the same
release as the in-memory fit (bit for bit here: the statistics of 0/1 rows
are integers).

This example writes a Boolean table to Parquet files, fits each estimator
from the files on an in-process cluster, and checks the result against the
in-memory fit. Install the extra first (in a clone of the repository:
``pip install -e '.[dask]'``).
"""

# %%
import pathlib
import tempfile
import time

import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.distributed import Client, LocalCluster

from skdp_synth import (
    DampedPrivateSynthesizer,
    PrivateSampler,
    ProjectedGaussianRelease,
)

# %%
# A Boolean table with correlated columns, stored as 8 Parquet files.
rng = np.random.default_rng(0)
n, p = 40_000, 10
latent = rng.random((n, 1))
X = (rng.random((n, p)) < 0.2 + 0.6 * latent).astype(np.uint8)
columns = [f"b{j}" for j in range(p)]
folder = pathlib.Path(tempfile.mkdtemp()) / "table"
dd.from_pandas(pd.DataFrame(X, columns=columns), npartitions=8).to_parquet(folder)
print(f"{n} rows x {p} columns in {len(list(folder.glob('*.parquet')))} files")

# %%
# Fit from the files on an in-process cluster (one worker, two threads);
# on a real cluster only the address changes. The number of rows is public:
# Dask reads it from the Parquet metadata before any row is used.
cluster = LocalCluster(
    processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0"
)
client = Client(cluster)
table = dd.read_parquet(folder)

estimators = {
    "ProjectedGaussianRelease": lambda: ProjectedGaussianRelease(
        epsilon=1.0, delta=1e-6, random_state=1
    ),
    "DampedPrivateSynthesizer": lambda: DampedPrivateSynthesizer(
        epsilon=1.0, random_state=1
    ),
    # each released row of PrivateSampler costs ln(density_upper) = 2.3 here
    "PrivateSampler": lambda: PrivateSampler(k=4, random_state=1),
}
seconds_by_name = {}
for name, make in estimators.items():
    t0 = time.perf_counter()
    chunked = make().fit(table)
    seconds = time.perf_counter() - t0
    seconds_by_name[name] = seconds
    in_memory = make().fit(pd.DataFrame(X, columns=columns))
    same = np.array_equal(
        chunked.sample(random_state=2).to_numpy(),
        in_memory.sample(random_state=2).to_numpy(),
    )
    print(
        f"{name:<26} fitted from {table.npartitions} chunks in {seconds:.2f} s; "
        f"epsilon={chunked.epsilon_:.3g}; same rows as in memory: {same}"
    )
    assert same

client.close()
cluster.close()

# %%
# Seconds per fit from the 8 Parquet files (each fit reads every chunk once
# or twice; measured on this run, so they depend on the machine).
try:
    import matplotlib.pyplot as plt
except ImportError:
    plt = None

if plt is not None:
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.barh(list(seconds_by_name), list(seconds_by_name.values()))
    ax.set_xlabel(f"fit time from {table.npartitions} Parquet chunks (s)")
    ax.invert_yaxis()
    fig.tight_layout()
