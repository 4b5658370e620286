"""Defects 1, 2 and 6 of issue #14: outputs never destroy an input, never replace a device,
keep permissions, write through symlinks, and are all checked before any work starts."""

from __future__ import annotations

import os
import stat
import threading
import time

import pytest

from tests.reliability.helpers import leftovers, one_line_error, run

TARGET = ">victim\nACGTACGTTTGACCA\n"
BACKGROUND = ">bg\nACGTTTGACGGA\n"


@pytest.fixture
def files(tmp_path):
    target = tmp_path / "victim.fa"
    target.write_text(TARGET)
    background = tmp_path / "bg.fa"
    background.write_text(BACKGROUND)
    return target, background


@pytest.mark.parametrize("which", ["target", "background", "symlink", "hardlink"])
def test_output_that_is_an_input_is_refused(tmp_path, files, which):
    target, background = files
    out = {"target": target, "background": background}.get(which)
    if which == "symlink":
        out = tmp_path / "link.csv"
        out.symlink_to(target)
    elif which == "hardlink":
        out = tmp_path / "hard.csv"
        os.link(target, out)
    line = one_line_error(run("kdiff", target, background, "-k", "2", "-o", out))
    assert "refusing to overwrite an input" in line
    assert target.read_text() == TARGET and background.read_text() == BACKGROUND


def test_output_and_bed_naming_the_same_file_is_refused(tmp_path, files):
    target, background = files
    out = tmp_path / "out.csv"
    line = one_line_error(run("kdiff", target, background, "-k", "2", "-o", out, "--bed", out))
    assert "named for two outputs" in line and not out.exists()


def test_edit_output_over_its_background_is_refused(files):
    target, background = files
    one_line_error(run("edit", target, background, "-o", background))
    assert background.read_text() == BACKGROUND


def _device(folder, name: str, minor: int):
    """A private copy of /dev/null (minor 3) or /dev/full (7): the tests never write to the
    machine's own, which code with this defect would replace (as root) with a regular file."""
    path = folder / name
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    except OSError:
        pytest.skip("creating a device node needs root")
    return path


def test_a_null_device_stays_a_device(tmp_path):
    null = _device(tmp_path, "null", 3)
    done = run("kdiff", "ACGTACGT", "ACGA", "-k", "2", "-o", null)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISCHR(null.stat().st_mode) and leftovers(tmp_path) == []


def test_a_full_device_is_an_error(tmp_path):
    full = _device(tmp_path, "full", 7)
    line = one_line_error(run("kdiff", "ACGTACGT", "ACGA", "-k", "2", "-o", full))
    assert str(full) in line and "cannot write output" in line
    assert stat.S_ISCHR(full.stat().st_mode) and leftovers(tmp_path) == []


def test_a_fifo_is_written_directly(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    done = run("kdiff", "ACGTACGT", "ACGA", "-k", "2", "-o", fifo)
    reader.join(60)
    assert done.returncode == 0, done.stderr
    assert got and got[0].startswith("target_id") and stat.S_ISFIFO(fifo.stat().st_mode)


def test_permissions_kept_and_umask_respected(tmp_path):
    kept = tmp_path / "kept.csv"
    kept.write_text("old")
    kept.chmod(0o640)
    assert run("kdiff", "ACGTACGT", "ACGA", "-k", "2", "-o", kept).returncode == 0
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640 and kept.read_text() != "old"
    fresh = tmp_path / "fresh.csv"
    old = os.umask(0o022)
    try:
        assert run("kdiff", "ACGTACGT", "ACGA", "-k", "2", "-o", fresh).returncode == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644  # 0666 less the umask, not 0600
    assert leftovers(tmp_path) == []


def test_a_symlink_is_written_through(tmp_path):
    real = tmp_path / "real.csv"
    real.write_text("old")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    assert run("kdiff", "ACGTACGT", "ACGA", "-k", "2", "-o", link).returncode == 0
    assert link.is_symlink() and real.read_text().startswith("target_id")


# A job that runs for minutes: an output error must come before it, in seconds.
SLOW = ("nw", "ACGT" * 30_000, "TGCA" * 30_000)  # 120 kb each: under the 128 kB argument limit


@pytest.mark.parametrize("out", ["out/newdir/", "missing/dir/out.csv", "."])
def test_output_checked_before_computing(tmp_path, out):
    t0 = time.perf_counter()
    line = one_line_error(run(*SLOW, "-o", out, cwd=tmp_path, timeout=120))
    assert time.perf_counter() - t0 < 60 and out.rstrip("/") in line
    assert not (tmp_path / "out").exists()


def test_bench_json_out_checked_before_running(tmp_path):
    t0 = time.perf_counter()
    line = one_line_error(run("bench", "kdiff", "--json-out", tmp_path, timeout=120))
    assert time.perf_counter() - t0 < 60 and "directory" in line


def test_gui_screenshot_path_checked_before_the_demo(tmp_path):
    t0 = time.perf_counter()
    done = run("gui", "--screenshot", "/nonexistent/x.png", timeout=120,
               extra_env={"QT_QPA_PLATFORM": "offscreen"})
    assert "/nonexistent" in one_line_error(done) and time.perf_counter() - t0 < 60
