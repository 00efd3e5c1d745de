"""PrivacyGuarantee and BudgetAccountant."""

import math

import pytest

from skdp_synth.exceptions import BudgetError
from skdp_synth.privacy import BudgetAccountant, PrivacyGuarantee


def test_guarantee_validates():
    g = PrivacyGuarantee(0.5, 1e-6, "add-remove-one", "x")
    assert (g.epsilon, g.delta) == (0.5, 1e-6)
    with pytest.raises(ValueError, match="finite"):
        PrivacyGuarantee(math.inf, 0.0, "replace-one")
    with pytest.raises(ValueError, match="delta"):
        PrivacyGuarantee(1.0, 1.0, "replace-one")
    with pytest.raises(ValueError, match="neighbouring"):
        PrivacyGuarantee(1.0, 0.0, "swap")
    with pytest.raises(TypeError):
        PrivacyGuarantee("a lot", 0.0, "replace-one")
    with pytest.raises(AttributeError):
        g.epsilon = 2.0  # frozen


def test_accountant_composes_basically_and_refuses_overspending():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    acc.spend(0.1)
    acc.spend(0.2, 5e-6)
    eps, delta = acc.total_spent
    assert eps == pytest.approx(0.3) and delta == pytest.approx(5e-6)
    assert acc.remaining() == (pytest.approx(0.7), pytest.approx(5e-6))
    with pytest.raises(BudgetError, match="exceed"):
        acc.spend(0.71)
    with pytest.raises(BudgetError, match="exceed"):
        acc.check(0.1, 6e-6)
    assert len(acc.spent) == 2  # refused spending records nothing
    acc.spend(0.7, 5e-6)  # exactly the rest is fine
    assert acc.remaining() == (pytest.approx(0.0, abs=1e-12), pytest.approx(0.0))


def test_accountant_float_slack():
    acc = BudgetAccountant(epsilon=0.3)
    acc.spend(0.1)
    acc.spend(0.2)  # 0.1 + 0.2 != 0.3 in floating point, must still pass
    assert "spent" in repr(acc)


def test_accountant_neighbouring_relation_must_match():
    acc = BudgetAccountant(epsilon=2.0, neighbouring="add-remove-one")
    with pytest.raises(BudgetError, match="neighbours"):
        acc.spend(1.0, 0.0, "replace-one")
    acc.spend(1.0, 0.0, "add-remove-one")


def test_accountant_validates_its_budget():
    with pytest.raises(ValueError):
        BudgetAccountant(epsilon=0.0)
    with pytest.raises(ValueError):
        BudgetAccountant(epsilon=1.0, delta=1.0)
    with pytest.raises(ValueError):
        BudgetAccountant(neighbouring="other")
    unlimited = BudgetAccountant()
    unlimited.spend(1e6)
    assert unlimited.remaining()[0] == math.inf


def test_compose_adds_up_and_keeps_what_is_published_exactly():
    """Sequential composition: ε and δ add up (exact on these floats); an
    induced-subspace part makes the whole induced-subspace with its
    invariants (the pipeline had dropped ``kind``); relations that differ
    do not compose."""
    from skdp_synth.privacy import compose

    a = PrivacyGuarantee(0.25, 0.0, "add-remove-one", "PrivTree")
    b = PrivacyGuarantee(
        0.75,
        1e-6,
        "add-remove-one",
        "Gaussian",
        kind="induced-subspace",
        invariants=("total",),
    )
    g = compose([a, None, b])
    assert (g.epsilon, g.delta, g.neighbouring) == (1.0, 1e-6, "add-remove-one")
    assert (g.kind, g.invariants) == ("induced-subspace", ("total",))
    assert compose([a, a]).kind == "differential-privacy"
    assert compose([a]) is a
    assert compose([]) is None
    assert compose([a, PrivacyGuarantee(1.0, 0.0, "replace-one", "x")]) is None


def test_what_a_part_does_not_cover_the_whole_does_not_either():
    from skdp_synth.privacy import compose

    a = PrivacyGuarantee(0.25, 0.0, "add-remove-one", "PrivTree")
    b = PrivacyGuarantee(
        0.75, 0.0, "add-remove-one", "Laplace", not_covered=("the domain of 'x'",)
    )
    assert compose([a, b]).not_covered == ("the domain of 'x'",)
    assert compose([a, a]).not_covered == ()
    assert "not_covered=" in repr(b) and "not_covered" not in repr(a)
    with pytest.raises(TypeError, match="tuple of strings"):
        PrivacyGuarantee(1.0, 0.0, "replace-one", "x", not_covered="the domain")


def test_a_relation_mismatch_says_how_to_fix_it():
    """``BudgetAccountant()`` defaults to replace-one and the release to
    add/remove: the first fit was refused without saying what to change."""
    from skdp_synth.exceptions import BudgetError

    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(BudgetError, match="neighbouring='add-remove-one'"):
        acc.check(0.5, 0.0, "add-remove-one")


# -- reservations: the check before a fit and its later spending are one step


def test_a_reservation_is_seen_as_spent_by_other_threads_only():
    import threading

    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    seen = {}
    with acc.reserve(0.7, 1e-6):
        assert acc.remaining() == pytest.approx((0.3, 1e-5 - 1e-6))
        acc.check(0.9)  # this thread: the hold plus what remains

        def other():
            try:
                acc.check(0.5)
            except BudgetError as exc:
                seen["refused"] = str(exc)

        t = threading.Thread(target=other)
        t.start()
        t.join()
        acc.spend(0.4, 1e-6)
    assert "reserved by fits in progress" in seen["refused"]
    # the unspent 0.3 of the hold is released on exit
    assert acc.total_spent == pytest.approx((0.4, 1e-6))
    assert acc.remaining() == pytest.approx((0.6, 1e-5 - 1e-6))


def test_a_spend_beyond_the_reservation_draws_on_the_rest_of_the_budget():
    acc = BudgetAccountant(epsilon=1.0)
    with acc.reserve(0.5):
        acc.spend(0.7)  # 0.5 held + 0.2 of the remaining 0.5
        assert acc.remaining() == pytest.approx((0.3, 0.0))
        with pytest.raises(BudgetError):
            acc.spend(0.31)
    assert acc.total_spent == pytest.approx((0.7, 0.0))


def test_a_reservation_is_released_when_the_fit_fails():
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(RuntimeError), acc.reserve(0.9):
        acc.spend(0.2)
        raise RuntimeError("the fit failed after its first charge")
    assert acc.remaining() == pytest.approx((0.8, 0.0))
    assert acc._reservations() == []


def test_a_nested_reservation_of_the_same_thread_only_checks():
    acc = BudgetAccountant(epsilon=1.0)
    with acc.reserve(0.8):
        with acc.reserve(0.8):  # a pipeline's last step inside the pipeline
            acc.spend(0.8)
        with pytest.raises(BudgetError), acc.reserve(0.5):
            pass
    assert acc.total_spent == pytest.approx((0.8, 0.0))


def test_a_reservation_is_refused_as_a_spend_would_be():
    acc = BudgetAccountant(epsilon=1.0, neighbouring="add-remove-one")
    with pytest.raises(BudgetError, match="exceed"), acc.reserve(1.5):
        pass
    with (
        pytest.raises(BudgetError, match="neighbours"),
        acc.reserve(0.5, 0, "replace-one"),
    ):
        pass
    assert acc._reservations() == []


def test_a_pickled_accountant_carries_no_reservation():
    import pickle

    acc = BudgetAccountant(epsilon=1.0)
    with acc.reserve(0.6):
        copy = pickle.loads(pickle.dumps(acc))
    assert copy._reservations() == []
    with pytest.raises(BudgetError, match="restored from a pickle"):
        copy.spend(0.1)


def test_two_concurrent_fits_of_one_estimator_cannot_share_one_budget():
    """The second fit is refused before it reads a value while the first
    holds the budget (the first is held inside its fit by a gate)."""
    import threading

    import numpy as np

    from skdp_synth import ProjectedGaussianRelease

    acc = BudgetAccountant(epsilon=1.5, delta=1e-5, neighbouring="add-remove-one")
    entered, go_on = threading.Event(), threading.Event()

    class Gated(ProjectedGaussianRelease):
        def _fit(self, U, plan, source):
            if getattr(self, "gate", False):
                entered.set()
                go_on.wait(30)
            return super()._fit(U, plan, source)

    X = (np.random.default_rng(0).random((300, 4)) < 0.5).astype(float)
    first = Gated(epsilon=1.0, delta=1e-6, accountant=acc, random_state=0)
    first.gate = True
    result = {}

    def fit_first():
        try:
            first.fit(X)
            result["first"] = None
        except Exception as exc:  # reported below
            result["first"] = exc

    thread = threading.Thread(target=fit_first)
    thread.start()
    try:
        assert entered.wait(30)
        second = ProjectedGaussianRelease(
            epsilon=1.0, delta=1e-6, accountant=acc, random_state=0
        )
        with pytest.raises(BudgetError, match="reserved by fits in progress"):
            second.fit(X)
    finally:
        go_on.set()
        thread.join(60)
    assert result["first"] is None
    assert acc.total_spent == pytest.approx((1.0, 1e-6))
