"""``primerscope kdiff --annotate/--filter [--bed]``: Primer3 runs once per distinct candidate
sequence, in child processes (engine.primers.annotate_children), and every writer reads
those annotations: the files are those of the in-process writers."""

from __future__ import annotations

import functools
import importlib

import pytest

from engine import kdiff
from engine.cli import main
from engine.primers import Conditions, Filters, annotate_children, children
from engine.primers import export_kdiff as export
from engine.sequences import load

#: the module (``engine.primers.annotate`` is also the function, re-exported)
annotate_module = importlib.import_module("engine.primers.annotate")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, demo_dir, ecoli_record):
    """A small real pair: 1,500 nt of lambda against 100 kb of E. coli."""
    where = tmp_path_factory.mktemp("kdiff-annotate")
    target, bg = where / "t.fa", where / "b.fa"
    lam = (demo_dir / "lambda_NC_001416.fa").read_text().split("\n", 1)[1].replace("\n", "")
    target.write_text(">lam\n" + lam[:1500] + "\n")
    bg.write_text(">bg\n" + ecoli_record.slice(0, 100_000).text + "\n")
    return target, bg


def _cli(tmp_path, inputs, *options):
    out, bed = tmp_path / "out.csv", tmp_path / "out.bed"
    argv = ["kdiff", *map(str, inputs), "-k", "5", "--backend", "serial", "--no-progress",
            *options, "--bed", str(bed), "-o", str(out)]
    assert main(argv) == 0
    return out.read_text(), bed.read_text()


@pytest.mark.parametrize("options,kwargs", [
    (["--annotate"], {"annotate": True}),
    (["--annotate", "--filter", "--tm-min", "off", "--dv-conc", "2"],
     {"annotate": True, "filters": Filters(tm_min=None), "conditions": Conditions(dv_conc=2.0)}),
    (["--filter", "--merge"], {"filters": Filters(), "merge": True}),
])
def test_the_files_are_the_in_process_writers(tmp_path, inputs, options, kwargs):
    """The CSV and the BED of a run annotated in children, byte for byte those written by
    annotating in this process (the writers without known annotations)."""
    csv_text, bed_text = _cli(tmp_path, inputs, *options)
    result = kdiff.solve(load(str(inputs[0])), load(str(inputs[1])), 5, backend="serial")
    options = {"conditions": Conditions(), **kwargs}
    assert csv_text == export.csv_text(result, **options)
    options.pop("merge", None)
    assert bed_text == export.result_bed_text(result, **options)


def test_each_sequence_is_annotated_once_with_bed(tmp_path, inputs, monkeypatch):
    """With --bed beyond the per-sequence cache (shrunk to one entry here, 65,536 in a
    run), the CSV and the BED share one annotation of each distinct sequence, made in the
    child processes: none is made in this process."""
    made = []

    @functools.lru_cache(maxsize=1)
    def once(seq, conditions):
        made.append(seq)
        return annotate_module.annotate(seq, conditions)

    sent = []
    run = children.ChildPool.run

    def counting(self, calls, cancel, progress):
        sent.extend(s for _, fn, args in calls if fn is annotate_children.annotation_columns
                    for s in args[0])
        return run(self, calls, cancel, progress)

    monkeypatch.setattr(annotate_module, "_annotate_once", once)
    monkeypatch.setattr(children.ChildPool, "run", counting)
    csv_text, _ = _cli(tmp_path, inputs, "--annotate")
    distinct = {row.split(",")[4] for row in csv_text.splitlines()[1:]}
    assert len(distinct) > 100
    assert made == [] and sorted(sent) == sorted(distinct)


def test_a_cancel_during_the_annotations_ends_their_children(inputs, monkeypatch):
    """Ctrl-C cancels the job's token: the annotations stop between two polls of the
    children, which are ended, and the run's result has none (no file is written)."""
    import multiprocessing

    from engine.jobs import CancelToken
    from engine.primers import cli_kdiff

    monkeypatch.setattr(annotate_children, "children", lambda: 1)
    monkeypatch.setattr(annotate_children, "BATCH", 100)  # rounds of 100: a progress each
    job = cli_kdiff.AnnotatedJob(kdiff.make_job(load(str(inputs[0])), load(str(inputs[1])), 5,
                                                backend="serial"), True, Conditions(), None)
    cancel = CancelToken()
    before = set(multiprocessing.active_children())  # (a test before may keep a Dask cluster)
    gen = cli_kdiff.iter_solve(job, cancel)
    try:
        while True:
            if next(gen).message == "Primer3 annotations":
                assert set(multiprocessing.active_children()) - before
                cancel.cancel()
    except StopIteration as stop:
        result = stop.value
    assert type(result) is kdiff.KdiffResult and result.info.complete
    assert set(multiprocessing.active_children()) <= before
