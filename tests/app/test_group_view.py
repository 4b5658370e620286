"""The Group page (issue 30): its lists take files and stores, its table, coverage matrix and
track show a GroupResult as the engine builds it, its files are the engine's writers', it fits
1280x720, and its demo is built from Debian's packages or says in one line how to build it."""

from __future__ import annotations

import csv
import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from engine.jobs import RunInfo
from engine.primers import group as engine_group
from engine.primers.group import GroupPair, GroupProduct, GroupResult, GroupSettings
from engine.primers.pairs import PrimerSite
from engine.sequences import decode, encode, reverse_complement

from app import demo, group, group_demo

GENOMES = ("strainA", "strainB", "strainC", "strainD")


def lambda_text() -> str:
    return decode(demo.records("lambda")[0].codes)


def site(text: str, start: int, length: int, reverse: bool = False) -> PrimerSite:
    """A primer on lambda (1-based start of its site); a reverse primer as ordered."""
    seq = text[start - 1:start - 1 + length]
    if reverse:
        seq = decode(reverse_complement(encode(seq)))
    gc = 100 * sum(c in "GC" for c in seq) / length
    return PrimerSite(seq, start, start + length - 1, 59.5 + start % 7 / 10, gc, 0.5)


def make_result(missing=((1, 2),), complete=True) -> GroupResult:
    """Three pairs on lambda's record over four genomes; ``missing``: (pair, genome) cells
    without a product. strainA is the reference (products at the reference coordinates)."""
    text = lambda_text()
    record = demo.records("lambda")[0].id
    pairs = []
    for i, (left, right) in enumerate(((1_001, 1_181), (20_101, 20_340), (40_011, 40_150))):
        lsite, rsite = site(text, left, 20), site(text, right - 19, 20, reverse=True)
        products = []
        for g, name in enumerate(GENOMES):
            if (i, g) in missing:
                products.append(None)
                continue
            shift = 37 * g  # the other strains hold the locus elsewhere, one base longer each
            products.append(GroupProduct(name, f"{name}_chr", left + shift, right + shift + g,
                                         right - left + 1 + g, g % 2, 0))
        pairs.append(GroupPair(lsite, rsite, record, 0.8 + i, tuple(products)))
    conservation = np.linspace(0, 1, len(text), dtype=np.float32)
    info = RunInfo("group", "group", "serial", None, (), 1.5, 0, 0, complete)
    return GroupResult(info, 3, GroupSettings(product_size=(100, 300)), GENOMES,
                       ("ecoli536",), "strainA", tuple(pairs), {record: conservation},
                       ("3 pairs verified",), {"shortlist": 0.5, "verify": 1.0}, complete)


@pytest.fixture
def page(qtbot, settings):
    from app.views.group import GroupView

    view = GroupView(settings)
    qtbot.addWidget(view)
    view.resize(1200, 600)
    view.show()
    yield view
    view.shutdown()


def test_table_matrix_and_track_show_the_result(page):
    result = make_result(missing=((1, 2), (2, 0)))
    page.show_group(result)
    assert page.model.rowCount() == 3
    rows = page.model.rows()
    cov = [c.title for c in group.PAIR_COLUMNS].index("coverage %")
    assert [r[cov] for r in rows] == [100.0, 75.0, 75.0]
    missing_col = [c.title for c in group.PAIR_COLUMNS].index("missing in")
    assert [r[missing_col] for r in rows] == ["", "strainC", "strainA"]
    assert rows[0][5] == result.pairs[0].left.sequence and rows[0][9] == result.pairs[0].right.end
    # the matrix: genomes down, pairs across; a missing product is a red cross on grey
    m = page.coverage
    assert (m.rowCount(), m.columnCount()) == (4, 3)
    for g in range(4):
        for p in range(3):
            product = result.pairs[p].products[g]
            text = m.data(m.index(g, p))
            brush = m.data(m.index(g, p), Qt.ItemDataRole.BackgroundRole)
            if product is None:
                assert text == "✗"
                assert brush.color() == m.data(m.index(2, 1), Qt.ItemDataRole.BackgroundRole).color()
                assert "missing" in m.data(m.index(g, p), Qt.ItemDataRole.ToolTipRole)
            else:
                assert text == str(product.size)
                assert f"{product.start:,}–{product.end:,}" in m.data(m.index(g, p), Qt.ItemDataRole.ToolTipRole)
    # larger products are darker (the colour follows the size across the range)
    small = m.data(m.index(0, 2), Qt.ItemDataRole.BackgroundRole).color()  # 140 bp
    large = m.data(m.index(3, 1), Qt.ItemDataRole.BackgroundRole).color()  # 243 bp
    assert large.lightness() < small.lightness()
    assert m.headerData(0, Qt.Orientation.Vertical) == "strainA (ref.)"
    # the first pair is chosen: drawn on the track at its sites, the matrix's column selected
    first = result.pairs[0]
    assert page._selected is first
    lo, hi = page.amplicon.getRegion()
    assert (lo, hi) == (first.left.start - 0.5, first.right.end + 0.5)
    xs, _ = page.f_site.getData()
    assert list(xs) == [first.left.start, first.left.end]
    assert page.matrix.currentIndex().column() == 0
    x, y = page.curve.getData()
    assert len(x) == len(lambda_text()) or page.plot.getViewBox() is not None
    axis = page.plot.getAxis("bottom")  # bases along a genome, not 1e+06
    assert axis.tickStrings([1_000_000.0, 2_500_000.0], 1, 500_000) == ["1,000,000", "2,500,000"]
    # choosing a pair in the matrix chooses it in the table and on the track
    page.matrix.setCurrentIndex(m.index(1, 2))
    assert page._selected is result.pairs[2]
    assert page.proxy.mapToSource(page.table.currentIndex()).row() == 2
    xs, _ = page.r_site.getData()
    assert list(xs) == [result.pairs[2].right.start, result.pairs[2].right.end]


def test_files_are_the_engines_and_the_library_gets_each_primer_once(page):
    result = make_result()
    page.show_group(result)
    buf = io.StringIO()
    engine_group.write_csv(result, buf)
    assert group.csv_text(result) == buf.getvalue()
    assert list(csv.reader(io.StringIO(group.csv_text(result))))[2][4] == str(result.pairs[1].product_size)
    assert json.loads(group.json_text(result)) == json.loads(json.dumps(result.to_json()))
    bed = group.bed_text(result).splitlines()
    assert [line.split("\t")[1:3] for line in bed] == [
        [str(p.left.start - 1), str(p.right.end)] for p in result.pairs]
    saved = []
    page.save_requested.connect(lambda *args: saved.append(args))
    for fmt in ("csv", "json", "bed"):
        page.export(fmt)
    assert [s[2] for s in saved] == ["group.csv", "group.json", "group.bed"]
    assert saved[0][0] == group.csv_text(result)
    added = []
    page.library_add_requested.connect(lambda *args: added.append(args))
    assert page.add_to_library()
    entries, _, links = added[0]
    # every pair chosen when none is selected; a primer shared by two pairs is one entry
    page.table.clearSelection()
    shared = GroupPair(result.pairs[0].left, result.pairs[1].right, result.pairs[0].record, 3.0,
                       result.pairs[0].products)
    both = group.library_entries(result, [result.pairs[0], shared])
    assert len(both) == 3 and len({e.sequence for e in both}) == 3
    assert {e.orientation for e in both} == {"forward", "reverse"}
    assert all(e.k == 3 and "ecoli536" in e.background for e in both)
    assert links[0] == (result.pairs[0].left.sequence, result.pairs[0].right.sequence,
                        result.pairs[0].product_size)


def test_a_cancelled_result_says_so_and_keeps_its_pairs(page):
    result = make_result(complete=False)
    page.show_group(result)
    assert page.model.rowCount() == 3
    assert page.status.text().startswith("Cancelled") and "3 pairs verified so far" in page.status.text()
    empty = GroupResult(result.info, 3, result.settings, GENOMES, ("ecoli536",), "strainA", (), {},
                        ("12 conserved windows; 40 primers failed exclusivity against ecoli536",),
                        {}, True)
    page.show_group(empty)
    assert page.model.rowCount() == 0 and page.coverage.columnCount() == 0
    assert "40 primers failed exclusivity against ecoli536" in page.status.text()
    assert not page.export_button.isEnabled()
    # a real genome's run takes minutes: said in minutes, not as 2.4e+02 s
    import dataclasses

    long = dataclasses.replace(result, info=dataclasses.replace(result.info, seconds=242.4),
                               stage_seconds={"seeds": 241.0, "primer3": 0.52, "pairs": 12.3})
    assert group.summary(long).startswith("Cancelled after 4 min 02 s:")
    text = group.summary(dataclasses.replace(long, complete=True))
    assert "4 min 02 s: seeds 4 min 01 s, primer3 0.52 s, pairs 12 s." in text and "e+" not in text


def test_lists_take_files_by_add_and_drop_and_the_reference_follows(page, tmp_path):
    files = []
    for name in ("Kp1.fa.gz", "Kp2.fasta", "store3.psg", "Eco.fna"):
        (tmp_path / name).write_text(">x\nACGT\n")
        files.append(str(tmp_path / name))
    assert page.include.add_paths(files[:2]) == 2
    assert page.include.add_paths(files[:1]) == 0  # listed once
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(files[2])])
    event = QDropEvent(QPointF(5, 5), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    page.include.list.dropEvent(event)
    assert page.include.names() == ["Kp1", "Kp2", "store3"]
    assert [page.reference.itemData(i) for i in range(page.reference.count())] == ["", "Kp1", "Kp2", "store3"]
    page.reference.setCurrentIndex(3)
    page.include.list.item(0).setSelected(True)
    assert page.include.remove_button.isEnabled()
    page.include.remove_selected()
    assert page.include.names() == ["Kp2", "store3"]
    assert page.reference.currentData() == "store3"  # the choice survives the change
    assert page.values()["reference"] == "store3"
    # Add… takes what the window's file dialog gives
    page.exclude._ask_files = lambda: [files[3]]
    page.exclude.add_button.click()
    assert page.exclude.paths() == [files[3]]
    page.min_coverage.setValue(90)
    assert page.values()["min_coverage"] == 0.9
    assert group.settings_from(page.values()).min_coverage == 0.9
    # the settings keep the lists and fields for the next window, run or not
    page.shutdown()
    from app.views.group import GroupView

    again = GroupView(page._settings)
    assert again.values() == page.values()
    again.shutdown()


def test_run_says_what_is_missing(page, tmp_path):
    path = tmp_path / "one.fa"
    path.write_text(">x\nACGT\n")
    page.include.add_paths([str(path)])
    assert not page.run()
    assert "at least two" in page.error.text()
    other = tmp_path / "two.fa"
    other.write_text(">y\nACGT\n")
    page.include.add_paths([str(other)])
    assert not page.run()
    assert page.error.text().startswith("Exclusion genomes")
    page.exclude.add_paths([str(path)])
    page.product_size.setText("300-100")
    assert not page.run()
    assert "Product size" in page.error.text()
    assert not page.runner.running


def fake_deb(path: Path, members: dict[str, bytes]) -> None:
    """A .deb as dpkg builds one: an ar archive of debian-binary, control and data.tar.xz."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:xz") as tar:
        for name, blob in members.items():
            info = tarfile.TarInfo("./" + name)
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    parts = [("debian-binary", b"2.0\n"), ("control.tar.xz", b""), ("data.tar.xz", data.getvalue())]
    with open(path, "wb") as fh:
        fh.write(b"!<arch>\n")
        for name, blob in parts:
            fh.write(f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{'100644':<8}{len(blob):<10}`\n".encode())
            fh.write(blob + (b"\n" if len(blob) % 2 else b""))


def test_the_demo_is_built_from_the_packages_with_its_provenance(tmp_path, monkeypatch):
    import gzip
    import lzma

    debs = tmp_path / "debs"
    debs.mkdir()
    by_package: dict[str, dict[str, bytes]] = {}
    for i, s in enumerate(group_demo.SOURCES):
        if s.package:
            fasta = f">{s.name}_chr{i}\n{'ACGT' * (10 + i)}\n".encode()
            blob = lzma.compress(fasta) if s.member.endswith(".xz") else gzip.compress(fasta)
            by_package.setdefault(s.package, {})[s.member] = blob
    for package, members in by_package.items():
        fake_deb(debs / f"{package}_1.0-1_all.deb", members)
    out = tmp_path / "cache"
    monkeypatch.setenv("PRIMERSCOPE_GROUP_DEMO", str(out))
    assert group_demo.inputs() is None
    line = group_demo.status()
    assert "\n" not in line and group_demo.BUILD_COMMAND in line and str(out) in line
    assert group_demo.main(["--debs", str(debs)]) == 0
    include, exclude = group_demo.inputs()
    assert [Path(p).name for p in include] == [f"{s.name}.fa.gz" for s in group_demo.SOURCES
                                               if s.role == "include"]
    assert len(exclude) == 3 and group_demo.status() == ""
    manifest = json.loads((out / group_demo.MANIFEST).read_text())
    assert set(manifest["packages"]) == set(group_demo.PACKAGES)
    assert all(p["version"] == "1.0-1" and len(p["sha256"]) == 64 for p in manifest["packages"].values())
    first = manifest["genomes"][0]
    assert first["records"] == 1 and first["length"] == 40
    assert gzip.decompress((out / first["file"]).read_bytes()).startswith(b">Kpn_NTUH-K2044_chr0")
    eco = next(g for g in manifest["genomes"] if g["name"] == "Eco_536")
    assert eco["length"] == 4_938_920  # E. coli 536 from resources/demo, whole
    # a package that lacks a file: the script says which, status 2, no traceback
    (debs / "ragout-examples_1.0-1_all.deb").unlink()
    fake_deb(debs / "ragout-examples_1.0-1_all.deb", {"usr/share/doc/other.txt": b"x"})
    assert group_demo.main(["--debs", str(debs), "-o", str(tmp_path / "other")]) == 2


def fake_built_demo(folder: Path) -> Path:
    """A built group demo's manifest over empty files: KpA, KpB to include, Eco to exclude."""
    folder.mkdir()
    genomes = []
    for name, role in (("KpA", "include"), ("KpB", "include"), ("Eco", "exclude")):
        (folder / f"{name}.fa.gz").write_bytes(b"")
        genomes.append({"name": name, "role": role, "file": f"{name}.fa.gz"})
    (folder / "manifest.json").write_text(json.dumps({"genomes": genomes}))
    return folder


def test_demo_menu_explains_what_is_missing_then_loads(qtbot, window, tmp_path, monkeypatch):
    monkeypatch.setenv("PRIMERSCOPE_GROUP_DEMO", str(tmp_path / "nothing"))
    window.params.set_family("lcs") if "lcs" in window.params.families else None
    assert not window.load_group_demo()
    view = window.view_titled("Group")
    assert window.current_view() is view and window.params.family == "kdiff"
    assert not window.left.isVisible() and not window.results.isVisible()
    assert view.error.isVisible() and "scripts/build-group-demo" in view.error.text()
    assert window.state_label.text() == view.error.text()
    # built (a manifest of small genomes): the lists fill, the parameters are the demo's
    monkeypatch.setenv("PRIMERSCOPE_GROUP_DEMO", str(fake_built_demo(tmp_path / "built")))
    window.demo_actions["group"].trigger()
    assert view.include.names() == ["KpA", "KpB"] and view.exclude.names() == ["Eco"]
    assert not view.error.isVisible() and "Demo loaded" in view.status.text()
    window.show_view(window.view_titled("Pairs"))
    assert window.left.isVisible()


def test_the_group_page_fits_1280x720(qtbot, window, tmp_path):
    from tests.app.test_screenshots import SIZE, _check_no_clipping, _shots

    window.resize(*SIZE)
    view = window.view_titled("Group")
    window.show_view(view)
    files = []
    for name in GENOMES + ("Eco_536", "Eco_K-12_MG1655"):
        (tmp_path / f"{name}.fa.gz").write_bytes(b"")
        files.append(str(tmp_path / f"{name}.fa.gz"))
    view.include.add_paths(files[:4])
    view.exclude.add_paths(files[4:])
    view.show_group(make_result(missing=((1, 2), (2, 0))))
    qtbot.wait(150)
    assert window.grab().save(str(_shots(tmp_path) / "kdiff-group.png"))
    _check_no_clipping(window, "group")
    # every column of the matrix in view at once (four genomes, three pairs)
    assert view.matrix.horizontalScrollBar().maximum() == 0
    assert view.matrix.verticalScrollBar().maximum() == 0



def small_group(folder: Path) -> tuple[list[str], list[str]]:
    """Three strains of a 700 bp genome (one with SNPs, one a draft in two contigs) and an
    unrelated background, as FASTA files."""
    rng = np.random.default_rng(30)
    base = "".join(rng.choice(list("ACGT"), 700))
    snps = list(base)
    for pos in (60, 350, 610):
        snps[pos] = "A" if snps[pos] != "A" else "C"
    files = {"strainA": f">A1\n{base}\n", "strainB": f">B1\n{''.join(snps)}\n",
             "strainC": f">C1\n{base[:420]}\n>C2\n{base[420:]}\n",
             "other": f">O1\n{''.join(rng.choice(list('ACGT'), 3_000))}\n"}
    paths = {}
    for name, text in files.items():
        paths[name] = str(folder / f"{name}.fa")
        Path(paths[name]).write_text(text)
    return [paths["strainA"], paths["strainB"], paths["strainC"]], [paths["other"]]


def run_page(qtbot, page, timeout=600_000):
    failures = []
    page.runner.failed.connect(failures.append)
    with qtbot.waitSignal(page.designed, timeout=timeout, raising=False) as blocker:
        assert page.run(), page.error.text()
    assert not failures, failures
    assert blocker.signal_triggered, "the group run did not end in time"
    return blocker.args[0]


def primers_of(result) -> list[tuple[str, str]]:
    return [(p.left.sequence, p.right.sequence) for p in result.pairs]


def test_the_page_runs_the_engines_job_and_cancel_keeps_the_verified_pairs(qtbot, page, tmp_path):
    """The real job on the worker thread (a 700 bp group: Primer3 takes most of it)."""
    include, exclude = small_group(tmp_path)
    page.include.add_paths(include)
    page.exclude.add_paths(exclude)
    page.set_values({"k": 2, "num_return": 3, "product_size": "100-300", "min_coverage": 1.0})
    page.reference.setCurrentIndex(page.reference.findData("strainB"))
    result = run_page(qtbot, page)
    # the job is the page's fields, and what it shows is the job's answer
    settings = group.settings_from(page.values())
    assert page.job.family == "group" and page.job.params["k"] == 2
    assert page.job.params["settings"] == settings and settings.reference == "strainB"
    assert [g.name for g in page.job.inputs["include"]] == ["strainA", "strainB", "strainC"]
    assert result.complete and result.pairs and result.reference == "strainB"
    assert page.model.rows() == group.pair_rows(result)
    assert page.coverage.columnCount() == len(result.pairs) and page.coverage.rowCount() == 3
    for p in result.pairs:  # min coverage 1.0: a product in every genome, in the size range
        assert all(q is not None and 100 <= q.size <= 300 for q in p.products)
    assert page.status.text() == group.summary(result)
    assert page.export_button.isEnabled() and page.add_button.isEnabled()
    # Cancel from the page while it runs: it shows what the job returns, and says whether
    # it was cut short.
    page.runner.progress.connect(lambda item: page.cancel() if isinstance(
        getattr(item, "partial", None), GroupResult) else None)
    cancelled = run_page(qtbot, page)
    assert page.model.rows() == group.pair_rows(cancelled)
    assert page.status.text().startswith("Cancelled") == (not cancelled.complete)


def test_a_cancel_keeps_the_pairs_verified_so_far(tmp_path):
    """The page's job cancelled as soon as it reports a verified pair (on the worker thread the
    token is set the same way, only later): those pairs stay, and the result says it is not
    complete. (On strainA the engine needs several verification rounds here.)"""
    from engine.jobs import CancelToken

    include, exclude = small_group(tmp_path)
    settings = group.settings_from({"k": 2, "include_edits": 1, "include_3prime_exact": 3,
                                    "min_coverage": 1.0, "product_size": "100-300",
                                    "num_return": 3})
    token = CancelToken()
    gen = group.group_run(include, exclude, 2, settings, None, token)
    seen = []
    try:
        while True:
            item = next(gen)
            partial = getattr(item, "partial", None)
            if isinstance(partial, GroupResult) and partial.pairs and not seen:
                seen.append(primers_of(partial))
                token.cancel()
    except StopIteration as stop:
        cancelled = stop.value
    assert seen, "the engine reported no verified pair before its end"
    assert set(seen[0]) <= set(primers_of(cancelled)), "the cancel lost verified pairs"
    assert not cancelled.complete


def test_gui_demo_preloads_the_group_demo_or_says_how_to_build_it(qtbot, window, tmp_path,
                                                                    monkeypatch):
    """``primerscope gui --demo`` (window.load_start_demo): the Group page's lists hold the
    built group demo, or its status gives the command that builds it."""
    monkeypatch.setenv("PRIMERSCOPE_GROUP_DEMO", str(tmp_path / "nothing"))
    with qtbot.waitSignal(window.inputs_loaded, timeout=30_000):
        window.load_start_demo("lambda-ecoli")
    view = window.view_titled("Group")
    assert view.include.paths() == [] and not view.error.isVisible()
    assert group_demo.BUILD_COMMAND in view.status.text()
    monkeypatch.setenv("PRIMERSCOPE_GROUP_DEMO", str(fake_built_demo(tmp_path / "built")))
    with qtbot.waitSignal(window.inputs_loaded, timeout=30_000):
        window.load_start_demo("lambda-ecoli")
    view = window.view_titled("Group")
    assert view.include.names() == ["KpA", "KpB"] and view.exclude.names() == ["Eco"]
    assert "Demo loaded" in view.status.text()
    assert window.input_panels["target"].state().records  # the family's own demo too


def test_the_toolbar_runs_and_cancels_the_group_job(qtbot, window, dialogs, tmp_path,
                                                    monkeypatch):
    """On the Group page Run ▸ Run is *Find group pairs* and Cancel cancels it (not kdiff's)."""
    import time

    view = window.view_titled("Group")
    window.show_view(view)
    window.run_action.trigger()  # no genomes yet: the page says so, kdiff is not run
    assert dialogs == [] and window.controller.mode == "idle"
    assert view.error.isVisible() and "at least two" in view.error.text()
    assert not window.compare_action.isEnabled()

    def slow_run(include, exclude, k, settings, threads, token, backend=None):
        while not token.cancelled:  # (the real job: test_the_page_runs_the_engines_job)
            time.sleep(0.02)
            yield None
        return make_result(complete=False)

    monkeypatch.setattr(group, "group_run", slow_run)
    files = []
    for name in ("KpA", "KpB", "Eco"):
        (tmp_path / f"{name}.fa").write_text(">x\nACGT\n")
        files.append(str(tmp_path / f"{name}.fa"))
    view.include.add_paths(files[:2])
    view.exclude.add_paths(files[2:])
    window.run_action.trigger()
    assert view.runner.running and window.controller.mode == "idle"
    assert not window.run_action.isEnabled() and window.cancel_action.isEnabled()
    assert window.state_label.text().startswith("Group: running")
    with qtbot.waitSignal(view.designed, timeout=10_000):
        window.cancel_action.trigger()
    assert view.status.text().startswith("Cancelled") and view.model.rowCount() == 3
    assert window.state_label.text() == "Group: " + view.status.text()
    assert window.run_action.isEnabled() and not window.cancel_action.isEnabled()
    assert "group" in window.run_action.toolTip()
    window.show_view(window.view_titled("Pairs"))  # elsewhere Run is kdiff's again
    assert "group" not in window.run_action.toolTip()


def test_a_workspace_keeps_the_group_page_and_reports_a_missing_genome(qtbot, window, dialogs,
                                                                       tmp_path):
    from PySide6.QtCore import QSettings

    from app import workspace
    from app.window import MainWindow

    view = window.view_titled("Group")
    files = []
    for name in ("KpA", "KpB", "KpC", "Eco"):
        (tmp_path / f"{name}.fa").write_text(">x\nACGT\n")
        files.append(str(tmp_path / f"{name}.fa"))
    view.include.add_paths(files[:3])
    view.exclude.add_paths(files[3:])
    view.set_values({"k": 4, "include_edits": 0, "include_3prime_exact": 2, "min_coverage": 0.9,
                     "product_size": "120-250", "num_return": 5, "reference": "KpB"})
    saved = view.values()
    assert saved["reference"] == "KpB" and saved["include"] == files[:3]
    path = tmp_path / "ws.json"
    workspace.save(window, str(path))
    other = MainWindow(QSettings(str(tmp_path / "other.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(other)
    other.params.set_family("nw")
    assert workspace.open_path(other, str(path)) == []
    restored = other.view_titled("Group")
    assert restored.values() == saved
    # a genome that is gone: the others are restored, the missing one is named, no crash
    Path(files[1]).unlink()
    problems = workspace.open_path(other, str(path))
    restored = other.view_titled("Group")
    assert len(problems) == 1 and files[1] in problems[0]
    assert restored.include.names() == ["KpA", "KpC"] and restored.exclude.names() == ["Eco"]
    assert not restored.error.isHidden() and files[1] in restored.error.text()
    assert restored.values()["k"] == 4 and restored.values()["product_size"] == "120-250"
    assert any(files[1] in text for _, text in dialogs)
    other.close()


def test_the_track_shows_while_the_run_is_still_in_primer3(qtbot, page, tmp_path, monkeypatch):
    """The conservation comes with the seeds, long before the first verified pair (Primer3
    takes most of a real genome's run): the track shows it then, not at the first pair."""
    import dataclasses
    import time

    from engine.jobs import Progress

    final = make_result()
    seeded = dataclasses.replace(final, pairs=(), complete=False)
    unseeded = dataclasses.replace(seeded, conservation={})

    def primer3_run(include, exclude, k, settings, threads, token, backend=None):
        for partial in (unseeded, seeded):
            yield Progress(20, 100, 0, 0, 1.0, message="Primer3: primers", partial=partial)
        while not token.cancelled:
            time.sleep(0.02)
            yield None
        return final

    monkeypatch.setattr(group, "group_run", primer3_run)
    for name in ("KpA", "KpB", "Eco"):
        (tmp_path / f"{name}.fa").write_text(">x\nACGT\n")
    page.include.add_paths([str(tmp_path / "KpA.fa"), str(tmp_path / "KpB.fa")])
    page.exclude.add_paths([str(tmp_path / "Eco.fa")])
    assert page.run()
    qtbot.waitUntil(lambda: page.track_stack.currentWidget() is page.widget, timeout=5_000)
    assert page.runner.running and page.model.rowCount() == 0
    assert len(page.curve.xData) == len(lambda_text())  # (getData: downsampled to the view)
    with qtbot.waitSignal(page.designed, timeout=5_000):
        page.cancel()
    assert page.model.rowCount() == 3
