"""The distribution as a user installs it (issue #31, Packaging).

Builds the wheel from a copy of the checkout, installs it into a fresh virtual environment
and runs ``primerscope`` from there, in a folder outside the checkout, so that nothing is
imported from the checkout. The same for the README's ``pipx install .`` (pipx runs ``pip
install .`` of the copy in an environment of its own), through pipx's shim. The conda recipe's
``test:`` commands run against the built wheel.

Offline and fast: the wheel is built with the test environment's setuptools
(``--no-build-isolation``) and installed without dependencies; a ``.pth`` file then lends the
fresh environment the test environment's site-packages for numpy, numba, Qt... (a ``.pth``
entry is a plain path: the editable install's finder there is not run). pipx gets them, and
pip, through its shared environment, made beforehand (``pipx_shared_libs``).
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
SOURCE = ["pyproject.toml", "README.md", "LICENSE", "engine", "app", "resources", "benchmarks", "tests"]
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


def purelib(python: Path) -> Path:
    """The site-packages of the environment of ``python``."""
    return Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                    cwd=python.parent, env=os.environ).stdout.strip())


def lend_dependencies(python: Path) -> None:
    (purelib(python) / "primerscope-test-deps.pth").write_text("\n".join(borrowed_site_packages()))


def user_env(home: Path, bin_dir: Path, venv: Path | None = None) -> dict[str, str]:
    """A user's shell with ``bin_dir`` first on PATH (``venv`` activated, where given): nothing
    points at the checkout or the test environment."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "NUMBA_CACHE_DIR", "VIRTUAL_ENV")
           and not k.startswith(("PIP_", "PIPX_"))}
    env.update(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
               HOME=str(home), XDG_DATA_HOME=str(home / "share"),
               XDG_CACHE_HOME=str(home / "cache"), PIP_NO_INDEX="1")
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
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


#: The README's pipx command (its Install section), run as written from the copy's root.
PIPX_INSTALL = "pipx install ."


def pipx_shared_libs(shared: Path) -> None:
    """pipx's shared environment (``$PIPX_HOME/shared``: the pip that every pipx environment
    runs, through a ``.pth``), made beforehand and offline: a bare venv whose site-packages
    links each distribution of the test environment but primerscope's own (the editable
    install), so pip, setuptools for the build and primerscope's dependencies. pipx takes a
    valid shared environment as it is; left alone, it fetches pip from the index, and pip then
    downloads the dependencies into the new environment (about 565 MiB, two minutes)."""
    shared.parent.mkdir(parents=True)
    python = new_venv(shared)
    site = purelib(python)
    for entry in purelib(Path(sys.executable)).iterdir():
        if entry.name.startswith(("primerscope", "__editable__")) or entry.suffix == ".pth":
            continue
        (site / entry.name).symlink_to(entry)
    # pipx checks that bin/pip is there (and its age) before it trusts the environment.
    pip = shared / "bin" / "pip"
    pip.write_text(f"#!{python}\nimport sys\nfrom pip._internal.cli.main import main\n"
                   "sys.exit(main())\n")
    pip.chmod(0o755)


@pytest.fixture(scope="module")
def pipx_install(work, source) -> tuple[Path, Path]:
    """``pipx install .`` from the source tree, with PIPX_HOME and PIPX_BIN_DIR in ``work``:
    (pipx's environment for primerscope, PIPX_BIN_DIR). pip runs offline (PIP_NO_INDEX; pip
    reads ``PIP_NO_BUILD_ISOLATION=0`` as --no-build-isolation) with the test environment's
    distributions lent through pipx's shared environment; the test environment's pipx is the
    one run."""
    pipx_home, bin_dir, home = work / "pipx", work / "pipx-bin", work / "home-pipx"
    home.mkdir()
    pipx_shared_libs(pipx_home / "shared")
    env = user_env(home, Path(sys.executable).parent)
    # The pip backend: with uv on PATH pipx would pick uv, which has no shared environment.
    env.update(PIPX_HOME=str(pipx_home), PIPX_BIN_DIR=str(bin_dir), PIPX_DEFAULT_BACKEND="pip",
               PIP_NO_BUILD_ISOLATION="0")
    run(PIPX_INSTALL.split(), cwd=source, env=env)
    return pipx_home / "venvs" / "primerscope", bin_dir


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


def where_things_are(python: Path, env: dict, cwd: Path) -> dict:
    """Where the installed environment finds engine, app and the data files; its site-packages."""
    script = ("import json, sysconfig, engine, app, app.demo, app.paths;"
              "print(json.dumps({'engine': engine.__file__, 'app': app.__file__,"
              "'demo': str(app.demo.DEMO_DIR), 'icon': str(app.paths.ICON),"
              "'style': str(app.paths.RESOURCES / 'style.qss'),"
              "'site': sysconfig.get_paths()['purelib']}))")
    return json.loads(run([str(python), "-c", script], cwd=cwd, env=env).stdout)


def check_installed(venv: Path, home: Path, bin_dir: Path | None = None) -> dict:
    """What a user of ``venv`` sees, from a folder outside the checkout: engine, app and the
    data files come from the install, benchmarks not at all; --version, a small kdiff (against
    the oracle) and bench's one-line refusal, from the ``primerscope`` in ``bin_dir`` (pipx's
    shim; default: ``venv`` activated). Returns the user's environment."""
    home.mkdir(exist_ok=True)
    env = user_env(home, venv / "bin", venv) if bin_dir is None else user_env(home, bin_dir)
    program = shutil.which("primerscope", path=env["PATH"])
    assert program == str((bin_dir or venv / "bin") / "primerscope")
    found = where_things_are(venv / "bin" / "python", env, home)
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


def test_pipx_install_dot_runs_without_the_checkout(work, pipx_install):
    """The README's ``pipx install .``: primerscope through pipx's shim in PIPX_BIN_DIR (a link
    into pipx's environment for it), which runs ``pip install .`` of the source tree."""
    venv, bin_dir = pipx_install
    assert PIPX_INSTALL in readme_install_commands()
    shim = bin_dir / "primerscope"
    assert shim.is_symlink() and shim.resolve() == (venv / "bin" / "primerscope").resolve()
    check_installed(venv, work / "home-pipx", bin_dir)


def readme_install_commands() -> list[str]:
    """The commands in the README's Install section's code block (comments dropped)."""
    section = (ROOT / "README.md").read_text().split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```\n", 2)[1]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]


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
