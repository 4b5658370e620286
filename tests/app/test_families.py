"""Every family in the registry runs from the GUI on its demo data and fills its views."""

from __future__ import annotations

import pytest

from app.families import adapter, has_adapter
from engine import registry
from tests.app.conftest import load_demo, run

FAMILIES = [f.name for f in registry.families()]


def test_every_registry_family_has_an_adapter():
    assert FAMILIES and all(has_adapter(name) for name in FAMILIES)


@pytest.mark.parametrize("family", FAMILIES)
def test_family_runs_on_demo_with_views_filled(qtbot, window, family, tmp_path):
    window.params.set_family(family)
    assert window.params.family == family
    load_demo(qtbot, window, adapter(family).default_demo)
    if family == "kdiff":  # the demo's default region is for people; keep the test short
        window.input_panels["target"].set_region((1, 150))
        window.input_panels["background"].set_region((1, 20_000))
        for view in window.family_views:  # the Landscape tab fills after an every-k run only
            if hasattr(view, "every_k"):
                view.every_k.setChecked(True)
    window.params.set_selection(backend="serial")
    result = run(qtbot, window)
    assert result.info.complete and result.info.family == family

    items = window.adapter.items(result)
    assert window.results.model.rowCount() == min(len(items), 200_000) > 0
    if window.adapter.best_item(result) is not None:
        assert window.select_best()
    qtbot.waitUntil(lambda: all(v.has_data() for v in window.family_views), timeout=60_000)
    assert window.throughput.has_data()

    # One picture per tab (both plots of a split tab in one file), as PNG and as SVG.
    tmp_path = tmp_path / "pictures"
    tmp_path.mkdir()
    for index, page in enumerate(window.pages):
        window.tabs.setCurrentIndex(index)
        if page.view.is_empty():
            continue
        for suffix in ("png", "svg"):
            path = window.exports.save_picture(str(tmp_path / f"tab{index}.{suffix}"))
            assert path == str(tmp_path / f"tab{index}.{suffix}")
            data = open(path, "rb").read()
            assert data.startswith(b"\x89PNG") if suffix == "png" else b"<svg" in data[:500]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"tab{i}.{s}" for i, page in enumerate(window.pages) if not page.view.is_empty()
        for s in ("png", "svg"))
