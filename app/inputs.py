"""Input panels: one per input role of the chosen family (target, background, text, ...).

A panel shows the records it holds (name, length, description), which of them
are used, and an optional region. Files come from the Open button, its recent
files menu, drag and drop, the paste dialog or the Demo menu; the window loads
them (off the GUI thread) and hands the records back, so a file that fails to
load never replaces what the panel already holds.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field, replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QDialog, QDialogButtonBox, QGroupBox, QHBoxLayout,
                               QHeaderView, QLabel, QLineEdit, QMenu, QPlainTextEdit, QPushButton,
                               QToolButton, QTreeWidget, QTreeWidgetItem, QVBoxLayout)

from engine.registry import InputSpec
from engine.sequences import Record, SequenceError, encode, record_id

from app.widgets import ClampingSpinBox

FILE_FILTER = ("Sequence files (*.fa *.fasta *.fna *.ffn *.fas *.fsa *.mfa *.seq *.gb *.gbk *.gbff "
               "*.genbank *.embl *.emb *.gz *.psg);;All files (*)")


#: Rows a record list shows before it scrolls (1280x720 keeps the parameters in view).
LIST_ROWS = 3


@dataclass(frozen=True)
class InputState:
    """Records of one role, which are used, and the region (1-based, inclusive) to use.

    ``files`` (the paths read) or ``demo`` (a demo data set's name) say where the records
    came from, for a workspace; ``skipped`` names empty records the file had.
    """

    records: tuple[Record, ...] = ()
    source: str = ""
    use: frozenset = field(default_factory=frozenset)  # indices of used records
    region: tuple[int, int] | None = None
    files: tuple[str, ...] = ()
    demo: str = ""
    skipped: tuple[str, ...] = ()

    @classmethod
    def of(cls, records, source: str, use=None, region=None, **where) -> "InputState":
        records = tuple(records)
        chosen = frozenset(range(len(records)) if use is None else use)
        return cls(records, source, chosen, tuple(region) if region else None, **where)

    def selected(self) -> list[Record]:
        """The records a job gets: used records, cut to the region. A region keeps the record's
        id and numbering (``Record.region``), so results are in the loaded record's coordinates."""
        out = []
        for index, record in enumerate(self.records):
            if index not in self.use:
                continue
            if self.region is not None:
                lo, hi = self.region
                hi = min(hi, len(record))
                if lo > hi:
                    continue  # the region lies beyond this record
                if (lo, hi) != (1, len(record)):
                    record = record.region(lo, hi)
            out.append(record)
        return out

    def total_length(self) -> int:
        return sum(len(r) for r in self.selected())


_NUMBERED_LINE = re.compile(r"^\s*\d+(\s+[A-Za-z]+)+\s*$")


def strip_numbered(text: str) -> str:
    """GenBank/EMBL sequence lines (``ORIGIN``, ``     1 gggcggcgac ctcgcgggtt ...``, ``//``)
    as bare sequence: their position numbers and spaces go. Other text is returned as it is,
    so a digit inside a sequence is still reported."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if lines and lines[0].strip().upper() in ("ORIGIN", "SQ") or (lines and lines[0].startswith("SQ ")):
        lines = lines[1:]
    if lines and lines[-1].strip() == "//":
        lines = lines[:-1]
    embl = re.compile(r"^\s*([A-Za-z]+\s+)+\d+\s*$")  # EMBL numbers its lines at the end
    if lines and (all(_NUMBERED_LINE.match(line) for line in lines)
                  or all(embl.match(line) for line in lines)):
        return re.sub(r"[\d\s]+", "", "".join(lines))
    return text


def parse_pasted(text: str, name: str = "pasted") -> list[Record]:
    """Records from pasted text: FASTA, GenBank or EMBL, or a bare sequence.

    A bare sequence may be broken over lines and spaced (white space is
    ignored), or be a GenBank ORIGIN block with its position numbers; anything
    else that is not an IUPAC code is refused with its position, as for files.
    """
    stripped = strip_numbered(text).strip()
    if not stripped:
        raise SequenceError("nothing pasted")
    fmt = ("fasta" if stripped.startswith(">") else "genbank" if stripped.startswith("LOCUS")
           else "embl" if stripped.startswith("ID ") else None)
    source = "pasted text"
    if fmt is None:
        compact = re.sub(r"\s+", "", stripped)
        try:
            return [Record(name or "pasted", encode(compact, source=source, record_id=name or "pasted"),
                           "", source)]
        except SequenceError as err:
            raise SequenceError(f"{err} (white space not counted)") from None
    from Bio import SeqIO

    records = []
    try:
        for index, seq_record in enumerate(SeqIO.parse(io.StringIO(stripped), fmt), start=1):
            raw = seq_record.id or f"{name}{index}"
            rid, description = record_id(raw), seq_record.description
            if description.startswith(raw):  # FASTA: the header repeats the id first
                description = description[len(raw):].strip()
            records.append(Record(rid, encode(str(seq_record.seq), source=source, record_id=rid),
                                  description, source))
    except SequenceError:
        raise
    except Exception as exc:  # Biopython's parse errors
        raise SequenceError(f"{source}: not valid {fmt} ({exc})") from None
    if not records:
        raise SequenceError(f"{source}: no {fmt} records found")
    return records


class PasteDialog(QDialog):
    """Paste FASTA/GenBank/EMBL text or a bare sequence; errors are shown in the dialog."""

    def __init__(self, role_title: str, parent=None):
        super().__init__(parent)
        self.setWindowTitle(f"Paste {role_title.lower()} sequence")
        self.records: list[Record] = []
        self.name = QLineEdit("pasted")
        self.name.setToolTip("Record name for a bare sequence (FASTA headers name their own records)")
        self.text = QPlainTextEdit()
        self.text.setPlaceholderText(">name\nACGT...\n\nor just the sequence; IUPAC codes allowed")
        font = self.text.font()
        font.setFamily("monospace")
        self.text.setFont(font)
        self.error = QLabel()
        self.error.setObjectName("error")
        self.error.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        row = QHBoxLayout()
        row.addWidget(QLabel("Name:"))
        row.addWidget(self.name)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.resize(560, 360)

    def _accept(self) -> None:
        try:
            self.records = parse_pasted(self.text.toPlainText(), self.name.text().strip())
        except SequenceError as err:
            self.error.setText(str(err))
            return
        self.accept()


class InputPanel(QGroupBox):
    """Records of one role. Signals ask the window to open, paste, load dropped or recent files."""

    open_requested = Signal(str)
    paste_requested = Signal(str)
    files_dropped = Signal(str, list)
    recent_requested = Signal(str, str)
    changed = Signal(str)

    def __init__(self, spec: InputSpec, recent: list[str], parent=None):
        super().__init__(spec.title, parent)
        self.spec = spec
        self.role = spec.role
        self._state = InputState()
        self._recent = list(recent)
        self.setToolTip(spec.help)
        self.setAcceptDrops(True)

        self.open_button = QToolButton()
        self.open_button.setText("Open…")
        self.open_button.setToolTip(f"Open a FASTA, GenBank or EMBL file (.gz too) as {spec.title.lower()}")
        self.open_button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        self.open_button.clicked.connect(lambda: self.open_requested.emit(self.role))
        self.recent_menu = QMenu(self)
        self.open_button.setMenu(self.recent_menu)
        paste = QPushButton("Paste…")
        paste.setToolTip("Paste a sequence or FASTA text")
        paste.clicked.connect(lambda: self.paste_requested.emit(self.role))
        self.clear_button = QPushButton("Clear")
        self.clear_button.clicked.connect(self.clear)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addWidget(paste)
        buttons.addStretch(1)
        buttons.addWidget(self.clear_button)

        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Record", "Length (bp)", "Description"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setStretchLastSection(True)
        self.tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.tree.itemChanged.connect(self._on_item_changed)

        self.region_box = QCheckBox("Only positions")
        self.region_box.setToolTip("Use only this region of each selected record (1-based, inclusive)")
        self.region_from = ClampingSpinBox()
        self.region_to = ClampingSpinBox()
        for box in (self.region_from, self.region_to):
            box.setRange(1, 1)
            box.setGroupSeparatorShown(True)
            box.setKeyboardTracking(False)
            box.valueChanged.connect(self._on_region_changed)
            box.clamped.connect(self._on_clamped)
        self._note = ""  # what the panel says about a clamped region bound
        self._clamping = False
        self.region_box.toggled.connect(self._on_region_changed)
        # The command line's form too: typing chr2:1,000-5,000 uses that record alone.
        self.region_text = QLineEdit()
        self.region_text.setPlaceholderText("or type a region: chr2:1,000-5,000")
        self.region_text.setToolTip("A region as the command line's --X-region takes it: "
                                    "RECORD:START-END uses only that record; START-END, "
                                    "those positions of each selected record (Enter applies)")
        self.region_text.returnPressed.connect(self._on_region_typed)
        region = QHBoxLayout()
        region.addWidget(self.region_box)
        region.addWidget(self.region_from, 1)
        region.addWidget(QLabel("–"))
        region.addWidget(self.region_to, 1)

        self.summary = QLabel()
        self.summary.setObjectName("summary")
        self.summary.setWordWrap(True)
        self.warning = QLabel()
        self.warning.setObjectName("error")
        self.warning.setWordWrap(True)
        self.warning.setVisible(False)
        self.paste_button = paste

        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.tree)
        layout.addLayout(region)
        layout.addWidget(self.region_text)
        layout.addWidget(self.summary)
        layout.addWidget(self.warning)
        self._refresh_recent()
        self._show_state()

    def focus_chain(self) -> list:
        """Its widgets in the order they are laid out (the window's tab order)."""
        return [self.open_button, self.paste_button, self.clear_button, self.tree, self.region_box,
                self.region_from, self.region_to, self.region_text]

    # -- state -------------------------------------------------------------------------------
    def state(self) -> InputState:
        return self._state

    def set_state(self, state: InputState) -> None:
        """Show ``state`` (model -> widgets, with the widgets' own signals blocked)."""
        self._state = state
        self._note = ""
        self._show_state()

    def set_records(self, records, source: str) -> None:
        self._state = InputState.of(records, source, use=None if self.spec.many else {0})
        self._note = ""
        self._show_state()
        self.changed.emit(self.role)

    def clear(self) -> None:
        self._state = InputState()
        self._show_state()
        self.changed.emit(self.role)

    def set_recent(self, recent: list[str]) -> None:
        self._recent = list(recent)
        self._refresh_recent()

    def _show_state(self) -> None:
        state = self._state
        self.tree.blockSignals(True)
        self.tree.clear()
        for index, record in enumerate(state.records):
            item = QTreeWidgetItem([record.id, f"{len(record):,}", record.description])
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(0, Qt.CheckState.Checked if index in state.use else Qt.CheckState.Unchecked)
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            item.setToolTip(2, record.description)
            self.tree.addTopLevelItem(item)
        self.tree.blockSignals(False)
        # As tall as its records, up to LIST_ROWS (then it scrolls): one record should not
        # leave a blank box, and eight should not push the parameters below a laptop's fold.
        row = (self.tree.sizeHintForRow(0) if state.records else 0) or \
            self.tree.fontMetrics().height() + 2
        shown = min(max(len(state.records), 1), LIST_ROWS)
        self.tree.setFixedHeight(self.tree.header().sizeHint().height() + shown * row
                                 + 2 * self.tree.frameWidth())
        if state.use:  # the first used record in view, not scrolled away below
            self.tree.scrollToItem(self.tree.topLevelItem(min(state.use)))
        longest = max((len(r) for r in state.records), default=1)
        for box in (self.region_box, self.region_from, self.region_to):
            box.blockSignals(True)
        self.region_from.setRange(1, longest)
        self.region_to.setRange(1, longest)
        if state.region is not None:
            self.region_box.setChecked(True)
            self.region_from.setValue(state.region[0])
            self.region_to.setValue(state.region[1])
        else:
            self.region_box.setChecked(False)
            self.region_from.setValue(1)
            self.region_to.setValue(longest)
        for box in (self.region_box, self.region_from, self.region_to):
            box.blockSignals(False)
        self.region_from.setEnabled(state.region is not None)
        self.region_to.setEnabled(state.region is not None)
        self.region_box.setEnabled(bool(state.records))
        self.region_text.setEnabled(bool(state.records))
        self.clear_button.setEnabled(bool(state.records))
        self._show_summary()

    def _show_summary(self) -> None:
        state = self._state
        warnings = []
        if state.skipped:
            names = ", ".join(state.skipped[:3]) + (", …" if len(state.skipped) > 3 else "")
            warnings.append(f"Skipped {len(state.skipped)} empty record(s): {names}.")
        if self._note:
            warnings.append(self._note)
        self.warning.setText(" ".join(warnings))
        self.warning.setVisible(bool(warnings))
        if not state.records:
            self.summary.setText("<i>No sequence yet. Open a file, paste, or drop a FASTA/GenBank/EMBL "
                                 "file here.</i>")
            return
        chosen = state.selected()
        source = state.source.rsplit("/", 1)[-1]
        used = f"{len(chosen)} of {len(state.records)} records" if len(state.records) > 1 else "1 record"
        if not chosen:
            self.summary.setText(f"{source}: <b>no record selected</b>")
            return
        text = f"{source}: {used}, {state.total_length():,} bp used"
        if state.region is not None:
            text += f" (positions {state.region[0]:,}–{state.region[1]:,})"
        self.summary.setText(text)

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        if not self._recent:
            action = self.recent_menu.addAction("No recent files")
            action.setEnabled(False)
            return
        for path in self._recent:
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda checked=False, p=path: self.recent_requested.emit(self.role, p))

    # -- widget -> model ---------------------------------------------------------------------
    def _on_item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        index = self.tree.indexOfTopLevelItem(item)
        checked = item.checkState(0) == Qt.CheckState.Checked
        if self.spec.many:
            use = set(self._state.use)
            use.add(index) if checked else use.discard(index)
        else:  # one record for this role: checking one unchecks the others
            use = {index} if checked else set()
        self._state = replace(self._state, use=frozenset(use))
        self.tree.blockSignals(True)  # no rebuild here: the item is still in use by Qt
        for row in range(self.tree.topLevelItemCount()):
            self.tree.topLevelItem(row).setCheckState(
                0, Qt.CheckState.Checked if row in use else Qt.CheckState.Unchecked)
        self.tree.blockSignals(False)
        self._show_summary()
        self.changed.emit(self.role)

    def _on_clamped(self, typed: int, used: int) -> None:
        longest = self.region_to.maximum()
        self._note = (f"{typed:,} is beyond the longest record ({longest:,} bp): {used:,} is used."
                      if typed > used else f"{typed:,} is below 1: {used:,} is used.")
        self._clamping = True  # the value change that follows keeps the note
        self._show_summary()

    def _on_region_changed(self, *_):
        if not self._clamping:
            self._note = ""
        self._clamping = False
        if self.region_box.isChecked():
            lo, hi = self.region_from.value(), self.region_to.value()
            if lo > hi:
                lo, hi = hi, lo
            region = (lo, hi)
        else:
            region = None
        self.region_from.setEnabled(region is not None)
        self.region_to.setEnabled(region is not None)
        self._state = replace(self._state, region=region)
        self._show_summary()
        self.changed.emit(self.role)

    def _on_region_typed(self) -> None:
        """Apply the typed region (engine.sequences.parse_region's form): a named record is
        the only one used, cut to the positions; the plain form sets the positions. A bad
        one is said in the panel and changes nothing."""
        from engine.sequences import parse_region

        state = self._state
        try:
            region = parse_region(self.region_text.text())
            use = state.use if region.record is None else region.indices(state.records)
            if not self.spec.many:
                use = set(sorted(use)[:1])
            for i in use if region.record is not None else ():
                state.records[i].region(region.start, region.end)  # a start past the end fails
        except ValueError as err:
            self._note = str(err)
            self._show_summary()
            return
        self._state = replace(state, use=frozenset(use), region=(region.start, region.end))
        self._note = ""
        self._show_state()
        self.changed.emit(self.role)

    def set_region(self, region: tuple[int, int] | None) -> None:
        self._state = replace(self._state, region=region)
        self._show_state()
        self.changed.emit(self.role)

    # -- drag and drop -----------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        paths = [url.toLocalFile() for url in event.mimeData().urls() if url.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.files_dropped.emit(self.role, paths)
