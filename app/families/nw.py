"""nw in the GUI: live score matrix with the traceback path, coloured alignment, dot plot."""

from __future__ import annotations

from app import demo
from app.families import Column, DemoInput, FamilyAdapter


class NwAdapter(FamilyAdapter):
    name = "nw"
    noun = "alignment columns"
    default_demo = "msx2"
    wants_snapshots = True
    columns = (
        Column("column", "int", "", "Alignment column (1-based)"),
        Column("a_pos", "int", "start", "Position in sequence A (1-based; empty at a gap in A); "
               "a_pos in the CSV", header="pos. in A (1-based)"),
        Column("b_pos", "int", "", "Position in sequence B (1-based; empty at a gap in B); "
               "b_pos in the CSV", header="pos. in B (1-based)"),
        Column("a", "str"),
        Column("b", "str"),
        Column("op", "str", "", "= match, X mismatch, D gap in B, I gap in A"),
    )

    def make_job(self, inputs, choice):
        from engine import nw

        p, sel = choice.params, choice.selection
        return nw.make_job(inputs["a"], inputs["b"], match=p["match"], mismatch=p["mismatch"],
                           gap=p["gap"], variant=sel.variant, backend=sel.backend,
                           parallel=sel.parallel, flags=sel.flags, threads=choice.threads,
                           snapshots=True, **choice.backend_options())

    def items(self, result_or_partial):
        al = getattr(result_or_partial, "alignment", None)
        if al is None:
            return ()
        from engine.nw.export import column_rows

        return list(column_rows(al))

    def row(self, item) -> tuple:
        return item

    def export_options(self) -> dict:
        return {"layout": "columns"}  # what -o OUT.csv writes (the alignment's columns)

    library_what = "the stretch of A"

    def library_entries(self, items, job):
        from app.families.common import span_entry

        return span_entry(job.inputs["a"][0], [i[1] for i in items]) if job is not None else []

    def answer_key(self, result):
        return result.score

    def summary(self, result) -> str:
        if result.score is None:
            return "no score (cancelled during the score pass)"
        text = f"score {result.score:,}"
        if result.alignment is not None:
            al = result.alignment
            text += f", {al.columns:,} columns, identity {100 * al.identity:.1f}%"
        return text

    def best_item(self, result):
        return None

    def alignment_text(self, result, job) -> str:
        if result.alignment is None:
            return ""
        from engine.nw.export import result_text

        return result_text(result)

    # -- views -------------------------------------------------------------------------------
    @staticmethod
    def scale(job):
        from engine.nw.scoring import Scores, snapshot_scale

        from app.views.matrix import MatrixScale

        a, b = job.inputs["a"][0], job.inputs["b"][0]
        p = job.params
        offset, step = snapshot_scale(len(a), len(b), Scores(p["match"], p["mismatch"], p["gap"]))
        note = f"Scores are shown in steps of {step}." if step > 1 else ""
        return MatrixScale(None, lambda v: offset + (v - 1) * step, "score H[i, j]", note, empty=0,
                           empty_note="Grey: not computed yet.")

    @staticmethod
    def path(result):
        al = getattr(result, "alignment", None)
        if al is None:
            return None
        return al.path[:, 0], al.path[:, 1]

    @staticmethod
    def pairwise(result):
        from app.views.alignment import PairwiseAlignment

        al = result.alignment
        if al is None:
            return None
        summary = (f"{result.a_id} ({result.a_length:,} bp) vs {result.b_id} ({result.b_length:,} bp): "
                   f"score {result.score:,}, {al.columns:,} columns, identity {100 * al.identity:.1f}%, "
                   f"{al.gaps:,} gaps.")
        return PairwiseAlignment(result.a_id, result.b_id, al.aligned_a, al.aligned_b, al.codes, summary)

    def create_views(self, host):
        from PySide6.QtCore import Qt

        from app.views import SplitView
        from app.views.alignment import AlignmentView, DotPlotView
        from app.views.matrix import LiveMatrixView

        return [LiveMatrixView(self.scale, self.path),
                SplitView("Alignment", [AlignmentView(self.pairwise), DotPlotView(self.path)],
                          Qt.Orientation.Horizontal, (650, 450))]

    def demo_inputs(self, dataset):
        if dataset == "msx2":  # human against mouse msx2
            msx2 = demo.records("msx2")
            return {"a": DemoInput(msx2, demo.path("msx2"), use=(0,)),
                    "b": DemoInput(msx2, demo.path("msx2"), use=(3,))}
        if dataset == "yeast":
            orfs = demo.records("yeast")
            return {"a": DemoInput(orfs, demo.path("yeast"), use=(0,)),
                    "b": DemoInput(orfs, demo.path("yeast"), use=(1,))}
        if dataset == "lambda-ecoli":
            lam, eco = demo.records("lambda"), demo.records("ecoli")
            return {"a": DemoInput(lam, demo.path("lambda"), region=(1, 3000)),
                    "b": DemoInput(eco, demo.path("ecoli"), region=(1, 3000))}
        return {}


ADAPTER = NwAdapter()
