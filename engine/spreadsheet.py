"""Text cells of the CSVs a spreadsheet may open (OWASP: CSV injection).

A record id comes from a FASTA header, a name from whoever typed it: ``=HYPERLINK(...)``
or ``-cmd`` in a cell runs as a formula in Excel or LibreOffice. Every CSV writer gives its
cells of such text (ids, names, descriptions; never numbers or fixed words such as a strand
``-``) a leading ``'`` where a spreadsheet would take them for a formula; the readers take
it off again, so a file reads back unchanged. Here, below the families and the primer
tools, so that every writer uses the one rule.
"""

from __future__ import annotations

#: Cells a spreadsheet would read as a formula (OWASP: CSV injection).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _formula_like(text: str) -> bool:
    """A spreadsheet would run it, or it is such a cell already quoted (so that quoting
    stays reversible: ``'=`` typed by a user is written ``''=``)."""
    return text.startswith(_FORMULA_START) or (text.startswith("'") and _formula_like(text[1:]))


def spreadsheet_cell(value):
    """A text cell as a spreadsheet-bound CSV writes it: with a leading ``'`` when a
    spreadsheet would take it for a formula. Numbers are left alone."""
    if isinstance(value, str) and _formula_like(value):
        return "'" + value
    return value


def unquoted_cell(text: str) -> str:
    """What :func:`spreadsheet_cell` wrote, read back: its ``'`` removed."""
    if text.startswith("'") and _formula_like(text[1:]):
        return text[1:]
    return text


def spreadsheet_row(row) -> tuple:
    """A CSV row whose first cell is an id (a target or record id), as a spreadsheet-bound
    CSV writes it: that cell escaped (:func:`spreadsheet_cell`), the rest as they are."""
    return (spreadsheet_cell(row[0]), *row[1:])
