"""The parameter panel, built from the engine's registry.

Only combinations that exist in the engine can be chosen: backends a variant
lacks, or that this machine cannot run (CUDA without a GPU), are greyed out
with the reason as tooltip; a flag is enabled only where ``valid_flags`` says
it acts, and only once the flags it builds on (``flag_requires``) are checked. Choices are
kept per family and persist in QSettings.

Binding follows napari's habit: widgets are filled from the state with their
signals blocked, and every widget change goes through one setter,
:meth:`ParamsPanel._set`, so there are no feedback loops.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox, QLabel,
                               QLineEdit, QSpinBox, QVBoxLayout, QWidget)

from engine import registry

from app.families import RunChoice, has_adapter
from app.settings import load_json, save_json
from app.widgets import ClampingSpinBox, Section

#: Whether the Advanced section (engine settings) is open; folded by default.
ADVANCED_KEY = "params/advanced"
#: Parameters of the biology that are rarely changed (the N-run length read as an assembly
#: gap: the store's own, else 10): under Advanced, so the first panel fits 720 px; the line
#: under Advanced names one that is set (as this text says it), as it changes the answer.
RARE_PARAMS = {"gap_min": "gaps: N runs ≥ {}"}


def _cpu_threads() -> int:
    return os.cpu_count() or 1


def default_threads() -> int:
    """All cores: the kernels release the GIL and the worker thread runs below the GUI's
    priority, so the window stays smooth (leaving a core idle halved speed on 2 cores)."""
    return _cpu_threads()


def flag_needs(fam: registry.FamilySpec, variant: str, backend: str, flags) -> dict[str, tuple]:
    """flag -> the flags it needs that ``flags`` lacks (``BackendSpec.flag_requires``): such a
    flag is greyed and unchecked, so a Run never sends a combination the registry refuses."""
    chosen = set(flags)
    bspec = fam.variant(variant).backend(backend)
    if bspec is None:
        return {}
    return {flag: missing for flag in bspec.flag_requires
            if (missing := registry.missing_requirements(fam, variant, backend, chosen | {flag})
                .get(flag))}


def drop_unmet(fam: registry.FamilySpec, variant: str, backend: str, flags) -> list[str]:
    """``flags`` less those whose requirements are not all in it (repeated: a dropped flag may
    be another's requirement)."""
    kept = set(flags)
    while unmet := set(registry.missing_requirements(fam, variant, backend, kept)):
        kept -= unmet
    return sorted(kept)


def is_engine_setting(p: registry.ParamSpec) -> bool:
    """A parameter of one backend (CUDA block sizes, the Dask scheduler): how the engine
    computes, not what; it goes under Advanced."""
    return bool(p.backends)


def selection_text(state: dict) -> str:
    """variant/backend[/form][, N threads][ + flags], as the summary under the parameters says it."""
    text = f"{state['variant']}/{state['backend']}" + (f"/{state['parallel']}" if state["parallel"] else "")
    if state["backend"] == "multicore":
        text += f", {state['threads']} threads"
    if state["flags"]:
        text += " + " + ", ".join(state["flags"])
    return text


class ParamsPanel(QWidget):
    """Family, variant, backend, parallel form, threads, flags and family parameters."""

    changed = Signal()
    family_changed = Signal(str)

    def __init__(self, settings: QSettings, parent=None):
        super().__init__(parent)
        self.settings = settings
        self.families = {f.name: f for f in registry.families()}
        self._state: dict[str, dict] = {}
        self._flag_boxes: dict[str, QCheckBox] = {}
        self._param_widgets: dict[str, QWidget] = {}

        self.family_combo = QComboBox()
        self.family_combo.setToolTip("The problem to solve")
        for fam in self.families.values():
            self.family_combo.addItem(f"{fam.name}: {fam.title}", fam.name)
            index = self.family_combo.count() - 1
            if has_adapter(fam.name):
                self.family_combo.setItemData(index, fam.help, Qt.ItemDataRole.ToolTipRole)
            else:
                self._disable_item(self.family_combo, index, "the GUI has no view of this family yet")
        self.family_help = QLabel()
        self.family_help.setWordWrap(True)
        self.family_help.setObjectName("help")

        self.variant_combo = QComboBox()
        self.backend_combo = QComboBox()
        self.parallel_combo = QComboBox()
        self.threads_spin = QSpinBox()
        self.threads_spin.setRange(1, max(1, _cpu_threads()))
        self.threads_spin.setToolTip("Threads for the multicore backend")
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Variant", self.variant_combo)
        form.addRow("Backend", self.backend_combo)
        form.addRow("Parallel form", self.parallel_combo)
        form.addRow("Threads", self.threads_spin)

        self.flags_box = QGroupBox("Optimisations")
        self.flags_layout = QVBoxLayout(self.flags_box)
        # The biology (k, strands, scores...) first; how the engine computes it (variant,
        # backend, CUDA and Dask settings, optimisation flags) folds away under Advanced.
        self.params_box = QGroupBox("Parameters")
        self.params_form = QFormLayout(self.params_box)
        self.params_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.params_form.setVerticalSpacing(2)
        self.engine_form = QFormLayout()
        self.engine_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.rare_form = QFormLayout()  # RARE_PARAMS
        self.rare_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        advanced = QWidget()
        advanced_layout = QVBoxLayout(advanced)
        advanced_layout.setContentsMargins(0, 0, 0, 0)
        advanced_layout.addLayout(self.rare_form)
        advanced_layout.addLayout(form)
        advanced_layout.addLayout(self.engine_form)
        advanced_layout.addWidget(self.flags_box)
        self.advanced = Section("Advanced", advanced,
                                bool(settings.value(ADVANCED_KEY, False, type=bool)))
        self.advanced.button.setToolTip("The N-run length read as an assembly gap; then variant, "
                                        "backend, threads, CUDA and Dask settings, optimisation "
                                        "flags: how the engine computes the answer (the same "
                                        "answer for every choice; only the time differs)")
        self.summary = self.advanced.note  # the engine chosen, beside Advanced while folded
        self.advanced.toggled.connect(self._on_advanced)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)  # (the whole panel fits 720 px with the Pairs tab's rows)
        layout.addWidget(self.family_combo)
        layout.addWidget(self.family_help)
        layout.addWidget(self.params_box)
        # A view's own biology (the Pairs tab's product sizes and Tm), a row of the parameters'
        # box: set_biology.
        self.biology: QWidget | None = None
        layout.addWidget(self.advanced)

        self.family_combo.currentIndexChanged.connect(
            lambda i: self.set_family(self.family_combo.itemData(i)))
        self.variant_combo.currentIndexChanged.connect(
            lambda i: self._set("variant", self.variant_combo.itemData(i)))
        self.backend_combo.currentIndexChanged.connect(
            lambda i: self._set("backend", self.backend_combo.itemData(i)))
        self.parallel_combo.currentIndexChanged.connect(
            lambda i: self._set("parallel", self.parallel_combo.itemData(i)))
        self.threads_spin.valueChanged.connect(lambda v: self._set("threads", v))

        saved = settings.value("family", "")
        usable = [n for n in self.families if has_adapter(n)]
        self.family = saved if saved in usable else (usable[0] if usable else next(iter(self.families)))
        self._build_family()

    def _on_advanced(self, expanded: bool) -> None:
        self.settings.setValue(ADVANCED_KEY, bool(expanded))

    # -- state ---------------------------------------------------------------------------------
    @property
    def spec(self) -> registry.FamilySpec:
        return self.families[self.family]

    def state(self, family: str | None = None) -> dict:
        family = family or self.family
        if family not in self._state:
            saved = load_json(self.settings, f"params/{family}", {})
            if not isinstance(saved, dict):
                saved = {}
            self._state[family] = self._sanitize(self.families[family], saved)
        return self._state[family]

    def _sanitize(self, fam: registry.FamilySpec, saved: dict) -> dict:
        """A valid state from saved settings (which may predate a change in the registry)."""
        names = [v.name for v in fam.variants]
        variant = saved.get("variant") if saved.get("variant") in names else fam.fastest_variant
        state = {"variant": variant, "backend": saved.get("backend"), "parallel": saved.get("parallel"),
                 "flags": saved.get("flags"), "threads": saved.get("threads") or default_threads(),
                 "params": {}}
        self._fix_selection(fam, state, keep_flags=saved.get("flags") is not None)
        for p in fam.params:
            value = saved.get("params", {}).get(p.name, p.default)
            state["params"][p.name] = self._valid_param(p, value)
        state["threads"] = max(1, min(int(state["threads"]), _cpu_threads()))
        return state

    @staticmethod
    def _valid_param(p: registry.ParamSpec, value):
        """A saved value as the registry's rule (``ParamSpec.check``, which the engine's
        make_job and the command line apply too) takes it, or the default."""
        if p.kind == "text":
            return value.strip() if isinstance(value, str) else p.default
        try:
            if p.kind == "int":
                value = int(value)  # settings may hold numbers as text
            elif p.kind == "float":
                value = float(value)
            checked = p.check(value)
        except (TypeError, ValueError):
            return p.default
        return p.default if checked is None else checked

    def _fix_selection(self, fam, state: dict, keep_flags: bool) -> None:
        """Make backend, parallel form and flags valid for the variant (registry rules)."""
        vspec = fam.variant(state["variant"])
        offered = [b.name for b in vspec.backends if registry.backend_status(b.name)[0]]
        if state["backend"] not in offered:
            state["backend"] = registry.default_backend(fam, state["variant"])
        bspec = vspec.backend(state["backend"])
        if bspec.parallel:
            if state["parallel"] not in bspec.parallel:
                state["parallel"] = bspec.parallel[0]
        else:
            state["parallel"] = None
        valid = registry.valid_flags(fam, state["variant"], state["backend"], state["parallel"])
        if keep_flags and state["flags"] is not None:
            flags = [f for f in state["flags"] if f in valid]
        else:
            flags = [f for f in bspec.default_flags if f in valid]
        state["flags"] = drop_unmet(fam, state["variant"], state["backend"], flags)

    def _save(self) -> None:
        self.settings.setValue("family", self.family)
        save_json(self.settings, f"params/{self.family}", self.state())

    def choice(self) -> RunChoice:
        """The chosen run, checked by the registry (raises ValueError if it cannot run)."""
        state = self.state()
        sel = registry.resolve(self.spec, state["variant"], state["backend"], state["parallel"],
                               frozenset(state["flags"]))
        threads = state["threads"] if sel.backend == "multicore" else None
        return RunChoice(self.family, sel, dict(state["params"]), threads)

    # -- the one setter (widget -> model) -----------------------------------------------------
    def _set(self, key: str, value) -> None:
        state = self.state()
        if key in ("variant", "backend", "parallel"):
            if value is None and key != "parallel" or state.get(key) == value:
                return
            if key == "backend":
                state["variant"] = self._variant_for(state["variant"], state["backend"], value)
            state[key] = value
            # A new variant or backend starts from its default flags; a new parallel
            # form keeps the flags that still act and adds the defaults that now do.
            if key == "parallel":
                before = set(state["flags"])
                self._fix_selection(self.spec, state, keep_flags=False)
                valid = registry.valid_flags(self.spec, state["variant"], state["backend"], value)
                state["flags"] = drop_unmet(self.spec, state["variant"], state["backend"],
                                            (before & set(valid)) | set(state["flags"]))
            else:
                self._fix_selection(self.spec, state, keep_flags=False)
        elif key == "threads":
            state["threads"] = int(value)
        elif key.startswith("flag:"):
            flags = set(state["flags"])
            flags.add(key[5:]) if value else flags.discard(key[5:])
            # Unchecking a flag others need unchecks them too (they grey out until it is back).
            state["flags"] = drop_unmet(self.spec, state["variant"], state["backend"], flags)
        elif key.startswith("param:"):
            state["params"][key[6:]] = value
        self._save()
        self._show_selection()
        self.changed.emit()

    def _variant_for(self, variant: str, old_backend: str, backend: str) -> str:
        """The variant after a switch of backend: the new backend's default (the registry's),
        unless the user picked another variant that also runs there."""
        fam = self.spec
        if fam.variant(variant).backend(backend) is None or variant == fam.default_variant(old_backend):
            return fam.default_variant(backend)
        return variant

    def set_param(self, name: str, value) -> None:
        """Set a family parameter from code (the Demo menu, tests)."""
        self._set(f"param:{name}", value)
        self._show_params()

    def set_selection(self, variant: str | None = None, backend: str | None = None,
                      parallel: str | None = None, flags=None) -> None:
        """Choose a variant/backend/form/flags from code (checked like a user's choice; the
        backend first, so that its default variant never overrides the one named)."""
        if backend is not None:
            self._set("backend", backend)
        if variant is not None:
            self._set("variant", variant)
        if parallel is not None:
            self._set("parallel", parallel)
        if flags is not None:
            state = self.state()
            valid = registry.valid_flags(self.spec, state["variant"], state["backend"], state["parallel"])
            bad = set(flags) - set(valid)
            if bad:
                raise ValueError(f"flags {sorted(bad)} do not apply here (valid: {list(valid)})")
            unmet = registry.missing_requirements(self.spec, state["variant"], state["backend"], flags)
            if unmet:
                raise ValueError("; ".join(f"flag {f} needs {', '.join(n)}" for f, n in sorted(unmet.items())))
            state["flags"] = sorted(flags)
            self._save()
            self._show_selection()
            self.changed.emit()

    def restore_state(self, family: str, saved: dict) -> None:
        """Take a family's choices from saved data (a workspace), checked like saved settings."""
        self._state[family] = self._sanitize(self.families[family], saved)
        if family == self.family:
            self._save()
            self._show_params()
            self._show_selection()
            self.changed.emit()

    def focus_chain(self) -> list:
        """The biology's parameters, then Advanced: variant, backend, parallel form, threads,
        the engine's parameters and flags (the layout's order)."""
        fam = self.spec
        kinds = {n: self._section(fam.param(n)) for n in self._param_widgets}
        biology, rare, engine = ([w for n, w in self._param_widgets.items() if kinds[n] == kind]
                                 for kind in ("biology", "rare", "engine"))
        return (biology + [self.advanced.button] + rare + [self.variant_combo, self.backend_combo,
                                                           self.parallel_combo, self.threads_spin]
                + engine + list(self._flag_boxes.values()))

    @staticmethod
    def _section(p: registry.ParamSpec) -> str:
        """Where a parameter's row goes: 'engine' and 'rare' under Advanced, else 'biology'."""
        return "engine" if is_engine_setting(p) else "rare" if p.name in RARE_PARAMS else "biology"

    def set_family(self, name: str) -> None:
        if name == self.family or name not in self.families or not has_adapter(name):
            self._show_family_combo()
            return
        self.family = name
        self._build_family()
        self._save()
        self.family_changed.emit(name)
        self.changed.emit()

    # -- model -> widgets -------------------------------------------------------------------------
    @staticmethod
    def _disable_item(combo: QComboBox, index: int, reason: str) -> None:
        model = combo.model()
        if isinstance(model, QStandardItemModel):
            model.item(index).setEnabled(False)
        combo.setItemData(index, reason, Qt.ItemDataRole.ToolTipRole)

    def _show_family_combo(self) -> None:
        self.family_combo.blockSignals(True)
        self.family_combo.setCurrentIndex(self.family_combo.findData(self.family))
        self.family_combo.blockSignals(False)

    def set_biology(self, widget: QWidget | None) -> None:
        """Show a view's biology settings (the Pairs tab's product sizes and Tm: a widget over
        a QFormLayout) as the last rows of the family's parameters, labels aligned with theirs
        (the view shows and hides it with itself); None: hand back the one shown (its view is
        going: detached, not deleted, as the view still holds it)."""
        if self.biology is not None:
            self.params_form.takeRow(self.biology)
            self.biology.setParent(None)
        self.biology = widget
        if widget is not None:
            self.params_form.addRow(widget)
        self._fit_params_box()

    def _fit_params_box(self) -> None:
        """The box shows when it has rows; the labels of the biology's form as wide as the
        family's (one column of fields)."""
        forms = [self.params_form]
        if self.biology is not None and isinstance(self.biology.layout(), QFormLayout):
            forms.append(self.biology.layout())
            forms[1].setVerticalSpacing(self.params_form.verticalSpacing())
        labels = [item.widget() for form in forms for row in range(form.rowCount())
                  if (item := form.itemAt(row, QFormLayout.ItemRole.LabelRole)) is not None
                  and item.widget() is not None]
        for label in labels:
            label.setMinimumWidth(0)
        width = max((label.sizeHint().width() for label in labels), default=0)
        for label in labels:
            label.setMinimumWidth(width)
        self.params_box.setVisible(self.params_form.rowCount() > 0)

    def _build_family(self) -> None:
        fam = self.spec
        self._show_family_combo()
        self.family_help.setText(fam.help)
        # Flags: one checkbox per family flag, its help as tooltip.
        for box in self._flag_boxes.values():
            box.deleteLater()
        self._flag_boxes = {}
        for flag in fam.flags:
            box = QCheckBox(flag.title)
            box.setToolTip(flag.help)
            box.toggled.connect(lambda on, name=flag.name: self._set(f"flag:{name}", on))
            self.flags_layout.addWidget(box)
            self._flag_boxes[flag.name] = box
        self.flags_box.setVisible(bool(fam.flags))
        # Parameters: int -> spin box, float -> double spin box, choice -> combo, text -> line.
        # (A view's biology rows are kept: set_biology hands them back.)
        biology = self.biology
        if biology is not None:
            self.params_form.takeRow(biology)
        for form in (self.params_form, self.engine_form, self.rare_form):
            while form.rowCount():
                form.removeRow(0)
        self._param_widgets = {}
        for p in fam.params:
            widget = self._param_widget(p)
            label = QLabel(p.title)
            label.setToolTip(p.help)
            widget.setToolTip(p.help)
            forms = {"engine": self.engine_form, "rare": self.rare_form, "biology": self.params_form}
            forms[self._section(p)].addRow(label, widget)
            self._param_widgets[p.name] = widget
        if biology is not None:
            self.params_form.addRow(biology)
        self._fit_params_box()
        self._show_params()
        self._show_selection()

    def _param_widget(self, p: registry.ParamSpec) -> QWidget:
        if p.kind == "text":  # taken when editing ends (Return or focus out), trimmed
            widget = QLineEdit()
            widget.setPlaceholderText(p.metavar)
            widget.editingFinished.connect(
                lambda w=widget, n=p.name: self._set(f"param:{n}", w.text().strip()))
            return widget
        if p.kind == "choice":
            widget = QComboBox()
            for choice in p.choices:
                widget.addItem(choice, choice)
            widget.currentIndexChanged.connect(
                lambda i, w=widget, n=p.name: self._set(f"param:{n}", w.itemData(i)))
            return widget
        if p.kind == "int":
            widget = ClampingSpinBox()
            low = int(p.minimum if p.minimum is not None else -10**9)
            if p.auto:  # one below the range reads as the parameter's unset value (None)
                low -= 1
                widget.setSpecialValueText(p.auto)
            widget.setRange(low, int(p.maximum if p.maximum is not None else 10**9))
        else:
            widget = QDoubleSpinBox()
            widget.setDecimals(3)
            widget.setRange(p.minimum if p.minimum is not None else -1e9,
                            p.maximum if p.maximum is not None else 1e9)
        widget.setKeyboardTracking(False)
        widget.valueChanged.connect(
            lambda v, n=p.name, w=widget, auto=bool(p.auto):
            self._set(f"param:{n}", None if auto and v == w.minimum() else v))
        return widget

    def _show_params(self) -> None:
        state = self.state()
        for name, widget in self._param_widgets.items():
            widget.blockSignals(True)
            value = state["params"][name]
            if isinstance(widget, QComboBox):
                widget.setCurrentIndex(widget.findData(value))
            elif isinstance(widget, QLineEdit):
                widget.setText(value)
            else:  # (None: a parameter's unset value, shown as its special text)
                widget.setValue(widget.minimum() if value is None else value)
            widget.blockSignals(False)

    def _show_selection(self) -> None:
        fam, state = self.spec, self.state()
        vspec = fam.variant(state["variant"])
        combos = (self.variant_combo, self.backend_combo, self.parallel_combo)
        for combo in combos:
            combo.blockSignals(True)
            combo.clear()
        for v in fam.variants:
            self.variant_combo.addItem(v.title, v.name)
            index = self.variant_combo.count() - 1
            self.variant_combo.setItemData(index, v.help, Qt.ItemDataRole.ToolTipRole)
            reasons = [registry.backend_status(b.name) for b in v.backends]
            if v.name != state["variant"] and not any(ok for ok, _ in reasons):
                # GPU-only variants on a machine without a GPU, say: shown, greyed, with why.
                self._disable_item(self.variant_combo, index,
                                   f"unavailable: {reasons[0][1]}" if reasons else "unavailable")
        self.variant_combo.setCurrentIndex(self.variant_combo.findData(state["variant"]))
        for name in registry.BACKENDS:
            self.backend_combo.addItem(name, name)
            index = self.backend_combo.count() - 1
            available, reason = registry.backend_status(name)
            if not any(v.backend(name) for v in fam.variants):
                self._disable_item(self.backend_combo, index, f"{fam.name} has no {name} backend")
            elif not available:
                self._disable_item(self.backend_combo, index, f"unavailable: {reason}")
            elif vspec.backend(name) is None:
                self.backend_combo.setItemData(
                    index, f"switches to the {fam.default_variant(name)} variant",
                    Qt.ItemDataRole.ToolTipRole)
            elif reason:
                self.backend_combo.setItemData(index, reason, Qt.ItemDataRole.ToolTipRole)
        self.backend_combo.setCurrentIndex(self.backend_combo.findData(state["backend"]))
        forms = vspec.backend(state["backend"]).parallel
        for form in forms:
            self.parallel_combo.addItem(form, form)
        if forms:
            self.parallel_combo.setCurrentIndex(self.parallel_combo.findData(state["parallel"]))
        else:
            self.parallel_combo.addItem("none (sequential)", None)
        self.parallel_combo.setEnabled(bool(forms))
        for combo in combos:
            combo.blockSignals(False)
        self.threads_spin.blockSignals(True)
        self.threads_spin.setValue(state["threads"])
        self.threads_spin.blockSignals(False)
        self.threads_spin.setEnabled(state["backend"] == "multicore")
        valid = registry.valid_flags(fam, state["variant"], state["backend"], state["parallel"])
        needs = flag_needs(fam, state["variant"], state["backend"], state["flags"])
        for name, box in self._flag_boxes.items():
            box.blockSignals(True)
            box.setChecked(name in state["flags"])
            box.setEnabled(name in valid and name not in needs)
            help_text = fam.flag(name).help
            if name not in valid:
                help_text += f"\n(Does not apply to {state['variant']}/{state['backend']}"
                help_text += f"/{state['parallel']})" if state["parallel"] else ")"
            elif name in needs:
                help_text += f"\n(needs {', '.join(needs[name])})"
            box.setToolTip(help_text)
            box.blockSignals(False)
        rare = [RARE_PARAMS[n].format(state["params"][n]) for n in self._param_widgets
                if n in RARE_PARAMS and state["params"][n] is not None]
        self.summary.setText(f"Engine: {selection_text(state)}" + "".join(f"; {r}" for r in rare))
        for name, widget in self._param_widgets.items():
            # Backend- or variant-only parameters (threads per block on cuda...) grey out elsewhere.
            widget.setEnabled(fam.param(name).applies(state["variant"], state["backend"]))
