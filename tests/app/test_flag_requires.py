"""Flags that build on another (``BackendSpec.flag_requires``) grey out, unchecked, with what
they need as tooltip, until that flag is checked: a Run never sends a refused combination."""

from __future__ import annotations

import pytest

from app.params import ParamsPanel, flag_needs
from engine import registry


@pytest.fixture
def cuda_sim(monkeypatch):
    """The cuda backend offered (the simulator), for this test only."""
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    registry.backend_status.cache_clear()
    yield
    monkeypatch.undo()
    registry.backend_status.cache_clear()


def test_flag_needs_from_the_registry():
    fam = registry.family("kdiff")
    assert flag_needs(fam, "conventional", "cuda", {"opt1", "opt5"}) == {"opt1": ("opt4",),
                                                                          "opt5": ("opt4",)}
    assert flag_needs(fam, "conventional", "cuda", {"opt4"}) == {}
    assert flag_needs(fam, "alternative", "cuda", set()) == {"opt6": ("opt4",)}
    assert flag_needs(fam, "conventional", "serial", set()) == {}


def test_required_flag_greys_and_unchecks_dependants(qtbot, settings, cuda_sim):
    panel = ParamsPanel(settings)
    qtbot.addWidget(panel)
    panel.set_family("kdiff")
    panel.set_selection(backend="cuda", variant="conventional")
    boxes = panel._flag_boxes
    assert panel.state()["backend"] == "cuda"
    assert all(boxes[f].isEnabled() and boxes[f].isChecked() for f in ("opt1", "opt4", "opt5"))

    boxes["opt4"].setChecked(False)  # as a click does
    for name in ("opt1", "opt5"):
        assert not boxes[name].isEnabled()
        assert not boxes[name].isChecked()
        assert "needs opt4" in boxes[name].toolTip()
    assert boxes["opt3"].isEnabled()
    choice = panel.choice()
    assert not {"opt1", "opt5"} & choice.selection.flags

    boxes["opt4"].setChecked(True)
    for name in ("opt1", "opt5"):
        assert boxes[name].isEnabled()
        assert "needs" not in boxes[name].toolTip()
    boxes["opt1"].setChecked(True)
    assert {"opt1", "opt4"} <= panel.choice().selection.flags

    # Never opt1 without opt4, whatever the order of clicks.
    for order in (("opt4", "opt1"), ("opt1", "opt4"), ("opt5", "opt4", "opt1")):
        for name in order:
            boxes[name].setChecked(not boxes[name].isChecked())
            flags = panel.choice().selection.flags
            assert "opt1" not in flags or "opt4" in flags
            assert "opt5" not in flags or "opt4" in flags


def test_alternative_opt6_needs_opt4(qtbot, settings, cuda_sim):
    panel = ParamsPanel(settings)
    qtbot.addWidget(panel)
    panel.set_family("kdiff")
    panel.set_selection(backend="cuda", variant="alternative")
    opt4, opt6 = panel._flag_boxes["opt4"], panel._flag_boxes["opt6"]
    assert opt6.isEnabled() and opt6.isChecked()
    opt4.setChecked(False)
    assert not opt6.isEnabled() and not opt6.isChecked() and "needs opt4" in opt6.toolTip()
    assert "opt6" not in panel.choice().selection.flags
    with pytest.raises(ValueError, match="needs opt4"):
        panel.set_selection(flags={"opt6"})


def test_saved_flags_without_their_requirement_are_dropped(qtbot, settings, cuda_sim):
    from app.settings import save_json

    save_json(settings, "params/kdiff", {"variant": "conventional", "backend": "cuda",
                                         "flags": ["opt1", "opt3"]})
    settings.setValue("family", "kdiff")
    panel = ParamsPanel(settings)
    qtbot.addWidget(panel)
    assert panel.state()["flags"] == ["opt3"]
    assert not panel._flag_boxes["opt1"].isEnabled()
    panel.choice()
