"""The window fits a laptop (issue 20, defect 4): 1280x720 works for every family, the left
panel scrolls instead of clipping, and the splitters leave the table room; tab order follows
the layout (defect 11)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QAbstractButton, QAbstractSpinBox, QComboBox

from app.families import adapter
from engine import registry
from tests.app.conftest import load_demo

FAMILIES = [f.name for f in registry.families()]
ROW_HEIGHT = 22


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_fits_1280x720_without_clipping(qtbot, window, family):
    window.params.set_family(family)
    load_demo(qtbot, window, adapter(family).default_demo)
    window.resize(1280, 720)
    qtbot.wait(50)  # the left panel sizes itself once the records are shown
    hint = window.minimumSizeHint()
    assert hint.width() <= 1280 and hint.height() <= 720, hint
    assert (window.width(), window.height()) == (1280, 720)
    # The left panel scrolls vertically; nothing in it is cut off on the right or squeezed.
    viewport = window.left.viewport()
    assert window.left_content.width() <= viewport.width()
    widgets = [w for kind in (QComboBox, QAbstractSpinBox, QAbstractButton)
               for w in window.left_content.findChildren(kind)]
    assert len(widgets) > 5
    for widget in widgets:
        if widget.isVisibleTo(window):
            right = widget.mapTo(window.left_content, widget.rect().topRight()).x()
            assert right <= window.left_content.width(), widget
            assert widget.width() >= widget.minimumSizeHint().width(), widget
    # The table keeps room for rows, and the view tabs for their plots.
    assert window.results.view.viewport().height() >= 6 * ROW_HEIGHT
    assert window.tabs.height() >= 250


def test_tab_order_follows_the_layout(qtbot, window):
    window.params.set_family("kdiff")
    panels = list(window.input_panels.values())
    order, widget = [], window.params.family_combo
    for _ in range(400):
        order.append(widget)
        widget = widget.nextInFocusChain()
        if widget is window.params.family_combo:
            break
    index = {id(w): i for i, w in enumerate(order)}

    def at(w):
        assert id(w) in index, w
        return index[id(w)]

    k_box = window.params._param_widgets["k"]
    assert at(window.params.family_combo) < at(panels[0].open_button) < at(panels[0].region_to) \
        < at(panels[1].open_button) < at(panels[1].region_to) < at(k_box) \
        < at(window.params.variant_combo) < at(window.params.backend_combo) \
        < at(window.tabs.tabBar()) < at(window.results.length_min) < at(window.results.view)


def test_toolbar_and_boxes_name_the_inputs_alike(window):
    """Issue 32: the toolbar said "Open sequence a" over a box titled "Sequence A"."""
    window.params.set_family("nw")
    titles = [spec.title for spec in window.params.spec.inputs]
    assert titles[0].endswith(" A")
    assert window.open_action.text().replace("&", "") == f"Open {titles[0][0].lower()}{titles[0][1:]}…"
    assert window.paste_action.text().replace("&", "").endswith(titles[0][1:] + "…")


#: The parameters each family's user sets first: in view at 1280x720 without scrolling.
FIRST_PARAMS = {"kmismatch": ["k"], "lcs": ["task"], "edit": ["mode", "k"],
                "nw": ["match", "mismatch", "gap"]}


@pytest.mark.parametrize("family", sorted(FIRST_PARAMS))
def test_the_parameters_stay_in_view_under_the_record_lists(qtbot, window, family):
    """A demo of 8 records (and 12 patterns) scrolls in its list, not the parameters away."""
    window.params.set_family(family)
    load_demo(qtbot, window, adapter(family).default_demo)
    window.resize(1280, 720)
    window.show()
    qtbot.wait(50)
    viewport = window.left.viewport()
    assert window.left.verticalScrollBar().value() == 0
    for name in FIRST_PARAMS[family]:
        widget = window.params._param_widgets[name]
        bottom = widget.mapTo(viewport, widget.rect().bottomLeft()).y()
        assert widget.isVisible() and bottom <= viewport.height(), (name, bottom, viewport.height())
    for panel in window.input_panels.values():  # the lists scroll what they cannot show
        tree = panel.tree
        rows = tree.topLevelItemCount()
        if rows > 3:
            assert tree.verticalScrollBar().maximum() > 0


def test_the_filter_box_shows_its_whole_placeholder(qtbot, window):
    """kdiff's table has the widest filter row: at 1280x720 its text box was cut to
    'record or sequence …'."""
    window.params.set_family("kdiff")
    window.resize(1280, 720)
    window.show()
    qtbot.wait(50)
    box = window.results.text
    hint = box.fontMetrics().horizontalAdvance(box.placeholderText())
    assert box.isVisible() and box.width() >= hint + 30, (box.width(), hint)
    assert window.width() == 1280 and window.minimumSizeHint().width() <= 1280
