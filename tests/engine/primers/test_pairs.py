"""Pair design: every pair specific (edlib, both strands, k-1 edits), every 'not specific'
rejection a real match, constraints held, and the ranking Primer3's own on the same
candidate set."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest

from engine.primers import pairs, pcr
from engine.primers.primer3_design import DesignSettings, parse_product_ranges, template_text
from engine.sequences import Record, encode
from tests.engine.primers import brute
from tests.engine.primers.brute import rc

K = 3
RANGE = (150, 250)


def _mutate(seq: str, rng) -> str:
    at = int(rng.integers(0, len(seq)))
    return seq[:at] + {"A": "C", "C": "G", "G": "T", "T": "A"}[seq[at]] + seq[at + 1:]


@pytest.fixture(scope="module")
def design_case(lambda_record, ecoli_record):
    """lambda[20000:20700] against an E. coli slice into which copies (1 edit, either strand)
    of the regions around Primer3's favourite primers are planted, so that the pairs Primer3
    would pick first are not specific."""
    import primer3

    target = lambda_record.slice(20_000, 20_700)
    text = target.text
    design = DesignSettings(product_ranges=(RANGE,), num_return=5, min_three_prime_distance=-1)
    raw = primer3.bindings.design_primers({"SEQUENCE_ID": "t", "SEQUENCE_TEMPLATE": text},
                                          design.global_args(PRIMER_NUM_RETURN=3))
    rng = np.random.default_rng(5)
    planted = []
    for i in range(raw["PRIMER_PAIR_NUM_RETURNED"]):
        lpos, _ = raw[f"PRIMER_LEFT_{i}"]
        rpos, _ = raw[f"PRIMER_RIGHT_{i}"]
        for lo in (max(0, lpos - 6), max(0, rpos - 30)):
            copy = _mutate(text[lo:lo + 36], rng)
            planted.append(copy if len(planted) % 2 else rc(copy))
    eco = ecoli_record.text
    parts = [eco[100_000:160_000]]
    for copy in planted:
        parts += [copy, eco[int(rng.integers(200_000, 4_000_000)):][:300]]
    background = [Record("bg", encode("".join(parts)))]
    settings = pairs.PairSettings(design, pcr.PcrSettings(), explain=True)
    result = pairs.solve([target], background, K, settings, backend="multicore")
    return target, background, design, result


def test_every_pair_is_specific_and_passes_the_constraints(design_case):
    target, background, design, result = design_case
    bg = background[0].text
    text = target.text
    assert result.info.complete and len(result.pairs) == design.num_return
    for p in result.pairs:
        for site in (p.left, p.right):
            assert not brute.occurs_within(site.sequence, bg, K - 1), site
            assert design.len_min <= site.length <= design.len_max
            assert design.tm_min <= site.tm <= design.tm_max
            assert design.gc_min <= site.gc_percent <= design.gc_max
        assert abs(p.left.tm - p.right.tm) <= design.max_tm_diff
        assert RANGE[0] <= p.product_size <= RANGE[1]
        assert p.product_size == p.right.end - p.left.start + 1
        assert text[p.left.start - 1:p.left.end] == p.left.sequence
        assert rc(text[p.right.start - 1:p.right.end]) == p.right.sequence
    penalties = [p.penalty for p in result.pairs]
    assert penalties == sorted(penalties) and [p.rank for p in result.pairs] == [1, 2, 3, 4, 5]


def test_not_specific_rejections_really_match(design_case):
    target, background, design, result = design_case
    bg = background[0].text
    refused = [r for r in result.rejected if r.reason.startswith("not specific")]
    assert refused, "the planted copies make some primers non-specific"
    for r in refused:
        assert brute.occurs_within(r.sequence, bg, K - 1), r
    other = [r for r in result.rejected if not r.reason.startswith("not specific")]
    assert other and all(r.reason for r in other)
    # Primer3's reasons are its explain categories, e.g. "high tm".
    assert {r.reason for r in other} & {"high tm", "low tm", "high hairpin stability",
                                        "GC content failed", "long poly-x seq"}


def test_specificity_profile_is_exact(design_case):
    """A primer one base shorter than the shortest specific one occurs within k-1."""
    target, background, design, result = design_case
    bg = background[0].text
    text = target.text
    spec = result.specificity[0]
    rng = np.random.default_rng(1)
    for p in rng.choice(np.flatnonzero(spec.left > 1), 15, replace=False):
        need = int(spec.left[p])
        assert not brute.occurs_within(text[p:p + need], bg, K - 1)
        assert brute.occurs_within(text[p:p + need - 1], bg, K - 1)
    for p in rng.choice(np.flatnonzero(spec.right > 1), 15, replace=False):
        need = int(spec.right[p])
        assert not brute.occurs_within(rc(text[p - need + 1:p + 1]), bg, K - 1)
        assert brute.occurs_within(rc(text[p - need + 2:p + 1]), bg, K - 1)


def _primer3_reference(text, design, specific, n):
    """Primer3's own generic pair search, its pairs with a non-specific primer dropped,
    asking for more until n are left (or Primer3 has no more)."""
    import primer3

    ask = 50
    while True:
        out = primer3.bindings.design_primers({"SEQUENCE_ID": "t", "SEQUENCE_TEMPLATE": text},
                                              design.global_args(PRIMER_NUM_RETURN=ask))
        got = out["PRIMER_PAIR_NUM_RETURNED"]
        kept = []
        for i in range(got):
            left, right = out[f"PRIMER_LEFT_{i}_SEQUENCE"], out[f"PRIMER_RIGHT_{i}_SEQUENCE"]
            if specific(left) and specific(right):
                kept.append((round(out[f"PRIMER_PAIR_{i}_PENALTY"], 10), left, right))
        if len(kept) >= n or got < ask:
            return kept[:n], ask
        ask *= 2


def test_ranking_equals_primer3_on_the_same_candidates(design_case):
    target, background, design, result = design_case
    bg = background[0].text
    cache = {}

    def specific(seq):
        if seq not in cache:
            cache[seq] = not brute.occurs_within(seq, bg, K - 1)
        return cache[seq]

    want, asked = _primer3_reference(target.text, design, specific, design.num_return)
    assert asked > 50 or any(not v for v in cache.values())  # the filter had work to do
    got = [(round(p.penalty, 10), p.left.sequence, p.right.sequence) for p in result.pairs]
    assert [g[0] for g in got] == [w[0] for w in want]
    assert got == want


def test_ranges_in_order_and_pcr_per_pair(lambda_record):
    """A later range only fills what the earlier left; each pair carries its own PCR.

    The background holds a copy of the target with a substitution every 13 bases: every
    primer is specific at k=1, and the PCR (3 edits, 3' rule off) finds the pair's product."""
    target = lambda_record.slice(30_000, 30_600)
    copy = "".join({"A": "C", "C": "G", "G": "T", "T": "A"}[c] if i % 13 == 6 else c
                   for i, c in enumerate(target.text))
    bg_text = lambda_record.text[10_000:12_000] + copy + lambda_record.text[40_000:41_000]
    design = DesignSettings(product_ranges=parse_product_ranges("540-560 100-300"), num_return=4,
                            min_three_prime_distance=-1)
    settings = pairs.PairSettings(design, pcr.PcrSettings(max_3prime_edits=5))
    res = pairs.solve([target], [Record("bg", encode(bg_text))], 1, settings, backend="serial")
    sizes = [p.product_size for p in res.pairs]
    first = [s for s in sizes if 540 <= s <= 560]
    assert first and sizes[:len(first)] == first
    assert all(100 <= s <= 300 for s in sizes[len(first):])
    assert len(res.pairs) == 4
    for p in res.pairs:
        assert p.offtarget_products >= 1
        c = p.closest_offtarget
        assert 1 <= c.edits <= 6 and c.length == p.product_size and c.start == 2000 + p.left.start
        assert {c.forward, c.reverse} == {f"{p.target_id}#{p.rank}.left",
                                          f"{p.target_id}#{p.rank}.right"}


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], capture_output=True,
                          text=True, timeout=900)


def test_cli_json_csv_bed_and_explain(design_case, tmp_path):
    target, background, design, result = design_case
    t = tmp_path / "t.fa"
    t.write_text(f">{target.id}\n{target.text}\n")
    bg = tmp_path / "bg.fa"
    bg.write_text(f">bg\n{background[0].text}\n")
    done = _cli("pairs", str(t), str(bg), "-k", str(K), "--product-size", "150-250", "--json",
                "--explain", "--backend", "multicore", "--min-3prime-distance", "off")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["family"] == "pairs" and payload["k"] == K
    first = payload["pairs"][0]
    assert {"rank", "penalty", "product_size", "left", "right", "offtarget_products",
            "closest_offtarget"} <= set(first)
    assert {"sequence", "start", "end", "tm", "gc_percent"} <= set(first["left"])
    assert [p["left"]["sequence"] for p in payload["pairs"]] == [p.left.sequence for p in result.pairs]
    assert payload["rejected"] and set(payload["phase_seconds"]) == {"kdiff", "primer3", "pcr"}
    out, bed = tmp_path / "pairs.csv", tmp_path / "pairs.bed"
    done = _cli("pairs", str(t), str(bg), "-k", str(K), "--product-size", "150-250", "-o", str(out),
                "--bed", str(bed), "--explain", "--backend", "serial", "--min-3prime-distance", "off")
    assert done.returncode == 0, done.stderr
    rows = out.read_text().splitlines()
    assert rows[0].startswith("target,rank,penalty,product_size,left_sequence") and len(rows) == 6
    header = rows[0].split(",")
    for row in rows[1:]:  # floats at 4 decimals (the JSON keeps every digit)
        cells = dict(zip(header, row.split(",")))
        for column in ("penalty", "left_tm", "right_tm", "product_tm"):
            assert len(cells[column].partition(".")[2]) <= 4, (column, cells[column])
    assert any(len(p["left"]["tm"].__repr__().partition(".")[2]) > 4 for p in payload["pairs"])
    lines = bed.read_text().splitlines()
    assert len(lines) == 5 and lines[0].split("\t")[9] == "2"
    for line in lines:  # BED12 as group writes it: thick throughout, the primers as blocks
        f = line.split("\t")
        start, end, sizes, starts = int(f[1]), int(f[2]), f[10].split(","), f[11].split(",")
        assert (f[6], f[7]) == (f[1], f[2]) and starts[0] == "0"
        assert int(starts[1]) + int(sizes[1]) == end - start
    rejected = (tmp_path / "pairs.rejected.csv").read_text().splitlines()
    assert rejected[0] == "target,orientation,start,end,sequence,reason" and len(rejected) > 1


@pytest.mark.parametrize("ranges,message", [
    (["300-100"], "inverted"), ([""], "empty product size range"), (["0-0"], "empty"),
    (["abc"], "is not FROM-TO"),
])
def test_bad_product_ranges_exit_2(ranges, message):
    done = _cli("pairs", "ACGTACGTACGTACGTACGTAGGA", "ACGTAGCATCGAT", "-k", "2",
                "--product-size", *ranges)
    assert done.returncode == 2 and message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_penalties_equal_primer3_check(design_case):
    """Each pair's penalty is what Primer3 gives the pair when asked to check it."""
    import primer3

    target, _, design, result = design_case
    for p in result.pairs:
        out = primer3.bindings.design_primers(
            {"SEQUENCE_ID": "t", "SEQUENCE_TEMPLATE": template_text(target.text),
             "SEQUENCE_PRIMER": p.left.sequence, "SEQUENCE_PRIMER_REVCOMP": p.right.sequence},
            design.global_args(PRIMER_TASK="check_primers"))
        assert out["PRIMER_PAIR_NUM_RETURNED"] == 1
        assert out["PRIMER_PAIR_0_PENALTY"] == pytest.approx(p.penalty, abs=1e-9)


def test_cancel_during_kdiff_returns_no_pairs(lambda_record, ecoli_record):
    from engine.jobs import CancelToken

    job = pairs.make_job([lambda_record.slice(0, 500)], [ecoli_record.slice(0, 20_000)], 3,
                         backend="serial")
    cancel = CancelToken()
    gen = pairs.iter_solve(job, cancel)
    cancel.cancel()
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            res = stop.value
            break
    assert not res.info.complete and res.pairs == ()


def test_settings_are_checked():
    with pytest.raises(ValueError, match="Primer3's limit"):
        dataclasses.replace(DesignSettings(), len_max=40)
    with pytest.raises(ValueError, match="optimum"):
        DesignSettings(tm_min=61.0)


@pytest.mark.parametrize("start,length,num_return,distance", [
    (0, 1000, 1000, 3),      # more pairs asked for than there are: every candidate popped
    (20_000, 600, 40, 0),    # distance 0: only the same primer twice conflicts
    (20_000, 600, 30, 10),
])
def test_best_pairs_equal_primer3_and_a_large_num_return_is_quick(lambda_record, start, length,
                                                                   num_return, distance):
    """Without a specificity filter, the pairs are Primer3's own pick (its
    PRIMER_MIN_THREE_PRIME_DISTANCE included). The kept-pair conflict scan made
    num_return 1000 on 1 kb take 53 CPU-s (and over 20 minutes on 3 kb); now about 1 s."""
    import time

    import primer3

    from engine.jobs import CancelToken
    from engine.primers.primer3_design import primer_lists

    text = template_text(lambda_record.text[start:start + length])
    design = DesignSettings(num_return=num_return, min_three_prime_distance=distance)
    lefts, rights, _ = primer_lists(text, design, "t", {})
    cpu = time.process_time()
    got = pairs.best_pairs(text, lefts, rights, design, CancelToken(), {})
    cpu = time.process_time() - cpu
    out = primer3.bindings.design_primers({"SEQUENCE_ID": "t", "SEQUENCE_TEMPLATE": text},
                                          design.global_args())
    want = [(round(out[f"PRIMER_PAIR_{i}_PENALTY"], 6), out[f"PRIMER_LEFT_{i}_SEQUENCE"],
             out[f"PRIMER_RIGHT_{i}_SEQUENCE"]) for i in range(out["PRIMER_PAIR_NUM_RETURNED"])]
    assert [(round(c.penalty, 6), a.sequence, b.sequence) for c, a, b, _ in got] == want
    assert len(want) > 20
    assert cpu < 15, cpu
