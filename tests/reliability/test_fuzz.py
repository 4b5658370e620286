"""Fuzz of the sequence loader and the command line (issue #14, "Must hold").

Random bytes, random FASTA- and GenBank-like text and random argument lists may only ever
give a result, or exit 2 with one line: never a traceback, never exit 1, never a partial
file (nor a leftover temporary). In-process (``engine.cli.main``) to stay fast.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
import tempfile
import warnings
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import cli, interrupts, registry
from engine.sequences import IUPAC_CODES, SequenceError, load
from tests.reliability.helpers import TEMP_PREFIX

FUZZ = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
SUFFIXES = ["", ".fa", ".fasta", ".gb", ".embl", ".txt", ".fa.gz"]
LETTERS = "".join(IUPAC_CODES) + "acgtnu"


@contextlib.contextmanager
def scratch():
    folder = Path(tempfile.mkdtemp(prefix="fuzz-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _file(folder: Path, data: bytes, suffix: str) -> Path:
    path = folder / f"input{suffix}"
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    return path


# --- text that looks like sequence files -----------------------------------------------

_seq_line = st.text(alphabet=st.sampled_from(LETTERS + LETTERS + " -*1\t.\u00e9\u0394"),
                    max_size=70)
_header = st.text(alphabet=st.characters(blacklist_categories=("Cs",),
                                         blacklist_characters="\n\r"), max_size=20)
_fasta_line = st.one_of(_header.map(lambda t: ">" + t), _seq_line, _seq_line, _seq_line,
                        st.just(""), st.just(";comment"), st.just(" "))
fasta_text = st.builds(
    lambda bom, lines, eol: ("\ufeff" if bom else "") + eol.join(lines),
    st.booleans(), st.lists(_fasta_line, max_size=12), st.sampled_from(["\n", "\r\n", "\r"]))

_origin = st.lists(st.tuples(st.integers(0, 200), st.lists(_seq_line, max_size=6)), max_size=4).map(
    lambda rows: "\n".join(f"{n:>9} " + " ".join(chunk) for n, chunk in rows))
genbank_text = st.builds(
    lambda name, size, features, origin, end, extra:
        f"LOCUS       {name}   {size} bp    DNA     linear   UNK 01-JAN-1980\n"
        f"DEFINITION  x.\n{features}ORIGIN\n{origin}\n{end}{extra}",
    st.text(alphabet="abcXYZ_0123", max_size=10), st.integers(-5, 300),
    st.sampled_from(["", "FEATURES             Location/Qualifiers\n     source          1..4\n",
                     "FEATURES   junk\n"]),
    _origin, st.sampled_from(["//\n", "", "//\n//\n"]),
    st.sampled_from(["", "LOCUS       y 4 bp DNA\nORIGIN\n        1 acgt\n//\n", "garbage"]))


def _check_load(path: Path) -> None:
    """load() returns valid, uniquely named records, or raises a one-line SequenceError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            records = load(str(path))
        except SequenceError as exc:
            assert "\n" not in str(exc) and str(exc)
            return
    assert records and len({r.id for r in records}) == len(records)
    assert all(len(r) > 0 and set(r.text) <= set(IUPAC_CODES) for r in records)


@FUZZ
@given(data=st.binary(max_size=300), suffix=st.sampled_from(SUFFIXES))
def test_loader_random_bytes(data, suffix):
    with scratch() as folder:
        _check_load(_file(folder, data, suffix))


@FUZZ
@given(text=fasta_text, suffix=st.sampled_from(["", ".fa", ".fa.gz"]),
       encoding=st.sampled_from(["utf-8", "latin-1"]))
def test_loader_fasta_like_text(text, suffix, encoding):
    with scratch() as folder:
        _check_load(_file(folder, text.encode(encoding, errors="replace"), suffix))


@settings(FUZZ, max_examples=25)
@given(text=genbank_text, suffix=st.sampled_from([".gb", ""]))
def test_loader_genbank_like_text(text, suffix):
    with scratch() as folder:
        _check_load(_file(folder, text.encode("utf-8"), suffix))


# --- the command line ------------------------------------------------------------------

def _main(argv: list[str], capsys) -> tuple[int, list[str]]:
    """engine.cli.main in this process: (status, stderr lines)."""
    capsys.readouterr()
    try:
        status = cli.main(argv)
    except SystemExit as done:  # --help
        status = done.code or 0
    err = capsys.readouterr().err
    return status, err.strip().splitlines()


def _check_outcome(status: int, err: list[str], out: Path | None) -> None:
    notes = [line for line in err if not line.startswith("primerscope: warning: ")]
    if status == 0:
        assert notes == [], err
    else:
        assert status == 2 and len(notes) == 1 and notes[0].startswith("primerscope: error: "), err
        assert out is None or not out.exists()
    if out is not None:
        assert not [p for p in out.parent.iterdir() if p.name.startswith(TEMP_PREFIX)]


@settings(FUZZ, max_examples=20)
@given(text=st.one_of(fasta_text, genbank_text), suffix=st.sampled_from(["", ".fa", ".gb"]),
       json=st.booleans())
def test_cli_on_random_files(capsys, text, suffix, json):
    with scratch() as folder:
        path = _file(folder, text.encode("utf-8"), suffix)
        out = folder / "out.csv"
        argv = ["kdiff", str(path), "ACGTTGCA", "-k", "2", "-o", str(out)]
        argv += ["--json"] if json else []
        status, err = _main(argv, capsys)
        _check_outcome(status, err, out)


class _Accepted(BaseException):
    """Raised instead of running the job: the arguments passed every check."""


SUBCOMMANDS = {name: sub for name, sub in next(
    a for a in cli.build_parser()._actions if a.dest == "command").choices.items()
    if name not in ("gui", "bench")}
SEQUENCES = ["ACGT", "ACGTACGTTTGA", "N", "", "ACGT-A", "acgu", "input.fa", "missing.fa", "ACGT1"]
_junk = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                max_size=8)


def _value(action, folder: Path):
    if action.dest in ("output", "bed"):
        return st.sampled_from([str(folder / "out.csv"), str(folder / "x.bed"), str(folder),
                                str(folder / "no" / "dir.csv"), str(folder) + "/", "input.fa"])
    if action.choices:
        return st.one_of(st.sampled_from(list(action.choices)), _junk)
    numbers = st.one_of(st.integers(-3, 40).map(str), st.sampled_from(
        ["0", "1e3", "nan", "inf", "-inf", "1.5", "10000", "99999999999", "0x10", "off"]))
    return st.one_of(numbers, numbers, _junk)


@st.composite
def argument_lists(draw, folder: Path):
    name = draw(st.sampled_from(sorted(SUBCOMMANDS)))
    parser = SUBCOMMANDS[name]
    options = [a for a in parser._actions if a.option_strings and a.dest != "help"]
    groups = [[draw(st.sampled_from(SEQUENCES + [draw(_junk)]))]
              for _ in range(draw(st.integers(0, 3)))]
    for _ in range(draw(st.integers(0, 6 if options else 0))):  # install-desktop has none
        action = draw(st.sampled_from(options))
        flag = draw(st.sampled_from(action.option_strings))
        if action.nargs == 0:
            groups.append([flag])
        elif draw(st.integers(0, 9)) == 0:
            groups.append([flag])  # its value forgotten
        else:
            value = draw(_value(action, folder))
            groups.append([f"{flag}={value}"] if value.startswith("-") else [flag, value])
    if draw(st.integers(0, 5)) == 0:
        groups.append([draw(_junk)])
    order = draw(st.permutations(groups))
    return [name] + [token for group in order for token in group]


@settings(FUZZ, max_examples=120)
@given(data=st.data())
def test_cli_random_argument_lists(capsys, monkeypatch, data):
    def accept(work, cancel):
        raise _Accepted

    monkeypatch.setattr(interrupts, "run_job", accept)
    with scratch() as folder:
        (folder / "input.fa").write_text(">r1\nACGTACGTAAGT\n>r2\nTTGACCA\n")
        argv = data.draw(argument_lists(folder))
        cwd = os.getcwd()
        os.chdir(folder)
        try:
            status, err = _main(argv, capsys)
        except _Accepted:
            return  # every check passed; the families' own tests run their jobs
        finally:
            os.chdir(cwd)
        _check_outcome(status, err, folder / "out.csv")


_NOT_DRAWN = {"variant", "backend", "parallel", "opt", "threads", "output", "bed", "json",
              "no_progress", "help"}


@st.composite
def small_jobs(draw):
    """Valid-looking jobs: two short sequences, the subcommand's required options and some
    others with small random values, on the serial backend (its kernels are in the cache)."""
    name = draw(st.sampled_from(sorted(SUBCOMMANDS)))
    seq = st.text(alphabet="ACGTN", min_size=0, max_size=30)
    argv = [name, draw(seq) or "A", draw(seq) or "C"]
    for action in SUBCOMMANDS[name]._actions:
        if not action.option_strings or action.dest in _NOT_DRAWN:
            continue
        if not action.required and draw(st.integers(0, 3)) > 0:
            continue
        flag = action.option_strings[-1]
        if action.nargs == 0:
            argv.append(flag)
        elif action.choices:
            argv.append(f"{flag}={draw(st.sampled_from(list(action.choices)))}")
        elif action.type is int or action.dest == "k":
            argv.append(f"{flag}={draw(st.integers(-1, 12))}")
        else:
            value = draw(st.sampled_from(["0", "1", "-2", "2.5", "nan", "40", "off"]))
            argv.append(f"{flag}={value}")
    return argv + ["--backend", "serial"] + (["--json"] if draw(st.booleans()) else [])


@settings(FUZZ, max_examples=30)
@given(argv=small_jobs())
def test_cli_small_random_jobs(capsys, argv):
    with scratch() as folder:
        out = folder / "out.txt"
        status, err = _main(argv + ["-o", str(out)], capsys)
        _check_outcome(status, err, out)
        if status == 0:
            assert out.read_text()


def test_fuzz_helpers_see_every_subcommand():
    assert set(SUBCOMMANDS) >= {f.name for f in registry.families()}
