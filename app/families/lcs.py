"""lcs in the GUI: live DP matrix with the LCS path, the alignment it implies, dot plot."""

from __future__ import annotations

import numpy as np

from app import demo
from app.families import Column, DemoInput, FamilyAdapter


class LcsAdapter(FamilyAdapter):
    name = "lcs"
    noun = "LCS symbols"
    default_demo = "msx2"
    wants_snapshots = True
    columns = (
        Column("a_pos", "int", "start", "Position in sequence A (1-based); a_pos in the CSV",
               header="pos. in A (1-based)"),
        Column("b_pos", "int", "", "Position in sequence B (1-based); b_pos in the CSV",
               header="pos. in B (1-based)"),
        Column("symbol", "str", "", "The shared base (intersection of the two base sets)"),
    )

    def make_job(self, inputs, choice):
        from engine import lcs

        sel = choice.selection
        return lcs.make_job(inputs["a"][0], inputs["b"][0], variant=sel.variant, backend=sel.backend,
                            parallel=sel.parallel, task=choice.params["task"],
                            threads=choice.threads, snapshots=True, **choice.backend_options())

    def items(self, result_or_partial):
        if result_or_partial is None:
            return ()
        if isinstance(result_or_partial, np.ndarray):  # pairs recovered so far
            return [(int(i), int(j), "") for i, j in result_or_partial.tolist()]
        r = result_or_partial
        if r.pairs is None or r.lcs is None:
            return ()
        return [(int(i), int(j), s) for (i, j), s in zip(r.pairs.tolist(), r.lcs)]

    def row(self, item) -> tuple:
        return item


    library_what = "the stretch of A"

    def library_entries(self, items, job):
        from app.families.common import span_entry

        return span_entry(job.inputs["a"][0], [i[0] for i in items]) if job is not None else []

    def answer_key(self, result):
        return result.length

    def summary(self, result) -> str:
        if result.length is None:
            return "no length (cancelled during the score pass)"
        shorter = min(result.a_length, result.b_length)
        text = f"LCS length {result.length:,} ({100 * result.length / shorter:.1f}% of the shorter sequence)"
        return text if result.info.complete else text + ", partial"

    def best_item(self, result):
        return None

    def alignment_text(self, result, job) -> str:
        al = self.pairwise(result, job)
        if al is None:
            return ""
        from app.views.alignment import plain_text

        return plain_text(al)

    # -- views -------------------------------------------------------------------------------
    @staticmethod
    def scale(job):
        from app.views.matrix import MatrixScale

        a, b = job.inputs["a"][0], job.inputs["b"][0]
        shift = max(0, int(min(len(a), len(b))).bit_length() - 16)  # values are L >> shift
        note = f"Values are L >> {shift}." if shift else ""
        return MatrixScale(None, lambda v: int(v) << shift, "L[i, j]: LCS length so far", note)

    @staticmethod
    def local_pairs(result, job):
        """The LCS pairs as matrix cells (the result's are the records' coordinates)."""
        pairs = getattr(result, "pairs", None)
        if pairs is None or job is None:
            return pairs
        return pairs - [job.inputs["a"][0].offset, job.inputs["b"][0].offset]

    def path(self, result, job=None):
        pairs = self.local_pairs(result, job)
        if pairs is None or not len(pairs):
            return None
        return pairs[:, 0], pairs[:, 1]

    def pairwise(self, result, job=None):
        from app.views.alignment import from_pairs

        if result.pairs is None or result.length is None or job is None:
            return None
        a, b = job.inputs["a"][0], job.inputs["b"][0]
        al = from_pairs(result.a_id, result.b_id, a.text, b.text, self.local_pairs(result, job))
        summary = (f"{result.a_id} ({result.a_length:,} bp) vs {result.b_id} ({result.b_length:,} bp): "
                   f"LCS length {result.length:,}; the alignment it implies has {len(al.aligned_a):,} "
                   "columns (LCS symbols paired, the rest against gaps).")
        return type(al)(al.a_id, al.b_id, al.aligned_a, al.aligned_b, al.codes, summary)

    def create_views(self, host):
        from PySide6.QtCore import Qt

        from app.views import SplitView
        from app.views.alignment import AlignmentView, DotPlotView
        from app.views.matrix import LiveMatrixView

        def path(result):
            return self.path(result, host.controller.job)

        return [LiveMatrixView(self.scale, path),
                SplitView("Alignment", [AlignmentView(lambda r: self.pairwise(r, host.controller.job)),
                                        DotPlotView(path)],
                          Qt.Orientation.Horizontal, (650, 450))]

    def demo_inputs(self, dataset):
        if dataset == "msx2":  # human against chicken msx2
            msx2 = demo.records("msx2")
            return {"a": DemoInput(msx2, demo.path("msx2"), use=(0,)),
                    "b": DemoInput(msx2, demo.path("msx2"), use=(6,))}
        if dataset == "yeast":
            orfs = demo.records("yeast")
            return {"a": DemoInput(orfs, demo.path("yeast"), use=(0,)),
                    "b": DemoInput(orfs, demo.path("yeast"), use=(1,))}
        if dataset == "lambda-ecoli":
            lam, eco = demo.records("lambda"), demo.records("ecoli")
            return {"a": DemoInput(lam, demo.path("lambda"), region=(1, 5000)),
                    "b": DemoInput(eco, demo.path("ecoli"), region=(1, 5000))}
        return {}


ADAPTER = LcsAdapter()
