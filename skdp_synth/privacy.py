"""Privacy bookkeeping: what a mechanism guarantees, and a budget that it spends.

Every private estimator states *which* neighbouring relation its guarantee is
for. The two that occur in the source papers are

``"replace-one"``
    Datasets of the same, public size ``n`` that differ in one row (bounded
    DP).  :cite:`Boedihardjo2024` (Definition 2.2) and :cite:`Gao2022` use it.
``"add-remove-one"``
    One dataset is the other with one row added or removed (unbounded DP); as
    histograms ``||x - x'||_1 <= 1``.  :cite:`Nikolov2013` uses it.

A mechanism that is ``(eps, delta)``-DP under add/remove is ``(2 eps, ...)``-DP
under replace-one by the triangle inequality, but not conversely; the two must
not be mixed silently, which is why the relation travels with every
:class:`PrivacyGuarantee` and a :class:`BudgetAccountant` is tied to one
relation.
"""

from __future__ import annotations

import contextlib
import math
import threading
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .exceptions import BudgetError, PrivacyBudgetWarning, PrivacyLeakWarning

__all__ = [
    "ADD_REMOVE_ONE",
    "DIFFERENTIAL_PRIVACY",
    "GUARANTEE_KINDS",
    "INDUCED_SUBSPACE",
    "LARGE_EPSILON",
    "NEIGHBOURING_RELATIONS",
    "REPLACE_ONE",
    "BudgetAccountant",
    "PrivacyGuarantee",
    "check_written_budget",
    "reserve_written_budget",
    "compose",
    "not_private",
    "warn_if_large_epsilon",
]

REPLACE_ONE = "replace-one"
ADD_REMOVE_ONE = "add-remove-one"
NEIGHBOURING_RELATIONS = (REPLACE_ONE, ADD_REMOVE_ONE)

#: the kinds of guarantee (``PrivacyGuarantee.kind``): plain ``(ε, δ)``-DP, or
#: :cite:`Gao2022`'s induced subspace DP (exact invariants published)
DIFFERENTIAL_PRIVACY = "differential-privacy"
INDUCED_SUBSPACE = "induced-subspace"
GUARANTEE_KINDS = (DIFFERENTIAL_PRIVACY, INDUCED_SUBSPACE)

#: Above this epsilon (for one fit, or one estimator's cumulative spending) a
#: :class:`~skdp_synth.exceptions.PrivacyBudgetWarning` is raised. ``e^10 ~
#: 22026`` bounds the likelihood ratio an attacker gains: a prior of 1 in 1000
#: that a person is in the data can become a posterior above 95 %, so the
#: guarantee no longer protects anyone in a meaningful sense. Deployed systems
#: stay at or below this order per release (see ``doc/privacy.md``,
#: "Large epsilons").
LARGE_EPSILON = 10.0

# One lock for every accountant's check-then-record (spending is rare; a
# module-level lock keeps the accountant picklable).
_SPEND_LOCK = threading.RLock()

#: This thread's open reservations, by accountant: ``{id(accountant):
#: _Reservation}``. A fit runs its steps in one thread, so whatever it spends
#: (the encoder's share, then the last step's) draws on the reservation its
#: check took; a fit in another thread sees the reservation as spent.
_HELD = threading.local()


class _Reservation:
    """What an in-flight fit may still spend of what it reserved."""

    __slots__ = ("delta", "epsilon")

    def __init__(self, epsilon: float, delta: float) -> None:
        self.epsilon = epsilon
        self.delta = delta


def warn_if_large_epsilon(epsilon: float, what: str, stacklevel: int = 3) -> None:
    """Warn when ``epsilon > LARGE_EPSILON``.

    The warning is a :class:`~skdp_synth.exceptions.PrivacyBudgetWarning`.

    ``what`` says whose epsilon it is (e.g. ``"PrivateSampler, 500 rows"``).
    """
    if epsilon > LARGE_EPSILON:
        warnings.warn(
            f"{what}: epsilon={epsilon:.4g} exceeds {LARGE_EPSILON:g}; the "
            f"guarantee bounds an attacker's likelihood ratio only by "
            f"e^epsilon, which at this size protects no one in practice "
            "(see doc/privacy.md, 'Large epsilons').",
            PrivacyBudgetWarning,
            stacklevel=stacklevel,
        )


class not_private:
    """A fitted attribute that is *not* covered by the privacy guarantee.

    The value is kept under ``private_name`` (an underscore attribute, never
    listed among the public fitted state); reading the public name returns it
    and raises a :class:`~skdp_synth.exceptions.PrivacyLeakWarning` every
    time, so that a diagnostic computed exactly from the data cannot be
    published by accident. Missing values raise ``AttributeError`` (no
    warning), so ``hasattr`` and ``check_is_fitted`` behave as for a plain
    attribute.
    """

    def __init__(self, private_name: str, doc: str = "") -> None:
        self.private_name = private_name
        self.__doc__ = doc

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        try:
            value = obj.__dict__[self.private_name]
        except KeyError:
            raise AttributeError(
                f"{type(obj).__name__!s} has no attribute {self.name!r}"
            ) from None
        warnings.warn(
            f"{type(obj).__name__}.{self.name} is computed exactly from the data "
            "and is not covered by the privacy guarantee; do not publish it "
            "(publish est.to_release() instead).",
            PrivacyLeakWarning,
            stacklevel=2,
        )
        return value


def _check_epsilon_delta(epsilon, delta, *, allow_zero_epsilon=False):
    """Validate a privacy level: finite epsilon > 0 (or >= 0) and 0 <= delta < 1."""
    try:
        epsilon = float(epsilon)
        delta = float(delta)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"epsilon and delta must be real numbers, got {exc}") from None
    lower_ok = epsilon >= 0 if allow_zero_epsilon else epsilon > 0
    if not (math.isfinite(epsilon) and lower_ok):
        raise ValueError(
            f"epsilon must be a finite number > 0, got {epsilon!r}; an infinite "
            "epsilon is no privacy guarantee and is not accepted."
        )
    if not (math.isfinite(delta) and 0.0 <= delta < 1.0):
        raise ValueError(f"delta must lie in [0, 1), got {delta!r}")
    return epsilon, delta


@dataclass(frozen=True)
class PrivacyGuarantee:
    """An ``(epsilon, delta)``-DP guarantee under a stated neighbouring relation.

    Parameters
    ----------
    epsilon : float
        Privacy-loss bound, finite and non-negative.
    delta : float
        Failure probability, ``0 <= delta < 1``; 0 for pure DP.
    neighbouring : {"replace-one", "add-remove-one"}
        The neighbouring relation the guarantee holds for.
    mechanism : str
        Short description of the mechanism and paper it comes from.
    kind : {"differential-privacy", "induced-subspace"}, default="differential-privacy"
        ``"differential-privacy"``: ``(ε, δ)``-DP of the whole output.
        ``"induced-subspace"``: :cite:`Gao2022` Definition 6 -- the output
        satisfies the ``invariants`` exactly (they are published without
        noise) and only its part orthogonal to them is ``(ε, δ)``-DP
        (``N``-subspace DP, Definition 5); nothing is guaranteed about what
        the invariants reveal. A program tells the two apart by this field.
    invariants : tuple of str, default=()
        What is published exactly (e.g. ``"total"``, ``"table region"``);
        non-empty exactly when ``kind="induced-subspace"``.
    not_covered : tuple of str, default=()
        What the output reveals that the guarantee does not bound, because
        it was read from the data without privacy (a pipeline whose encoder
        learned a column's domain from the data, with a
        ``PrivacyLeakWarning`` at ``fit``: ``"the domain of column 'city'"``).
        Empty for a guarantee of the whole output; a program checks it
        before publishing.

    Examples
    --------
    >>> g = PrivacyGuarantee(1.0, 0.0, "replace-one", "Laplace")
    >>> g
    PrivacyGuarantee(epsilon=1.0, delta=0.0, neighbouring='replace-one',
                     mechanism='Laplace')
    >>> PrivacyGuarantee(1.0, 1e-6, "add-remove-one", "Gaussian",
    ...                  kind="induced-subspace", invariants=("total",))
    PrivacyGuarantee(epsilon=1.0, delta=1e-06, neighbouring='add-remove-one',
                     mechanism='Gaussian', kind='induced-subspace',
                     invariants=('total',))
    """

    epsilon: float
    delta: float
    neighbouring: str
    mechanism: str = field(default="")
    kind: str = field(default=DIFFERENTIAL_PRIVACY)
    invariants: tuple = field(default=())
    not_covered: tuple = field(default=())

    def __post_init__(self):
        eps, delta = _check_epsilon_delta(
            self.epsilon, self.delta, allow_zero_epsilon=True
        )
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "delta", delta)
        if self.neighbouring not in NEIGHBOURING_RELATIONS:
            raise ValueError(
                f"neighbouring must be one of {NEIGHBOURING_RELATIONS}, "
                f"got {self.neighbouring!r}"
            )
        if self.kind not in GUARANTEE_KINDS:
            raise ValueError(
                f"kind must be one of {GUARANTEE_KINDS}, got {self.kind!r}"
            )
        invariants = tuple(str(v) for v in self.invariants)
        object.__setattr__(self, "invariants", invariants)
        if isinstance(self.not_covered, str):
            raise TypeError("not_covered must be a tuple of strings, not a string")
        object.__setattr__(self, "not_covered", tuple(str(v) for v in self.not_covered))
        if bool(invariants) != (self.kind == INDUCED_SUBSPACE):
            raise ValueError(
                "a guarantee with exact invariants is induced subspace DP "
                "(kind='induced-subspace', Gao2022 Def. 6) and conversely"
            )

    def __repr__(self):
        text = (
            f"PrivacyGuarantee(epsilon={self.epsilon!r}, delta={self.delta!r}, "
            f"neighbouring={self.neighbouring!r}, mechanism={self.mechanism!r}"
        )
        if self.kind != DIFFERENTIAL_PRIVACY:
            text += f", kind={self.kind!r}, invariants={self.invariants!r}"
        if self.not_covered:
            text += f", not_covered={self.not_covered!r}"
        return text + ")"


def compose(guarantees: Sequence[PrivacyGuarantee]) -> PrivacyGuarantee | None:
    """Sequential composition of guarantees under one neighbouring relation
    (:cite:`Dwork2014` Theorem 3.16: the ε's and δ's add up).

    Induced-subspace DP (:cite:`Gao2022`) in any part makes the whole
    induced-subspace, with every part's invariants: what is published
    exactly stays so; what any part does not cover (``not_covered``) the
    whole does not either. ``None`` when the relations differ (they do not
    compose as written) or there is nothing to compose.
    """
    found = [g for g in guarantees if g is not None]
    if not found or len({g.neighbouring for g in found}) > 1:
        return None
    if len(found) == 1:
        return found[0]
    invariants = tuple(dict.fromkeys(i for g in found for i in g.invariants))
    not_covered = tuple(dict.fromkeys(i for g in found for i in g.not_covered))
    subspace = any(g.kind == INDUCED_SUBSPACE for g in found)
    return PrivacyGuarantee(
        sum(g.epsilon for g in found),
        sum(g.delta for g in found),
        found[0].neighbouring,
        "sequential composition of "
        + "; ".join(g.mechanism for g in found if g.mechanism),
        kind=INDUCED_SUBSPACE if subspace else DIFFERENTIAL_PRIVACY,
        invariants=invariants if subspace else (),
        not_covered=not_covered,
    )


def check_written_budget(
    estimator: Any, extra_epsilon: float = 0.0, extra_delta: float = 0.0
) -> None:
    """Fail closed before any value is read: the accountant of
    ``estimator`` (its ``accountant`` parameter) must afford the ``epsilon``
    and ``delta`` written on it, plus ``extra_*`` (another step's own
    budget, e.g. an encoder's). Reads parameters only. No accountant or no
    ``epsilon``: nothing to check."""
    params = getattr(estimator, "get_params", dict)(deep=False)
    accountant = params.get("accountant")
    if accountant is None or params.get("epsilon") is None:
        return
    accountant.check(
        float(params["epsilon"]) + float(extra_epsilon),
        float(params.get("delta") or 0.0) + float(extra_delta),
        params.get("neighbouring"),
    )


def reserve_written_budget(
    estimator: Any, extra_epsilon: float = 0.0, extra_delta: float = 0.0
) -> contextlib.AbstractContextManager:
    """:func:`check_written_budget`, and the amount held for this fit until
    the returned context exits (:meth:`BudgetAccountant.reserve`): two fits
    on one accountant cannot both pass the check on the same budget and
    read their data. Reads parameters only."""
    params = getattr(estimator, "get_params", dict)(deep=False)
    accountant = params.get("accountant")
    if accountant is None or params.get("epsilon") is None:
        return contextlib.nullcontext()
    return accountant.reserve(
        float(params["epsilon"]) + float(extra_epsilon),
        float(params.get("delta") or 0.0) + float(extra_delta),
        params.get("neighbouring"),
    )


class BudgetAccountant:
    """A privacy budget spent by sequential (basic) composition.

    Estimators given an ``accountant`` :meth:`reserve` their whole planned
    spend before they touch the data and :meth:`spend` it as each part
    succeeds; what a refused or failed fit did not spend is released when
    it ends. A reservation makes the check and the later spending one step:
    two fits running at once on one accountant cannot both pass the check on
    the same remaining budget and read their data (the second is refused
    before it reads a value). Budgets compose by adding epsilons and deltas
    (:cite:`Boedihardjo2024` Lemma 2.5, basic composition), which is valid for any
    mechanisms but not tight.

    Parameters
    ----------
    epsilon : float, default=inf
        Total epsilon budget. ``inf`` only tracks spending.
    delta : float, default=0.0
        Total delta budget.
    neighbouring : {"replace-one", "add-remove-one"}, default="replace-one"
        Relation the budget is stated for. Spending a guarantee stated for the
        other relation is refused, because the two are not interchangeable.

    Examples
    --------
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> acc.spend(0.4)
    >>> acc.remaining()
    (0.6, 0.0)
    >>> acc.spend(0.7)
    Traceback (most recent call last):
    ...
    skdp_synth.exceptions.BudgetError: spending epsilon=0.7, delta=0 would exceed ...
    """

    def __init__(
        self,
        epsilon: float = math.inf,
        delta: float = 0.0,
        neighbouring: str = REPLACE_ONE,
    ) -> None:
        epsilon = float(epsilon)
        if not (epsilon > 0):
            raise ValueError(f"epsilon budget must be > 0, got {epsilon!r}")
        if not (0.0 <= float(delta) < 1.0):
            raise ValueError(f"delta budget must lie in [0, 1), got {delta!r}")
        if neighbouring not in NEIGHBOURING_RELATIONS:
            raise ValueError(
                f"neighbouring must be one of {NEIGHBOURING_RELATIONS}, "
                f"got {neighbouring!r}"
            )
        self.epsilon = epsilon
        self.delta = float(delta)
        self.neighbouring = neighbouring
        self.spent = []  # list of PrivacyGuarantee, in the order spent

    # A tiny slack so that splitting a budget into floats that do not sum
    # exactly (0.1 + 0.2) is not refused.
    _TOLERANCE = 1e-12

    @property
    def total_spent(self) -> tuple[float, float]:
        """``(epsilon, delta)`` spent so far."""
        return (
            math.fsum(g.epsilon for g in self.spent),
            math.fsum(g.delta for g in self.spent),
        )

    def remaining(self) -> tuple[float, float]:
        """``(epsilon, delta)`` left in the budget: neither spent nor reserved
        by a fit in progress."""
        eps, delta = self.total_spent
        held_eps = math.fsum(r.epsilon for r in self._reservations())
        held_delta = math.fsum(r.delta for r in self._reservations())
        return (
            max(self.epsilon - eps - held_eps, 0.0),
            max(self.delta - delta - held_delta, 0.0),
        )

    def _reservations(self) -> list:
        # absent on an accountant pickled before reservations existed
        return self.__dict__.setdefault("_reserved", [])

    def _own(self) -> _Reservation | None:
        """This thread's open reservation on this accountant, if any."""
        return getattr(_HELD, "held", {}).get(id(self))

    def _available(self) -> tuple[float, float]:
        """What a spend from this thread may use: the remaining budget plus
        what this thread's fit reserved and has not spent."""
        eps_left, delta_left = self.remaining()
        own = self._own()
        if own is not None:
            eps_left, delta_left = eps_left + own.epsilon, delta_left + own.delta
        return eps_left, delta_left

    def check(
        self, epsilon: float, delta: float = 0.0, neighbouring: str | None = None
    ) -> None:
        """Raise :class:`~skdp_synth.exceptions.BudgetError` on overspending.

        Overspending: ``(epsilon, delta)`` would exceed the budget.
        """
        epsilon, delta = _check_epsilon_delta(epsilon, delta, allow_zero_epsilon=True)
        if getattr(self, "_restored", False):
            raise BudgetError(
                "this BudgetAccountant was restored from a pickle: it is a "
                "snapshot of a budget, not the budget itself, and spending from "
                "it would let two copies spend the same budget. Spend from the "
                "original object (copies and clones share it). Process workers "
                "(n_jobs != 1 in GridSearchCV or cross_validate, with joblib's "
                "default process backend) pickle the estimator and its "
                "accountant: use n_jobs=1, or threads "
                "(with joblib.parallel_backend('threading'): ...), whose "
                "spends the accountant serialises."
            )
        if neighbouring is not None and neighbouring != self.neighbouring:
            raise BudgetError(
                f"this budget is stated for {self.neighbouring!r} neighbours, but "
                f"the mechanism guarantees privacy for {neighbouring!r} neighbours: "
                f"create the accountant with neighbouring={neighbouring!r} (its "
                "default is 'replace-one'), or give the estimator the "
                "accountant's relation where it takes one"
            )
        eps_left, delta_left = self._available()
        if epsilon > eps_left + self._TOLERANCE or delta > delta_left + self._TOLERANCE:
            others = [r for r in self._reservations() if r is not self._own()]
            held = " (the rest is reserved by fits in progress)" if others else ""
            raise BudgetError(
                f"spending epsilon={epsilon:g}, delta={delta:g} would exceed the "
                f"remaining budget epsilon={eps_left:g}, delta={delta_left:g}{held}"
            )
        return True

    def spend(
        self,
        epsilon: float,
        delta: float = 0.0,
        neighbouring: str | None = None,
        mechanism: str = "",
    ) -> None:
        """Record spending ``(epsilon, delta)``; refuses to overspend.

        The check and the record are one step under a lock: two threads
        spending from one accountant cannot both pass the check on the same
        remaining budget.
        """
        with _SPEND_LOCK:
            self.check(epsilon, delta, neighbouring)
            self.spent.append(
                PrivacyGuarantee(
                    epsilon, delta, neighbouring or self.neighbouring, mechanism
                )
            )
            own = self._own()
            if own is not None:  # drawn from this fit's reservation first
                own.epsilon = max(own.epsilon - float(epsilon), 0.0)
                own.delta = max(own.delta - float(delta), 0.0)

    @contextlib.contextmanager
    def reserve(
        self, epsilon: float, delta: float = 0.0, neighbouring: str | None = None
    ) -> Iterator[None]:
        """Hold ``(epsilon, delta)`` for the fit that runs inside the context.

        The check (as :meth:`check`) and the hold are one step under the
        spending lock. Inside the context, :meth:`check` and :meth:`spend`
        from this thread draw on the hold first; other threads see it as
        spent. On exit what was not spent is released, so a fit that failed
        before its last charge costs only what it spent. A reservation inside
        a reservation of the same thread (a pipeline's last step, inside the
        pipeline's fit) only checks: the outer one already holds its share.

        Examples
        --------
        >>> acc = BudgetAccountant(epsilon=1.0)
        >>> with acc.reserve(0.8):
        ...     acc.remaining()  # what other fits may still use
        ...     acc.spend(0.5)
        (0.2, 0.0)
        >>> acc.remaining()  # the unspent 0.3 is released
        (0.5, 0.0)
        """
        held = _HELD.__dict__.setdefault("held", {})
        if id(self) in held:
            self.check(epsilon, delta, neighbouring)
            yield
            return
        with _SPEND_LOCK:
            self.check(epsilon, delta, neighbouring)
            epsilon, delta = _check_epsilon_delta(
                epsilon, delta, allow_zero_epsilon=True
            )
            reservation = _Reservation(epsilon, delta)
            self._reservations().append(reservation)
        held[id(self)] = reservation
        try:
            yield
        finally:
            held.pop(id(self), None)
            with _SPEND_LOCK:
                self._reserved = [
                    r for r in self._reservations() if r is not reservation
                ]

    # A budget is one ledger: copies would let the same data be spent twice.
    # ``copy``/``deepcopy`` (hence ``sklearn.base.clone`` of an estimator that
    # holds one) return the same object; a pickled and reloaded accountant is
    # a read-only snapshot that refuses to spend.
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        memo[id(self)] = self
        return self

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_reserved", None)  # holds of fits running in this process
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._restored = True

    def __repr__(self):
        eps, delta = self.total_spent
        return (
            f"BudgetAccountant(epsilon={self.epsilon:g}, delta={self.delta:g}, "
            f"neighbouring={self.neighbouring!r}, spent=({eps:g}, {delta:g}))"
        )
