"""edit in the GUI: search hits (start, CIGAR) along the text, or global distances."""

from __future__ import annotations

import re

import numpy as np

from app import demo
from app.families import Column, DemoInput, FamilyAdapter
from app.families.common import best_table, spaced, windows
from engine.columns import blank

SEARCH_COLUMNS = (
    Column("pattern", "str", "", "Pattern record", user_text=True),
    Column("record", "str", "", "Text record", user_text=True),
    Column("start", "int", "start", "First base of the hit (1-based; the leftmost start that "
                                    "realises the distance)"),
    Column("end", "int", "end", "Last base of the hit (1-based, inclusive)"),
    Column("strand", "str", "", "'-': the pattern's reverse complement matched"),
    Column("distance", "int", "", "Edit distance of the pattern to this stretch of text"),
    Column("cigar", "str", "", "= match, X mismatch, I pattern base without text, D text base "
                               "without pattern"),
    Column("matched", "str", "", "The text as read on the hit's strand"),
)
GLOBAL_COLUMNS = (
    Column("pattern", "str", "", "Pattern record", user_text=True),
    Column("record", "str", "", "Text record", user_text=True),
    Column("distance", "int", "", "Edit distance (empty when above k)"),
    Column("cigar", "str", ""),
)
_CIGAR = re.compile(r"(\d+)([=XID])")


class EditAdapter(FamilyAdapter):
    name = "edit"
    noun = "hits"
    default_demo = "msx2"

    def table_columns(self, params):
        return SEARCH_COLUMNS if params.get("mode") == "search" else GLOBAL_COLUMNS

    def make_job(self, inputs, choice):
        from engine import edit

        sel, p = choice.selection, choice.params
        search = p["mode"] == "search"
        return edit.make_job(inputs["pattern"], inputs["text"], mode=p["mode"], k=p["k"],
                             variant=sel.variant, backend=sel.backend, parallel=sel.parallel,
                             flags=sel.flags, strands=p["strands"] if search else "forward",
                             pairing=p["pairing"], report=p["report"] if search else None,
                             threads=choice.threads, **choice.backend_options())

    def items(self, result_or_partial):
        if result_or_partial is None:
            return ()
        if hasattr(result_or_partial, "mode"):
            r = result_or_partial
            return r.hits if r.mode == "search" else r.distances
        return result_or_partial

    def row(self, item) -> tuple:
        if hasattr(item, "strand"):
            return (item.pattern_id, item.record_id, blank(item.start), item.end, item.strand,
                    item.distance, blank(item.cigar), blank(item.matched))
        return (item.pattern_id, item.record_id, blank(item.distance), blank(item.cigar))


    library_what = "patterns"

    def library_entries(self, items, job):
        from app.families.common import pattern_entries

        return pattern_entries(items, job.inputs["pattern"]) if job is not None else []

    def best_item(self, result):
        items = self.items(result)
        scored = [i for i in items if i.distance is not None]
        return min(scored, key=lambda i: i.distance, default=None)

    def summary(self, result) -> str:
        if result.mode == "search":
            text = f"{len(result.hits):,} hits"
            if result.best is not None:
                text += f", best distance {result.best}"
        else:
            text = f"{len(result.distances):,} distances"
            if result.best is not None:
                text += f", smallest {result.best}"
        return text if result.info.complete else text + " (partial)"

    def alignment_text(self, result, job) -> str:
        """Each search hit with a CIGAR as pattern / bars / text lines: the pattern 5'->3'
        over ``matched`` (the text as read on the hit's strand), as the CIGAR reads on
        either strand (engine.edit.cpu_align)."""
        if result.mode != "search" or job is None:
            return ""
        from engine.sequences import decode

        patterns = {r.id: r.codes for r in job.inputs["pattern"]}
        blocks = []
        for h in result.hits:
            if h.cigar is None or h.matched is None:
                continue
            p = decode(patterns[h.pattern_id])
            top, bottom, bars = [], [], []
            i = j = 0
            for count, op in _CIGAR.findall(h.cigar):
                for _ in range(int(count)):
                    a = p[i] if op != "D" else "-"
                    b = h.matched[j] if op != "I" else "-"
                    top.append(a)
                    bottom.append(b)
                    bars.append("|" if op == "=" else "." if op == "X" else " ")
                    i += op != "D"
                    j += op != "I"
            blocks.append(f"# {h.pattern_id} in {h.record_id} {h.start}-{h.end} ({h.strand}), "
                          f"distance {h.distance}, CIGAR {h.cigar}\n"
                          f"pattern {''.join(top)}\n        {''.join(bars)}\n"
                          f"text    {''.join(bottom)}")
        return "\n\n".join(blocks)

    # -- views -------------------------------------------------------------------------------
    @staticmethod
    def hit_columns(obj, job):
        from app.views.hits import HitColumns

        hits = [h for h in (obj.hits if hasattr(obj, "hits") else obj) if hasattr(h, "strand")]
        texts, patterns = job.inputs["text"], job.inputs["pattern"]
        rindex = {r.id: i for i, r in enumerate(texts)}
        pindex = {p.id: i for i, p in enumerate(patterns)}
        return HitColumns(
            tuple(r.id for r in texts), tuple(len(r) for r in texts), tuple(p.id for p in patterns),
            np.array([rindex[h.record_id] for h in hits], dtype=np.int64),
            np.array([pindex[h.pattern_id] for h in hits], dtype=np.int64),
            np.array([h.end for h in hits], dtype=np.int64),  # search reports end positions
            np.array([h.distance for h in hits], dtype=np.int64), tuple(r.offset for r in texts))

    @staticmethod
    def engine_profile(result, record_id):
        """The engine's best-distance profile along a record, best over patterns and strands."""
        from app.views.hits import Profile

        profs = [p for p in getattr(result, "profiles", ()) if p.record_id == record_id]
        if not profs:
            return None
        first = profs[0]
        values = np.stack([p.values for p in profs if p.values.shape == first.values.shape])
        values = values.astype(float)
        values[(values < 0) | (values >= first.cap)] = np.inf  # not scanned, or more than k
        best = values.min(axis=0)
        best[np.isinf(best)] = np.nan
        return Profile(1 + first.bin_width * np.arange(best.size), best,
                       f"best edit distance per {first.bin_width:,} bp")

    def best_per_pair(self, result, job):
        patterns, texts = job.inputs["pattern"], job.inputs["text"]
        pids, rids = tuple(p.id for p in patterns), tuple(r.id for r in texts)
        k = result.k
        if result.mode == "search":
            cols = self.hit_columns(result, job)
            table = best_table(cols.pattern, cols.record, cols.score, len(pids), len(rids))
        else:
            table = np.full((len(pids), len(rids)), -1, dtype=np.int64)
            pi, ri = {p: i for i, p in enumerate(pids)}, {r: j for j, r in enumerate(rids)}
            for d in result.distances:
                if d.distance is not None:
                    table[pi[d.pattern_id], ri[d.record_id]] = d.distance
        missing = (k + 1) if k is not None else int(max(1, table.max()) + 1)
        return table, pids, rids, missing

    def create_views(self, host):
        from app.views.hits import HitsView, PairsView

        return [HitsView(self.hit_columns, self.engine_profile, "edit distance",
                         lambda job: job.params["k"], best_profile=True, position="end"),
                PairsView(self.best_per_pair, "edit distance")]

    def demo_params(self, dataset):
        return {"mode": "search", "k": 6 if dataset != "msx2" else 10, "report": "hits"}

    def demo_inputs(self, dataset):
        if dataset == "msx2":  # pieces of human msx2 searched in the other species' mRNAs
            msx2 = demo.records("msx2")
            patterns = windows(msx2[0], spaced(len(msx2[0]), 4, 60, first=200), 60)
            return {"pattern": DemoInput(patterns, f"4 x 60 bp of {msx2[0].id}"),
                    "text": DemoInput(msx2, demo.path("msx2"), use=tuple(range(1, len(msx2))))}
        if dataset == "lambda-ecoli":
            eco, lam = demo.records("ecoli")[0], demo.records("lambda")[0]
            patterns = (windows(eco, spaced(1_000_000, 4, 64), 64, "ecoli")
                        + windows(lam, [1001], 64, "lambda"))
            return {"pattern": DemoInput(patterns, f"{len(patterns)} x 64 bp"),
                    "text": DemoInput((eco,), demo.path("ecoli"), region=(1, 1_000_000))}
        if dataset == "yeast":
            orfs = demo.records("yeast")
            patterns = windows(orfs[0], spaced(len(orfs[0]), 4, 50), 50)
            return {"pattern": DemoInput(patterns, f"4 x 50 bp of {orfs[0].id}"),
                    "text": DemoInput(orfs, demo.path("yeast"))}
        return {}


ADAPTER = EditAdapter()
