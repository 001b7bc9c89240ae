"""Summaries of repeated runs: median and spread, ratios against a baseline, the printed table.

Every figure is a set of runs of the product paired with runs of a baseline taken in the same
process, interleaved (product, baseline, product, …) so that a machine that slows down halfway
slows both. The ratio is computed per pair, then summarised, so one noisy run shows up as
spread instead of silently skewing the median.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Figure", "Spread", "percentile", "render"]

Better = Literal["lower", "higher"]


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile (``q`` in 0–100) of a non-empty sample."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


@dataclass(frozen=True, slots=True)
class Spread:
    """The median of several runs and their range (min–max)."""

    median: float
    low: float
    high: float
    runs: int

    @classmethod
    def of(cls, samples: Sequence[float]) -> Spread:
        if not samples:
            raise ValueError("no runs to summarise")
        return cls(statistics.median(samples), min(samples), max(samples), len(samples))

    def show(self, digits: int = 1) -> str:
        if self.low == self.high:
            return f"{self.median:,.{digits}f}"
        return f"{self.median:,.{digits}f} ({self.low:,.{digits}f}–{self.high:,.{digits}f})"


@dataclass
class Figure:
    """One measured figure: the product's runs, the baseline's runs, and what we aim for.

    ``better`` says which direction is good for the unit (latency: lower, throughput: higher);
    the ratio is always "how many times worse than the baseline", so 1.0 is parity and a
    ratio under the target's bound meets it.
    """

    name: str
    unit: str
    better: Better
    product: list[float] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)
    target_ratio: float | None = None
    target_below: float | None = None  # an absolute bound on the measured median, in ``unit``
    target_at_least: float | None = None  # an absolute floor for the measured median
    note: str = ""
    digits: int = 1

    def add(self, product: float, baseline: float | None = None) -> None:
        self.product.append(product)
        if baseline is not None:
            self.baseline.append(baseline)

    def baseline_summary(self) -> str:
        return Spread.of(self.baseline).show(self.digits) if self.baseline else "—"

    @property
    def ratios(self) -> list[float]:
        pairs = zip(self.product, self.baseline, strict=False)
        if self.better == "lower":
            return [p / b for p, b in pairs if b > 0]
        return [b / p for p, b in pairs if p > 0]

    def ratio(self) -> Spread | None:
        ratios = self.ratios
        return Spread.of(ratios) if ratios else None

    def verdict(self) -> str:
        if self.target_at_least is not None:
            return "met" if Spread.of(self.product).median >= self.target_at_least else "MISSED"
        if self.target_below is not None:
            return "met" if Spread.of(self.product).median < self.target_below else "MISSED"
        ratio = self.ratio()
        if self.target_ratio is None or ratio is None:
            return "—"
        return "met" if ratio.median <= self.target_ratio else "MISSED"

    def row(self) -> list[str]:
        ratio = self.ratio()
        return [
            self.name,
            f"{Spread.of(self.product).show(self.digits)} {self.unit}",
            f"{Spread.of(self.baseline).show(self.digits)} {self.unit}" if self.baseline else "—",
            f"{ratio.show(2)}×" if ratio else "—",
            self._target(),
            self.verdict(),
            str(len(self.product)),
        ]

    def _target(self) -> str:
        if self.target_at_least is not None:
            return f"≥ {self.target_at_least:,.0f} {self.unit}"
        if self.target_below is not None:
            return f"< {self.target_below:,.0f} {self.unit}"
        return f"≤ {self.target_ratio}×" if self.target_ratio is not None else "—"


_HEADER = ["figure", "measured: median (min–max)", "baseline", "ratio", "target", "", "runs"]


def render(figures: Sequence[Figure]) -> str:
    """A Markdown table of the figures (also readable as plain text)."""
    rows = [_HEADER, ["---"] * len(_HEADER), *(figure.row() for figure in figures)]
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    notes = [f"- {figure.name}: {figure.note}" for figure in figures if figure.note]
    return "\n".join(lines + (["", *notes] if notes else []))
