"""Soft-masked repeats: lower case in UCSC and Ensembl FASTA, mask blocks in .2bit, a genome
store's mask table (issue #28).

Matching stays case-blind: the codes never see the case. A record keeps where its text
was lower case (:attr:`engine.sequences.Record.soft_mask`), and ``--avoid-masked`` drops
every kdiff candidate and every designed primer whose 3'-most :data:`THREE_PRIME_BASES`
bases touch a masked base. A primer's 3' end is what the polymerase extends: one that ends
in a repeat primes at every copy of it, which is what Primer3's lower-case masking guards
against too (it looks at the 3' base only; here the 5 bases of the 3' end).
"""

from __future__ import annotations

import numpy as np

from engine.gaps import touches_gap
from engine.sequences import SequenceError

#: The 3'-most bases of a primer that must not touch a soft-masked base (``--avoid-masked``).
THREE_PRIME_BASES = 5


def known_mask(record):
    """The record's soft mask ((starts, ends), or None: nothing was lower case). A
    SequenceError when the case was not kept (a format-1 genome store)."""
    if not record.soft_mask_known:
        raise SequenceError(f"{record.source}: record '{record.id}': this genome store keeps "
                            "no soft-mask table (format 1); rebuild it with primerscope index "
                            "to use --avoid-masked")
    return record.soft_mask


def three_prime_masked(record, starts, ends, reverse=False) -> np.ndarray:
    """Per primer site [starts[i], ends[i]) of ``record`` (0-based, half-open, in its codes'
    numbering): whether the site's 3'-most :data:`THREE_PRIME_BASES` bases hold a soft-masked
    base. A forward primer's 3' end is its site's end; a reverse primer (``reverse``: a bool,
    or one per site) reads the other strand, so its 3' end is its site's start."""
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    mask = known_mask(record)
    if mask is None or starts.size == 0:
        return np.zeros(starts.shape[0], dtype=bool)
    reverse = np.broadcast_to(np.asarray(reverse, dtype=bool), starts.shape)
    lo = np.where(reverse, starts, np.maximum(starts, ends - THREE_PRIME_BASES))
    hi = np.where(reverse, np.minimum(ends, starts + THREE_PRIME_BASES), ends)
    return touches_gap(mask, lo, hi)


def masked_candidates(candidates, targets) -> np.ndarray:
    """Per kdiff candidate (a :class:`engine.kdiff.CandidateTable`, in its targets' order):
    whether its 3'-most bases, read as a forward primer, touch a soft-masked base."""
    bad = np.zeros(len(candidates), dtype=bool)
    for t in np.unique(candidates.target).tolist():
        rows = np.flatnonzero(candidates.target == t)
        start0 = candidates.start0[rows]
        bad[rows] = three_prime_masked(targets[t], start0, start0 + candidates.length[rows])
    return bad


def drop_masked_candidates(candidates, targets):
    """The candidates :func:`masked_candidates` does not flag (``--avoid-masked``)."""
    bad = masked_candidates(candidates, targets)
    return candidates.take(np.flatnonzero(~bad)) if bad.any() else candidates
