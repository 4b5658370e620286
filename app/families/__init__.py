"""One small adapter per engine family: how its jobs, results, table rows and views look.

The window knows nothing about any family; it asks the adapter of the family
chosen in the registry. An adapter never imports the family's engine package
at module level (that package may import numba): the window must open without
compiling or loading kernels, so engine APIs are imported when a job is built,
which happens on the worker thread.

CSV export always goes through the family's own writer
(``engine.<family>.cli.write_csv``), so the file equals what the command line
writes for the same job.

Positions in tables and plots are the loaded records' own: a region of a record keeps its
id and numbering (``Record.region``), and the engine reports positions in it.
"""

from __future__ import annotations

import importlib
import importlib.util
import io
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from engine import registry
from engine.jobs import Job
from engine.sequences import Record


@dataclass(frozen=True)
class Column:
    """A results-table column. ``role`` ties it to the filters: 'length', 'start', 'end'.
    ``title`` is the CSV export's name (SPEC.md's); ``header``, if given, what the table's
    header says instead (words for people where the name is a field name). ``user_text``:
    its cells are text users give (record ids, names), which a CSV export escapes where a
    spreadsheet would run it (engine.spreadsheet); fixed words (a ``-`` strand) are not."""

    title: str
    kind: str = "str"  # "int" | "float" | "str"
    role: str = ""
    tip: str = ""
    header: str = ""
    user_text: bool = False


@dataclass(frozen=True)
class RunChoice:
    """What the parameter panel says: a checked registry selection plus parameters."""

    family: str
    selection: registry.Selection
    params: Mapping[str, Any]
    threads: int | None = None

    def backend_options(self) -> dict[str, Any]:
        """The parameters meant for some backends or variants only (``ParamSpec.backends``,
        ``ParamSpec.variants``) that apply to the chosen ones, e.g. threads per block on cuda:
        make_job takes them there and refuses them elsewhere."""
        spec = registry.family(self.family)
        sel = self.selection
        return {p.name: self.params[p.name] for p in spec.params
                if (p.backends or p.variants) and p.applies(sel.variant, sel.backend)
                and p.name in self.params}


@dataclass(frozen=True)
class DemoInput:
    """Records for one input role of a demo, with the region (1-based, inclusive) to use."""

    records: tuple[Record, ...]
    source: str
    use: tuple[int, ...] | None = None  # indices of the records to use; None: all
    region: tuple[int, int] | None = None


class FamilyAdapter:
    """Base adapter; subclasses override what their family offers."""

    name = ""
    #: Columns of the results table.
    columns: tuple[Column, ...] = ()
    #: Ask the engine for downsampled DP snapshots during a run.
    wants_snapshots = False
    #: Noun for a result row in the status bar.
    noun = "results"
    #: The result's items are the last partial list plus more, in the same order (the table
    #: then only appends); False when the engine reorders at the end.
    result_extends_partial = False
    #: Demo menu data set that ``--demo`` loads for this family.
    default_demo = "lambda-ecoli"

    # -- engine side (called on the worker thread) ---------------------------------
    @property
    def spec(self) -> registry.FamilySpec:
        return registry.family(self.name)

    def api(self):
        return registry.family_api(self.name)

    def export(self):
        """The family's writers (``engine/<family>/export.py``), the ones the CLI uses."""
        return importlib.import_module(f"engine.{self.name}.export")

    def export_options(self) -> dict:
        """Keyword options that make the writers write what ``-o OUT.csv`` writes."""
        return {}

    def make_job(self, inputs: Mapping[str, Sequence[Record]], choice: RunChoice) -> Job:
        """Build the family's job through its own ``make_job`` (which validates everything)."""
        raise NotImplementedError

    # -- results --------------------------------------------------------------------
    def items(self, result_or_partial) -> Sequence:
        """Raw result items of a result or of ``Progress.partial``; partial lists grow by appending."""
        raise NotImplementedError

    def row(self, item) -> tuple:
        """One table row (in :meth:`table_columns` order) for a raw item."""
        raise NotImplementedError

    def rows(self, items) -> list[tuple]:
        """Table rows of many items (families with columnar results do this in bulk)."""
        return [self.row(item) for item in items]

    def table_columns(self, params: Mapping[str, Any]) -> tuple[Column, ...]:
        """Columns of the table for a run with these parameters (a mode may change them)."""
        return self.columns

    def demo_params(self, dataset: str) -> dict:
        """Parameters a demo sets (e.g. a search mode that gives hits to look at)."""
        return {}

    def csv_text(self, result) -> str:
        """The exact text ``primerscope <family> ... -o OUT.csv`` writes for this result."""
        buf = io.StringIO(newline="")
        self.export().write_csv(result, buf, **self.export_options())
        return buf.getvalue()

    def alignment_text(self, result, job) -> str:
        """The result's alignments as plain text for "Export alignments" ('' if it has none)."""
        return ""

    def answer_key(self, result):
        """What must agree between variants and backends (Compare backends checks it)."""
        return self.csv_text(result)

    def work(self, inputs: Mapping[str, Sequence[Record]], params: Mapping[str, Any]) -> float:
        """Work units of a run, for the estimate of its time: the product of the inputs'
        lengths (twice that with both strands). Rates are measured in the same units."""
        work = 1.0
        for records in inputs.values():
            work *= sum(len(r) for r in records)
        return work * (2 if params.get("strands") == "both" else 1)

    def empty_reason(self, result, job) -> str:
        """Why a complete run found nothing, in one sentence ('' when there is nothing to say)."""
        k = job.params.get("k") if job is not None else None
        if k is not None and self.noun == "hits":
            return f"No hit within k = {k}; a larger k finds more distant ones."
        return ""

    #: What *Add to primer library* takes from this family's rows ('' : nothing, the action
    #: is off).
    library_what = ""

    def library_entries(self, items, job) -> list:
        """The primers the rows ``items`` hold, as :class:`engine.primers.library.LibraryEntry`
        (names may be taken: the library dock makes them unique)."""
        return []

    def best_item(self, result):
        """The item worth showing first (``--screenshot`` selects it)."""
        items = self.items(result)
        return items[0] if len(items) else None

    def summary(self, result) -> str:
        n = len(self.items(result))
        return f"{n:,} {self.noun}"

    # -- GUI side ---------------------------------------------------------------------
    def create_views(self, host) -> list:
        """Family views (QWidgets with the :class:`app.views.ResultView` interface)."""
        return []

    def demo_inputs(self, dataset: str) -> dict[str, DemoInput]:
        """Inputs for a Demo menu data set, mapped onto this family's roles."""
        return {}

    def demo_view(self, dataset: str) -> str:
        """The title of the view whose own job a demo runs instead of the family's run
        ('' : the demo waits for Run)."""
        return ""


#: The family whose views hold the primer tools (Pairs, Panel): panels are checked there.
PRIMER_FAMILY = "kdiff"

_ADAPTERS = {
    "kdiff": "app.families.kdiff",
    "kmismatch": "app.families.kmismatch",
    "lcs": "app.families.lcs",
    "edit": "app.families.edit",
    "nw": "app.families.nw",
}

_cache: dict[str, FamilyAdapter] = {}


def has_adapter(name: str) -> bool:
    module = _ADAPTERS.get(name)
    return module is not None and importlib.util.find_spec(module) is not None


def adapter(name: str) -> FamilyAdapter:
    """The adapter of a registry family; raises KeyError when the GUI has none for it yet."""
    if name not in _cache:
        if not has_adapter(name):
            raise KeyError(f"the GUI has no adapter for the {name} family yet")
        _cache[name] = importlib.import_module(_ADAPTERS[name]).ADAPTER
    return _cache[name]
