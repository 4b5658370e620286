"""The worker loops over a generator and reports through signals; it runs in the test thread too."""

from __future__ import annotations

from app.worker import GeneratorWorker, JobRunner
from engine.jobs import CancelToken


def _counting(n, cancel=None):
    for i in range(n):
        if cancel is not None and cancel.cancelled:
            return "cancelled"
        yield i
    return "done"


def test_worker_in_main_thread_emits_progress_and_result(qtbot):
    worker = GeneratorWorker(lambda: _counting(3))
    seen, results = [], []
    worker.progress.connect(seen.append)
    worker.finished.connect(results.append)
    worker.work()
    assert seen == [0, 1, 2] and results == ["done"]


def test_worker_reports_failures_as_messages(qtbot):
    def broken():
        yield 1
        raise ValueError("k must be >= 1, got 0")

    worker = GeneratorWorker(broken)
    failures = []
    worker.failed.connect(failures.append)
    worker.work()
    assert failures == ["k must be >= 1, got 0"]
    assert "Traceback" in worker.report["details"]


def test_runner_thread_cancel_and_shutdown(qtbot):
    runner = JobRunner()
    with qtbot.waitSignal(runner.finished, timeout=10_000) as blocker:
        token = runner.start(lambda cancel: _counting(10**9, cancel))
        qtbot.waitUntil(lambda: runner.running, timeout=1_000)
        qtbot.wait(50)
        token.cancel()
    assert blocker.args == ["cancelled"]
    assert not runner.running
    assert runner.shutdown()


def test_runner_refuses_a_second_job(qtbot):
    runner = JobRunner()
    token = runner.start(lambda cancel: _counting(10**9, cancel))
    try:
        runner.start(lambda cancel: _counting(1, cancel))
    except RuntimeError as err:
        assert "already running" in str(err)
    else:
        raise AssertionError("a second start should be refused")
    assert isinstance(token, CancelToken)
    assert runner.shutdown()
