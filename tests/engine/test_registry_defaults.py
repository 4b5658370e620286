"""Defaults per backend (issue #16): a backend named without a variant gets that backend's
default variant, for every family, from the registry."""

from __future__ import annotations

import importlib

import pytest

from engine import registry
from engine.sequences import load

FAMILIES = [f.name for f in registry.families()]


@pytest.fixture
def gpu(monkeypatch):
    """A machine where the cuda backend counts as available (no kernel runs here)."""
    real = registry.backend_status
    monkeypatch.setattr(registry, "backend_status",
                        lambda name: (True, "") if name == "cuda" else real(name))


@pytest.mark.parametrize("name", FAMILIES)
def test_every_backend_has_a_default_variant_that_runs_there(name):
    fam = registry.family(name)
    offered = {b.name for v in fam.variants for b in v.backends}
    assert set(fam.default_variants) == offered
    for backend in offered:
        assert fam.variant(fam.default_variant(backend)).backend(backend) is not None
    # Without a backend the default stays the CPU's, which runs everywhere.
    assert fam.default_variant(None) == fam.fastest_variant == fam.default_variants["multicore"]


@pytest.mark.parametrize("name", FAMILIES)
def test_resolve_picks_the_backends_default(name, gpu):
    fam = registry.family(name)
    for backend in sorted(fam.default_variants):
        sel = registry.resolve(fam, None, backend, None, None)
        assert (sel.variant, sel.backend) == (fam.default_variants[backend], backend)


def test_a_bad_default_is_refused_when_the_spec_is_built():
    fam = registry.family("edit")
    with pytest.raises(ValueError, match="default variant 'myers-blocked' has no cuda backend"):
        registry.FamilySpec(fam.name, fam.title, fam.help, fam.inputs, fam.params, fam.flags,
                            fam.variants, {"multicore": "myers-blocked", "cuda": "myers-blocked"},
                            fam.module)


_JOBS = {
    "kdiff": lambda **kw: ("kdiff", (load("ACGTACGT"), load("ACGTTT"), 2), kw),
    "kmismatch": lambda **kw: ("kmismatch", (load("ACGTACGT"), load("ACG"), 1), kw),
    "lcs": lambda **kw: ("lcs", ("ACGTACGT", "ACGTTT"), kw),
    "edit": lambda **kw: ("edit", (load("ACGT"), load("ACGTACGT")), kw),
    "nw": lambda **kw: ("nw", (load("ACGTACGT"), load("ACGTTT")), kw),
}


@pytest.mark.parametrize("name", FAMILIES)
def test_make_job_on_cuda_without_a_variant(name, gpu):
    """Each family's own make_job (what the CLI and the GUI call) takes the cuda default."""
    family, args, kw = _JOBS[name](backend="cuda")
    job = importlib.import_module(f"engine.{family}").make_job(*args, **kw)
    fam = registry.family(name)
    assert (job.variant, job.backend) == (fam.default_variants["cuda"], "cuda")


def test_cli_backend_cuda_alone_no_longer_names_a_cpu_variant(capsys):
    """``primerscope edit A B --backend cuda``: the cuda default, so without a GPU the one line
    says the backend is missing, not that myers-blocked has no cuda backend."""
    from engine.cli import main

    status = main(["edit", "ACGTACGT", "ACGTTT", "--backend", "cuda", "--no-progress"])
    err = capsys.readouterr().err
    assert "has no cuda backend" not in err
    if registry.backend_status("cuda")[0]:
        assert status == 0
    else:
        assert status == 2 and "the cuda backend is not available" in err


def test_cli_help_names_the_cuda_default(capsys):
    from engine.cli import main

    with pytest.raises(SystemExit):
        main(["kmismatch", "--help"])
    assert "--backend cuda: pair-tile" in " ".join(capsys.readouterr().out.split())
