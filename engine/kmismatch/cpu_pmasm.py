"""kmismatch ``pmasm``: the look-up memory of fb-vectors (Nguyen et al.), on the CPU.

All r patterns of one length m (with both strands: the patterns and their
reverse complements) get one b-bit mismatch counter each, b = ceil(log2(m+1)),
packed ``64 // b`` to a 64-bit word; W words hold them all. The look-up memory
holds, for every level (pattern position) l and every text symbol c, the
fb-vector whose counter i is 1 when pattern i mismatches c at level l (base
sets that do not intersect). The counters of a window are the sum of its m
fb-vectors: one add updates every pattern at once, and no counter overflows
into its neighbour because it never exceeds m.

Two things make the CPU version fast without changing the method:
- **Levels are grouped.** s consecutive levels share one table indexed by the
  s text symbols they read (a q-gram code), so a window costs G = ceil(m/s)
  look-ups instead of m. The table for a group is the sum of its levels'
  fb-vectors. Two memories are built: blocks of plain A/C/G/T text read 2-bit
  digits (s up to 6), other blocks the 4-bit IUPAC codes themselves (s up to
  3); s shrinks while a memory would outgrow ``KMISMATCH_TABLE_BYTES``.
- **The k-test is word-parallel.** When k and m allow it, a bias is folded into
  the first table so that a counter's top bit is clear exactly when it is <= k
  (one AND-NOT per word); otherwise a carry trick compares all counters of a
  word with k in four operations. A vectorised pass flags the windows with a
  hit (a byte each); only the flagged windows' counters are read out.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange
from numba.cpython.unsafe.numbers import trailing_zeros

from engine import config

# prm layout: m, k, R (shared with the other variants), then these fields; the two
# look-up memories (2-bit and 4-bit digits) each have G, s, T and an offset in ``tab``.
_B, _RPW, _W, _MODE, _BIAS, _BLOCK = range(3, 9)
_ALPHABETS = 9  # (G, s, T, offset) of the 2-bit memory, then of the 4-bit one

_NO_PATTERNS = np.zeros((0, 0), dtype=np.uint8)


def counter_bits(m: int) -> int:
    """b = ceil(log2(m+1)): the width that holds any count 0..m."""
    return max(1, int(m).bit_length())


def choose_grouping(m: int, words: int, bits: int, budget: int) -> tuple[int, int]:
    """(symbols per group s, groups G) for digits of ``bits`` bits.

    The largest s whose memory (words * G * 2**(bits*s) * 8 bytes) fits the
    budget, with s then evened out over the G groups (same G, smaller tables).
    """
    s = max(1, min(12 // bits, m))
    while s > 1 and words * -(-m // s) * (1 << (bits * s)) * 8 > budget:
        s -= 1
    groups = -(-m // s)
    return -(-m // groups), groups


@njit(nogil=True, cache=True)
def fb_vectors(slot_patterns, b, rpw, W):
    """fb[w, level, c]: counter r (word r // rpw, field r % rpw) is 1 when slot r's
    symbol at ``level`` does not match the 4-bit text symbol c (the paper's fb-vectors)."""
    R, m = slot_patterns.shape
    fb = np.zeros((W, m, 16), dtype=np.uint64)
    for r in range(R):
        bit = np.uint64(1) << np.uint64((r % rpw) * b)
        for level in range(m):
            p = slot_patterns[r, level]
            for c in range(16):
                if (p & c) == 0:
                    fb[r // rpw, level, c] |= bit
    return fb


@njit(nogil=True, cache=True)
def group_tables(fb, bits, s, G, first):
    """Look-up memory [w, g, code], flat: the sum over the s levels of group g of the
    fb-vector of the symbol that the code's digit stands for at that level (levels
    past m add nothing: they read whatever follows the window). Group 0 starts
    from ``first`` (the bias of the k-test). Built digit by digit: the table of the
    first u+1 levels is that of the first u, each entry extended by every digit."""
    W, m, _ = fb.shape
    D = 1 << bits
    T = 1 << (bits * s)
    tab = np.empty(W * G * T, dtype=np.uint64)
    for w in range(W):
        for g in range(G):
            row = (w * G + g) * T
            tab[row] = first if g == 0 else np.uint64(0)
            size = 1
            for u in range(s):
                level = g * s + u
                # Descending, so that an entry is read before its slots are written.
                for c in range(size - 1, -1, -1):
                    v = tab[row + c]
                    for d in range(D):
                        add = np.uint64(0)
                        if level < m:
                            add = fb[w, level, (1 << d) if bits == 2 else d]
                        tab[row + c * D + d] = v + add
                size *= D
    return tab


def build_model(slot_patterns: np.ndarray, k: int):
    """(pat, tab, prm, msk) for :func:`scan_range` from the (R, m) slot patterns."""
    R, m = slot_patterns.shape
    k = min(k, m)  # k >= m: every window hits; the counters still give the distance
    b = counter_bits(m)
    rpw = 64 // b
    W = -(-R // rpw)

    fb = fb_vectors(np.ascontiguousarray(slot_patterns, dtype=np.uint8), b, rpw, W)

    half = 1 << (b - 1)
    field_ones = sum(1 << (f * b) for f in range(rpw))
    valid = np.zeros(W, dtype=np.uint64)
    for w in range(W):
        used = min(rpw, R - w * rpw)
        valid[w] = sum(1 << (f * b + b - 1) for f in range(used))
    if k <= half - 1 and m - k <= half:
        # Bias every counter by half-1-k: it then stays below 2**b and its top bit
        # is set exactly when the mismatches exceed k.
        mode, bias = 0, half - 1 - k
        low = y_low = 0
    else:
        # Carry test: top bit of (c & low) + (y & low), with y = 2**b - 1 - k, is
        # the carry into the counter's top bit; combined with the top bit itself
        # it says c + y >= 2**b, i.e. c > k.
        y = (1 << b) - 1 - k
        mode = 1 if y >= half else 2
        bias = 0
        low = (half - 1) * field_ones
        y_low = (y & (half - 1)) * field_ones

    # Two memories: blocks of plain A/C/G/T text read 2-bit digits, others 4-bit codes.
    # Many words: fewer windows a block, so that their counters (block x W) stay ~2 MB.
    block = max(8, min(config.KMISMATCH_PMASM_BLOCK, (1 << 18) // W) // 8 * 8)
    prm = [m, k, R, b, rpw, W, mode, bias, block]
    tables = []
    offset = 0
    for bits in (2, 4):
        s, G = choose_grouping(m, W, bits, config.KMISMATCH_TABLE_BYTES)
        tab = group_tables(fb, bits, s, G, np.uint64(bias * field_ones))
        prm += [G, s, 1 << (bits * s), offset]
        tables.append(tab)
        offset += tab.size
    msk = np.concatenate([np.array([low, y_low], dtype=np.uint64), valid])
    return _NO_PATTERNS, np.concatenate(tables), np.array(prm, dtype=np.int64), msk


@njit(nogil=True, cache=True, inline="always")
def _hit_mask(acc, mode, low, y_low, valid):
    """Top bits of the counters <= k (restricted to counters in use)."""
    if mode == 0:
        bad = acc
    elif mode == 1:
        bad = ((acc & low) + y_low) | acc
    else:
        bad = ((acc & low) + y_low) & acc
    return valid & ~bad


@njit(nogil=True, cache=True)
def scan_range(text, lo, hi, pat, tab, prm, msk, slot_code, pos, code, mis, base, cap, abort):
    """Windows starting in [lo, hi) of the flat text.

    Hit i goes to ``pos/code/mis[base + i]``: window start, ``slot_code`` of its
    slot (pattern and strand) and mismatches, in window then slot order.
    Returns (hits written, first window not done): the second is ``hi`` unless
    the buffer could not take another window's worth of hits (``cap``) or
    ``abort[0]`` was set. ``pat`` is unused (the variants share one signature).
    """
    R = prm[2]
    b = prm[_B]
    rpw = prm[_RPW]
    W = prm[_W]
    mode = prm[_MODE]
    bias = prm[_BIAS]
    block = prm[_BLOCK]
    low = msk[0]
    y_low = msk[1]
    most = 0  # longest text stretch a block reads, over both memories
    for a in range(2):
        at = _ALPHABETS + 4 * a
        most = max(most, prm[at] * prm[at + 1])
    stride = block + 8
    digits = np.empty(stride + most, dtype=np.uint16)
    qgram = np.empty(stride + most, dtype=np.uint16)
    accs = np.empty(stride * W, dtype=np.uint64)
    flags = np.zeros(stride, dtype=np.uint8)
    flagged = np.empty(stride, dtype=np.int64)
    field_mask = np.uint64((1 << b) - 1)
    field_of_bit = np.empty(64, dtype=np.int64)
    for t in range(64):
        field_of_bit[t] = t // b
    nh = 0
    j0 = lo
    while j0 < hi:
        if abort[0] != 0:
            return nh, j0
        nb = min(block, hi - j0)
        n8 = (nb + 7) & ~7  # whole batches of 8 windows
        # Digits of the block: 2-bit when it is plain A/C/G/T (the one-hot codes 1, 2, 4,
        # 8 become 0..3), else the 4-bit codes. Past the end of the text they are 0:
        # only levels past m read them, and those add nothing. (Slices keep indices
        # non-negative, so these loops vectorise.)
        src = text[j0:j0 + n8 + most - 1]
        have = src.shape[0]
        other = np.uint8(0)
        for i in range(have):
            x = src[i]
            # (a gap base, code 0, is no one-hot code: x - 1 wraps to 255, whose high nibble
            # flags it. For the codes 0..15 this is x == 0, but without a compare per base:
            # this loop is the whole text's, and the compare cost ~4 % of a T3 solve)
            other |= (x & (x - np.uint8(1))) | ((x - np.uint8(1)) & np.uint8(0xF0))
            digits[i] = np.uint16((x >> np.uint8(1)) - (x >> np.uint8(3)))
        bits = 2
        if other != 0:
            bits = 4
            for i in range(have):
                digits[i] = src[i]
        for i in range(have, n8 + most - 1):
            digits[i] = 0
        at = _ALPHABETS + 4 * (bits // 4)
        G = prm[at]
        s = prm[at + 1]
        T = prm[at + 2]
        offset = prm[at + 3]
        T_u = np.uint64(T)
        s_u = np.uint64(s)
        # q-gram codes: one vector pass per symbol of a group.
        nq = n8 + (G - 1) * s
        for i in range(nq):
            qgram[i] = digits[i]
        for u in range(1, s):
            nxt = digits[u:u + nq]
            if bits == 2:
                for i in range(nq):
                    qgram[i] = np.uint16(qgram[i] << np.uint16(2)) | nxt[i]
            else:
                for i in range(nq):
                    qgram[i] = np.uint16(qgram[i] << np.uint16(4)) | nxt[i]
        # The counters of every window: the sum of its G fb-vectors, for 8 windows at a
        # time (8 independent chains of adds).
        for w in range(W):
            out = w * stride
            for jb in range(0, n8, 8):
                a0 = np.uint64(0)
                a1 = np.uint64(0)
                a2 = np.uint64(0)
                a3 = np.uint64(0)
                a4 = np.uint64(0)
                a5 = np.uint64(0)
                a6 = np.uint64(0)
                a7 = np.uint64(0)
                row = np.uint64(offset + w * G * T)
                qo = np.uint64(jb)
                for _ in range(G):
                    a0 += tab[row + np.uint64(qgram[qo])]
                    a1 += tab[row + np.uint64(qgram[qo + np.uint64(1)])]
                    a2 += tab[row + np.uint64(qgram[qo + np.uint64(2)])]
                    a3 += tab[row + np.uint64(qgram[qo + np.uint64(3)])]
                    a4 += tab[row + np.uint64(qgram[qo + np.uint64(4)])]
                    a5 += tab[row + np.uint64(qgram[qo + np.uint64(5)])]
                    a6 += tab[row + np.uint64(qgram[qo + np.uint64(6)])]
                    a7 += tab[row + np.uint64(qgram[qo + np.uint64(7)])]
                    row += T_u
                    qo += s_u
                o = out + jb
                accs[o] = a0
                accs[o + 1] = a1
                accs[o + 2] = a2
                accs[o + 3] = a3
                accs[o + 4] = a4
                accs[o + 5] = a5
                accs[o + 6] = a6
                accs[o + 7] = a7
        # One flag byte per window: does one of its words hold a counter <= k? (vectorises)
        for w in range(W):
            acc_w = accs[w * stride:w * stride + n8]
            valid = msk[2 + w]
            if w == 0:
                for i in range(n8):
                    flags[i] = np.uint8(_hit_mask(acc_w[i], mode, low, y_low, valid) != 0)
            else:
                for i in range(n8):
                    flags[i] |= np.uint8(_hit_mask(acc_w[i], mode, low, y_low, valid) != 0)
        for i in range(nb, n8):
            flags[i] = 0
        # The flagged windows, listed without branching (a hit is too common for a branch
        # per window to be predicted), then their counters read out in window then slot
        # order.
        nf = 0
        for i in range(n8):
            flagged[nf] = i
            nf += flags[i]
        for c in range(nf):
            jj = flagged[c]
            if nh + R > cap:
                return nh, j0 + jj
            for w in range(W):
                acc = accs[w * stride + jj]
                hits = _hit_mask(acc, mode, low, y_low, msk[2 + w])
                while hits:
                    f = field_of_bit[trailing_zeros(hits)]
                    hits &= hits - np.uint64(1)
                    pos[base + nh] = j0 + jj
                    code[base + nh] = slot_code[w * rpw + f]
                    mis[base + nh] = np.int64((acc >> np.uint64(f * b)) & field_mask) - bias
                    nh += 1
        j0 += nb
    return nh, hi


# Chunk drivers (one pair per variant, so that LLVM optimises each scanner on its own).
# Every chunk has its own region of the output arrays: no two threads write one place.
@njit(nogil=True, cache=True)
def scan_chunks_serial(text, los, his, pat, tab, prm, msk, slot_code, pos, code, mis, bases, caps,
                       counts, reached, abort):
    for c in range(los.shape[0]):
        counts[c], reached[c] = scan_range(text, los[c], his[c], pat, tab, prm, msk, slot_code,
                                           pos, code, mis, bases[c], caps[c], abort)


@njit(nogil=True, cache=True, parallel=True)
def scan_chunks_multicore(text, los, his, pat, tab, prm, msk, slot_code, pos, code, mis, bases,
                          caps, counts, reached, abort):
    for c in prange(los.shape[0]):
        counts[c], reached[c] = scan_range(text, los[c], his[c], pat, tab, prm, msk, slot_code,
                                           pos, code, mis, bases[c], caps[c], abort)
