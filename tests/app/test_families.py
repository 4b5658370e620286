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
    window.params.set_selection(backend="serial")
    result = run(qtbot, window)
    assert result.info.complete and result.info.family == family

    items = window.adapter.items(result)
    assert window.results.model.rowCount() == min(len(items), 200_000) > 0
    if window.adapter.best_item(result) is not None:
        assert window.select_best()
    family_views = window.views[:-2]  # the last two are throughput and compare
    qtbot.waitUntil(lambda: all(v.has_data() for v in family_views), timeout=60_000)
    assert window.throughput.has_data()

    csv_path = window.export_csv(str(tmp_path / "out.csv"))
    assert open(csv_path).read() == window.adapter.csv_text(result)
    written = window.save_plot(str(tmp_path / "plot.png"))
    assert written and all((tmp_path / p).exists() for p in written)
