"""docs/errors.md lists every message a user can see, with its cause and fix; this test keeps
it in step with the code (issue #14, "Must hold").

The messages are read from the source: the first argument of every ``raise X("...")``
(f-strings as written, ``{expression}`` and all), of every ``SomethingWarning("...")``, every
``print("primerscope: error|warning|...")`` and every ``MESSAGE = "primerscope: ..."``, in
engine/ (but the test oracles, reference.py), app/main.py, app/launcher.py, app/desktop.py and
benchmarks/__init__.py. Each must be a row of docs/errors.md, and each row must still be in
the code. After changing messages, run

    python -m tests.reliability.test_errors_doc --update

which adds the new messages (under "Not yet sorted", cause and fix TODO) and drops the stale
ones; then write their cause and fix and move them to their section.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "errors.md"
SOURCES = ["engine/**/*.py", "app/main.py", "app/launcher.py", "app/desktop.py",
           "benchmarks/__init__.py"]
NOT_USER_FACING = {"AssertionError"}  # test oracles' checks
SHOWN_PRINTS = ("primerscope: error", "primerscope: warning", "primerscope: run failed",
                "primerscope: screenshot failed", "primerscope: interrupted")
ROW = re.compile(r"^\| `(?P<message>.+?)` \| (?P<cause>.*?) \| (?P<fix>.*?) \|\s*$")
UNSORTED = "## Not yet sorted"


def _render(node) -> str | None:
    """A message as written in the source: literal text, and ``{expression}`` for each
    formatted value (with its !r and :spec)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.JoinedStr):
        return None
    out = []
    for part in node.values:
        if isinstance(part, ast.Constant):
            out.append(part.value)
            continue
        conversion = {-1: "", ord("s"): "!s", ord("r"): "!r", ord("a"): "!a"}[part.conversion]
        spec = ":" + _render(part.format_spec) if part.format_spec is not None else ""
        out.append("{" + ast.unparse(part.value) + conversion + spec + "}")
    return "".join(out)


def _name(func) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def code_messages() -> dict[str, str]:
    """Every user-visible message in the source -> the first place it is raised."""
    found: dict[str, str] = {}
    files = sorted({p for pattern in SOURCES for p in ROOT.glob(pattern)})
    for path in files:
        if path.name == "reference.py":
            continue
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            message = None
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
                if _name(node.exc.func) not in NOT_USER_FACING:
                    message = _render(node.exc.args[0])
            elif isinstance(node, ast.Call) and node.args:
                name = _name(node.func)
                if name.endswith("Warning") and name != "warn":
                    message = _render(node.args[0])
                elif name == "print":
                    text = _render(node.args[0])
                    if text and text.startswith(SHOWN_PRINTS):
                        message = text
            elif isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "MESSAGE" for t in node.targets):
                message = _render(node.value)
            if message:
                found.setdefault(message, f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def doc_rows(text: str) -> dict[str, tuple[str, str]]:
    rows = {}
    for line in text.splitlines():
        match = ROW.match(line)
        if match:
            rows[match["message"].replace("\\|", "|")] = (match["cause"], match["fix"])
    return rows


def _cell(message: str) -> str:
    return "`" + message.replace("|", "\\|") + "`"


def test_every_message_is_documented():
    missing = sorted(set(code_messages()) - set(doc_rows(DOC.read_text())))
    assert not missing, ("messages missing from docs/errors.md (python -m "
                         "tests.reliability.test_errors_doc --update adds them):\n"
                         + "\n".join(f"{code_messages()[m]}: {m}" for m in missing))


def test_every_documented_message_is_in_the_code():
    stale = sorted(set(doc_rows(DOC.read_text())) - set(code_messages()))
    assert not stale, "rows of docs/errors.md no longer in the code:\n" + "\n".join(stale)


def test_every_message_has_a_cause_and_a_fix():
    rows = doc_rows(DOC.read_text())
    empty = [m for m, (cause, fix) in rows.items()
             if not cause.strip() or not fix.strip() or "TODO" in cause + fix]
    assert not empty, "rows of docs/errors.md without a cause or a fix:\n" + "\n".join(empty)


def test_the_exit_statuses_are_documented():
    text = DOC.read_text()
    for status in ("| 0 |", "| 1 |", "| 2 |", "| 130 |", "| 141 |", "| 143 |"):
        assert status in text


def update() -> None:
    """Add the new messages under "Not yet sorted" (cause and fix TODO) and drop stale rows."""
    text = DOC.read_text()
    code = code_messages()
    documented = doc_rows(text)
    kept = [line for line in text.splitlines()
            if not (ROW.match(line) and ROW.match(line)["message"].replace("\\|", "|") not in code)]
    new = [m for m in code if m not in documented]
    if new:
        if UNSORTED not in kept:
            kept += ["", UNSORTED, "", "| Message | Cause | Fix |", "|---|---|---|"]
        at = len(kept)
        kept[at:at] = [f"| {_cell(m)} | TODO ({code[m]}) | TODO |" for m in new]
    DOC.write_text("\n".join(kept).rstrip() + "\n")
    print(f"docs/errors.md: {len(new)} added, {len(set(documented) - set(code))} dropped")


if __name__ == "__main__":
    if sys.argv[1:] == ["--update"]:
        update()
    else:
        print(__doc__)
