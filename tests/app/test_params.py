"""The parameter panel comes from the registry: valid choices only, reasons for the rest,
and settings that persist."""

from __future__ import annotations

from PySide6.QtCore import Qt

from app.params import ParamsPanel
from engine import registry


def _item_enabled(combo, index) -> bool:
    return bool(combo.model().item(index).flags() & Qt.ItemFlag.ItemIsEnabled)


def test_backends_flags_and_reasons(qtbot, settings):
    panel = ParamsPanel(settings)
    qtbot.addWidget(panel)
    panel.set_family("kdiff")
    panel.set_selection(variant="conventional", backend="serial")
    combo = panel.backend_combo
    cuda = combo.findData("cuda")
    available, reason = registry.backend_status("cuda")
    vspec = registry.family("kdiff").variant("conventional")
    if vspec.backend("cuda") is None or not available:
        assert not _item_enabled(combo, cuda)
        tip = combo.itemData(cuda, Qt.ItemDataRole.ToolTipRole)
        assert tip and (reason in tip or "no cuda backend" in tip)
    # opt1 acts on serial conventional, opt3 only on the fine forms of multicore.
    assert panel._flag_boxes["opt1"].isEnabled() and panel._flag_boxes["opt1"].isChecked()
    assert not panel._flag_boxes["opt3"].isEnabled()
    assert not panel.parallel_combo.isEnabled()
    panel.set_selection(backend="multicore", parallel="fine")
    assert panel._flag_boxes["opt3"].isEnabled() and panel._flag_boxes["opt3"].isChecked()
    assert panel.parallel_combo.isEnabled() and panel.threads_spin.isEnabled()
    assert panel._flag_boxes["opt1"].toolTip() == registry.family("kdiff").flag("opt1").help
    choice = panel.choice()
    assert choice.selection == registry.resolve(registry.family("kdiff"), "conventional", "multicore",
                                                "fine", frozenset({"opt1", "opt3"}))


def test_settings_persist_between_panels(qtbot, settings):
    first = ParamsPanel(settings)
    qtbot.addWidget(first)
    first.set_family("kdiff")
    first.set_selection(variant="alternative", backend="serial")
    first.set_param("k", 7)
    first._flag_boxes["opt2"].setChecked(False)
    settings.sync()
    second = ParamsPanel(settings)
    qtbot.addWidget(second)
    assert second.family == "kdiff"
    state = second.state()
    assert (state["variant"], state["backend"], state["params"]["k"], state["flags"]) == \
        ("alternative", "serial", 7, [])
    assert second._param_widgets["k"].value() == 7


def test_every_family_builds_its_panel(qtbot, settings):
    panel = ParamsPanel(settings)
    qtbot.addWidget(panel)
    for fam in registry.families():
        panel.set_family(fam.name)
        assert set(panel._param_widgets) == {p.name for p in fam.params}
        assert panel.variant_combo.count() == len(fam.variants)
        panel.choice()  # the defaults always resolve


def test_backend_only_parameters_go_to_make_job_where_they_apply():
    """ParamSpec.backends/variants decide what the GUI passes (the engine refuses the rest)."""
    from app.families import RunChoice

    fam = registry.family("edit")
    defaults = {p.name: p.default for p in fam.params}

    def options(variant, backend):
        sel = registry.Selection(variant, backend, None, frozenset())
        return set(RunChoice("edit", sel, defaults).backend_options())

    assert options("myers", "serial") == set()
    assert options("task", "cuda") == {"threads_per_block"}
    assert options("cooperative", "cuda") == {"threads_per_block", "words_per_thread"}
    assert fam.param("words_per_thread").applies("cooperative", "cuda")
    assert not fam.param("words_per_thread").applies("task", "cuda")
    assert fam.param("k").applies("myers", "serial")


def test_gpu_only_variants_are_greyed_without_a_gpu(qtbot, settings):
    panel = ParamsPanel(settings)
    qtbot.addWidget(panel)
    panel.set_family("edit")
    panel.set_selection(variant="myers", backend="serial")
    combo = panel.variant_combo
    available, reason = registry.backend_status("cuda")
    for name in ("task", "cooperative"):  # cuda-only variants
        index = combo.findData(name)
        assert _item_enabled(combo, index) == available
        if not available:
            assert reason in combo.itemData(index, Qt.ItemDataRole.ToolTipRole)
    assert _item_enabled(combo, combo.findData("myers-blocked"))


def test_switching_backend_takes_that_backends_default_variant(qtbot, settings, monkeypatch):
    """Issue #16: choosing cuda picks cuda's default variant (the registry's) in every family;
    back on a CPU backend the CPU default returns. A variant picked by hand that runs on the
    new backend stays."""
    real = registry.backend_status
    monkeypatch.setattr(registry, "backend_status",
                        lambda name: (True, "") if name == "cuda" else real(name))
    panel = ParamsPanel(settings)
    qtbot.addWidget(panel)
    for fam in registry.families():
        panel.set_family(fam.name)
        panel.set_selection(variant=fam.fastest_variant, backend="multicore")
        combo = panel.backend_combo
        assert _item_enabled(combo, combo.findData("cuda"))  # offered even where the variant lacks it
        combo.setCurrentIndex(combo.findData("cuda"))  # as a user does
        state = panel.state()
        assert (state["variant"], state["backend"]) == (fam.default_variants["cuda"], "cuda")
        assert panel.variant_combo.currentData() == fam.default_variants["cuda"]
        assert panel.choice().selection.variant == fam.default_variants["cuda"]
        combo.setCurrentIndex(combo.findData("serial"))
        assert (panel.state()["variant"], panel.state()["backend"]) == (fam.fastest_variant, "serial")
    panel.set_family("kdiff")
    panel.set_selection(variant="alternative", backend="serial")
    panel.backend_combo.setCurrentIndex(panel.backend_combo.findData("cuda"))
    assert (panel.state()["variant"], panel.state()["backend"]) == ("alternative", "cuda")


def test_text_parameter_is_a_line_edit_that_persists_and_reaches_make_job(qtbot, settings):
    """A "text" ParamSpec (the dask scheduler's address) is a line edit: what is typed is
    kept (trimmed) in the state and the settings, and reaches make_job on its backend only."""
    from PySide6.QtWidgets import QLineEdit

    panel = ParamsPanel(settings)
    qtbot.addWidget(panel)
    panel.set_family("kdiff")
    edit = panel._param_widgets["scheduler"]
    assert isinstance(edit, QLineEdit) and edit.text() == ""
    edit.setText("  tcp://127.0.0.1:8786 ")
    edit.editingFinished.emit()
    assert panel.state()["params"]["scheduler"] == "tcp://127.0.0.1:8786"
    second = ParamsPanel(settings)
    qtbot.addWidget(second)
    assert second._param_widgets["scheduler"].text() == "tcp://127.0.0.1:8786"
    assert "scheduler" not in panel.choice().backend_options()  # not on a CPU backend
    if registry.backend_status("dask")[0]:
        panel.set_selection(backend="dask")
        assert edit.isEnabled()
        assert panel.choice().backend_options() == {"scheduler": "tcp://127.0.0.1:8786"}
    panel.restore_state("kdiff", {"params": {"scheduler": 5}})  # not text: the default
    assert panel.state()["params"]["scheduler"] == ""


def test_biology_first_engine_settings_under_a_closed_advanced(qtbot, settings):
    """Issue 32: k and strands first; variant, backend, CUDA, Dask and flags folded away."""
    panel = ParamsPanel(settings)
    qtbot.addWidget(panel)
    panel.show()
    panel.set_family("kdiff")
    assert not panel.advanced.is_expanded()
    shown = {name for name, w in panel._param_widgets.items() if w.isVisibleTo(panel)}
    assert {"k", "strands"} <= shown
    assert not shown & {"threads_per_block", "prefetch_factor", "scheduler"}
    assert not panel.variant_combo.isVisibleTo(panel) and not panel.flags_box.isVisibleTo(panel)
    layout = panel.layout()
    assert layout.indexOf(panel.params_box) < layout.indexOf(panel.advanced)
    panel.set_selection(variant="conventional", backend="serial")
    assert panel.summary.isVisibleTo(panel)
    assert panel.summary.text().startswith("Engine: conventional/serial")
    panel.advanced.set_expanded(True)
    assert panel.variant_combo.isVisibleTo(panel) and panel._param_widgets["scheduler"].isVisibleTo(panel)
    assert not panel.summary.isVisibleTo(panel)
    again = ParamsPanel(settings)  # the section's state persists
    qtbot.addWidget(again)
    assert again.advanced.is_expanded()


def test_saved_values_are_taken_by_the_registry_rule(qtbot, settings):
    """A saved (or workspace) value the registry's ParamSpec.check refuses (the rule of
    make_job and the command line) falls back to the default; one it takes is kept."""
    panel = ParamsPanel(settings)
    qtbot.addWidget(panel)
    k = registry.family("kdiff").param("k")
    for bad in (k.maximum + 1, k.minimum - 1, "2.5", "many", None):
        panel.restore_state("kdiff", {"params": {"k": bad}})
        assert panel.state()["params"]["k"] == k.default, bad
    panel.restore_state("kdiff", {"params": {"k": "7", "strands": "sideways"}})
    assert panel.state()["params"]["k"] == 7
    assert panel.state()["params"]["strands"] == registry.family("kdiff").param("strands").default


def test_gap_min_unset_shows_the_stores_value(qtbot, settings):
    """Unset, gap_min is a store background's own (else 10): the spin box shows that below its
    minimum and passes None; a number set is passed as given."""
    panel = ParamsPanel(settings)
    qtbot.addWidget(panel)
    panel.set_family("kmismatch")
    spin = panel._param_widgets["gap_min"]
    assert panel.state()["params"]["gap_min"] is None
    assert spin.value() == spin.minimum() and spin.text() == "store's, else 10"
    spin.setValue(25)
    assert panel.state()["params"]["gap_min"] == 25
    # Rarely changed: under Advanced, and named beside it when set (it changes the answer).
    assert panel.rare_form.indexOf(spin) >= 0 and "; gaps: N runs ≥ 25" in panel.summary.text()
    spin.setValue(spin.minimum())
    assert panel.state()["params"]["gap_min"] is None and spin.minimum() == 0
