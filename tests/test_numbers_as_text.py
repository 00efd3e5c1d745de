"""A column of numbers that pandas read as text because of a stray marker
("unknown", "n/a", "?") among them: the encoder models it as categories,
and says so from the column's dtype and the levels its fit releases, never
from the cells. The command line refuses it when its schema says numeric,
naming the column only."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth.cli import _main as cli
from skdp_synth.exceptions import (
    CoarseDomainWarning,
    NumbersAsTextWarning,
    PrivacyLeakWarning,
)
from skdp_synth.preprocessing import BooleanEncoder

N = 10_000


def _weights(n=N, seed=0, marker="unknown", share=0.1):
    """Birth weights in grams with one decimal (thousands of distinct
    values, as text: object dtype), ``share`` of them a marker (at least
    one cell)."""
    rng = np.random.default_rng(seed)
    w = rng.normal(3300.0, 500.0, n).round(1).astype(str).astype(object)
    w[rng.random(n) < share] = marker
    w[17] = marker
    return pd.DataFrame({"weight": w, "sex": rng.choice(["F", "M"], n)})


def _fit(df, **kw):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        enc = BooleanEncoder(**kw).fit(df)
    return enc, record


def _messages(record, category):
    return [str(w.message) for w in record if w.category is category]


def _says_no_value(message):
    # names the column, quotes no cell: no digit, no marker
    assert "['weight']" in message and "sex" not in message
    assert not any(ch.isdigit() for ch in message)
    assert "unknown" not in message.replace("missing or unknown value", "")


def test_a_frequent_marker_among_many_numbers_warns_when_learned_privately():
    """Every number is too rare for the private level discovery; the
    marker is kept. The released levels are the marker and "other":
    before, no warning at all (the kept level is not a number)."""
    enc, record = _fit(_weights(), epsilon=1.0, delta=1e-6, random_state=0)
    assert enc.specs_[0].levels == ["unknown", "other"]
    (message,) = _messages(record, NumbersAsTextWarning)
    _says_no_value(message)
    assert 'pd.to_numeric(df[col], errors="coerce")' in message
    assert "declare them numeric" in message and "categories=" in message
    assert not _messages(record, CoarseDomainWarning)  # two levels kept


def test_a_single_marker_warns_when_the_levels_are_learned_without_privacy():
    """Without a budget every value is a level: thousands of numbers and
    one cell "n/a". Before, no warning (not every kept level a number)."""
    enc, record = _fit(_weights(share=0.0, marker="n/a"), epsilon=None)
    assert "n/a" in enc.specs_[0].levels and len(enc.specs_[0].levels) > 1000
    (message,) = _messages(record, NumbersAsTextWarning)
    _says_no_value(message)
    assert 'errors="coerce"' in message
    assert _messages(record, PrivacyLeakWarning)  # the levels are the data's


def test_a_rare_marker_leaves_only_other_and_the_coarse_warning_says_it():
    """One "n/a" among thousands of distinct numbers: the private domain
    keeps no level but "other"; the CoarseDomainWarning (text dtype, no
    level kept) gives the same advice, and the text warning is not
    repeated."""
    enc, record = _fit(
        _weights(share=0.0, marker="n/a"), epsilon=1.0, delta=1e-6, random_state=0
    )
    assert enc.specs_[0].levels == ["other"]
    (message,) = _messages(record, CoarseDomainWarning)
    assert "['weight'] hold numbers read as text" in message
    assert 'pd.to_numeric(df[col], errors="coerce")' in message
    assert not _messages(record, NumbersAsTextWarning)


@pytest.mark.parametrize("epsilon", [1.0, None])
def test_a_text_column_of_words_does_not_warn(epsilon):
    """Words kept (a dominant one and rare ones, or several frequent ones):
    a genuine text column, silent whether learned privately or not."""
    rng = np.random.default_rng(1)
    words = np.array(["alpha", "beta", "gamma", "delta"], dtype=object)
    df = pd.DataFrame(
        {
            "kind": rng.choice(words, N),
            "name": np.where(
                rng.random(N) < 0.9, "smith", [f"name{i}" for i in range(N)]
            ).astype(object),
        }
    )
    kw = {"epsilon": epsilon, "delta": 1e-6, "random_state": 0}
    enc, record = _fit(df, **kw)
    if epsilon is not None:
        assert enc.specs_[1].levels == ["smith", "other"]
    assert not _messages(record, NumbersAsTextWarning)


def test_the_decision_reads_the_released_levels_only():
    """A function of the kept levels (and whether they were learned
    privately): the same levels, the same verdict."""
    from skdp_synth.preprocessing._domain_warnings import _numbers_as_text

    assert _numbers_as_text(["1", "2.5"], True) == "numbers"
    assert _numbers_as_text(["1", "2", "n/a"], False) == "mixed"
    assert _numbers_as_text(["7", " Unknown "], True) == "mixed"
    assert _numbers_as_text(["1", "2", "3", "x"], False) == "mixed"
    assert _numbers_as_text(["unknown"], True) == "rare"
    assert _numbers_as_text(["unknown"], False) is None  # every value kept
    assert _numbers_as_text(["x"], True) is None  # a word
    assert _numbers_as_text(["1", "x", "y"], False) is None  # mostly words
    assert _numbers_as_text([], True) is None  # the coarse warning's


def test_neighbouring_tables_with_the_same_released_levels_warn_alike():
    """Two tables that differ in one row (a number replaced, a marker
    added): the fits release the same levels and warn with the same
    text."""
    d = _weights()
    d2 = d.copy()
    d2.loc[3, "weight"] = "unknown" if d.loc[3, "weight"] != "unknown" else "3300.0"
    e1, r1 = _fit(d, epsilon=1.0, delta=1e-6, random_state=0)
    e2, r2 = _fit(d2, epsilon=1.0, delta=1e-6, random_state=0)
    assert e1.specs_[0].levels == e2.specs_[0].levels
    m1 = _messages(r1, NumbersAsTextWarning)
    assert m1 and m1 == _messages(r2, NumbersAsTextWarning)


def test_declared_levels_are_the_users_word():
    df = _weights(300, share=0.0, marker="n/a")
    _, record = _fit(df, epsilon=None, categories={"sex": ["F", "M"]})
    assert _messages(record, NumbersAsTextWarning)
    levels = sorted(df["weight"].unique())
    _, record = _fit(df, epsilon=None, categories={"weight": levels})
    assert not _messages(record, NumbersAsTextWarning)


def test_the_command_line_refuses_it_naming_the_column_only(tmp_path, capsys):
    """A types-only schema declaring the column numeric: refused before the
    fit, the column named, no cell quoted."""
    df = _weights(2000, share=0.0)
    src, schema = tmp_path / "t.csv", tmp_path / "s.json"
    df.to_csv(src, index=False)
    schema.write_text(
        json.dumps({"columns": {"weight": "numeric", "sex": "categorical"}})
    )
    args = ["synthesize", str(src), "--method", "gaussian-release", "--schema"]
    args += [str(schema), "--epsilon", "1", "--delta", "1e-6"]
    assert cli.main([*args, "-o", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert "column 'weight' is declared numeric" in err
    assert "not numbers" in err and "unknown" not in err
    assert not (tmp_path / "o.csv").exists()


def test_the_command_line_without_a_schema_says_it(tmp_path):
    """Without a schema pandas guessed the column's type, and the
    NumbersAsTextWarning was silenced all the same (as if a schema had
    called it categorical): the frequent marker's column came back as
    categories without a word. With a schema calling it categorical it is
    the user's word, and silent."""
    src = tmp_path / "t.csv"
    _weights().to_csv(src, index=False)
    args = ["synthesize", str(src), "--method", "gaussian-release", "--epsilon", "1"]
    args += ["--delta", "1e-6", "--seed", "0", "-o", str(tmp_path / "o.csv")]
    with pytest.warns(NumbersAsTextWarning, match=r"columns \['weight'\] hold"):
        assert cli.main(args) == 0
    schema = tmp_path / "s.json"
    schema.write_text(
        json.dumps({"columns": {"weight": "categorical", "sex": "categorical"}})
    )
    with warnings.catch_warnings(record=True) as record:
        assert cli.main([*args, "--schema", str(schema)]) == 0
    assert not _messages(record, NumbersAsTextWarning)


@pytest.mark.parametrize("as_text", [False, True])
def test_dates_as_text_or_date_objects_are_told_to_convert(as_text):
    """A column of 1,000 daily dates held as ``datetime.date`` objects (or as
    text, read without ``parse_dates=``) is text to the encoder: every date
    is a level too rare to keep, and the column would come back as
    ``"other"``. The CoarseDomainWarning (text dtype, no level kept) says
    to convert it with ``pd.to_datetime`` and count it in days. Before, it
    spoke of numbers only."""
    rng = np.random.default_rng(0)
    days = pd.to_timedelta(rng.integers(0, 1000, 2000), "D")
    dates = pd.Series((pd.Timestamp("2020-01-01") + days).date)
    df = pd.DataFrame(
        {
            "d": dates.astype(str) if as_text else dates,
            "sex": rng.choice(["F", "M"], 2000),
        }
    )
    assert df["d"].dtype == object
    enc, record = _fit(df, epsilon=1.0, delta=1e-6, random_state=0)
    assert enc.specs_[0].levels == ["other"]
    (message,) = _messages(record, CoarseDomainWarning)
    assert "pd.to_datetime(df[col])" in message
    assert 'datetime_unit={col: "D"}' in message
    assert "['d']" in message and "sex" not in message and "2020" not in message
