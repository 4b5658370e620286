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
from engine.sequences import load

# Per family: the command line without the parameter under test, and make_job with valid
# inputs; both on the serial backend (the values are checked before any backend's rules).
CALLS = {
    "kdiff": (["ACGTACGT", "ACGGT"], {"k": ["-k", "2"]},
              lambda **kw: kdiff.make_job(load("ACGTACGT"), load("ACGGT"), **{"k": 2, **kw})),
    "kmismatch": (["ACGTACGT", "ACG"], {"k": ["-k", "1"]},
                  lambda **kw: kmismatch.make_job(load("ACGTACGT"), load("ACG"),
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
