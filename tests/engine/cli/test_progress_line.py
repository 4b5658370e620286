"""The command line's progress bar gives an ETA; ``index`` a rate that means something (issue 32)."""

from __future__ import annotations

import re

from engine.cli import ProgressBar, main
from engine.jobs import Progress


def test_the_bar_gives_the_time_left_from_the_fraction_done():
    line = ProgressBar.line(Progress(250, 1000, 10**9, 0, 30.0))
    assert " 25.0%" in line and line.endswith("ETA 1:30")  # 30 s for a quarter: 90 s left
    assert "ETA 1:00:00" in ProgressBar.line(Progress(1, 2, 1, 0, 3600.0))
    assert "ETA" not in ProgressBar.line(Progress(0, 1000, 0, 0, 0.0))  # nothing measured yet
    assert "once" in ProgressBar.line(Progress(0, 10, 0, 0, 0.0, phase="compiling",
                                               message="compiling kernels…"))


def test_index_reports_bases_per_second(tmp_path, capsys):
    fasta = tmp_path / "small.fa"
    fasta.write_text(">a\n" + "ACGT" * 250 + "\n>b\n" + "GATTACA" * 10 + "\n")
    assert main(["index", str(fasta), "-o", str(tmp_path / "small.psg")]) == 0
    out = capsys.readouterr().out
    rate = re.search(r"\(([\d.e+]+) Mbases/s\)", out)
    assert rate and float(rate.group(1)) > 0, out
    size = (tmp_path / "small.psg").stat().st_size
    assert f" {size:,} bytes, " in out and "0.0 MB" not in out, out  # a small store's size


def test_a_stage_without_dp_cells_shows_no_rate():
    """Group's Primer3 and seeded exclusivity count no cells: no "0.00 Gcells/s" (issue 30)."""
    assert "Gcells/s" not in ProgressBar.line(Progress(5, 10, 0, 0, 4.0, message="Primer3"))
    assert "2.50 Gcells/s" in ProgressBar.line(Progress(5, 10, 10**10, 0, 4.0))
