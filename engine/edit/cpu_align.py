"""The path stage: start position and CIGAR of a hit (or of a global pair), for every variant.

A variant decides distances and end positions; recovering the alignment is a
separate, pay-if-asked stage (edlib's ``distance < locations < path`` ladder),
done by this one routine so every variant reports the same start and CIGAR.

- **Start.** The reversed pattern is run, anchored, leftwards from the end:
  the last row of that matrix holds ed(P, T[e-L:e]) for every L at once. The
  start is e - L for the largest L <= m + d whose value is d (the longest
  optimal occurrence, as edlib reports).
- **CIGAR.** The window is aligned globally with Myers' bit-vectors; columns of
  vertical deltas are kept (every column when they fit in
  ``store_words``, else every S-th column, S ~ sqrt(L), and a segment of S
  columns recomputed at a time, so memory stays O(sqrt(L) m/64) for long
  global pairs). The trace goes back from (m, L) preferring ``I`` (pattern
  symbol unmatched), then ``D`` (text symbol unmatched), then the diagonal,
  which is edlib's choice, so CIGARs can be checked against edlib's; a
  value C[i,j] is read as j plus the deltas of rows 1..i.
- **Orientation.** A CIGAR reads along the pattern 5'->3' against ``matched``
  (the text as read on the hit's strand). A ``-`` instance is the pattern's
  reverse complement run along the forward text, so its trace, which starts at
  the window's end, already reads the pattern forwards against the window's
  reverse complement: :func:`align_item` turns only ``+`` traces around.

Op codes: 0 ``=``, 1 ``X``, 2 ``I``, 3 ``D``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from engine.edit.cpu_bits import ONE, advance_column, blocks, init_blocked, row_delta, rows_sum

OPS = "=XID"
OP_CODES = np.frombuffer(OPS.encode("ascii"), dtype=np.uint8).copy()
OP_MATCH, OP_MISMATCH, OP_INS, OP_DEL = 0, 1, 2, 3
ABORTED = -3


@njit(nogil=True, cache=True)
def find_start(pat, m, text, e, lo_bound, d):
    """Smallest start s >= lo_bound with ed(pat, text[s:e]) == d and no gap base (code 0) in
    text[s:e]; -1 if the data disagree."""
    state = np.empty(18 * ((m + 63) // 64), dtype=np.uint64)  # a row as the lanes keep it
    init_blocked(pat, m, state, True)
    nb, last, pvs, mvs, peq = blocks(state, m)
    score = np.int64(m)
    best = 0 if score == d else -1
    longest = min(e - lo_bound, m + d)
    for length in range(1, longest + 1):
        if text[e - length] == 0:
            break  # an assembly gap base (engine.gaps): an occurrence ends at a gap's edge
        score += advance_column(pvs, mvs, peq, text[e - length], nb, ONE, last)
        if score == d:
            best = length
        elif score < d:
            return -1
    if best < 0:
        return -1
    return e - best


@njit(nogil=True, cache=True)
def _store(dst, pvs, mvs, nb):
    for b in range(nb):
        dst[b] = pvs[b]
        dst[nb + b] = mvs[b]


@njit(nogil=True, cache=True)
def _fill_segment(seg, ck, stride, c0, length, peq, nb, last, text, start, pvs, mvs):
    """Columns c0..min(c0+stride, length) of the window into ``seg``, from checkpoint c0."""
    row = ck[c0 // stride]
    for b in range(nb):
        pvs[b] = row[b]
        mvs[b] = row[nb + b]
    _store(seg[0], pvs, mvs, nb)
    for y in range(1, min(stride, length - c0) + 1):
        advance_column(pvs, mvs, peq, text[start + c0 + y - 1], nb, ONE, last)
        _store(seg[y], pvs, mvs, nb)


@njit(nogil=True, cache=True)
def align_window(pat, m, text, start, length, d, store_words, ops, abort):
    """Ops of the traced alignment of pat against text[start:start+length], from its end
    backwards (the last column's op first).

    Columns are stored as rows ``[pv x nb, mv x nb]``. Returns the number of
    ops; -1 if the matrix disagrees with ``d`` (a bug), ABORTED if cancelled.
    """
    if length == 0:
        for i in range(m):
            ops[i] = OP_INS
        return m if d == m else -1
    state = np.empty(18 * ((m + 63) // 64), dtype=np.uint64)  # a row as the lanes keep it
    init_blocked(pat, m, state, False)
    nb, last, pvs, mvs, peq = blocks(state, m)
    if (length + 1) * 2 * nb <= store_words:
        stride = length
    else:
        stride = max(1, int(math.sqrt(length)))
    ck = np.empty((length // stride + 1, 2 * nb), dtype=np.uint64)
    _store(ck[0], pvs, mvs, nb)
    if stride < length:
        for c in range(1, length + 1):
            if (c & 4095) == 0 and abort[0] != 0:
                return ABORTED
            advance_column(pvs, mvs, peq, text[start + c - 1], nb, ONE, last)
            if c % stride == 0:
                _store(ck[c // stride], pvs, mvs, nb)
    seg = np.empty((stride + 1, 2 * nb), dtype=np.uint64)
    seg_lo = -1
    cj = np.empty(2 * nb, dtype=np.uint64)   # column j
    cj1 = np.empty(2 * nb, dtype=np.uint64)  # column j-1
    i = m
    j = length
    n = 0
    v = 0
    x = j
    while True:
        # Fetch column x (first j, then always j-1) from its segment (c0, c0+stride].
        c0 = ((x - 1) // stride) * stride if x > 0 else 0
        if c0 != seg_lo:
            if abort[0] != 0:
                return ABORTED
            _fill_segment(seg, ck, stride, c0, length, peq, nb, last, text, start, pvs, mvs)
            seg_lo = c0
        row = seg[x - c0]
        dst = cj if x == j else cj1
        for w in range(2 * nb):
            dst[w] = row[w]
        if x == j:
            v = j + rows_sum(cj, nb, i)
            if v != d:
                return -1
        else:
            vl = x + rows_sum(cj1, nb, i)
            # Walk up column j while the trace stays in it (I), then step left (D, or diagonal).
            while True:
                if i > 0 and row_delta(cj, nb, i) == 1:
                    ops[n] = OP_INS
                    n += 1
                    vl -= row_delta(cj1, nb, i)
                    i -= 1
                    v -= 1
                    continue
                if vl + 1 == v:
                    ops[n] = OP_DEL
                    n += 1
                    v = vl
                    break
                vd = vl - row_delta(cj1, nb, i)  # i > 0 here: in row 0, vl + 1 == v
                cost = 0 if (pat[i - 1] & text[start + j - 1]) else 1
                if vd + cost != v:
                    return -1
                ops[n] = OP_MATCH if cost == 0 else OP_MISMATCH
                n += 1
                i -= 1
                v = vd
                break
            j -= 1
            cj, cj1 = cj1, cj
        if j == 0:
            break
        x = j - 1
    for _ in range(i):  # column 0: C[i,0] = i, only insertions remain
        ops[n] = OP_INS
        n += 1
    return n


@njit(nogil=True, cache=True)
def align_item(pats, p_offs, p_minus, text, item, ops, store_words, abort):
    """(start, op count) of one item = [pattern, end, record start, distance, start or -1];
    the ops in the pattern's 5'->3' order against the window as read on the instance's
    strand (``p_minus[p]``: instance p is a reverse complement, see Orientation above)."""
    p = item[0]
    pat = pats[p_offs[p]:p_offs[p + 1]]
    m = pat.shape[0]
    e = item[1]
    start = item[4]
    if start < 0:
        start = find_start(pat, m, text, e, item[2], item[3])
        if start < 0:
            return -1, -1
    n = align_window(pat, m, text, start, e - start, item[3], store_words, ops, abort)
    if not p_minus[p]:  # a '+' trace reads backwards along the pattern
        for y in range(n // 2):
            ops[y], ops[n - 1 - y] = ops[n - 1 - y], ops[y]
    return start, n


@njit(nogil=True, cache=True)
def align_serial(pats, p_offs, p_minus, text, items, op_offs, ops, starts, counts, store_words,
                 abort):
    for h in range(items.shape[0]):
        starts[h], counts[h] = align_item(pats, p_offs, p_minus, text, items[h],
                                          ops[op_offs[h]:op_offs[h + 1]], store_words, abort)


@njit(nogil=True, cache=True, parallel=True)
def align_parallel(pats, p_offs, p_minus, text, items, op_offs, ops, starts, counts, store_words,
                   abort):
    for h in prange(items.shape[0]):
        starts[h], counts[h] = align_item(pats, p_offs, p_minus, text, items[h],
                                          ops[op_offs[h]:op_offs[h + 1]], store_words, abort)


@njit(nogil=True, cache=True)
def cigar_bytes(ops, op_offs, counts, out, out_offs):
    """Run-length CIGAR text of every item into ``out`` (ASCII); ``out_offs[h+1]`` ends item h.

    An item's CIGAR takes at most 2 bytes per op (a run of r ops takes
    digits(r) + 1 <= 2r bytes), which is how ``out`` is sized.
    """
    w = 0
    out_offs[0] = 0
    for h in range(counts.shape[0]):
        n = counts[h]
        x = op_offs[h]
        end = x + n if n > 0 else x
        while x < end:
            op = ops[x]
            run = 1
            while x + run < end and ops[x + run] == op:
                run += 1
            digits = 1
            while run >= 10 ** digits:
                digits += 1
            value = run
            for d in range(digits - 1, -1, -1):
                out[w + d] = 48 + value % 10
                value //= 10
            w += digits
            out[w] = OP_CODES[op]
            w += 1
            x += run
        out_offs[h + 1] = w



def cigar_text(ops: np.ndarray, op_offs: np.ndarray, counts: np.ndarray):
    """(letters, offsets): every item's run-length CIGAR end to end as ASCII bytes, item h's
    at letters[offsets[h]:offsets[h+1]] (empty where the item was not aligned)."""
    out = np.zeros(2 * int(np.maximum(counts, 0).sum()) + 1, dtype=np.uint8)
    out_offs = np.zeros(len(counts) + 1, dtype=np.int64)
    cigar_bytes(ops, op_offs, counts, out, out_offs)
    return out[:out_offs[-1]], out_offs


@njit(nogil=True, cache=True)
def gather_windows(text, starts, ends, minus, complement, out, out_offs):
    """Concatenate text[start:end] per item (reverse-complemented where ``minus``)."""
    w = 0
    out_offs[0] = 0
    for h in range(starts.shape[0]):
        if minus[h]:
            for x in range(ends[h] - 1, starts[h] - 1, -1):
                out[w] = complement[text[x]]
                w += 1
        else:
            for x in range(starts[h], ends[h]):
                out[w] = text[x]
                w += 1
        out_offs[h + 1] = w


def matched_strings(text, starts, ends, minus) -> list:
    """The text of each window as read on its strand, decoded in one pass."""
    from engine.sequences import COMPLEMENT_TABLE, DECODE_TABLE

    lengths = np.maximum(ends - starts, 0)
    out = np.zeros(int(lengths.sum()), dtype=np.uint8)
    out_offs = np.zeros(len(starts) + 1, dtype=np.int64)
    if isinstance(text, np.ndarray):
        gather_windows(text, starts, ends, minus, COMPLEMENT_TABLE, out, out_offs)
    else:  # a streamed text (engine.streaming.FlatText): read just the windows
        np.cumsum(lengths, out=out_offs[1:])
        item = np.repeat(np.arange(len(starts)), lengths)
        step = np.arange(out.shape[0]) - out_offs[item]
        back = np.asarray(minus, dtype=bool)[item]
        out[:] = text[np.where(back, ends[item] - 1 - step, starts[item] + step)]
        out[back] = COMPLEMENT_TABLE[out[back]]
    letters = DECODE_TABLE[out].tobytes().decode("ascii")
    bounds = out_offs.tolist()
    return [letters[bounds[h]:bounds[h + 1]] for h in range(len(starts))]
