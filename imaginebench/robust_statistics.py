"""Aggregates over tasks and seeds in the manner of Agarwal et al. (2021), "Deep Reinforcement Learning at the Edge
of the Statistical Precipice": the interquartile mean (IQM), the probability of improvement, and stratified
bootstrap confidence intervals (runs resampled within each task).

Written here rather than taken from ``rliable``: with rliable 1.2.0 on arch 7.2 two bootstraps with the same
``random_state`` gave different intervals, and the results page must regenerate bit for bit from the stored files
(``tests/test_results_page.py``). These few lines are seeded with a numpy ``Generator`` instead.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.stats import trim_mean

Scores = np.ndarray
"""``(..., runs, tasks)``: one score per seed and task, with any leading batch axes (bootstrap resamples)."""


def interquartile_mean(scores: Scores) -> np.ndarray:
    """The mean of the middle 50 % of all run-task scores: robust to outlier runs, less noisy than the median."""
    scores = np.asarray(scores, dtype=float)
    return trim_mean(scores.reshape(*scores.shape[:-2], -1), proportiontocut=0.25, axis=-1)


def probability_of_improvement(x: Scores, y: Scores) -> np.ndarray:
    """P(X > Y) averaged over tasks: per task, the chance a random run of X beats a random run of Y (ties 1/2),
    i.e. the Mann-Whitney U statistic over ``runs_x × runs_y``."""
    a, b = x[..., :, None, :], y[..., None, :, :]
    return np.mean((a > b) + 0.5 * (a == b), axis=(-3, -2)).mean(-1)


def stratified_resamples(scores: Scores, reps: int, rng: np.random.Generator) -> Scores:
    """``(reps, runs, tasks)``: the runs of each task drawn with replacement, independently per task."""
    runs, tasks = scores.shape
    return scores[rng.integers(runs, size=(reps, runs, tasks)), np.arange(tasks)]


def bootstrap_interval(
    statistic: Callable[..., np.ndarray], samples: list[Scores], reps: int = 2000, seed: int = 0, size: float = 0.95
) -> tuple[float, float, float]:
    """``statistic(*samples)`` and its percentile interval over ``reps`` stratified bootstrap resamples (each sample
    resampled on its own, as for two algorithms' independent runs)."""
    rng = np.random.default_rng(seed)
    values = statistic(*(stratified_resamples(np.asarray(sample, dtype=float), reps, rng) for sample in samples))
    low, high = np.quantile(values, [(1 - size) / 2, (1 + size) / 2])
    return float(statistic(*samples)), float(low), float(high)
