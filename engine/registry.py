"""Families -> variants -> backends -> parallel forms and flags.

The GUI builds its parameter panels from this table and the CLI builds its
choices from it, so only combinations that exist in the engine can be asked
for. Family specs are plain data in each family's ``spec.py`` (no numba import),
so reading the registry is cheap at start-up.
"""

from __future__ import annotations

import contextvars
import importlib
import importlib.util
import math
import numbers
import os
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Mapping

#: dask: a job's tasks on a Dask cluster (engine/cluster.py), CPU or GPU workers.
BACKENDS = ("serial", "multicore", "cuda", "dask")

#: Family packages, in the order the GUI and CLI list them. A family is listed
#: once its package has a ``spec.py``.
FAMILY_MODULES = ("engine.kdiff", "engine.kmismatch", "engine.lcs", "engine.edit", "engine.nw")


@dataclass(frozen=True)
class FlagSpec:
    name: str
    title: str
    help: str


@dataclass(frozen=True)
class BackendSpec:
    """One backend of a variant: its parallel forms and the flags that act on it.

    ``flag_forms`` restricts a flag to some parallel forms (e.g. opt3 only
    means something when cells of one matrix run in parallel).
    """

    name: str
    parallel: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    default_flags: tuple[str, ...] = ()
    flag_forms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: flag -> the flags it builds on (e.g. kdiff's opt1 on CUDA acts per tile: needs opt4).
    #: resolve() refuses a set that lacks them and the GUI greys such a flag.
    flag_requires: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: parameter -> the only values this backend takes (edit's dask: search mode over whole
    #: records). make_job refuses the others (check_backend_takes); the GUI's Compare
    #: backends leaves the backend out for them.
    takes: Mapping[str, tuple] = field(default_factory=dict)
    #: where this backend of the variant keeps its kernels, "package.module" or
    #: "package.module:name", imported when a job first needs them (:attr:`Binding.kernels`):
    #: a spec stays plain data, and a run imports its own variant's kernels only.
    kernels: str = ""


@dataclass(frozen=True)
class VariantSpec:
    name: str
    title: str
    help: str
    backends: tuple[BackendSpec, ...]

    def backend(self, name: str) -> BackendSpec | None:
        return next((spec for spec in self.backends if spec.name == name), None)


@dataclass(frozen=True)
class ParamSpec:
    """A numeric, choice or text parameter of a family (k, strands, scores, an address...)."""

    name: str
    title: str
    kind: str  # "int" | "float" | "choice" | "text"
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    #: backends it applies to (empty: all); e.g. threads per block on cuda only. The GUI
    #: enables it, and passes it to make_job, only on these backends.
    backends: tuple[str, ...] = ()
    #: variants it applies to (empty: all); e.g. words per thread of the cooperative kernel.
    variants: tuple[str, ...] = ()
    #: the command-line option ("" means --name with dashes); required on the command line
    #: when ``required`` (the GUI still starts from ``default``).
    option: str = ""
    required: bool = False
    metavar: str = ""
    #: None (not given) means something to the family (edit's k in global mode: no cap), so
    #: the command line leaves it unset unless given; the GUI still starts from ``default``.
    optional: bool = False
    #: what None means, shown by the GUI as the value below the minimum (gap_min: "store's,
    #: else 10"); empty: the GUI has no unset value and starts from ``default``.
    auto: str = ""

    def applies(self, variant: str, backend: str) -> bool:
        """Whether it means something for this variant on this backend."""
        return ((not self.backends or backend in self.backends)
                and (not self.variants or variant in self.variants))

    @property
    def flag(self) -> str:
        """The command-line option that sets it."""
        return self.option or "--" + self.name.replace("_", "-")

    def check(self, value):
        """``value`` checked against the kind, range and choices; ValueError naming the
        parameter. The one rule for every caller: the family APIs (:func:`check_params`),
        the command line and the GUI, so a bad value reads the same everywhere. None (not
        given) stays None unless the parameter is required."""
        if value is None and not self.required:
            return None
        name = self.name
        if self.kind == "choice":
            if value not in self.choices:
                raise ValueError(f"{name} must be one of {', '.join(self.choices)}, got {value!r}")
            return value
        if self.kind == "text":
            if not isinstance(value, str):
                raise ValueError(f"{name} must be text, got {value!r}")
            return value
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise ValueError(f"{name} must be an integer, got {value!r}")
            value = int(value)
        else:
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ValueError(f"{name} must be a number, got {value!r}")
            value = float(value)
            if not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value}")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"{name} must be >= {_number(self.minimum)}, got {_number(value)}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"{name} must be <= {_number(self.maximum)}, got {_number(value)}")
        return value


def _number(value) -> str:
    """A value as a message shows it: an integer in full (``:g`` writes 2000000 as 2e+06)."""
    return str(value) if isinstance(value, int) else f"{value:g}"


#: The dask backend's parameter, the same in every family that has that backend.
SCHEDULER_PARAM = ParamSpec("scheduler", "Dask scheduler", "text", "",
                            "dask only: the address of a running Dask scheduler, tcp://HOST:PORT "
                            "(empty: a local cluster, one worker per core or per GPU)",
                            backends=("dask",), metavar="ADDRESS")


@dataclass(frozen=True)
class InputSpec:
    role: str
    title: str
    help: str
    many: bool = True  # several records allowed


@dataclass(frozen=True)
class FamilySpec:
    name: str
    title: str
    help: str
    inputs: tuple[InputSpec, ...]
    params: tuple[ParamSpec, ...]
    flags: tuple[FlagSpec, ...]
    variants: tuple[VariantSpec, ...]
    #: backend -> the variant used there when none is named (``--backend cuda`` alone, the
    #: GUI's backend switch): the fastest one that backend offers.
    default_variants: Mapping[str, str]
    module: str
    metric: str = "cells"  # what the throughput graph shows besides cells/s

    def __post_init__(self):
        for backend, name in self.default_variants.items():
            if self.variant(name).backend(backend) is None:
                raise ValueError(f"{self.name}: default variant {name!r} has no {backend} backend")

    @property
    def fastest_variant(self) -> str:
        """The default when neither variant nor backend is named: the CPU's (runs everywhere)."""
        return self.default_variants["multicore"]

    def default_variant(self, backend: str | None) -> str:
        """The variant a job gets on ``backend`` when it names none (None: the CPU default)."""
        if backend is None:
            return self.fastest_variant
        if backend in self.default_variants:
            return self.default_variants[backend]
        offered = [v.name for v in self.variants if v.backend(backend)]
        return offered[0] if offered else self.fastest_variant

    def variant(self, name: str) -> VariantSpec:
        for spec in self.variants:
            if spec.name == name:
                return spec
        names = ", ".join(v.name for v in self.variants)
        raise ValueError(f"{self.name} has no variant {name!r} (choose from {names})")

    def flag(self, name: str) -> FlagSpec:
        for spec in self.flags:
            if spec.name == name:
                return spec
        raise ValueError(f"{self.name} has no flag {name!r}")

    def param(self, name: str) -> ParamSpec:
        for spec in self.params:
            if spec.name == name:
                return spec
        raise KeyError(name)


@lru_cache(maxsize=None)
def has_module(package: str, name: str) -> bool:
    """Whether ``package`` (e.g. engine.kdiff) has a module ``name``, without importing the
    package (``find_spec`` of a submodule would: a family's package imports its API)."""
    spec = importlib.util.find_spec(package)  # (imports the parent, engine, only)
    if spec is None or not spec.submodule_search_locations:
        return False
    return any(os.path.exists(os.path.join(where, name + suffix))
               for where in spec.submodule_search_locations
               for suffix in (".py", ".pyc", os.sep + "__init__.py"))


def family_names() -> tuple[str, ...]:
    """The installed families' names, importing none of them (the command line's list)."""
    return tuple(m.rpartition(".")[2] for m in FAMILY_MODULES if has_module(m, "spec"))


@lru_cache(maxsize=None)
def families() -> tuple[FamilySpec, ...]:
    return tuple(family(name) for name in family_names())


def family(name: str) -> FamilySpec:
    module = f"engine.{name}"
    if module in FAMILY_MODULES and has_module(module, "spec"):
        # That family's spec alone: a run of one tool need not import the other packages.
        return importlib.import_module(module + ".spec").SPEC
    for spec in families():
        if spec.name == name:
            return spec
    raise ValueError(f"unknown family {name!r} (choose from {', '.join(f.name for f in families())})")


def check_params(spec: FamilySpec, **values) -> dict:
    """``values`` (parameter name -> what a family's ``make_job`` was given) checked by each
    parameter's :meth:`ParamSpec.check`, the rule the command line and the GUI apply too."""
    return {name: spec.param(name).check(value) for name, value in values.items()}


def check_backend_only(spec: FamilySpec, backend: str, **values) -> dict:
    """The given (not None) values, as job parameters; ValueError naming the first that does
    not apply on this backend (``ParamSpec.backends``), e.g. threads per block on a CPU
    backend."""
    for name, value in values.items():
        param = spec.param(name)
        if value is not None and param.backends and backend not in param.backends:
            raise ValueError(f"{name} applies to the {'/'.join(param.backends)} backend only")
    return {name: value for name, value in values.items() if value is not None}


def backend_refusal(fam: FamilySpec, variant: str, backend: str,
                    params: Mapping) -> tuple[str, tuple] | None:
    """The first parameter whose value ``backend`` of ``variant`` does not take, with the
    values it takes (``BackendSpec.takes``), or None when it takes them all."""
    bspec = fam.variant(variant).backend(backend)
    for name, values in (bspec.takes.items() if bspec is not None else ()):
        if name in params and params[name] not in values:
            return name, tuple(values)
    return None


def check_backend_takes(fam: FamilySpec, variant: str, backend: str, params: Mapping) -> None:
    """ValueError when ``backend`` does not take these parameter values
    (:func:`backend_refusal`)."""
    refused = backend_refusal(fam, variant, backend, params)
    if refused:
        name, values = refused
        raise ValueError(f"the {backend} backend of {fam.name} takes {name} "
                         f"{' or '.join(repr(v) for v in values)} only, got {params[name]!r}")


def check_scheduler(spec: FamilySpec, backend: str, scheduler: str | None) -> dict:
    """``{"scheduler": address}`` (engine.scheduler_address; None: a local cluster) on the
    dask backend, else {}; ValueError for an address given to another backend."""
    check_backend_only(spec, backend, scheduler=scheduler or None)
    if not on_cluster(backend):
        return {}
    from engine import scheduler_address

    return {"scheduler": scheduler_address.check(scheduler)}


# -- what a backend is: the one place a backend's name is compared -----------------------------

def serial(backend: str) -> bool:
    """CPU kernels, one thread."""
    return backend == "serial"


def threaded(backend: str) -> bool:
    """CPU kernels on numba's thread pool (``threads`` applies)."""
    return backend == "multicore"


def on_cpu(backend: str) -> bool:
    """This process's CPU kernels (serial or threaded)."""
    return serial(backend) or threaded(backend)


def on_gpu(backend: str) -> bool:
    """This process's CUDA kernels (device memory budgets apply)."""
    return backend == "cuda"


def on_cluster(backend: str) -> bool:
    """Tasks on a Dask cluster (engine.executors.dask; ``scheduler`` applies)."""
    return backend == "dask"


@lru_cache(maxsize=None)
def backend_status(name: str) -> tuple[bool, str]:
    """(available, reason). Never imports numba.cuda: the GUI asks this at start-up."""
    if name in ("serial", "multicore"):
        return True, ""
    if name == "cuda":
        if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
            return True, "CUDA simulator (NUMBA_ENABLE_CUDASIM=1): correct but slow"
        # The device node first: find_library runs ldconfig (and gcc when that fails), 20 ms
        # or more of a cuda run's start-up (issue #16).
        if not os.path.exists("/dev/nvidiactl"):
            import ctypes.util

            if ctypes.util.find_library("cuda") is None:
                return False, "no NVIDIA GPU driver (libcuda) found on this machine"
        return True, ""
    if name == "dask":  # (engine.cluster imports the registry, not the other way)
        if importlib.util.find_spec("distributed") is None:
            return False, "Dask is not installed (pip install 'primerscope[cluster]')"
        return True, ""
    return False, f"unknown backend {name!r}"


def default_backend(fam: FamilySpec, variant: str) -> str:
    """The fastest available backend of a variant."""
    spec = fam.variant(variant)
    names = [b.name for b in spec.backends]
    for preferred in ("cuda", "multicore", "serial"):
        if preferred in names and backend_status(preferred)[0]:
            if preferred == "multicore" and (os.cpu_count() or 1) < 2:
                continue
            return preferred
    return names[0]


@dataclass(frozen=True)
class Selection:
    """A checked (variant, backend, parallel form, flags) combination."""

    variant: str
    backend: str
    parallel: str | None
    flags: frozenset


def resolve(fam: FamilySpec, variant: str | None, backend: str | None,
            parallel: str | None, flags) -> Selection:
    """Fill defaults and check that the combination exists.

    No variant: the backend's default (``FamilySpec.default_variants``), or without a
    backend the CPU default on the fastest backend it has. ``flags=None`` means the backend's default flags; an explicit collection is
    taken as is. Raises ValueError with a message naming the bad choice.
    """
    variant = variant or fam.default_variant(backend)
    vspec = fam.variant(variant)
    backend = backend or default_backend(fam, variant)
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r} (choose from {', '.join(BACKENDS)})")
    bspec = vspec.backend(backend)
    if bspec is None:
        offered = ", ".join(b.name for b in vspec.backends)
        raise ValueError(f"{fam.name} variant {variant!r} has no {backend} backend (available: {offered})")
    available, reason = backend_status(backend)
    if not available:
        raise ValueError(f"the {backend} backend is not available: {reason}")
    if bspec.parallel:
        parallel = parallel or bspec.parallel[0]
        if parallel not in bspec.parallel:
            raise ValueError(f"{fam.name} {variant}/{backend} has no parallel form {parallel!r} "
                             f"(choose from {', '.join(bspec.parallel)})")
    elif parallel:
        raise ValueError(f"{fam.name} {variant}/{backend} has no parallel forms; drop --parallel")
    allowed = set(valid_flags(fam, variant, backend, parallel))
    if flags is None:
        chosen = frozenset(f for f in bspec.default_flags if f in allowed)
    else:
        chosen = frozenset(flags)
        for flag in chosen:
            fam.flag(flag)
            if flag not in allowed:
                where = f"{variant}/{backend}" + (f"/{parallel}" if parallel else "")
                ok = ", ".join(sorted(allowed)) or "none"
                raise ValueError(f"flag {flag} does not apply to {fam.name} {where} (valid: {ok})")
        unmet = missing_requirements(fam, variant, backend, chosen)
        if unmet:
            flag, missing = min(unmet.items())
            raise ValueError(f"flag {flag} of {variant}/{backend} needs {', '.join(missing)}")
    return Selection(variant, backend, parallel, chosen)


def missing_requirements(fam: FamilySpec, variant: str, backend: str, flags) -> dict[str, tuple]:
    """flag -> the flags it needs that ``flags`` lacks (for the GUI's greying)."""
    bspec = fam.variant(variant).backend(backend)
    if bspec is None:
        return {}
    chosen = set(flags)
    needs = {flag: tuple(n for n in bspec.flag_requires.get(flag, ()) if n not in chosen)
             for flag in chosen}
    return {flag: missing for flag, missing in needs.items() if missing}


def valid_flags(fam: FamilySpec, variant: str, backend: str, parallel: str | None) -> tuple[str, ...]:
    bspec = fam.variant(variant).backend(backend)
    if bspec is None:
        return ()
    return tuple(f for f in bspec.flags
                 if f not in bspec.flag_forms or parallel in bspec.flag_forms[f])


#: Tools whose jobs ``engine.iter_solve`` runs besides the families': name -> module with
#: ``iter_solve(job, cancel)`` (group: issue 30's workflow over the edit family and pcr).
TOOL_APIS = {"group": "engine.primers.group"}


def family_api(name: str):
    """The family package, or a tool's module (:data:`TOOL_APIS`); imports numba: call
    when a job is about to run."""
    if name in TOOL_APIS:
        return importlib.import_module(TOOL_APIS[name])
    return importlib.import_module(family(name).module)


# -- a backend resolved: its executor and its kernels ------------------------------------------

#: The executor of each backend ("module:class", made with the backend and the scheduler's
#: address): engine.executors, imported when a job first runs there.
EXECUTORS = {"serial": "engine.executors.inprocess:InProcess",
             "multicore": "engine.executors.inprocess:InProcess",
             "cuda": "engine.executors.inprocess:InProcess",
             "dask": "engine.executors.dask:Dask"}

#: An executor that replaces the backend's for the jobs run in this context (the caller's
#: own Dask client: engine.executors.client).
OVERRIDE: contextvars.ContextVar = contextvars.ContextVar("executor", default=None)


def load(name: str):
    """The object a "package.module[:name]" string names (imported now)."""
    module, _, attr = name.partition(":")
    loaded = importlib.import_module(module)
    return getattr(loaded, attr) if attr else loaded


@dataclass(frozen=True)
class Binding:
    """A variant's backend resolved once per process: the executor that runs its jobs and
    the kernels its spec names (each loaded at first use: a Dask client needs no kernels)."""

    family: str
    variant: str
    backend: str
    scheduler: str | None = None

    @cached_property
    def executor(self):
        return load(EXECUTORS[self.backend])(self.backend, self.scheduler)

    @cached_property
    def kernels(self):
        named = family(self.family).variant(self.variant).backend(self.backend)
        if named is None or not named.kernels:
            raise ValueError(f"{self.family} {self.variant}/{self.backend} names no kernels")
        return load(named.kernels)


#: One Binding per (family, variant, backend, scheduler) in a process.
_binding = lru_cache(maxsize=None)(Binding)


def bind(job) -> Binding:
    """The binding of a job's family, variant and backend (and scheduler)."""
    return _binding(job.family, job.variant, job.backend, job.params.get("scheduler") or None)


def kernels(job):
    """The kernels the job's family names for its variant and backend (spec.py)."""
    return bind(job).kernels


def named_kernels(family_name: str, variant: str, backend: str):
    """The kernels a family names for this variant and backend (a cuda job's CPU leaves, a
    model built for a variant)."""
    return _binding(family_name, variant, backend, None).kernels


def executor(job):
    """What runs the job's chunked problems: the context's override, else its backend's
    executor."""
    return OVERRIDE.get() or bind(job).executor
