"""A CPU model of the CUDA tier kernels' column loop (engine/kdiff/cuda_bitparallel.py), to
count 64-bit block steps (issue 15): with Myers's cut-off (a block goes when its bottom scores
K+64 or more), with a tighter one (bottom minus the +1 rows of the block > K: no row of it can
be <= K), and the floor (the blocks up to the last row <= K, from a scan of every column). The
c(r) of both rules must agree.

    python scripts/probe/kdiff_blocks.py K STARTS BACKGROUND STEP [TARGET_LENGTH]

e.g. ``100 43606 241494 1000``: W2's target, background and k, every 1000th start, each over
the whole background (no chunks).
"""
import sys, time
import numpy as np
from numba import njit
from benchmarks import data
from engine.kdiff.cpu_bitparallel import advance_block as adv  # the CPU kernels' block step

ONE = np.uint64(1); ALL = np.uint64(0xFFFFFFFFFFFFFFFF); ZERO = np.uint64(0)


@njit
def popc(x):
    c = 0
    while x:
        x &= x - ONE
        c += 1
    return c

@njit
def score_at(score, pv, mv, bit):
    below = (ALL << np.uint64(bit + 1)) if bit < 63 else ZERO
    return score - popc(pv & below) + popc(mv & below)

@njit
def run(table, m_end, beta, r, K, tight, NB, ideal):
    mp = m_end - r
    live = K + 64
    c = min(K, mp)
    pv = np.zeros(NB, np.uint64); mv = np.zeros(NB, np.uint64)
    nblocks = (mp + 63) >> 6
    y = (K - 1) >> 6 if K >= 1 else 0
    for b in range(y + 1):
        pv[b] = ALL; mv[b] = ZERO
    sy = 64 * (y + 1)
    steps = 0
    done = c >= mp
    for j in range(beta.shape[0]):
        if done:
            break
        s = beta[j]
        hp = ZERO; hm = ZERO
        for b in range(y + 1):
            p, m, hp, hm = adv(pv[b], mv[b], table[s, r + 64 * b], hp, hm)
            pv[b] = p; mv[b] = m
        steps += y + 1
        # ideal: blocks up to the last row <= K (exact, by scanning the column)
        if tight:
            sc = sy + int(hp) - int(hm)
            best = 0
            for b in range(y, -1, -1):
                # rows of block b from the bottom up
                sb = sc
                for i in range(63, -1, -1):
                    if sb <= K:
                        best = b + 1
                        break
                    bit = ONE << np.uint64(i)
                    sb = sb - (1 if pv[b] & bit else 0) + (1 if mv[b] & bit else 0)
                if best:
                    break
                sc = sc - popc(pv[b]) + popc(mv[b])
            ideal[0] += max(best, 1)
        prev = sy
        last = sy + int(hp) - int(hm)
        sy = last
        pb = c >> 6
        hit = pb == y and score_at(last, pv[y], mv[y], c & 63) <= K
        keep = y
        drop = (last - popc(pv[y]) > K) if tight else (last >= live)
        if drop:
            keep = 0
            for b in range(y, -1, -1):
                ok = (sy - popc(pv[b]) <= K) if tight else (sy < live)
                if ok or b == 0:
                    keep = b
                    break
                sy = sy - popc(pv[b]) + popc(mv[b])
        if y + 1 < nblocks and (prev <= K or last < K):
            nxt = y + 1
            eq = table[s, r + 64 * nxt]
            delta = 0 if (eq & ONE) else 1
            if prev + delta <= K or last < K:
                if nxt >= NB:
                    return -1, steps
                p, m, h2, m2 = adv(ALL, ZERO, eq, hp, hm)
                v = prev + 64 + int(h2) - int(m2)
                pv[nxt] = p; mv[nxt] = m
                ok = (v - popc(p) <= K) if tight else (v < live)
                if ok:
                    keep = nxt; sy = v
                if nxt == pb and score_at(v, p, m, c & 63) <= K:
                    hit = True
                steps += 1
        y = keep
        if hit:
            c += 1
            done = c >= mp
    return c, steps

def table_for(alpha, pad):
    m = alpha.shape[0]
    t = np.zeros((16, m + pad), np.uint64)
    for s in range(16):
        bits = ((alpha & s) != 0).astype(np.uint64)
        bits = np.concatenate([bits, np.zeros(pad + 64, np.uint64)])
        for i in range(64):
            t[s, :m + pad] |= bits[i:i + m + pad] << np.uint64(i)
    return t

lam, eco = data.lambda_phage(), data.ecoli()
K = int(sys.argv[1]) - 1; n = int(sys.argv[2]); blen = int(sys.argv[3]); step = int(sys.argv[4])
alpha = lam.codes[:n + 2000 if len(sys.argv) < 6 else int(sys.argv[5])].astype(np.int64)
beta = eco.codes[:blen].astype(np.int64)
NB = 64
table = table_for(alpha, 64 * NB)
tot = [0, 0]
ideal = np.zeros(1, np.int64)
t0 = time.time()
for r in range(0, n, step):
    c0, s0 = run(table, alpha.shape[0], beta, r, K, False, NB, ideal)
    c1, s1 = run(table, alpha.shape[0], beta, r, K, True, NB, ideal)
    assert c0 == c1, (r, c0, c1)
    tot[0] += s0; tot[1] += s1
print(f"k={K+1} starts={len(range(0, n, step))} steps myers={tot[0]:.4g} tight={tot[1]:.4g} ratio={tot[1]/tot[0]:.3f} ideal={ideal[0]:.4g} ({ideal[0]/tot[0]:.3f}) ({time.time()-t0:.1f}s)")
