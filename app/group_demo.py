"""The Group page's demo: real Klebsiella pneumoniae genomes against E. coli, built from Debian.

The genomes are too large for the repository (about 60 Mb), so ``scripts/build-group-demo``
downloads the Debian packages that ship them (``apt-get download``, no root needed), takes
the genome files out of each ``.deb`` (an ar archive holding ``data.tar.xz``; read here,
so ``dpkg`` is not needed), and writes them as gzipped FASTA to a cache folder with a
``manifest.json`` that records where each came from (package, version, the ``.deb``'s
SHA-256, its member, the file's SHA-256). E. coli 536 is read from ``resources/demo``.
The page loads the demo from that manifest; :func:`status` says in one line what is missing.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import lzma
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from app import demo

#: The command that builds the demo (what the page tells a user to run).
BUILD_COMMAND = "scripts/build-group-demo"
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Source:
    """One genome of the demo: ``member`` of Debian package ``package`` (or a file of
    resources/demo when ``package`` is empty), written as ``name``.fa.gz."""

    name: str
    role: str  # "include" | "exclude"
    package: str
    member: str
    what: str


SOURCES = (
    Source("Kpn_NTUH-K2044", "include", "kleborate-examples",
           "usr/share/doc/kleborate/examples/data/NTUH-K2044.fna.xz",
           "K. pneumoniae NTUH-K2044 (ST23), chromosome and plasmid pK2044 (GCA_000009885.1)"),
    Source("Kpn_1084", "include", "kleborate-examples",
           "usr/share/doc/kleborate/examples/data/Klebs_Kp1084.fna.xz",
           "K. pneumoniae 1084 (ST23), complete genome (GCA_000294365.1)"),
    Source("Kpn_HS11286", "include", "kleborate-examples",
           "usr/share/doc/kleborate/examples/data/Klebs_HS11286.fna.xz",
           "K. pneumoniae HS11286 (ST11), chromosome and six plasmids (GCA_000240185.2)"),
    Source("Kpn_MGH78578", "include", "kleborate-examples",
           "usr/share/doc/kleborate/examples/data/MGH78578.fna.xz",
           "K. pneumoniae MGH 78578 (ST38), chromosome and five plasmids (GCA_000016305.1)"),
    Source("Kpn_draft_exact", "include", "kaptive-example",
           "usr/share/doc/kaptive/examples/exact_match.fasta.gz",
           "Klebsiella draft assembly, 64 contigs (Kaptive's example 'exact_match')"),
    Source("Kpn_draft_inexact", "include", "kaptive-example",
           "usr/share/doc/kaptive/examples/inexact_match.fasta.gz",
           "Klebsiella draft assembly, 77 contigs (Kaptive's example 'inexact_match')"),
    Source("Kpn_draft_fragmented", "include", "kaptive-example",
           "usr/share/doc/kaptive/examples/fragmented_assembly.fasta.gz",
           "Klebsiella draft assembly, 119 contigs (Kaptive's example 'fragmented_assembly')"),
    Source("Kpn_draft_poor", "include", "kaptive-example",
           "usr/share/doc/kaptive/examples/very_poor_match.fasta.gz",
           "Klebsiella draft assembly, 118 contigs (Kaptive's example 'very_poor_match')"),
    Source("Eco_536", "exclude", "", demo.FILES["ecoli"],
           "E. coli 536 (UPEC), complete genome NC_008253.1 (resources/demo)"),
    Source("Eco_K-12_MG1655", "exclude", "ragout-examples",
           "usr/share/doc/ragout/examples/E.Coli/references/MG1655-K12.fasta.gz",
           "E. coli K-12 MG1655, complete genome (Ragout's example reference)"),
    Source("Eco_DH1", "exclude", "ragout-examples",
           "usr/share/doc/ragout/examples/E.Coli/references/DH1.fasta.gz",
           "E. coli DH1, complete genome NC_017625.1 (Ragout's example reference)"),
)
PACKAGES = tuple(dict.fromkeys(s.package for s in SOURCES if s.package))


def cache_dir() -> Path:
    """Where the demo is built: ``$PRIMERSCOPE_GROUP_DEMO``, else the user's cache folder
    (``$XDG_CACHE_HOME/primerscope/demo/group``)."""
    given = os.environ.get("PRIMERSCOPE_GROUP_DEMO")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "primerscope" / "demo" / "group"


def _where(folder: Path) -> str:
    home = os.path.expanduser("~")
    text = str(folder)
    return "~" + text[len(home):] if text.startswith(home + os.sep) else text


def inputs(folder: Path | None = None) -> tuple[list[str], list[str]] | None:
    """(inclusion paths, exclusion paths) of a built demo, or None when it is not built
    (no manifest, or a file it lists is gone)."""
    folder = Path(folder) if folder is not None else cache_dir()
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        genomes = manifest["genomes"]
        include = [str(folder / g["file"]) for g in genomes if g["role"] == "include"]
        exclude = [str(folder / g["file"]) for g in genomes if g["role"] == "exclude"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not include or not all(os.path.exists(p) for p in include + exclude):
        return None
    return include, exclude


def status(folder: Path | None = None) -> str:
    """'' when the demo is built, else one line: what is missing and the command that builds it."""
    folder = Path(folder) if folder is not None else cache_dir()
    if inputs(folder) is not None:
        return ""
    return (f"The group demo is not built (no genomes in {_where(folder)}): run {BUILD_COMMAND} "
            f"(downloads Debian's {', '.join(PACKAGES)}, about 31 MB).")


# -- building ---------------------------------------------------------------------------------------
def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def deb_members(deb: Path, wanted: set[str], out: Path) -> dict[str, Path]:
    """Extract ``wanted`` members (paths without a leading ./) of a .deb's data archive into
    ``out``; returns member -> file. A .deb is an ar archive of debian-binary, control.tar.*
    and data.tar.*, read here without dpkg."""
    found: dict[str, Path] = {}
    with open(deb, "rb") as fh:
        if fh.read(8) != b"!<arch>\n":
            raise ValueError(f"{deb}: not a Debian package (no ar header)")
        while header := fh.read(60):
            name = header[:16].decode().strip().rstrip("/")
            size = int(header[48:58].decode().strip())
            start = fh.tell()
            if name.startswith("data.tar"):
                # (the data archive is a few MB: read whole, as a seekable buffer)
                with tarfile.open(fileobj=io.BytesIO(fh.read(size)), mode="r:*") as tar:
                    for info in tar:
                        member = info.name.removeprefix("./")
                        if member in wanted and info.isfile():
                            target = out / Path(member).name
                            with tar.extractfile(info) as src, open(target, "wb") as dst:
                                shutil.copyfileobj(src, dst)
                            found[member] = target
                return found
            fh.seek(start + size + (size % 2))
    raise ValueError(f"{deb}: no data archive in the package")


def download(packages, folder: Path) -> dict[str, Path]:
    """``apt-get download`` each package into ``folder``; package -> .deb."""
    if shutil.which("apt-get") is None:
        raise RuntimeError("apt-get is not available: download the .deb files of "
                           f"{', '.join(packages)} by hand and give --debs DIR")
    subprocess.run(["apt-get", "download", *packages], cwd=folder, check=True)
    return find_debs(packages, folder)


def find_debs(packages, folder: Path) -> dict[str, Path]:
    debs = {}
    for package in packages:
        matches = sorted(Path(folder).glob(f"{package}_*.deb"))
        if not matches:
            raise RuntimeError(f"no {package}_*.deb in {folder}")
        debs[package] = matches[-1]
    return debs


def _fasta_gz(source: Path, target: Path) -> None:
    """Write ``source`` (.xz, .gz or plain FASTA) as gzipped FASTA."""
    if source.suffix == ".gz":
        shutil.copyfile(source, target)
        return
    opener = lzma.open if source.suffix == ".xz" else open
    with opener(source, "rb") as src, gzip.open(target, "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst)


def _records(path: Path) -> list[dict]:
    """id and length of each record of a gzipped FASTA (the manifest's summary)."""
    records, name, length = [], None, 0
    with gzip.open(path, "rt") as fh:
        for line in fh:
            if line.startswith(">"):
                if name is not None:
                    records.append({"id": name, "length": length})
                name, length = line[1:].split()[0], 0
            else:
                length += len(line.strip())
    if name is not None:
        records.append({"id": name, "length": length})
    return records


def build(folder: Path | None = None, debs_dir: Path | None = None, log=print) -> Path:
    """Build the demo in ``folder`` (default :func:`cache_dir`) from the packages' .deb files
    (in ``debs_dir``, else downloaded); returns the manifest's path."""
    folder = Path(folder) if folder is not None else cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="primerscope-group-demo-") as tmp:
        tmp = Path(tmp)
        if debs_dir is not None:
            debs = find_debs(PACKAGES, Path(debs_dir))
        else:
            log(f"Downloading {', '.join(PACKAGES)} (apt-get download)…")
            debs = download(PACKAGES, tmp)
        genomes, packages = [], {}
        for package, deb in debs.items():
            version = deb.stem.split("_")[1] if deb.stem.count("_") >= 2 else ""
            packages[package] = {"deb": deb.name, "version": version, "sha256": _sha256(deb)}
            wanted = {s.member for s in SOURCES if s.package == package}
            extracted = deb_members(deb, wanted, tmp)
            missing = wanted - set(extracted)
            if missing:
                raise RuntimeError(f"{deb.name} lacks {', '.join(sorted(missing))}")
            for s in SOURCES:
                if s.package == package:
                    _fasta_gz(extracted[s.member], folder / f"{s.name}.fa.gz")
        for s in SOURCES:
            if not s.package:
                _fasta_gz(demo.DEMO_DIR / s.member, folder / f"{s.name}.fa.gz")
        for s in SOURCES:
            out = folder / f"{s.name}.fa.gz"
            records = _records(out)
            genomes.append({"name": s.name, "role": s.role, "file": out.name, "what": s.what,
                            "package": s.package or "primerscope (resources/demo)",
                            "member": s.member, "sha256": _sha256(out),
                            "records": len(records),
                            "length": sum(r["length"] for r in records)})
            log(f"  {s.role:7} {s.name}: {len(records)} record(s), "
                f"{genomes[-1]['length']:,} bp")
    manifest = {"built": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "provenance": "resources/demo/group/PROVENANCE.md", "packages": packages,
                "sources": [asdict(s) for s in SOURCES], "genomes": genomes}
    path = folder / MANIFEST
    path.write_text(json.dumps(manifest, indent=2) + "\n")
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="build-group-demo",
        description="Build the Group page's demo (Klebsiella pneumoniae vs E. coli) from "
                    f"Debian's {', '.join(PACKAGES)} into a cache folder.")
    parser.add_argument("-o", "--out", type=Path, default=None,
                        help=f"folder to build in (default: {_where(cache_dir())}; "
                             "$PRIMERSCOPE_GROUP_DEMO sets it too)")
    parser.add_argument("--debs", type=Path, default=None,
                        help="use the .deb files in this folder instead of downloading them")
    args = parser.parse_args(argv)
    try:
        path = build(args.out, args.debs, log=lambda text: print(text, file=sys.stderr))
    except (OSError, RuntimeError, ValueError, subprocess.CalledProcessError) as err:
        print(f"build-group-demo: {err}", file=sys.stderr)
        return 2
    print(f"build-group-demo: the group demo is in {path.parent} ({MANIFEST} records where "
          "each genome came from)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
