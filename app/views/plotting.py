"""pyqtgraph set-up and small helpers shared by the views."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

#: Colours used across views (colour-blind safe Okabe-Ito palette).
BLUE = "#0072B2"
ORANGE = "#E69F00"
GREEN = "#009E73"
RED = "#D55E00"
PURPLE = "#CC79A7"
SKY = "#56B4E9"
GREY = "#7f7f7f"
PALETTE = (BLUE, ORANGE, GREEN, RED, PURPLE, SKY, "#F0E442", GREY)


class SequenceBand:
    """A target's soft-masked stretches (grey) and assembly gaps (black) as a band of thick
    segments at one height under a plot's curves (app.primers.sequence_bands)."""

    MASKED, GAP = "#b0b0b0", "#000000"

    def __init__(self, plot):
        self.masked = plot.plot(pen=pg.mkPen(self.MASKED, width=5), connect="pairs")
        self.gaps = plot.plot(pen=pg.mkPen(self.GAP, width=5), connect="pairs")
        for item in (self.masked, self.gaps):
            item.setZValue(-5)

    TIP = "Band under the plot: grey, soft-masked (lower-case) stretches; black, assembly gaps"

    def show(self, record, y: float, gap_min: int | None = None) -> tuple[int, int]:
        """Draw ``record``'s band at height ``y`` (None: clear); (masked, gap) stretches drawn."""
        from app.primers import sequence_bands

        bands = sequence_bands(record, gap_min) if record is not None else (np.zeros((0, 2)),) * 2
        for item, spans in zip((self.masked, self.gaps), bands):
            xs = np.asarray(spans, dtype=float).copy()
            xs[:, 0] -= 0.5  # a base covers [p - 0.5, p + 0.5]
            xs[:, 1] += 0.5
            item.setData(xs.reshape(-1), np.full(xs.size, float(y)), connect="pairs")
        return len(bands[0]), len(bands[1])


def configure() -> None:
    """Row-major images (data[row, col], as the engine's matrices) on a white page."""
    # No antialiasing: it multiplies the cost of drawing long live curves.
    pg.setConfigOptions(imageAxisOrder="row-major", background="w", foreground="k",
                        antialias=False)


def si(value: float, unit: str) -> str:
    """``1.2e9, 'cells/s'`` -> ``'1.2 Gcells/s'``."""
    return pg.siFormat(float(value), precision=3, suffix=unit, space=True)


class GrowingSeries:
    """Columns of floats that grow by doubling (no reallocation per point)."""

    def __init__(self, columns: int, capacity: int = 256):
        self._data = np.zeros((capacity, columns))
        self.size = 0

    def append(self, *values: float) -> None:
        if self.size == self._data.shape[0]:
            grown = np.zeros((2 * self._data.shape[0], self._data.shape[1]))
            grown[:self.size] = self._data
            self._data = grown
        self._data[self.size] = values
        self.size += 1

    def column(self, index: int) -> np.ndarray:
        return self._data[:self.size, index]

    def clear(self) -> None:
        self.size = 0
