"""File ▸ Save/Open workspace: the loaded inputs, regions, family and parameters as JSON.

A workspace names files by path (they are read again when it is opened), demo data sets by
name, and keeps pasted sequences inline. Pages with inputs of their own (the Group page's
genome lists and fields) are kept under ``views``, by the page's title. The window saves the last workspace when it closes;
with *Restore the last workspace on start* ticked, the next start opens it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from engine.output import write_text
from engine.sequences import Record, encode

from app.inputs import InputState

VERSION = 1
LAST_KEY = "workspace/last"
RESTORE_KEY = "workspace/restore_on_start"
FILTER = "primerscope workspace (*.json);;All files (*)"


def _role_entry(state: InputState) -> dict | None:
    if not state.records:
        return None
    entry = {"use": sorted(state.use), "region": list(state.region) if state.region else None}
    if state.files:
        entry["files"] = list(state.files)
    elif state.demo:
        entry["demo"] = state.demo
    else:  # pasted: the sequences themselves
        entry["records"] = [[r.id, r.text, r.description] for r in state.records]
        entry["source"] = state.source
    return entry


def capture(window) -> dict:
    """The window's workspace as plain JSON data."""
    family = window.params.family
    inputs = {}
    for role, panel in window.input_panels.items():
        entry = _role_entry(panel.state())
        if entry is not None:
            inputs[role] = entry
    views = {view.title: view.workspace_state() for view in window.family_views
             if hasattr(view, "workspace_state")}
    return {"primerscope_workspace": VERSION, "family": family,
            "params": window.params.state(), "inputs": inputs, "views": views}


def apply(window, data: dict, quiet: bool = False) -> list[str]:
    """Open a workspace: family, parameters, then inputs (files load off the GUI thread).
    Returns what could not be restored (also shown in the status bar)."""
    problems: list[str] = []
    if not isinstance(data, dict) or data.get("primerscope_workspace") != VERSION:
        problems.append("not a primerscope workspace (or one from a newer version)")
        window.state_label.setText("Workspace not opened: " + problems[0] + ".")
        return problems
    family = data.get("family")
    if family not in window.params.families:
        problems.append(f"unknown family {family!r}")
        family = window.params.family
    window.params.set_family(family)
    if isinstance(data.get("params"), dict):
        window.params.restore_state(family, data["params"])
    demos: dict[str, dict[str, tuple]] = {}
    for role, entry in (data.get("inputs") or {}).items():
        if role not in window.input_panels or not isinstance(entry, dict):
            problems.append(f"input {role!r} does not belong to {family}")
            continue
        use = entry.get("use")
        region = tuple(entry["region"]) if entry.get("region") else None
        if entry.get("files"):
            files = [str(p) for p in entry["files"]]
            missing = [p for p in files if not os.path.exists(p)]
            if missing:
                problems.append("missing " + ", ".join(missing))
                continue
            window.load_files(role, files, use=use, region=region)
        elif entry.get("demo"):
            demos.setdefault(entry["demo"], {})[role] = (use, region)
        elif entry.get("records"):
            try:
                records = [Record(rid, encode(seq, source="workspace", record_id=rid), desc, "workspace")
                           for rid, seq, desc in entry["records"]]
            except (ValueError, TypeError) as err:
                problems.append(f"input {role!r}: {err}")
                continue
            window.input_panels[role].set_state(
                InputState.of(records, entry.get("source", "pasted text"), use, region))
            window.input_panels[role].changed.emit(role)
    for dataset, overrides in demos.items():
        window.load_demo(dataset, overrides)
    views = data.get("views") or {}
    for title, state in (views.items() if isinstance(views, dict) else ()):
        view = window.view_titled(title)
        if view is None or not hasattr(view, "restore_workspace"):
            problems.append(f"the {title!r} page does not belong to {family}")
            continue
        problems += view.restore_workspace(state)
    text = "Workspace opened." if not problems else "Workspace opened, except: " + "; ".join(problems) + "."
    window.state_label.setText(text)
    if problems and not quiet:
        window.show_error("Workspace opened in part", "; ".join(problems))
    return problems


def save(window, path: str) -> None:
    write_text(path, json.dumps(capture(window), indent=1) + "\n")


def save_dialog(window) -> str | None:
    start = os.path.join(window.settings.value("last_dir", str(Path.home())), "workspace.json")
    path, _ = QFileDialog.getSaveFileName(window, "Save workspace", start, FILTER)
    if not path:
        return None
    try:
        save(window, path)
    except (OSError, ValueError) as err:
        window.show_error("Cannot save the workspace", f"{path}: {getattr(err, 'strerror', None) or err}")
        return None
    window.state_label.setText(f"Workspace saved to {path}.")
    return path


def open_path(window, path: str) -> list[str]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as err:
        window.show_error("Cannot open the workspace", f"{path}: {getattr(err, 'strerror', None) or err}")
        return [str(err)]
    return apply(window, data)


def open_dialog(window) -> None:
    start = window.settings.value("last_dir", str(Path.home()))
    path, _ = QFileDialog.getOpenFileName(window, "Open workspace", start, FILTER)
    if path:
        open_path(window, path)
