"""Defects 8, 9 and 11 of issue #14: a closed standard output, the real thread count,
physical ranges of the primer options, and the GUI without a display."""

from __future__ import annotations

import json
import sys
import os
import subprocess
from pathlib import Path

import pytest

from engine import registry
from tests.reliability.helpers import ROOT, command, env, one_line_error, run


def test_a_reader_that_went_away_ends_the_run_quietly():
    """`primerscope ... | head`: the pipe's reader is gone before the write."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(command("kdiff", "ACGTACGTTT", "ACGA", "-k", "2"), stdout=write,
                              stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env(), timeout=300)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")


def test_a_closed_stdout_is_one_line_before_the_run():
    done = subprocess.run(command("kdiff", "ACGTACGTTT", "ACGA", "-k", "2"), stdout=None,
                          stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env(), timeout=300,
                          preexec_fn=lambda: os.close(1))
    assert "standard output is closed" in one_line_error(done)


CLI_FAMILIES = [f.name for f in registry.families()]
ARGS = {"kdiff": ["ACGTAC", "ACG", "-k", "1"], "kmismatch": ["ACG", "ACGTAC", "-k", "1"]}


@pytest.mark.parametrize("family", CLI_FAMILIES)
def test_json_reports_the_threads_really_used(family):
    """Every family runs on engine/slices.py, which reports numba's real thread count."""
    done = run(family, *ARGS.get(family, ["ACGTAC", "ACG"]), "--backend", "multicore",
               "--threads", "10000", "--json")
    assert done.returncode == 0, done.stderr
    threads = json.loads(done.stdout)["threads"]
    assert 1 <= threads <= (os.cpu_count() or 1) < 10000


@pytest.mark.parametrize("option,value", [
    ("--gc-min", "nan"), ("--gc-max", "101"), ("--tm-min", "inf"), ("--tm-max", "-inf"),
    ("--mv-conc", "1e12"), ("--dv-conc", "-1"), ("--dntp-conc", "nan"), ("--dna-conc", "0"),
    ("--min-gc-clamp", "6"), ("--len-min", "0"), ("--max-end-stability", "1e9"),
])
def test_primer_options_outside_physical_ranges_are_refused(option, value):
    line = one_line_error(run("kdiff", "ACGTACGTAAGT", "ACGGT", "-k", "2", f"{option}={value}"))
    assert option in line and "must be" in line


def test_primer_options_inside_their_ranges_are_accepted():
    done = run("kdiff", "ACGTACGTAAGT", "ACGGT", "-k", "2", "--annotate", "--gc-min", "0",
               "--gc-max", "100", "--mv-conc", "1000", "--dna-conc", "250", "--tm-min", "off")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("args", [[], ["gui"], ["gui", "--demo"]])
def test_no_display_is_one_line_not_a_qt_abort(args):
    environ = env()
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        environ.pop(name, None)
    done = subprocess.run(command(*args), capture_output=True, text=True, cwd=ROOT,
                          env=environ, timeout=120)
    line = one_line_error(done)
    assert "no display" in line and "QT_QPA_PLATFORM=offscreen" in line


def test_no_display_is_explained_before_qt_starts(monkeypatch):
    from app.main import display_problem

    monkeypatch.setattr(sys, "platform", "linux")
    assert "DISPLAY is not set" in display_problem({})
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}) is None
    assert display_problem({"WAYLAND_DISPLAY": "wayland-0"}) is None
    unused = next(n for n in range(90, 200) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    # (the xcb libraries pinned: this machine's own may lack them, which is said first)
    monkeypatch.setattr("app.main.XCB_LIBRARIES", {"libxcb-not-here.so.0": "libxcb-not-here0"})
    assert "apt-get install libxcb-not-here0" in display_problem({"DISPLAY": f":{unused}"})
    monkeypatch.setattr("app.main.XCB_LIBRARIES", {})
    assert "no X server" in display_problem({"DISPLAY": f":{unused}"})

