"""One shape across families (issue #31, item 2): what you look for, then where you look;
both strands by default in every search; k's meaning said in each help()."""

from __future__ import annotations

import inspect
from pathlib import Path

import edlib
import pytest
from hypothesis import given
from hypothesis import strategies as st

import engine
from engine.sequences import SequenceWarning

ROOT = Path(__file__).resolve().parents[2]
LAMBDA_PATH = ROOT / "resources" / "demo" / "lambda_NC_001416.fa"
LAMBDA = engine.load(LAMBDA_PATH)[0].text


@pytest.mark.parametrize("family, first", [
    ("kdiff", "target"), ("kmismatch", "patterns"), ("edit", "patterns"), ("lcs", "a"),
    ("nw", "a"), ("pairs", "target"), ("pcr", "primers"), ("panel", "primers"),
    ("offtarget", "primer")])
def test_what_you_look_for_comes_first(family, first):
    module = getattr(engine, family)
    for name in ("solve", "make_job"):
        params = list(inspect.signature(getattr(module, name)).parameters)
        assert params[0] == first, (family, name, params)


def test_kmismatch_in_the_old_order_warns_and_is_not_swapped():
    """solve(text, patterns, k), the old order, reads as patterns longer than every text
    record: a warning that names the order, and the answer asked for (none), never a swap."""
    pattern = LAMBDA[1100:1120]
    with pytest.warns(SequenceWarning, match=r"patterns come first.*solve\(patterns, text, k\)"):
        old = engine.kmismatch.solve(LAMBDA_PATH, [pattern], 1, backend="serial")
    assert len(old.hits) == 0 and old.pattern_ids == ("NC_001416.1",)
    with pytest.warns(SequenceWarning, match="patterns come first"):
        engine.kmismatch.make_job(LAMBDA[:5000], pattern, 1)
    # the new order: the pattern's own place (forward) is found
    res = engine.kmismatch.solve([pattern], LAMBDA_PATH, 1, backend="serial")
    assert (1101, 1120, "+", 0) in [(h.start, h.end, h.strand, h.mismatches) for h in res.hits]
    # keyword names say it too
    by_name = engine.kmismatch.solve(text=LAMBDA_PATH, patterns=[pattern], k=1, backend="serial")
    assert by_name.to_records() == res.to_records()


def test_patterns_of_mixed_lengths_some_longer_than_the_text_still_run(recwarn):
    res = engine.kmismatch.solve(["ACGTACGTACGTACGT", "GTA"], "AACGTAC", 0, strands="forward",
                                 backend="serial")
    assert [(h.pattern_id, h.start) for h in res.hits] == [("seq2", 4)]
    assert not [w for w in recwarn if issubclass(w.category, SequenceWarning)]


def test_every_search_reads_both_strands_by_default():
    """A primer binds either strand: the reverse complement's site is found without asking."""
    site = LAMBDA[2000:2020]
    from engine.sequences import decode, encode, reverse_complement

    primer = decode(reverse_complement(encode(site)))
    text = LAMBDA[1900:2100]
    for hits in (engine.kmismatch.solve(primer, text, 0, backend="serial").hits,
                 engine.edit.solve(primer, text, mode="search", k=0, backend="serial").hits):
        assert [(h.start, h.end, h.strand) for h in hits] == [(101, 120, "-")]
    kd = engine.kdiff.make_job("ACGT", "ACGT", 1)
    assert kd.params["strands"] == "both"
    # global distances and zip batches stay forward (a distance has no strand)
    assert engine.edit.make_job("ACGT", "ACGT").params["strands"] == "forward"
    assert engine.edit.make_job("ACGT", "ACGT", mode="search", k=0,
                                pairing="zip").params["strands"] == "forward"
    forward = engine.edit.solve(primer, text, mode="search", k=0, strands="forward",
                                backend="serial")
    assert len(forward.hits) == 0


@given(st.text("ACGT", min_size=1, max_size=40), st.text("ACGT", min_size=1, max_size=40),
       st.one_of(st.none(), st.integers(0, 10)))
def test_edit_distance_is_edlib_s(a, b, k):
    want = edlib.align(a, b, mode="NW", task="distance")["editDistance"]
    got = engine.edit.distance(a, b, k, backend="serial")
    assert got == (want if k is None or want <= k else None)


@pytest.mark.parametrize("family, word", [
    ("kdiff", "minimum"), ("kmismatch", "maximum"), ("edit", "maximum"),
    ("pairs", "minimum")])
def test_help_says_what_k_means(family, word):
    module = getattr(engine, family)
    text = (module.__doc__ or "") + (module.solve.__doc__ or "") + (module.make_job.__doc__ or "")
    assert word in text, family
    bound = {"minimum": "at least", "maximum": "at most"}[word]
    assert bound in module.solve.__doc__, family


@pytest.mark.parametrize("field", ["max_edits", "max_product", "with_sequence"])
def test_a_pcr_setting_as_a_keyword_names_pcrsettings(field):
    """``pcr.solve(..., max_edits=2)`` raised a bare "make_job() got an unexpected keyword
    argument"; the tools take their settings as one object (pairs, panel, group alike)."""
    value = getattr(engine.pcr.PcrSettings(), field)
    with pytest.raises(TypeError, match=rf"^pcr\.solve\(\) takes {field} in its settings: "
                                        rf"give settings=PcrSettings\({field}={value!r}\)$"):
        engine.pcr.solve(LAMBDA[1010:1030], LAMBDA[1000:1600], **{field: value})
    res = engine.pcr.solve(LAMBDA[1010:1030], LAMBDA[1000:1600],
                           engine.pcr.PcrSettings(**{field: value}), backend="serial")
    assert res.settings == engine.pcr.PcrSettings()


@pytest.mark.parametrize("solve, given, spelled", [
    (lambda **kw: engine.pairs.solve(LAMBDA[1000:1600], LAMBDA[5000:5600], 3, **kw),
     {"len_max": 25}, "PairSettings(design=DesignSettings(len_max=25))"),
    (lambda **kw: engine.pairs.solve(LAMBDA[1000:1600], LAMBDA[5000:5600], 3, **kw),
     {"max_edits": 2}, "PairSettings(pcr=PcrSettings(max_edits=2))"),
    (lambda **kw: engine.panel.solve([LAMBDA[1010:1030], LAMBDA[1300:1320]], **kw),
     {"end_dimer_dg": -4.0}, "PanelSettings(end_dimer_dg=-4.0)"),
    (lambda **kw: engine.panel.solve([LAMBDA[1010:1030], LAMBDA[1300:1320]], **kw),
     {"max_product": 500}, "PanelSettings(pcr=PcrSettings(max_product=500))"),
])
def test_a_nested_setting_as_a_keyword_names_where_it_goes(solve, given, spelled):
    """pairs' and panel's settings nest (Primer3's design, the PCR's): the TypeError spells
    the whole settings= argument, as pcr's does."""
    name = next(iter(given))
    with pytest.raises(TypeError) as err:
        solve(**given)
    assert str(err.value).endswith(f"takes {name} in its settings: give settings={spelled}")
