"""kmismatch in the GUI: hits table, hits along the text per pattern, hit density."""

from __future__ import annotations


import numpy as np

from app import demo
from app.families import Column, DemoInput, FamilyAdapter
from app.families.common import best_table, spaced, windows

PATTERN_LENGTH = 20


class KmismatchAdapter(FamilyAdapter):
    name = "kmismatch"
    result_extends_partial = True  # the engine appends in scan order and returns that list
    noun = "hits"
    default_demo = "msx2"
    columns = (
        Column("pattern", "str", "", "Pattern record", user_text=True),
        Column("record", "str", "", "Text record", user_text=True),
        Column("start", "int", "start", "First base of the hit (1-based, forward coordinates)"),
        Column("end", "int", "end", "Last base of the hit (1-based, inclusive)"),
        Column("strand", "str", "", "'-': the pattern's reverse complement matched"),
        Column("mismatches", "int", "", "Hamming distance to the pattern"),
        Column("matched", "str", "", "The text as read on the hit's strand"),
    )

    def make_job(self, inputs, choice):
        from engine import kmismatch

        sel = choice.selection
        return kmismatch.make_job(inputs["patterns"], inputs["text"], choice.params["k"],
                                  variant=sel.variant, backend=sel.backend,
                                  strands=choice.params["strands"], threads=choice.threads,
                                  **choice.backend_options())

    def items(self, result_or_partial):
        if result_or_partial is None:
            return ()
        return getattr(result_or_partial, "hits", result_or_partial)

    def row(self, h) -> tuple:
        return (h.pattern_id, h.record_id, h.start, h.end, h.strand, h.mismatches, h.matched)

    def rows(self, items) -> list[tuple]:
        return list(items.tuples()) if hasattr(items, "tuples") else [self.row(h) for h in items]


    library_what = "patterns"

    def library_entries(self, items, job):
        from app.families.common import pattern_entries

        return pattern_entries(items, job.inputs["patterns"]) if job is not None else []

    def best_item(self, result):
        hits = result.hits
        if not len(hits):
            return None
        return hits[int(np.argmin(hits.mismatches))]

    def summary(self, result) -> str:
        n = len(result.hits)
        if result.info.complete:
            return f"{n:,} hits"
        return f"{n:,} hits in the first {result.scanned:,} text positions"

    # -- views -------------------------------------------------------------------------------
    @staticmethod
    def hit_columns(obj, job):
        from app.views.hits import HitColumns

        hits = obj.hits if hasattr(obj, "hits") else obj
        texts = job.inputs["text"]
        return HitColumns(tuple(r.id for r in texts), tuple(len(r) for r in texts),
                          tuple(p.id for p in job.inputs["patterns"]), hits.record, hits.pattern,
                          hits.start, hits.mismatches, tuple(r.offset for r in texts))

    @staticmethod
    def density_profile(result, record_id):
        from app.views.hits import Profile

        for d in result.density:
            if d.record_id == record_id and d.counts.size:
                return Profile(1 + d.bin_width * np.arange(d.counts.size), d.counts,
                               f"hits per {d.bin_width:,} bp")
        return None

    def best_per_pair(self, result, job):
        cols = self.hit_columns(result, job)
        table = best_table(cols.pattern, cols.record, cols.score, len(cols.pattern_ids),
                           len(cols.record_ids))
        return table, cols.pattern_ids, cols.record_ids, job.params["k"] + 1

    def create_views(self, host):
        from app.views.hits import HitsView, PairsView

        return [HitsView(self.hit_columns, self.density_profile, "mismatches",
                         lambda job: job.params["k"]),
                PairsView(self.best_per_pair, "mismatches")]

    def demo_params(self, dataset):
        return {"k": 3} if dataset == "msx2" else {}

    def demo_inputs(self, dataset):
        if dataset == "msx2":  # primers cut from human msx2: where do they bind in the homologs?
            msx2 = demo.records("msx2")
            human = msx2[0]
            patterns = windows(human, spaced(len(human), 12, PATTERN_LENGTH), PATTERN_LENGTH)
            return {"text": DemoInput(msx2, demo.path("msx2"), use=tuple(range(1, len(msx2)))),
                    "patterns": DemoInput(patterns, f"12 x {PATTERN_LENGTH}-mers of {human.id}")}
        if dataset == "lambda-ecoli":  # 20-mers of E. coli and of lambda searched in E. coli
            eco, lam = demo.records("ecoli")[0], demo.records("lambda")[0]
            patterns = (windows(eco, spaced(len(eco), 12, PATTERN_LENGTH), PATTERN_LENGTH, "ecoli")
                        + windows(lam, spaced(len(lam), 4, PATTERN_LENGTH), PATTERN_LENGTH, "lambda"))
            return {"text": DemoInput((eco,), demo.path("ecoli")),
                    "patterns": DemoInput(patterns, f"{len(patterns)} x {PATTERN_LENGTH}-mers")}
        if dataset == "yeast":
            orfs = demo.records("yeast")
            patterns = windows(orfs[0], spaced(len(orfs[0]), 10, PATTERN_LENGTH), PATTERN_LENGTH)
            return {"text": DemoInput(orfs, demo.path("yeast")),
                    "patterns": DemoInput(patterns, f"10 x {PATTERN_LENGTH}-mers of {orfs[0].id}")}
        return {}


ADAPTER = KmismatchAdapter()
