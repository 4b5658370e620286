"""lcs and nw tables: the header speaks to people ("pos. in A (1-based)") while the CSV export
keeps SPEC.md's column names (a_pos, b_pos)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.families import adapter
from tests.app.conftest import cut, load_demo, run

SPEC_HEADER = {"lcs": "a_pos,b_pos,symbol", "nw": "column,a_pos,b_pos,a,b,op"}


@pytest.mark.parametrize("family", sorted(SPEC_HEADER))
def test_headers_for_people_csv_names_from_the_spec(qtbot, window, tmp_path, family):
    window.params.set_family(family)
    load_demo(qtbot, window, adapter(family).default_demo)
    cut(window, "a", 1, 40)
    cut(window, "b", 1, 40)
    window.params.set_selection(backend="serial")
    run(qtbot, window)
    model = window.results.model
    headers = [model.headerData(c, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole)
               for c in range(model.columnCount())]
    assert "pos. in A (1-based)" in headers and "pos. in B (1-based)" in headers
    assert not any(h.endswith("_pos") for h in headers)
    path = window.exports.export_csv(str(tmp_path / "rows.csv"), rows="all")
    lines = [line for line in open(path).read().splitlines() if not line.startswith("#")]
    assert lines[0] == SPEC_HEADER[family] and len(lines) > 1
