"""The figures of the results page: success per level, performance profiles and the mixing-ratio curve.

One panel per algorithm, since a reader compares the data variants of one algorithm (real only, with imaginary
rollouts, the oracle) far more often than algorithms on one variant; a variant keeps its colour in every panel.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from imaginebench.levels import IMAGINED_LEVELS, LEVELS
from imaginebench.plotting import headless_pyplot
from imaginebench.run_groups import MixingCurve, Run, mean_and_interval, task_scores, variant_labels

FIRST_AND_LAST = {"real": 0, "oracle": 2}
"""Bars and lines of a panel: real only first, the oracle last, every other variant between, by name."""


def algorithm_panels(groups: dict[str, list[Run]]) -> list[tuple[str, dict[str, str]]]:
    """``(algorithm, {group: variant label})`` per algorithm, groups in reading order."""
    by_algorithm: dict[str, list[str]] = {}
    for group, members in groups.items():
        by_algorithm.setdefault(members[0].results["algorithm"], []).append(group)
    panels = []
    for algorithm, names in by_algorithm.items():
        labels = variant_labels(names)
        ordered = sorted(names, key=lambda name: (FIRST_AND_LAST.get(labels[name], 1), labels[name]))
        panels.append((algorithm, {name: labels[name] for name in ordered}))
    return panels


def _colours(panels: list[tuple[str, dict[str, str]]]) -> dict[str, Any]:
    """One colour per variant label across every panel of a figure."""
    import matplotlib

    labels = sorted({label for _, labels in panels for label in labels.values()})
    palette = matplotlib.colormaps["tab20"].colors
    return {label: palette[index % len(palette)] for index, label in enumerate(labels)}


def _panel_grid(plt: Any, count: int, height: float) -> tuple[Any, list[Any]]:
    figure, axes = plt.subplots(count, 1, figsize=(11, height * count), squeeze=False)
    return figure, list(axes[:, 0])


def _success_stats(members: list[Run], level: str) -> tuple[float, float | None]:
    """Success (%) at ``level``: mean and 95 % half-width over seeds; NaN where a seed did not evaluate it (no bar
    or point, as the table shows "–")."""
    if not all(level in m.results["levels"] for m in members):
        return math.nan, None
    return mean_and_interval([100 * m.results["levels"][level]["success_rate"] for m in members])


def plot_runs(groups: dict[str, list[Run]], path: Path) -> None:
    """Success per level with 95 % intervals: a panel per algorithm, a bar per data variant."""
    plt = headless_pyplot()
    panels = algorithm_panels(groups)
    colours = _colours(panels)
    figure, axes = _panel_grid(plt, len(panels), 3.0)
    for axis, (algorithm, labels) in zip(axes, panels):
        width = 0.8 / len(labels)
        for index, (group, label) in enumerate(labels.items()):
            stats = [_success_stats(groups[group], level) for level in LEVELS]
            axis.bar(
                [k + index * width for k in range(len(LEVELS))],
                [mean for mean, _ in stats],
                width,
                yerr=[half or 0.0 for _, half in stats],
                label=label,
                color=colours[label],
                capsize=2,
            )
        axis.set_xticks([k + 0.4 - width / 2 for k in range(len(LEVELS))], LEVELS)
        axis.set_ylabel("success (%)")
        axis.set_ylim(0, 100)
        axis.set_title(algorithm, fontsize=10, loc="left")
        axis.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def plot_profiles(groups: dict[str, list[Run]], path: Path) -> bool:
    """Performance profiles (Agarwal et al., 2021): per group, the fraction of its (seed, task) runs over the novel
    levels whose success exceeds τ, for τ from 0 to 1, a panel per algorithm. ``False`` (no plot) when no group has
    per-task figures."""
    scores = {group: _novel_task_scores(members) for group, members in groups.items()}
    panels = [
        (algorithm, {group: label for group, label in labels.items() if scores[group]})
        for algorithm, labels in algorithm_panels(groups)
    ]
    panels = [(algorithm, labels) for algorithm, labels in panels if labels]
    if not panels:
        return False
    plt = headless_pyplot()
    colours = _colours(panels)
    thresholds = np.linspace(0.0, 1.0, 101)
    figure, axes = _panel_grid(plt, len(panels), 2.8)
    for axis, (algorithm, labels) in zip(axes, panels):
        for group, label in labels.items():
            pooled = np.concatenate([s.ravel() for s in scores[group]])
            axis.plot(thresholds, [(pooled > tau).mean() for tau in thresholds], label=label, color=colours[label])
        axis.set_ylabel("runs above τ")
        axis.set_title(algorithm, fontsize=10, loc="left")
        axis.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    axes[-1].set_xlabel("success threshold τ (tasks of the novel levels)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True


def _novel_task_scores(members: list[Run]) -> list[np.ndarray] | None:
    scores = [task_scores(members, level) for level in IMAGINED_LEVELS]
    return None if any(s is None for s in scores) else scores


def plot_mixing(groups: dict[str, list[Run]], curves: list[MixingCurve], path: Path) -> None:
    """Success per level against the real fraction of each batch, 95 % intervals, a panel per curve."""
    plt = headless_pyplot()
    figure, axes = plt.subplots(1, len(curves), figsize=(6 * len(curves), 4), squeeze=False)
    for axis, curve in zip(axes[0], curves):
        fractions = [fraction for fraction, _ in curve.points]
        for level in LEVELS:
            stats = [_success_stats(groups[group], level) for _, group in curve.points]
            axis.errorbar(
                fractions,
                [mean for mean, _ in stats],
                yerr=[half or 0.0 for _, half in stats],
                marker="o",
                capsize=3,
                label=level,
            )
        axis.set_xlabel("real fraction of each batch")
        axis.set_ylabel("success (%)")
        axis.set_ylim(0, 100)
        axis.set_title(curve.description, fontsize=8, loc="left", wrap=True)
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
