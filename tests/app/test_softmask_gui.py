"""Soft-masked repeats and gaps in the GUI (issue #28): the primer tools' *Avoid soft-masked 3′
ends* switch hides what ``primerscope kdiff --avoid-masked`` drops, the pairs view passes it to
the design, and the kdiff profile and the pairs track draw the mask and the gaps as a band."""

from __future__ import annotations

import numpy as np

from engine import kdiff
from engine.sequences import Record, load

from app import pairs as app_pairs
from tests.app.conftest import load_demo, run
from tests.app.test_pairs_view import pairs_view

K = 4


def _masked_target():
    """lambda 101-400 with two lower-case stretches and a 12-N gap."""
    lam = load("resources/demo/lambda_NC_001416.fa")[0]
    text = list(lam.text[100:400])
    for lo, hi in ((30, 45), (150, 190)):
        text[lo:hi] = [c.lower() for c in text[lo:hi]]
    text[240:252] = ["N"] * 12
    text = "".join(text)
    flags = np.array([c.islower() for c in text], dtype=np.int8)
    edges = np.flatnonzero(np.diff(flags, prepend=0, append=0))
    record = Record("lam", load(text)[0].codes, "", "test",
                    soft_mask=(edges[0::2].astype(np.int64), edges[1::2].astype(np.int64)))
    return record, text


def _band(item):
    x, _ = item.getData()
    if x is None or not len(x):
        return []
    return [(int(a + 0.5), int(b - 0.5)) for a, b in zip(x[0::2], x[1::2])]


def test_mask_switch_hides_what_avoid_masked_drops_and_the_band(qtbot, window):
    record, text = _masked_target()
    load_demo(qtbot, window, "lambda-ecoli")
    window.input_panels["target"].set_records([record], "test")
    window.input_panels["background"].set_region((1, 30_000))
    window.params.set_selection(variant="bitparallel", backend="serial")
    window.params.set_param("k", K)
    window.params.set_param("strands", "both")
    tools = window.results.tools
    tools.mask_box.setChecked(False)
    with qtbot.waitSignal(tools.annotated, timeout=120_000):
        result = run(qtbot, window)
    inputs = window.inputs()
    want = kdiff.solve(inputs["target"], inputs["background"], K, backend="serial",
                       avoid_masked=True)
    shown = lambda: [(c.target_id, c.start) for c in tools.kept()]  # noqa: E731
    assert len(shown()) == len(result.candidates)
    tools.mask_box.setChecked(True)
    assert shown() == [(c.target_id, c.start) for c in want.candidates]
    assert 0 < len(shown()) < len(result.candidates)
    proxy = window.results.proxy
    assert proxy.rowCount() == len(want.candidates)
    tools.mask_box.setChecked(False)
    assert proxy.rowCount() == len(result.candidates)

    from app.views.kdiff import SpecificityView

    profile = window.findChildren(SpecificityView)[0]
    assert _band(profile.band.masked) == [(31, 45), (151, 190)]
    assert _band(profile.band.gaps) == [(241, 252)]


def test_pairs_view_avoid_masked_and_band(qtbot, window):
    record, text = _masked_target()
    view = pairs_view(window)
    load_demo(qtbot, window, "lambda-ecoli")
    window.input_panels["target"].set_records([record], "test")
    window.input_panels["background"].set_region((1, 30_000))
    window.params.set_param("k", 3)
    view.set_values({"product_ranges": "100-200", "num_return": 3, "avoid_masked": True})
    assert view.values()["avoid_masked"] and app_pairs.settings_from(view.values()).avoid_masked
    with qtbot.waitSignal(view.designed, timeout=600_000):
        assert view.run(), view.error.text()
    assert view.result.settings.avoid_masked
    for p in view.result.pairs:
        left = text[p.left.end - 5:p.left.end]
        right = text[p.right.start - 1:p.right.start + 4]
        assert left == left.upper() and right == right.upper()
    assert _band(view.band.masked) == [(31, 45), (151, 190)]
    assert _band(view.band.gaps) == [(241, 252)]
