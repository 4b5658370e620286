"""Brute-force oracles for the primer tools, built on edlib (no engine code).

- :func:`ends`: every end of a pattern within k edits (edlib SHW per end).
- :func:`site_at`: the README's site definition at one end, by splitting the primer into
  its 5' part and its 3' window and trying every start and every split point with
  edlib NW: distance, fewest window edits among the alignments of that distance,
  smallest start.
- :func:`indel_sites`: the sites with indels, as the README defines them.
- :func:`products`: the sites paired by position.
- :func:`occurs_within`: does a sequence occur within k edits on either strand (HW)?
"""

from __future__ import annotations

import edlib

from engine.sequences import IUPAC_CODES

COMP = {"A": "T", "C": "G", "G": "C", "T": "A", "R": "Y", "Y": "R", "S": "S", "W": "W", "K": "M",
        "M": "K", "B": "V", "V": "B", "D": "H", "H": "D", "N": "N"}
#: IUPAC symbols match when their base sets intersect.
EQUAL = [(a, b) for a, x in IUPAC_CODES.items() for b, y in IUPAC_CODES.items() if a < b and x & y]


def rc(s: str) -> str:
    return "".join(COMP[c] for c in reversed(s))


def nw(a: str, b: str) -> int:
    if not a:
        return len(b)
    if not b:
        return len(a)
    return edlib.align(a, b, mode="NW", task="distance", additionalEqualities=EQUAL)["editDistance"]


def ends(pattern: str, text: str, k: int) -> dict[int, int]:
    """0-based end -> smallest distance of ``pattern`` ending exactly there (<= k)."""
    out = {}
    rp = pattern[::-1]
    m = len(pattern)
    for j in range(len(text)):
        window = text[max(0, j + 1 - m - k):j + 1][::-1]
        r = edlib.align(rp, window, mode="SHW", task="distance", k=k, additionalEqualities=EQUAL)
        if r["editDistance"] != -1:
            out[j] = r["editDistance"]
    return out


def site_at(primer: str, text: str, j: int, d: int, minus: bool, window: int) -> tuple[int, int]:
    """(3' window edits, 0-based start) of the best site of ``primer`` ending at ``j``
    (forward text coordinates) with distance ``d``."""
    w = min(window, len(primer))
    head, tail = primer[:-w], primer[-w:]
    best = None
    m = len(primer)
    for s in range(max(0, j + 1 - m - d), max(0, j + 1 - m + d) + 1):
        seg = text[s:j + 1]
        if nw(rc(primer) if minus else primer, seg) != d:
            continue
        e3 = None
        for x in range(len(seg) + 1):
            if minus:  # forward order: rc(tail) then rc(head)
                t, h = nw(rc(tail), seg[:x]), nw(rc(head), seg[x:])
            else:
                h, t = nw(head, seg[:x]), nw(tail, seg[x:])
            if h + t == d and (e3 is None or t < e3):
                e3 = t
        if e3 is not None and (best is None or (e3, s) < best):
            best = (e3, s)
    return best


def hamming_sites(primer: str, text: str, k: int, minus: bool, window: int):
    """Mismatch-only: (start, end, d, e3) of every window of the primer's length within k."""
    q = rc(primer) if minus else primer
    m, w = len(q), min(window, len(q))
    eq = {(a, b) for a, b in EQUAL} | {(b, a) for a, b in EQUAL}
    out = []
    for s in range(len(text) - m + 1):
        mism = [i for i in range(m) if q[i] != text[s + i] and (q[i], text[s + i]) not in eq]
        if len(mism) <= k:
            e3 = sum(1 for i in mism if (i < w if minus else i >= m - w))
            out.append((s, s + m - 1, len(mism), e3))
    return out


def indel_sites(primer: str, text: str, k: int, max3: int, minus: bool, window: int):
    """The README's sites with indels: (start, end, d, e3), 0-based.

    Candidates: every ungapped window within k (:func:`hamming_sites`), and at each end
    the best alignment where it beats that end's ungapped one on (edits, 3' edits); those
    that fail the 3' rule go. A gapped candidate stays unless a candidate that overlaps it
    has fewer edits, or is ungapped with as many. One per span (fewest edits, then 3')."""
    m = len(primer)
    plain = {(s, e): (d, e3) for s, e, d, e3 in hamming_sites(primer, text, len(primer), minus,
                                                              window)}
    cands = {}
    for s, e, d, e3 in hamming_sites(primer, text, k, minus, window):
        if e3 <= max3:
            cands[(s, e, False)] = (d, e3)
    for j, d in ends(rc(primer) if minus else primer, text, k).items():
        e3, s = site_at(primer, text, j, d, minus, window)
        own = plain.get((j - m + 1, j))
        if e3 <= max3 and (own is None or (d, e3) < own):
            cands[(s, j, True)] = (d, e3)
    best = {}
    for (s, e, gapped), (d, e3) in cands.items():
        if gapped and any(t <= e and s <= u and (dd < d or (dd == d and not g))
                          for (t, u, g), (dd, _) in cands.items() if (t, u, g) != (s, e, gapped)):
            continue
        if (s, e) not in best or (d, e3) < best[(s, e)]:
            best[(s, e)] = (d, e3)
    return sorted((s, e, d, e3) for (s, e), (d, e3) in best.items())


def sites(primers: dict, records: dict, k: int, max3: int, window: int, indels: bool = True):
    """{(primer, record, strand): [(start1, end1, d, e3)]}: the README's sites (1-based)."""
    out = {}
    for pname, p in primers.items():
        for rname, text in records.items():
            for strand in "+-":
                minus = strand == "-"
                if indels:
                    found = indel_sites(p, text, k, max3, minus, window)
                else:
                    found = [f for f in hamming_sites(p, text, k, minus, window) if f[3] <= max3]
                if found:
                    out[(pname, rname, strand)] = [(s + 1, e + 1, d, e3) for s, e, d, e3 in found]
    return out


def products(primers: dict, records: dict, k: int, max3: int, window: int, lo: int, hi: int,
             indels: bool = True) -> set:
    """{(forward, reverse, record, start, end, fwd edits, rev edits, fwd 3', rev 3')}."""
    found = sites(primers, records, k, max3, window, indels)
    out = set()
    for (fa, ra, sa), plus in found.items():
        if sa != "+":
            continue
        for (fb, rb, sb), minus in found.items():
            if sb != "-" or rb != ra:
                continue
            for a in plus:
                for b in minus:
                    if a[0] <= b[0] and a[1] <= b[1] and lo <= b[1] - a[0] + 1 <= hi:
                        out.add((fa, fb, ra, a[0], b[1], a[2], b[2], a[3], b[3]))
    return out


def occurs_within(seq: str, background: str, k: int) -> bool:
    """Does ``seq`` (or its reverse complement) occur in ``background`` within k edits?"""
    for q in (seq, rc(seq)):
        r = edlib.align(q, background, mode="HW", task="distance", k=k, additionalEqualities=EQUAL)
        if r["editDistance"] != -1:
            return True
    return False
