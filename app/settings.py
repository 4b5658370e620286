"""QSettings helpers: structured values are stored as JSON text, which every backend
(registry, plist, ini) keeps as it is."""

from __future__ import annotations

import json

from PySide6.QtCore import QSettings


def load_json(settings: QSettings, key: str, default):
    raw = settings.value(key, "")
    if not raw:
        return default
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        return default


def save_json(settings: QSettings, key: str, value) -> None:
    settings.setValue(key, json.dumps(value))
