"""kdiff in the GUI: candidates table, specificity profile, candidate D matrix, primer tools
(annotations, filters, regions) and the off-target report."""

from __future__ import annotations

from app import demo
from app.families import Column, DemoInput, FamilyAdapter


class KdiffAdapter(FamilyAdapter):
    name = "kdiff"
    result_extends_partial = True  # the engine appends in scan order and returns that list
    noun = "candidates"
    columns = (
        Column("target", "str", "", "Target record", user_text=True),
        Column("start", "int", "start", "First base of the candidate (1-based)"),
        Column("end", "int", "end", "Last base of the candidate (1-based, inclusive)"),
        Column("length (bp)", "int", "length", "Candidate length c+1; short means specific"),
        Column("sequence", "str"),
    )

    #: the k slider's k (an all-k run's landscape shown at a smaller k); None: the run's k
    shown_k: int | None = None
    #: the Landscape tab's "every k" box: the next run computes every k up to k (it costs
    #: more than one k: docs/benchmarks.md, issue 33)
    every_k: bool = False

    def make_job(self, inputs, choice):
        from engine import kdiff

        sel = choice.selection
        self.shown_k = None
        # Comparisons are counted, as `primerscope kdiff` does, for the throughput graph.
        options = dict(variant=sel.variant, backend=sel.backend, parallel=sel.parallel,
                       flags=sel.flags, strands=choice.params["strands"], threads=choice.threads,
                       count_comparisons=True, **choice.backend_options())
        if self.every_k:
            # The neighbours flag only speeds up one k (its bounds are on one k's answers) and
            # --all-k refuses it; the box asks for the landscape, so it runs without it.
            every_k = dict(options, flags=frozenset(sel.flags) - {"neighbours"})
            try:  # every k up to k in the one scan, for the k slider (issue #33), where it runs
                return kdiff.make_job(inputs["target"], inputs["background"], choice.params["k"],
                                      all_k=True, **every_k)
            except ValueError:  # (a backend or form of one k; a bad input fails again below)
                pass
        return kdiff.make_job(inputs["target"], inputs["background"], choice.params["k"],
                              **options)

    def shown(self, result):
        """``result`` at the k slider's k: its landscape's candidates at that k (no rerun)."""
        from dataclasses import replace

        land = getattr(result, "landscape", None)
        k = self.shown_k
        if land is None or k is None or k == result.k or not 1 <= k <= len(land.k):
            return result
        return replace(result, k=k, candidates=land.candidates(k))

    def items(self, result_or_partial):
        if result_or_partial is None:
            return ()
        if hasattr(result_or_partial, "landscape"):
            result_or_partial = self.shown(result_or_partial)
        return getattr(result_or_partial, "candidates", result_or_partial)

    def row(self, c) -> tuple:
        from engine.primers.export_kdiff import candidate_row  # the CSV's columns

        return candidate_row(c)

    def rows(self, items) -> list[tuple]:
        from engine.primers.export_kdiff import candidate_row

        return [candidate_row(c) for c in items]

    def export(self):
        """kdiff's writers live with the primer tools (``engine.primers.export_kdiff``)."""
        from engine.primers import export_kdiff

        return export_kdiff

    def csv_text(self, result) -> str:
        from dataclasses import replace

        from engine.primers import export_kdiff as export  # the command line's writer

        # the candidates at the slider's k, as `primerscope kdiff -k K` writes them
        return export.csv_text(replace(self.shown(result), landscape=None))

    def empty_reason(self, result, job) -> str:
        if job is None:
            return ""
        k = job.params["k"]
        longest = max((len(t) for t in job.inputs["target"]), default=0)
        if longest <= k - 1:
            return (f"Every target record is at most k − 1 = {k - 1} bp long ({longest:,} bp at most): "
                    "no start has a suffix longer than k − 1, so none can differ from the background "
                    "by k edits. Lower k or use a longer target.")
        return (f"From every start, the whole rest of the target occurs in the background within "
                f"k − 1 = {k - 1} edits: nothing is specific at k = {k}. Lower k.")

    library_what = "candidates"

    def library_entries(self, items, job):
        """Candidates (a merged region: its best candidate) as forward primers."""
        from app.families.common import candidate_entry
        from app.pairs import records_label

        k = job.params["k"] if job is not None else None
        background = records_label(job.inputs["background"]) if job is not None else ""
        return [candidate_entry(getattr(item, "best", item), k, background) for item in items]

    def best_item(self, result):
        """The shortest (most specific) candidate, the first one if several."""
        cands = self.shown(result).candidates
        if not len(cands):
            return None
        if hasattr(cands, "length") and not callable(cands.length):  # columns: no object each
            return cands[int(cands.length.argmin())]
        return min(cands, key=lambda c: c.length)

    def summary(self, result) -> str:
        result = self.shown(result)
        n = len(result.candidates)
        settled = sum(result.settled.values())
        text = f"{n:,} candidates" if result.info.complete else \
            f"{n:,} candidates from the {settled:,} start positions settled before the cancel"
        background = getattr(result, "background_summary", None)
        if background is not None and (background.gaps or background.ambiguous):
            text += f"; background: {background.line()}"  # (engine.gaps)
        if background is not None and background.warning():
            text += f" (warning: {background.warning()})"
        return text

    def create_views(self, host):
        from PySide6.QtCore import Qt

        from app.views import SplitView
        from app.views.kdiff import CandidateView, LandscapeView, SpecificityView
        from app.views.offtarget import OffTargetView
        from app.views.pairs import PairsView
        from app.views.panel import PanelView
        from app.views.primers import PrimerTools
        from app.views.sequence import KdiffSequenceView

        profile, candidate = SpecificityView(), CandidateView()

        def backend_choice():  # the off-target search runs on the backend chosen for kdiff
            state = host.params.state()  # (backend, threads, the Dask scheduler's address or None)
            return state["backend"], state["threads"], state["params"].get("scheduler") or None

        def pair_inputs():  # pair design: the run panel's inputs, k and selection
            missing = host.missing_input()
            if missing:
                raise ValueError(missing)
            choice = host.params.choice()
            inputs = host.inputs()
            return {"target": inputs["target"], "background": inputs["background"],
                    "k": choice.params["k"], "selection": choice.selection,
                    "threads": choice.threads,
                    "scheduler": choice.params.get("scheduler") or None,  # dask: its address
                    "gap_min": choice.params.get("gap_min")}  # (None: the store's, else 10)

        def has_inputs():  # cheap (the tab refreshes while runs draw): records chosen in each box
            return all(p.state().records and p.state().use for p in host.input_panels.values())

        def panel_background():  # cross-products: the run panel's background, if loaded
            from app.pairs import records_label

            records = host.inputs().get("background") or []
            return (records, records_label(records)) if records else None

        def show_k(k: int) -> None:
            """The k slider: the table, the profile and the exports at k, from the landscape."""
            result = host.controller.result
            if getattr(result, "landscape", None) is None:
                return
            self.shown_k = k
            shown = self.shown(result)
            host.results.model.replace(self.items(shown), self.rows)
            profile.show_candidates(shown.candidates)
            host.results.set_summary(self.summary(shown))
            tools.show_k(shown)  # its annotations: those made stay, the new k's are added

        def export_tracks(prefix: str | None = None) -> list[str]:
            """One bedGraph per k (and bigWig with pyBigWig), as `kdiff --all-k --bedgraph`."""
            from engine.kdiff.landscape_table import have_pybigwig
            from engine.output import write_texts

            result = host.controller.result
            land = getattr(result, "landscape", None)
            if land is None:
                return []
            if prefix is None:
                path = host.exports.ask_path("Export tracks (one per k)", "kdiff.bedGraph",
                                             "bedGraph files (*.bedGraph);;All files (*)")
                if not path:
                    return []
                prefix = path[:-len(".bedGraph")] if path.endswith(".bedGraph") else path
            files = land.bedgraph_files(prefix)
            write_texts(files)
            written = list(files)
            if have_pybigwig():
                written += land.write_bigwigs(prefix)
            host.state_label.setText(f"Wrote {len(written)} tracks: {prefix}.k1 … k{len(land.k)}.")
            return written

        def want_every_k(on: bool) -> None:
            self.every_k = on

        # The adapter outlives a window: a new window's views start from their own unchecked box.
        self.every_k, self.shown_k = False, None

        landscape = LandscapeView(show_k, export_tracks, profile.prepare, want_every_k,
                                  self.every_k, lambda: self.shown_k)
        tools = PrimerTools(self, host.results, host.settings)

        def library_selection():  # Check primers: the library's selected primers
            return [(e.name, e.sequence) for e in host.library_dock.selected_entries()]

        def primer_settings():  # pair design: the conditions and, when on, the filters' bounds
            return tools.conditions, tools.filters if tools.filter_box.isChecked() else None

        return [SplitView("Specificity", [profile, candidate], Qt.Orientation.Horizontal, (600, 500)),
                KdiffSequenceView(), landscape, OffTargetView(backend_choice),
                PairsView(pair_inputs, host.settings, host.ask, has_inputs, primer_settings,
                          library_selection),
                PanelView(panel_background, backend_choice), tools]

    def demo_params(self, dataset):
        return {"k": 5, "strands": "both"} if dataset == "lambda-pairs" else {}

    def demo_view(self, dataset):
        return "Pairs" if dataset == "lambda-pairs" else ""

    def demo_inputs(self, dataset):
        if dataset == "lambda-ecoli":
            lam, eco = demo.records("lambda"), demo.records("ecoli")
            return {"target": DemoInput(lam, demo.path("lambda"), region=(1, 1000)),
                    "background": DemoInput(eco, demo.path("ecoli"), region=(1, 200_000))}
        if dataset == "lambda-pairs":  # seconds on two cores (docs/gui.md)
            lam, eco = demo.records("lambda"), demo.records("ecoli")
            return {"target": DemoInput(lam, demo.path("lambda"), region=demo.PAIRS_TARGET),
                    "background": DemoInput(eco, demo.path("ecoli"), region=demo.PAIRS_BACKGROUND)}
        if dataset == "msx2":
            msx2 = demo.records("msx2")  # human msx2 against its homologs in other species
            return {"target": DemoInput(msx2, demo.path("msx2"), use=(0,)),
                    "background": DemoInput(msx2, demo.path("msx2"), use=tuple(range(1, len(msx2))))}
        if dataset == "yeast":
            orfs = demo.records("yeast")  # one ORF against the others
            return {"target": DemoInput(orfs, demo.path("yeast"), use=(0,)),
                    "background": DemoInput(orfs, demo.path("yeast"), use=tuple(range(1, len(orfs))))}
        return {}


ADAPTER = KdiffAdapter()

