"""Primer annotations computed with primer3-py.

ΔG values are reported in kcal/mol (primer3-py returns cal/mol), temperatures in °C.
Sequences with IUPAC ambiguity codes cannot be scored by Primer3's nearest-neighbour
tables; their thermodynamic fields are None.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, fields

from engine.sequences import decode, encode, reverse_complement

#: Primer3's thermodynamic alignments (hairpin, dimers) take oligos of at most 60 nt; its
#: Tm takes any length. Longer primers (up to primer_sets.MAX_PRIMER_LENGTH) get what can
#: be computed and this note.
THERMO_MAX_LENGTH = 60
TOO_LONG = "too long for Primer3 thermodynamics"


@dataclass(frozen=True)
class Conditions:
    """Reaction conditions, Primer3's defaults (mM for salts and dNTPs, nM for the oligo)."""

    mv_conc: float = 50.0    # monovalent cations (Na+, K+), mM
    dv_conc: float = 1.5     # divalent cations (Mg2+), mM
    dntp_conc: float = 0.6   # dNTPs, mM
    dna_conc: float = 50.0   # oligo, nM
    temp_c: float = 37.0     # temperature for hairpin/dimer ΔG

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
                raise ValueError(f"{f.name} must be a number, got {value!r}")
            if f.name != "temp_c" and value < 0:
                raise ValueError(f"{f.name} must not be negative, got {value:g}")
        if self.dna_conc == 0:
            raise ValueError("dna_conc (oligo concentration) must be > 0")

    def salts(self) -> dict:
        return {"mv_conc": self.mv_conc, "dv_conc": self.dv_conc, "dntp_conc": self.dntp_conc,
                "dna_conc": self.dna_conc}


@dataclass(frozen=True)
class Annotation:
    length: int
    gc_percent: float
    tm: float | None
    hairpin_dg: float | None
    hairpin_tm: float | None
    homodimer_dg: float | None
    homodimer_tm: float | None
    end_stability_dg: float | None   # ΔG of the 3'-terminal pentamer on its complement
    gc_clamp: int                    # G or C among the last 5 bases at the 3' end
    max_run: int                     # longest mononucleotide run
    #: why some thermodynamic fields are None although the primer is plain ACGT
    note: str = ""

    COLUMNS = ("gc_percent", "tm", "hairpin_dg", "hairpin_tm", "homodimer_dg", "homodimer_tm",
               "end_stability_dg", "gc_clamp", "max_run")


def annotate(seq: str, conditions: Conditions | None = None) -> Annotation:
    """Length, GC %, Tm, hairpin and self-dimer ΔG/Tm, 3' end stability, GC clamp, longest run."""
    import primer3

    cond = conditions or Conditions()
    seq = seq.upper()
    gc = sum(ch in "GC" for ch in seq)
    plain = set(seq) <= set("ACGT")
    tm = hp = hd = end = None
    short = len(seq) <= THERMO_MAX_LENGTH
    if plain:
        salts = cond.salts()
        tm = primer3.calc_tm(seq, **salts)
        if short:
            hp = primer3.calc_hairpin(seq, temp_c=cond.temp_c, **salts)
            hd = primer3.calc_homodimer(seq, temp_c=cond.temp_c, **salts)
        tail = seq[-5:]  # Primer3's end stability: the 3'-terminal pentamer on its complement
        end = primer3.calc_end_stability(tail, decode(reverse_complement(encode(tail))),
                                         temp_c=cond.temp_c, **salts)
    return Annotation(
        length=len(seq),
        gc_percent=100.0 * gc / len(seq) if seq else 0.0,
        tm=tm,
        hairpin_dg=hp.dg / 1000.0 if hp else None,
        hairpin_tm=hp.tm if hp else None,
        homodimer_dg=hd.dg / 1000.0 if hd else None,
        homodimer_tm=hd.tm if hd else None,
        end_stability_dg=end.dg / 1000.0 if end else None,
        gc_clamp=sum(ch in "GC" for ch in seq[-5:]),
        max_run=max((len(list(run)) for _, run in itertools.groupby(seq)), default=0),
        note="" if short or not plain else f"{len(seq)} nt: {TOO_LONG} (over {THERMO_MAX_LENGTH})",
    )


def annotate_many(sequences, conditions: Conditions | None = None) -> list[Annotation]:
    """Annotate many sequences. A sequence seen recently under the same conditions is not
    computed again (a CSV and a BED of the same candidates, written one after the other;
    the command line annotates once for both, engine.primers.cli_kdiff)."""
    cond = conditions or Conditions()
    return [_annotate_once(s, cond) for s in sequences]


@functools.lru_cache(maxsize=1 << 16)
def _annotate_once(seq: str, conditions: Conditions) -> Annotation:
    return annotate(seq, conditions)
