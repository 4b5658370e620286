"""One rule for every parameter (issue #29): the registry's ``ParamSpec.check`` refuses a bad
value with the same message whether it comes from the command line or the Python API
(each family's ``make_job``). Before, ``primerscope kdiff -k 20000`` exited 2 while
``kdiff.make_job(..., k=20_000)`` was accepted.

The bad values are derived from the registry itself: one below each numeric parameter's
minimum, one above its maximum, and a word that is no choice."""

from __future__ import annotations

import pytest

from engine import edit, kdiff, kmismatch, lcs, nw, registry
from engine.cli import main
from engine.gaps import GAP_MIN_PARAM
from engine.sequences import Record, load

# Per family: the command line without the parameter under test, and make_job with valid
# inputs; both on the serial backend (the values are checked before any backend's rules).
CALLS = {
    "kdiff": (["ACGTACGT", "ACGGT"], {"k": ["-k", "2"]},
              lambda **kw: kdiff.make_job(load("ACGTACGT"), load("ACGGT"), **{"k": 2, **kw})),
    "kmismatch": (["ACGTACGT", "ACG"], {"k": ["-k", "1"]},
                  lambda **kw: kmismatch.make_job(load("ACG"), load("ACGTACGT"),
                                                  **{"k": 1, **kw})),
    "lcs": (["ACGTAC", "ACGGTA"], {}, lambda **kw: lcs.make_job(load("ACGTAC"), load("ACGGTA"), **kw)),
    "edit": (["ACGT", "ACGTTACGT"], {},
             lambda **kw: edit.make_job(load("ACGT"), load("ACGTTACGT"), **kw)),
    "nw": (["ACGTAC", "ACGGTA"], {}, lambda **kw: nw.make_job(load("ACGTAC"), load("ACGGTA"), **kw)),
}


def _bad_values():
    for fam in registry.families():
        for p in fam.params:
            if p.kind == "choice":
                yield fam.name, p, "sideways"
            elif p.kind == "int":
                if p.minimum is not None:
                    yield fam.name, p, int(p.minimum) - 1
                if p.maximum is not None:
                    yield fam.name, p, int(p.maximum) + 1


BAD = list(_bad_values())


def test_every_family_and_every_checked_parameter_is_covered():
    assert {name for name, _, _ in BAD} == set(CALLS) == set(registry.family_names())
    # k of kdiff has both bounds: the example of the issue is among the cases.
    assert ("kdiff", kdiff.SPEC.param("k"), 10_001) in BAD


@pytest.mark.parametrize("family,param,value", BAD,
                         ids=[f"{f}-{p.name}={v}" for f, p, v in BAD])
def test_the_command_line_and_the_api_refuse_alike(family, param, value, capsys):
    positional, required, api = CALLS[family]
    with pytest.raises(ValueError) as refused:
        api(backend="serial", **{param.name: value})
    message = str(refused.value)
    assert message == _expected(param, value)
    given = [opt for name, opt in required.items() if name != param.name]
    argv = [family, *positional, *sum(given, []), param.flag, str(value), "--backend", "serial",
            "--no-progress"]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f"primerscope: error: {message}"


def _expected(param, value) -> str:
    """What ParamSpec.check says, written out here so a change of wording is seen."""
    if param.kind == "choice":
        return f"{param.name} must be one of {', '.join(param.choices)}, got {value!r}"
    if value < param.minimum if param.minimum is not None else False:
        return f"{param.name} must be >= {int(param.minimum)}, got {value}"
    return f"{param.name} must be <= {int(param.maximum)}, got {value}"


@pytest.mark.parametrize("value,message", [
    (2.5, "k must be an integer, got 2.5"),
    (True, "k must be an integer, got True"),
    (None, "k must be an integer, got None"),
    (2_000_000, "k must be <= 10000, got 2000000"),  # in full, not 2e+06
])
def test_api_only_values_name_the_parameter(value, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        CALLS["kdiff"][2](k=value, backend="serial")


def test_closest_match_takes_the_family_rule_too():
    with pytest.raises(ValueError, match="^k must be <= 10000, got 20000$"):
        kdiff.closest_match("ACGT", load("ACGTACGT"), k=20_000)
    with pytest.raises(ValueError, match="^strands must be one of both, forward"):
        kdiff.closest_match("ACGT", load("ACGTACGT"), strands="reverse")


@pytest.mark.parametrize("family", sorted(CALLS))
def test_threads_reads_the_same_on_the_command_line_and_in_the_api(family, capsys):
    """threads is no registry parameter (every family has it): one check serves both."""
    positional, required, api = CALLS[family]
    with pytest.raises(ValueError) as refused:
        api(backend="multicore", threads=0)
    assert str(refused.value) == "threads must be >= 1, got 0"
    argv = [family, *positional, *sum(required.values(), []), "--threads", "0",
            "--backend", "multicore", "--no-progress"]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f"primerscope: error: {refused.value}"


def _gap_min_callers():
    """make_job of every family and primer command with a background or text, given gap_min."""
    from engine.primers import offtarget, pairs, panel, pcr

    primers = [Record(name, load(s)[0].codes) for name, s in (("f", "ACGTACGTAA"),
                                                               ("r", "TTGCATGCAA"))]
    bg = load("ACGTACGTAATTTTTTTTTTGCATGCAA")
    return {
        "kdiff": lambda g: CALLS["kdiff"][2](backend="serial", gap_min=g),
        "kmismatch": lambda g: CALLS["kmismatch"][2](backend="serial", gap_min=g),
        "edit": lambda g: CALLS["edit"][2](backend="serial", gap_min=g),
        "pcr": lambda g: pcr.make_job(primers, bg, backend="serial", gap_min=g),
        "panel": lambda g: panel.make_job(primers, bg, backend="serial", gap_min=g),
        "panel, no background": lambda g: panel.make_job(primers, gap_min=g),  # (no edit job)
        "pairs": lambda g: pairs.make_job(bg, bg, 12, backend="serial", gap_min=g),
        "off-target": lambda g: offtarget.make_job(primers[0], bg, 1, backend="serial",
                                                   gap_min=g),
    }


@pytest.mark.parametrize("value", [int(GAP_MIN_PARAM.minimum) - 1, int(GAP_MIN_PARAM.maximum) + 1,
                                   2.5])
def test_gap_min_is_the_registrys_parameter_in_the_primer_layer_too(value):
    """pcr, panel, pairs and off-target take gap_min by the registry's rule (GAP_MIN_PARAM),
    as the families do: the same message for the same bad value, also where no family job
    checks it after them (a panel without a background took 10^9 + 1)."""
    messages = set()
    for call in _gap_min_callers().values():
        with pytest.raises(ValueError) as refused:
            call(value)
        messages.add(str(refused.value))
    expected = (f"gap_min must be an integer, got {value!r}" if not isinstance(value, int)
                else _expected(GAP_MIN_PARAM, value))
    assert messages == {expected}
