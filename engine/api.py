"""The Python API's shared plumbing: one input coercion, and one way to run a job.

Every public ``solve``/``make_job`` of the families and tools takes its sequences through
:func:`records` (or :func:`one_record` for the two-sequence families), so a notebook can
pass what it has: a ``str``, a list of ``str`` (ids ``seq1``, ``seq2``...), a Biopython
``SeqRecord`` or a list of them, a path (``str`` or ``Path``) to any file or genome store
:func:`engine.sequences.load` reads, or :class:`~engine.sequences.Record` objects. A single
one needs no list around it. :func:`solve` adds ``progress=True`` (a tqdm bar) and
``backend=`` a ``distributed.Client`` to every family's ``solve``.

Nothing here imports numba, Biopython, tqdm or distributed until a caller needs them.
"""

from __future__ import annotations

import os

from engine.sequences import Record, SeqColumns, encode, load, lower_runs

#: What :func:`records` accepts, for its error message.
FORMS = ("a sequence string, a file path, a Biopython SeqRecord, an engine.sequences.Record, "
         "or a list of them")


def _is_seqrecord(value) -> bool:
    """A Biopython SeqRecord (told by its fields: Biopython is imported only by its users)."""
    return hasattr(value, "seq") and hasattr(value, "id") and not isinstance(value, Record)


def _is_bio_seq(value) -> bool:
    return type(value).__module__.startswith("Bio.Seq") and hasattr(value, "__str__")


def _from_seqrecord(value, number: int) -> Record:
    text = str(value.seq)
    rid = str(value.id) if value.id and value.id != "<unknown id>" else f"seq{number}"
    description = str(getattr(value, "description", "") or "")
    if description in (rid, "<unknown description>"):
        description = ""
    return Record(rid, encode(text, source="<SeqRecord>", record_id=rid), description,
                  "<SeqRecord>", soft_mask=lower_runs(text))


def _from_string(text: str, number: int) -> list[Record]:
    """A path that exists is read (every record of it); anything else is a literal sequence,
    named ``seq{number}`` (load's rules and messages for what is neither)."""
    found = load(text)
    if len(found) == 1 and found[0].source == "<literal>":
        return [Record(f"seq{number}", found[0].codes, "", "<literal>")]
    return found


def _one(value, number: int, role: str) -> list[Record]:
    if isinstance(value, Record):
        return [value]
    if isinstance(value, str):
        return _from_string(value, number)
    if isinstance(value, os.PathLike):
        return load(value)
    if _is_seqrecord(value):
        return [_from_seqrecord(value, number)]
    if _is_bio_seq(value):
        return _from_string(str(value), number)
    raise TypeError(f"{role} must be {FORMS}; got {type(value).__name__}")


def records(value, role: str, *, columns: bool = False) -> tuple[Record, ...]:
    """``value`` in any accepted form as a tuple of Records (``role`` names it in errors).

    A list may mix forms; its literal strings and unnamed SeqRecords are numbered by their
    place in it (``seq1``, ``seq2``...). With ``columns``, a
    :class:`~engine.sequences.SeqColumns` batch passes through as it is.

    >>> [(r.id, r.text) for r in records(["ACGT", "GGA"], "patterns")]
    [('seq1', 'ACGT'), ('seq2', 'GGA')]
    >>> [(r.id, r.text) for r in records("ACGT", "text")]
    [('seq1', 'ACGT')]
    """
    if columns and isinstance(value, SeqColumns):
        return value
    if isinstance(value, (str, os.PathLike, Record, bytes, bytearray, dict)) \
            or _is_seqrecord(value) or _is_bio_seq(value) or not hasattr(value, "__iter__"):
        return tuple(_one(value, 1, role))  # (one value: _one refuses what is no form)
    out: list[Record] = []
    for number, item in enumerate(value, start=1):
        out += _one(item, number, role)
    return tuple(out)


def one_record(value, role: str) -> Record:
    """The sequence of a two-sequence family (lcs, nw): any form of :func:`records`; of
    several records, the first (as the command line reads a file)."""
    found = records(value, role)
    if not found:
        raise ValueError(f"no records for sequence {role}")
    return found[0]


def _client(backend):
    """A ``distributed.Client`` given as the backend, or None for a backend's name."""
    if backend is None or isinstance(backend, str):
        return None
    if hasattr(backend, "submit") and hasattr(backend, "nthreads"):
        return backend
    raise TypeError(f"backend must be a backend's name or a distributed.Client, got "
                    f"{type(backend).__name__}")


def solve(make_job, iter_solve, *args, progress: bool = False, backend=None, **options):
    """Make a job with ``make_job(*args, backend=..., **options)`` and run ``iter_solve`` on it
    to its result: the body of every family's ``solve``.

    ``backend`` is a backend's name, or a ``distributed.Client``: the job is then made for the
    dask backend and its chunked problems run on that client (engine.executors.client; the
    client and its cluster stay the caller's). ``progress=True`` shows a tqdm bar
    (``tqdm.auto``: a widget in a notebook, text on a terminal).
    """
    client = _client(backend)
    job = make_job(*args, backend="dask" if client is not None else backend, **options)
    run = iter_solve(job)
    if client is not None:
        from engine.executors.client import iter_on

        run = iter_on(client, run)
    return drive_with_progress(run, job.family, progress)


def refuse_settings_fields(options: dict, settings_type, call: str) -> None:
    """A field of a tool's settings given as a keyword of its ``solve``
    (``pcr.solve(..., max_edits=2)``, ``pairs.solve(..., product_size=...)``): TypeError
    naming the settings class through which the tools take them (nested settings too:
    pairs' PcrSettings), instead of make_job's bare "unexpected keyword argument"."""
    for name, value in options.items():
        spelled = _settings_path(settings_type, name, f"{name}={value!r}")
        if spelled is not None:
            raise TypeError(f"{call}() takes {name} in its settings: give settings={spelled}")


def _settings_path(settings_type, name: str, given: str) -> str | None:
    """How ``name=value`` is written inside ``settings_type(...)``, through its nested
    settings (fields whose default is a dataclass); None if it has no such field."""
    import dataclasses

    fields = dataclasses.fields(settings_type)
    if any(f.name == name for f in fields):
        return f"{settings_type.__name__}({given})"
    for f in fields:
        if dataclasses.is_dataclass(f.default):
            inner = _settings_path(type(f.default), name, given)
            if inner is not None:
                return f"{settings_type.__name__}({f.name}={inner})"
    return None


def drive_with_progress(run, label: str, progress: bool):
    """Run a job's generator to its result, with a tqdm bar when ``progress`` is true."""
    from engine.jobs import drive

    if not isinstance(progress, bool):
        raise ValueError(f"progress must be True or False, got {progress!r}")
    if not progress:
        return drive(run)
    try:
        from tqdm.auto import tqdm
    except ImportError:
        raise ImportError("progress=True needs tqdm (pip install tqdm)") from None
    with tqdm(total=1, desc=label, unit=" steps", leave=True) as bar:
        def show(p):
            if p.total and bar.total != p.total:
                bar.total = p.total
            bar.n = min(p.done, p.total) if p.total else p.done
            bar.set_postfix_str(p.message or p.phase, refresh=False)
            bar.refresh()

        result = drive(run, show)
        if bar.total:
            bar.n = bar.total
        return result


def index(genome, output=None, *, gap_min: int | None = None, progress: bool = False) -> str:
    """Build a genome store (``.psg``: packed, memory-mapped; engine.store) from a FASTA,
    GenBank, EMBL or 2bit file, and return its path. Any ``background`` may then be that
    path, read in place instead of loaded. ``output`` defaults to the genome's name with
    ``.psg``; ``gap_min``, the store's assembly-gap length (engine.gaps, default 10)."""
    from engine import gaps, store
    from engine.cli.index import store_path

    genome = os.fspath(genome)
    output = store_path(genome, None if output is None else os.fspath(output))
    on_block = None
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=1, desc="index", unit="B", unit_scale=True)

        def on_block(done: int, total: int) -> None:
            bar.total, bar.n = total, done
            bar.refresh()
    try:
        store.build(genome, output, on_block, gaps.GAP_MIN if gap_min is None else gap_min)
    finally:
        if bar is not None:
            bar.close()
    return output
