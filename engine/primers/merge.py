"""Merge overlapping candidates into regions (biologists pick regions, not strings)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Region:
    target_id: str
    start: int      # 1-based, inclusive
    end: int        # inclusive
    best: object    # the shortest candidate in the region (most specific); leftmost on ties
    count: int

    @property
    def length(self) -> int:
        return self.end - self.start + 1


def merge_candidates(candidates) -> list[Region]:
    """Union of overlapping candidates per target, in order.

    Candidates come sorted by target then start (as every kdiff result is).
    """
    regions: list[Region] = []
    cur = None
    for c in candidates:
        if cur and c.target_id == cur[0] and c.start <= cur[2]:
            best = cur[3] if cur[3].length <= c.length else c
            cur = (cur[0], cur[1], max(cur[2], c.end), best, cur[4] + 1)
            continue
        if cur:
            regions.append(Region(*cur))
        cur = (c.target_id, c.start, c.end, c, 1)
    if cur:
        regions.append(Region(*cur))
    return regions
