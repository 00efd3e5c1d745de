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


def test_a_relation_mismatch_says_how_to_fix_it():
    """``BudgetAccountant()`` defaults to replace-one and the release to
    add/remove: the first fit was refused without saying what to change (a
    walk-through, round twenty)."""
    from skdp_synth.exceptions import BudgetError

    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(BudgetError, match="neighbouring='add-remove-one'"):
        acc.check(0.5, 0.0, "add-remove-one")
