"""The synthesis methods the CLI and ``make demo`` know about.

One entry per estimator. Estimators are imported lazily, so the CLI starts
fast and a method whose optional pieces are missing does not break the rest.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

__all__ = ["METHODS", "Method", "get_method", "which_method_when"]


@dataclass(frozen=True)
class Method:
    """How to build one synthesizer from command-line options.

    Attributes
    ----------
    name : str
        Name used by ``--method``.
    target : str
        ``"module:Class"`` of the estimator.
    summary : str
        One line for ``skdp-synth list`` and the demo table.
    guarantee : str
        ``"epsilon-DP"``, ``"(epsilon, delta)-DP"`` or ``"anonymity"``.
    demo_params : dict
        Parameters used by ``skdp-synth demo`` (on the 1797 x 64 digits).
    recommended : bool
        Marked in ``skdp-synth list`` as the method to start with.
    need : str
        What it is for, in plain words: the "you need" of "which method
        when" in ``skdp-synth list``, README.md, doc/index.rst and
        doc/getting_started.md, word for word (``tests/test_first_hour_docs.py``).
    sizes : str
        The table sizes it is for, as measured (doc/benchmarks.md), worded
        the same everywhere "which method when" is.
    rank : int
        Its place in "which method when": the start-here method first.
    """

    name: str
    target: str
    summary: str
    guarantee: str
    demo_params: dict = field(default_factory=dict)
    recommended: bool = False
    need: str = ""
    sizes: str = ""
    rank: int = 100

    @property
    def class_name(self):
        """The estimator's class name (without importing it)."""
        return self.target.split(":")[1]

    @property
    def private(self):
        return self.guarantee != "anonymity"

    @property
    def estimator_class(self):
        module, cls = self.target.split(":")
        return getattr(importlib.import_module(module), cls)

    def build(self, *, epsilon=None, delta=None, random_state=None, **params):
        """Instantiate the estimator; privacy options only where they apply."""
        cls = self.estimator_class
        valid = cls().get_params()
        if epsilon is not None:
            if "epsilon" not in valid:
                raise ValueError(
                    f"method {self.name!r} takes no epsilon ({self.guarantee})"
                )
            params["epsilon"] = epsilon
        if delta is not None:
            if "delta" not in valid:
                raise ValueError(f"method {self.name!r} takes no delta")
            params["delta"] = delta
        if "random_state" in valid:
            params["random_state"] = random_state
        unknown = sorted(set(params) - set(valid))
        if unknown:
            raise ValueError(
                f"method {self.name!r} has no parameters {unknown}; "
                f"valid: {sorted(valid)}"
            )
        return cls(**params)


# Each estimator issue adds its entry here.
METHODS: dict[str, Method] = {}


def register(method):
    """Add a method (used below and by tests)."""
    METHODS[method.name] = method
    return method


def which_method_when():
    """The methods in the order of "which method when": the start-here one
    first, then by ``rank``. The one source of that table's order, plain
    words and sizes, for ``skdp-synth list`` and the pages that print it."""
    return sorted(METHODS.values(), key=lambda m: (not m.recommended, m.rank, m.name))


def get_method(name):
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(
            f"unknown method {name!r}; available: {sorted(METHODS)}"
        ) from None


register(
    Method(
        name="microaggregation",
        target="skdp_synth.microaggregation:CovarianceLossMicroaggregator",
        summary="(n/k)-anonymous microaggregation, covariance-loss certificate "
        "(Boedihardjo2024)",
        guarantee="anonymity",
        demo_params={"k": 179, "domain": "boolean"},
        need="anonymity, not differential privacy: each row the mean of a "
        "group of real rows",
        sizes="any size (k groups of about n/k rows)",
        rank=3,
    )
)

register(
    Method(
        name="damped",
        target="skdp_synth.damped:DampedPrivateSynthesizer",
        summary="private PCA + damped noisy microaggregation (Boedihardjo2024 §5)",
        guarantee="epsilon-DP",
        demo_params={"epsilon": 1.0},
        need="a pure ε guarantee (δ = 0)",
        sizes="from about 10⁴–2.6·10⁴ rows; on fewer, no better than noisy "
        "one-column counts",
        rank=2,
    )
)

register(
    Method(
        name="gaussian-release",
        target="skdp_synth.gaussian_release:ProjectedGaussianRelease",
        summary=(
            "d-way marginals of the attributes with optimal Gaussian noise "
            "(ResidualPlanner, Xiao2023), rows fitted to them by the generator"
        ),
        guarantee="(epsilon, delta)-DP",
        demo_params={"epsilon": 1.0, "delta": 1e-6, "d": 2},
        recommended=True,
        need="private synthetic rows of a table: start here",
        sizes="any size; the most accurate private method at every size "
        "measured (10⁴ to 10⁶ rows)",
        rank=1,
    )
)

register(
    Method(
        name="private-sampling",
        target="skdp_synth.private_sampling:PrivateSampler",
        summary=(
            "noiseless sampling from a reweighted random reduced space "
            "(Boedihardjo2022); "
            "epsilon grows with every released row and is vacuous at these sizes"
        ),
        guarantee="epsilon-DP",
        # The demo draws 1797 rows, so k = 1797 rows are paid for at fit:
        # epsilon_ ~ 4.1e3 (2.3 per row, the log(Delta/delta) cap; Lemma 12.1
        # gives nothing at n = 1797). d = 1 keeps it under a second.
        demo_params={"d": 1, "k": 1797},
        need="research only: ε grows with every row released",
        sizes="none a table has: ε = 1 buys no row below 3.5·10⁸ rows",
        rank=4,
    )
)
