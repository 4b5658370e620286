"""The distribution as a user installs it (issue #31, Packaging).

Builds the wheel from a copy of the checkout, installs it into a fresh virtual environment
and runs ``primerscope`` from there, in a folder outside the checkout, so that nothing is
imported from the checkout. The same for ``pip install .`` (what ``pipx install .`` does inside
its own environment: pipx itself cannot run offline, it fetches pip for its shared
environment). The conda recipe's ``test:`` commands run against the built wheel.

Offline and fast: the wheel is built with the test environment's setuptools
(``--no-build-isolation``) and installed without dependencies; a ``.pth`` file then lends the
fresh environment the test environment's site-packages for numpy, numba, Qt... (a ``.pth``
entry is a plain path: the editable install's finder there is not run).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml

from engine.kdiff.reference import kdiff_reference
from engine.sequences import decode, encode, load, reverse_complement

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
RECIPE = ROOT / "packaging" / "conda" / "meta.yaml"
#: What the wheel may hold at its top level (besides its .dist-info).
SHIPPED = {"engine", "app", "resources"}
#: The checkout's parts a copy needs to build (and the two the wheel must leave out).
SOURCE = ["pyproject.toml", "README.md", "engine", "app", "resources", "benchmarks", "tests"]
#: pyproject dependency -> conda-forge/bioconda package, where the names differ.
CONDA_NAMES = {"pyside6-essentials": "pyside6"}

K = 2
TARGET_REGION = (1, 40)


def run(argv, *, cwd, env, timeout=240, check=True):
    out = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and out.returncode != 0:
        pytest.fail(f"{argv} exited {out.returncode}:\n{out.stdout}\n{out.stderr}")
    return out


def borrowed_site_packages() -> list[str]:
    """The test environment's site-packages (where the dependencies are)."""
    return [p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)]


def new_venv(path: Path) -> Path:
    """A bare virtual environment (no pip of its own: the test environment's installs)."""
    run([sys.executable, "-m", "venv", "--without-pip", str(path)], cwd=path.parent,
        env=os.environ)
    return path / "bin" / "python"


def lend_dependencies(python: Path) -> None:
    site = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
               cwd=python.parent, env=os.environ).stdout.strip()
    (Path(site) / "primerscope-test-deps.pth").write_text("\n".join(borrowed_site_packages()))


def user_env(venv: Path, home: Path) -> dict[str, str]:
    """A user's shell with ``venv`` activated: nothing points at the checkout."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "NUMBA_CACHE_DIR") and not k.startswith("PIP_")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", VIRTUAL_ENV=str(venv),
               HOME=str(home), XDG_DATA_HOME=str(home / "share"),
               XDG_CACHE_HOME=str(home / "cache"), PIP_NO_INDEX="1")
    return env


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("packaging")


@pytest.fixture(scope="module")
def source(work) -> Path:
    """A copy of the checkout's sources (pip builds in the tree: the checkout stays clean)."""
    src = work / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")
    for name in SOURCE:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=ignore)
        else:
            shutil.copy2(path, src / name)
    return src


@pytest.fixture(scope="module")
def wheel(work, source) -> Path:
    dist = work / "dist"
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "--no-index", "-w", str(dist), str(source)], cwd=work, env=os.environ)
    (built,) = dist.glob("primerscope-*.whl")
    return built


@pytest.fixture(scope="module")
def wheel_venv(work, wheel) -> Path:
    """The wheel installed into a fresh environment (its dependencies lent afterwards, so that
    pip sees no other primerscope)."""
    venv = work / "wheel-venv"
    python = new_venv(venv)
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
         "--no-index", str(wheel)], cwd=work, env=os.environ)
    lend_dependencies(python)
    return venv


@pytest.fixture(scope="module")
def source_venv(work, source) -> Path:
    """``pip install .`` from the source tree into a fresh environment, as pipx does (pip and
    the build backend lent; --ignore-installed: the test environment's editable primerscope
    is neither seen nor touched)."""
    venv = work / "source-venv"
    python = new_venv(venv)
    lend_dependencies(python)
    run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
         "--no-build-isolation", "--ignore-installed", "."], cwd=source, env=os.environ)
    return venv


def kdiff_job(env: dict, cwd: Path, target: Path) -> list[tuple[str, int, int]]:
    """A small kdiff from the installed primerscope: the first 40 nt of lambda (the installed
    demo file) against a literal background holding a mutated piece of them."""
    background = kdiff_background(target)
    out = run(["primerscope", "kdiff", str(target), background, "-k", str(K),
               "--target-region", "{}-{}".format(*TARGET_REGION), "--backend", "serial",
               "--variant", "alternative"], cwd=cwd, env=env)
    return [(row["target_id"], int(row["start"]), int(row["end"]))
            for row in csv.DictReader(io.StringIO(out.stdout))]


def kdiff_background(target: Path) -> str:
    """A piece of the target region with one substitution, between unrelated flanks."""
    piece = decode(load(target)[0].codes[5:35])
    mutated = piece[:10] + ("A" if piece[10] != "A" else "C") + piece[11:]
    return "TTTTTTTT" + mutated + "GGGGGGGG"


def expected_kdiff(target: Path) -> list[tuple[str, int, int]]:
    """The kdiff oracle on the same job (both strands: the background and its reverse
    complement)."""
    record = load(target)[0]
    alpha = record.codes[TARGET_REGION[0] - 1:TARGET_REGION[1]]
    beta = encode(kdiff_background(target))
    return [(record.id, TARGET_REGION[0] + r, TARGET_REGION[0] + r + n - 1)
            for r, n in kdiff_reference(alpha, [beta, reverse_complement(beta)], K)]


def where_things_are(env: dict, cwd: Path) -> dict:
    """Where the installed environment finds engine, app and the data files; its site-packages."""
    script = ("import json, sysconfig, engine, app, app.demo, app.paths;"
              "print(json.dumps({'engine': engine.__file__, 'app': app.__file__,"
              "'demo': str(app.demo.DEMO_DIR), 'icon': str(app.paths.ICON),"
              "'style': str(app.paths.RESOURCES / 'style.qss'),"
              "'site': sysconfig.get_paths()['purelib']}))")
    return json.loads(run(["python", "-c", script], cwd=cwd, env=env).stdout)


def check_installed(venv: Path, home: Path) -> dict:
    """What a user of ``venv`` sees, from a folder outside the checkout: engine, app and the
    data files come from the install, benchmarks not at all; --version, a small kdiff (against
    the oracle) and bench's one-line refusal. Returns the user's environment."""
    home.mkdir()
    env = user_env(venv, home)
    found = where_things_are(env, home)
    for key in ("engine", "app", "demo", "icon", "style"):
        assert Path(found[key]).is_relative_to(venv), (key, found[key])
        assert Path(found[key]).exists(), (key, found[key])
    installed = {p.name for p in Path(found["site"]).iterdir()}
    assert {"engine", "app", "resources"} <= installed
    assert not {"benchmarks", "tests"} & installed

    version = run(["primerscope", "--version"], cwd=home, env=env).stdout.strip()
    assert version == f"primerscope {PYPROJECT['version']}"

    target = Path(found["demo"]) / "lambda_NC_001416.fa"
    got = kdiff_job(env, home, target)
    assert got and got == expected_kdiff(target)

    bench = run(["primerscope", "bench", "--list"], cwd=home, env=env, check=False)
    assert bench.returncode == 2 and bench.stderr.count("\n") == 1
    assert "runs from a checkout" in bench.stderr
    return env


def test_the_wheel_installs_and_runs_without_the_checkout(work, wheel, wheel_venv):
    """One test for all of the wheel: module fixtures are built once per test worker."""
    archive = zipfile.ZipFile(wheel)
    names = archive.namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == SHIPPED
    shipped_data = {p.relative_to(ROOT).as_posix() for p in (ROOT / "resources").rglob("*")
                    if p.is_file() and "__pycache__" not in p.parts}
    assert {"resources/icons/primerscope.svg", "resources/style.qss"} <= shipped_data
    assert shipped_data <= set(names)
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "primerscope = app.launcher:main" in archive.read(entry_points).decode()

    home = work / "home-wheel"
    env = check_installed(wheel_venv, home)

    # The conda recipe's test: section, against the wheel.
    test = recipe()["test"]
    assert "primerscope --help" in test["commands"]
    for module in test["imports"]:
        run(["python", "-c", f"import {module}"], cwd=home, env=env)
    for command in test["commands"]:
        run(["bash", "-c", command], cwd=home, env=env)

    # The desktop entry starts this install.
    run(["primerscope", "install-desktop"], cwd=home, env=env)
    entry = home / "share" / "applications" / "primerscope.desktop"
    program = re.search(r"^Exec=(\S+) gui$", entry.read_text(), re.M).group(1)
    assert Path(program) == wheel_venv / "bin" / "primerscope"
    assert (home / "share" / "icons" / "hicolor" / "scalable" / "apps" / "primerscope.svg").is_file()
    version = run([program, "--version"], cwd=home, env=env).stdout
    assert version.strip() == f"primerscope {PYPROJECT['version']}"
    run(["primerscope", "install-desktop", "--uninstall"], cwd=home, env=env)
    assert not entry.exists()


def test_pip_install_dot_runs_without_the_checkout(work, source_venv):
    """``pip install .`` from the source tree: what ``pipx install .`` runs in its own
    environment."""
    check_installed(source_venv, work / "home-source")


def recipe() -> dict:
    """meta.yaml as conda-build reads it, its Jinja ({{ PYTHON }}) left unrendered."""
    return yaml.safe_load(RECIPE.read_text())


def test_conda_recipe_follows_pyproject():
    meta = recipe()
    assert meta["package"] == {"name": PYPROJECT["name"], "version": PYPROJECT["version"]}
    assert meta["build"]["noarch"] == "python"
    scripts = [f"{name} = {target}" for name, target in PYPROJECT["scripts"].items()]
    assert meta["build"]["entry_points"] == scripts
    python = f"python {PYPROJECT['requires-python']}"
    run_reqs = meta["requirements"]["run"]
    assert run_reqs[0] == python

    def split(requirement: str) -> tuple[str, str]:
        name, spec = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s*(.*)", requirement).groups()
        return name.lower(), spec.replace(" ", "")

    want = {CONDA_NAMES.get(n, n): s for n, s in map(split, PYPROJECT["dependencies"])}
    assert dict(map(split, run_reqs[1:])) == want
