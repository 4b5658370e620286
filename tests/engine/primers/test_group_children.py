"""Primer3's child processes in the group search (issue #30): one pool for the whole search
(its Primer3 rounds and its pair rankings), no child left after it ends however it ends, and
each cluster ranked only as far as the walk over the pairs can reach (the same pairs as a
full ranking)."""

from __future__ import annotations

import multiprocessing
import os

import pytest

from engine.jobs import CancelToken, drive
from engine.primers import group as G
from engine.primers import children, pairs, pcr
from engine.primers.primer3_design import DesignSettings, primer_lists, template_text
from engine.sequences import Record, encode
from tests.engine.test_group import Case, settings

NAME = "primerscope-primer3"


def _ours() -> list:
    return [p for p in multiprocessing.active_children() if p.name == NAME]


def two_loci():
    """Two planted loci, a Primer3 round each (with ROUND_BASES 1)."""
    one, two = Case(3, seed=7), Case(3, seed=8)
    include = [G.Genome(a.name, (Record(a.name, encode(a.records[0].text + b.records[0].text)),))
               for a, b in zip(one.include, two.include)]
    return include, one.exclude


def distinct() -> G.GroupSettings:
    """Primer3's 3' distance rule (its default) leaves a few pairs a locus: every pair
    asked for needs both loci."""
    return G.GroupSettings(product_size=(100, 200), num_return=1000)


# -- the pool itself ------------------------------------------------------------------------------

def _count(step):
    """A child's own state between calls: a counter in this module, in the child."""
    global _COUNTED
    _COUNTED = globals().get("_COUNTED", 0) + step
    return _COUNTED, os.getpid()


def _fail(message):
    raise ValueError(message)


def _slow(seconds):
    import time

    time.sleep(seconds)
    return seconds


def test_pool_runs_calls_in_order_and_children_keep_their_state():
    pool = children.ChildPool()
    before = children.ChildPool.started
    try:
        calls = [(w % 2, _count, (1,)) for w in range(6)]
        out = drive_pool(pool.run(calls, CancelToken(), lambda: None))
        again = drive_pool(pool.run([(0, _count, (10,)), (1, _count, (10,))], CancelToken(),
                                    lambda: None))
    finally:
        pool.close()
    assert [n for n, _ in out] == [1, 1, 2, 2, 3, 3]   # each child its own calls, in order
    assert {pid for _, pid in out[0::2]} == {again[0][1]}   # the same child, its count kept
    assert [n for n, _ in again] == [13, 13]
    assert children.ChildPool.started - before == 2
    assert not _ours()


def test_pool_raises_a_childs_error_and_ends_its_children():
    pool = children.ChildPool()
    with pytest.raises(ValueError, match="no luck"):
        drive_pool(pool.run([(0, _slow, (5,)), (1, _fail, ("no luck",))], CancelToken(),
                            lambda: None))
    assert len(pool) == 0 and not _ours()   # the busy one ended too


def test_pool_cancel_ends_a_busy_child():
    pool, cancel = children.ChildPool(), CancelToken()
    gen = pool.run([(0, _slow, (30,))], cancel, lambda: "waiting")
    assert next(gen) == "waiting" and len(_ours()) == 1
    cancel.cancel()
    with pytest.raises(StopIteration) as stop:
        while True:
            next(gen)
    assert stop.value.value is None
    assert not _ours()


def test_a_script_without_a_main_guard_runs_once(tmp_path):
    """A plain script calling the API (pairs, group: Primer3 in children) has no ``if
    __name__ == "__main__"`` guard; a spawned child must not run it again (it did, and
    multiprocessing stopped the child: "Primer3's process ended without an answer")."""
    import subprocess
    import sys

    script = tmp_path / "plain.py"
    script.write_text("import operator\n"
                      "from engine.jobs import CancelToken, drive\n"
                      "from engine.primers.children import in_child\n"
                      "print('top', flush=True)\n"
                      "print(drive(in_child(operator.add, (2, 3), CancelToken(), lambda: None)))\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    for argv in ([str(script)], ["-m", "plain"]):
        done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=120,
                              cwd=tmp_path, env=dict(os.environ, PYTHONPATH=root))
        assert (done.returncode, done.stdout) == (0, "top\n5\n"), done.stderr
    assert "__spec__" in vars(sys.modules["__main__"])  # (this process's main as it was)


def drive_pool(gen):
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value


# -- the group search ----------------------------------------------------------------------------

def test_one_pool_for_the_whole_search(monkeypatch):
    # two Primer3 rounds and several ranking rounds, on two threads: two children in all
    monkeypatch.setattr(G, "ROUND_BASES", 1)
    include, exclude = two_loci()
    before = children.ChildPool.started
    result = G.group(include, exclude, 3, distinct(), backend="multicore", threads=2)
    assert any("(2 of 2 rounds)" in line for line in result.diagnosis)
    assert result.pairs
    assert children.ChildPool.started - before == 2
    assert not _ours()


@pytest.mark.parametrize("at", ["(round 2 of 2)", "pairs, round"])
def test_no_child_left_after_a_cancel(at, monkeypatch):
    # at Primer3's second round (the children of the first still there) or a ranking
    monkeypatch.setattr(G, "ROUND_BASES", 1)
    include, exclude = two_loci()
    job = G.make_job(include, exclude, 3, distinct(), backend="multicore", threads=2)
    cancel = CancelToken()
    gen = G.iter_solve(job, cancel)
    alive = 0
    while True:
        try:
            p = next(gen)
        except StopIteration as stop:
            result = stop.value
            break
        if at in p.message and not cancel.cancelled:
            alive = len(_ours())
            cancel.cancel()
    assert alive >= 1 and not result.complete
    assert not _ours()


def test_no_child_left_after_an_error_or_when_the_caller_stops(monkeypatch):
    include, exclude = two_loci()
    job = G.make_job(include, exclude, 3, settings(), backend="multicore", threads=2)
    gen = G.iter_solve(job)
    for p in gen:   # the caller walks away during the rankings
        if "pairs, round" in p.message:
            assert _ours()
            break
    gen.close()
    assert not _ours()

    def broken(*args, **kwargs):
        raise RuntimeError("pcr broke")

    monkeypatch.setattr(pcr, "pair_sites", broken)
    with pytest.raises(RuntimeError, match="pcr broke"):
        drive(G.iter_solve(job))
    assert not _ours()


# -- ranking only as far as the walk reaches ---------------------------------------------------

def test_a_ranking_of_fewer_pairs_is_the_start_of_a_longer_one():
    # what the bounded ranking rests on: best_pairs(m) == best_pairs(n)[:m] for m <= n
    case = Case(3, seed=7)
    template = template_text(case.include[0].records[0].text)
    design = DesignSettings(product_ranges=((100, 200),), min_three_prime_distance=3,
                            num_return=40)
    lefts, rights, _ = primer_lists(template, design)
    full = pairs.best_pairs(template, lefts, rights, design, CancelToken())
    assert len(full) > 10
    for m in range(1, len(full) + 1):
        d = DesignSettings(product_ranges=((100, 200),), min_three_prime_distance=3,
                           num_return=m)
        assert pairs.best_pairs(template, lefts, rights, d, CancelToken()) == full[:m]


def test_the_same_pairs_whatever_the_first_ranking_depth(monkeypatch):
    # RANK_FIRST 1: rankings grown many times; 1000: every cluster ranked whole at once (as
    # before the bound): the same pairs, the same diagnosis
    monkeypatch.setattr(G, "ROUND_BASES", 1)
    include, exclude = two_loci()
    runs = []
    for first in (1, 1000):
        monkeypatch.setattr(G, "RANK_FIRST", first)
        r = G.group(include, exclude, 3, distinct(), backend="serial")
        runs.append((r.pairs, r.diagnosis))
    assert runs[0][0] and runs[0] == runs[1]


# -- inclusivity's pcr over the seeded windows ---------------------------------------------------

@pytest.mark.parametrize("cells, wanted", [(G.WINDOWS_SERIAL_CELLS, "serial"), (0, "multicore")])
def test_small_windows_are_searched_on_one_thread(monkeypatch, cells, wanted):
    # a round's windows are a few kb: one thread beats a parallel launch over them
    monkeypatch.setattr(G, "WINDOWS_SERIAL_CELLS", cells)
    backends = []
    real = pcr.search_job

    def search_job(*args, **kwargs):
        backends.append(kwargs["backend"])
        return real(*args, **kwargs)

    monkeypatch.setattr(pcr, "search_job", search_job)
    case = Case(3)
    G.group(case.include, case.exclude, 3, settings(num_return=2), backend="multicore",
            threads=2)
    assert backends and set(backends) == {wanted}
