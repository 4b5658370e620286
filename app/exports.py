"""Exports from the window: the results CSV, selected rows, alignments, a picture of a tab.

Every file goes through :mod:`engine.output` (atomic for regular files, new files 0666 minus
the umask), never ``open(path, "w")``.

- *Export results as CSV* writes all rows exactly as ``primerscope <family> ... -o OUT.csv``
  does (the family's own writer), or the rows the table shows: the filters applied, in the
  table's order, with every column it shows (annotations included).
- A picture of a tab is the whole tab as shown (all its plots in one picture), as PNG at twice
  the screen resolution or as SVG drawn by Qt's own SVG generator (pyqtgraph 0.14's SVG
  exporter fails under PySide6 6.11 on every plot).
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QObject, QPoint, QRect
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QFileDialog, QWidget

from engine.output import open_output, write_text
from engine.spreadsheet import spreadsheet_cell

PICTURE_FILTER = "PNG image (*.png);;SVG image (*.svg)"


#: Excel reads a CSV file as UTF-8 only when it starts with this mark.
BOM = "\ufeff"


def _cell(value):
    """A value as the command line writes it: floats to two decimals (Primer3's annotations,
    ``engine.primers.export_kdiff.annotation_cells``), not their 16 digits; None as empty."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    return value


def user_text_columns(columns) -> set[int]:
    """The indices of a table's ``columns`` marked ``user_text`` (ids, names: text from a
    FASTA header or a person), whose cells get the spreadsheet escape."""
    return {i for i, column in enumerate(columns) if column.user_text}


def rows_tsv(titles, rows, columns) -> str:
    """Table rows as the clipboard takes them: tab-separated, values as the table holds them,
    the user-text cells escaped as the CSV's are (a spreadsheet runs a pasted ``=...`` too)."""
    escaped = user_text_columns(columns)
    lines = ["\t".join(titles)] + ["\t".join("" if v is None else
                                              str(spreadsheet_cell(v) if i in escaped else v)
                                              for i, v in enumerate(row)) for row in rows]
    return "\n".join(lines) + "\n"


def names_tsv(named) -> str:
    """(name, sequence) pairs as the primer copies put them on the clipboard: one
    "name<TAB>sequence" line each, the name escaped as the CSVs' names are."""
    return "".join(f"{spreadsheet_cell(name)}\t{sequence}\n" for name, sequence in named)


def rows_csv(titles, rows, columns) -> str:
    """CSV text of table rows, values as the command line writes them, with a byte-order
    mark when the text is not ASCII (Excel would show "Â°C" for "°C"). The cells of
    ``columns`` (the table's) marked ``user_text`` get the spreadsheet escape, as the
    command line's ids do."""
    escaped = user_text_columns(columns)
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(titles)
    writer.writerows(tuple(spreadsheet_cell(_cell(v)) if i in escaped else _cell(v)
                           for i, v in enumerate(row)) for row in rows)
    text = buf.getvalue()
    return text if text.isascii() else BOM + text


class _HeaderRead(Exception):
    """The first line has been written: stop the writer."""


class _FirstLine:
    """A file that keeps what is written up to the first newline, then stops the writer (a
    family's CSV header without writing its million rows)."""

    def __init__(self):
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        if "\n" in self.text:
            raise _HeaderRead
        return len(text)


def cli_header(adapter, result) -> list[str]:
    """The column names of ``primerscope <family> ... -o OUT.csv`` for this result."""
    fh = _FirstLine()
    try:
        adapter.export().write_csv(result, fh, **adapter.export_options())
    except _HeaderRead:
        pass
    line = fh.text.split("\n", 1)[0]
    return next(csv.reader([line]), []) if line else []


def cli_names(titles, adapter, result, base_columns) -> list[str]:
    """The table's column titles as the command line names them: the family's own columns
    by position (when the counts agree), and the primer tools' (annotations, merged regions)
    as ``engine.primers.export_kdiff`` names them. A title without a CLI twin stays as it is."""
    from engine.primers.export_kdiff import REGION_COLUMNS
    from engine.primers import Annotation

    from app import primers

    names = dict(zip((c.title for c in primers.ANNOTATION_COLUMNS), Annotation.COLUMNS))
    if [c.title for c in base_columns] == [c.title for c in primers.REGION_COLUMNS]:
        names.update(zip((c.title for c in base_columns), REGION_COLUMNS))
    else:
        header = cli_header(adapter, result) if result is not None else []
        if len(header) >= len(base_columns):
            names.update(zip((c.title for c in base_columns), header))
    return [names.get(title, title) for title in titles]


def picture_bytes(widget: QWidget, svg: bool, title: str = "") -> bytes:
    """The widget as drawn on screen, as PNG (2x) or SVG bytes."""
    size = widget.size()
    if svg:
        from PySide6.QtSvg import QSvgGenerator

        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        generator = QSvgGenerator()
        generator.setOutputDevice(buffer)
        generator.setSize(size)
        generator.setViewBox(QRect(0, 0, size.width(), size.height()))
        generator.setTitle(title)
        generator.setDescription("primerscope")
        painter = QPainter(generator)
        widget.render(painter, QPoint())
        painter.end()
        buffer.close()
        return bytes(data.data())
    image = QImage(size * 2, QImage.Format.Format_ARGB32)
    image.setDevicePixelRatio(2.0)
    image.fill(widget.palette().window().color())
    painter = QPainter(image)
    widget.render(painter, QPoint())
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return bytes(data.data())


class Exports(QObject):
    """The window's export actions (``host`` is the main window)."""

    def __init__(self, host):
        super().__init__(host)
        self.host = host

    # -- helpers ---------------------------------------------------------------------------------
    def ask_path(self, title: str, name: str, pattern: str) -> str | None:
        settings = self.host.settings
        start = os.path.join(settings.value("last_export_dir", str(Path.home())), name)
        path, _ = QFileDialog.getSaveFileName(self.host, title, start, pattern)
        return path or None

    def write(self, path: str, text: str | bytes, what: str) -> bool:
        try:
            if isinstance(text, bytes):
                with open_output(path, "wb") as fh:
                    fh.write(text)
            else:
                write_text(path, text)
        except (OSError, ValueError) as err:
            reason = getattr(err, "strerror", None) or err
            self.host.show_error(f"Cannot write the {what}", f"{path}: {reason}")
            return False
        self.host.settings.setValue("last_export_dir", os.path.dirname(os.path.abspath(path)))
        return True

    def save_text(self, text: str, title: str, name: str, pattern: str,
                  path: str | None = None) -> str | None:
        """Write a view's file (pairs CSV/BED, panel CSV), asking where unless ``path`` is given."""
        path = path or self.ask_path(title, name, pattern)
        if not path or not self.write(path, text, "file"):
            return None
        self.host.state_label.setText(f"Wrote {path}.")
        return path

    # -- results ---------------------------------------------------------------------------------
    def export_csv(self, path: str | None = None, rows: str | None = None) -> str | None:
        """Write the results as CSV: ``rows`` 'all' (the CLI's file) or 'shown' (the table as
        filtered and sorted, every shown column); None asks when the two differ."""
        host = self.host
        view = host.current_view()
        if view is not None and getattr(view, "exportable", lambda: False)():  # the Pairs tab
            return self.save_text(view.results_csv(), "Export results as CSV",
                                  f"{view.title.lower()}.csv", "CSV files (*.csv);;All files (*)", path)
        result = host.controller.result
        if result is None:
            return None
        panel = host.results
        if rows is None:
            rows = "all"
            if panel.proxy.active() or panel.model.computed:
                shown, total = panel.proxy.rowCount(), panel.model.total
                rows = host.choose(
                    "Export results as CSV",
                    f"The table shows {shown:,} of {total:,} rows"
                    + (" with annotation columns" if panel.model.computed else "") + ".",
                    {"shown": f"Shown rows ({shown:,}, the table's columns)",
                     "all": f"All rows ({total:,}, as the command line writes them)"})
                if rows is None:
                    return None
        if path is None:
            path = self.ask_path("Export results as CSV", f"{host.params.family}-results.csv",
                                  "CSV files (*.csv);;All files (*)")
            if not path:
                return None
        if rows == "shown":
            titles, table = panel.table_rows()
            titles = cli_names(titles, host.adapter, result, panel.model.columns)
            text, count = rows_csv(titles, table, panel.model.all_columns()), len(table)
        else:
            text, count = host.adapter.csv_text(result), None
        if not self.write(path, text, "CSV file"):
            return None
        what = f"{count:,} shown rows" if count is not None else host.adapter.summary(result)
        host.state_label.setText(f"Exported {what} to {path}.")
        return path

    def export_selection(self, path: str | None = None) -> str | None:
        """The selected table rows as CSV, with the table's columns."""
        host = self.host
        titles, table = host.results.table_rows(selected=True)
        if not table:
            return None
        titles = cli_names(titles, host.adapter, host.controller.result, host.results.model.columns)
        path = path or self.ask_path("Export selected rows", f"{host.params.family}-selection.csv",
                                      "CSV files (*.csv);;All files (*)")
        columns = host.results.model.all_columns()
        if not path or not self.write(path, rows_csv(titles, table, columns), "CSV file"):
            return None
        host.state_label.setText(f"Exported {len(table):,} selected rows to {path}.")
        return path

    def export_table(self, model, name: str, path: str | None = None) -> str | None:
        """Every row of a view's own table (the off-target sites) as CSV."""
        titles = [c.title for c in model.columns]
        table = model.rows()
        if not table:
            return None
        path = path or self.ask_path("Export table", name, "CSV files (*.csv);;All files (*)")
        if not path or not self.write(path, rows_csv(titles, table, model.columns), "CSV file"):
            return None
        self.host.state_label.setText(f"Exported {len(table):,} rows to {path}.")
        return path

    # -- alignments ------------------------------------------------------------------------------
    def alignment_text(self) -> str:
        """The result's alignments, then those the views show for the selected row."""
        host, parts = self.host, []
        controller = host.controller
        if controller.result is not None:
            parts.append(host.adapter.alignment_text(controller.result, controller.job))
        parts += [view.alignment_text() for view in host.family_views]
        return "\n\n".join(p for p in parts if p)

    def export_alignments(self, path: str | None = None) -> str | None:
        text = self.alignment_text()
        if not text:
            self.host.show_error("No alignment to export", "Run a job (or select a candidate) first.")
            return None
        path = path or self.ask_path("Export alignments", f"{self.host.params.family}-alignments.txt",
                                      "Text files (*.txt);;All files (*)")
        if not path or not self.write(path, text + "\n", "file"):
            return None
        self.host.state_label.setText(f"Alignments written to {path}.")
        return path

    # -- pictures --------------------------------------------------------------------------------
    def save_picture(self, path: str | None = None) -> str | None:
        """One picture of the current tab (all of its plots), PNG or SVG by the file's suffix."""
        host = self.host
        view = host.current_view()
        if view is None or view.is_empty():
            host.show_error("Nothing to save", "This tab shows nothing yet: run a job first.")
            return None
        name = f"{host.params.family}-{view.title.lower().replace(' ', '-')}.png"
        path = path or self.ask_path("Save a picture of the tab", name, PICTURE_FILTER)
        if not path:
            return None
        svg = path.lower().endswith(".svg")
        if not svg and not path.lower().endswith(".png"):
            path += ".png"
        data = picture_bytes(view, svg, f"primerscope {host.params.family}: {view.title}")
        if not self.write(path, data, "picture"):
            return None
        host.state_label.setText(f"Saved the {view.title} tab to {path}.")
        return path
