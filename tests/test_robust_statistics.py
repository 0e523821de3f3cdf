"""The aggregates of the results page: interquartile mean, probability of improvement, stratified bootstrap."""

import numpy as np
import pytest

from imaginebench.robust_statistics import bootstrap_interval, interquartile_mean, probability_of_improvement
from imaginebench.run_groups import baseline_of


def test_the_interquartile_mean_drops_the_lowest_and_highest_quarter():
    assert interquartile_mean(np.arange(1, 9).reshape(2, 4)) == pytest.approx(4.5)  # mean of 3, 4, 5, 6
    assert interquartile_mean(np.array([[0.0, 0.0, 0.0, 100.0]] * 2)) == pytest.approx(0.0)


def test_probability_of_improvement_counts_wins_and_half_ties_per_task():
    x = np.array([[1.0, 0.2], [0.0, 0.2]])  # task 0: runs 1 and 0; task 1: two ties with y
    y = np.array([[0.5, 0.2], [0.5, 0.2]])
    assert probability_of_improvement(x, y) == pytest.approx((0.5 + 0.5) / 2)
    assert probability_of_improvement(y + 1, y) == 1.0 and probability_of_improvement(y, y + 1) == 0.0


def test_the_bootstrap_is_seeded_brackets_its_estimate_and_resamples_within_tasks():
    scores = np.random.default_rng(3).random((5, 4))
    first = bootstrap_interval(interquartile_mean, [scores])
    assert first == bootstrap_interval(interquartile_mean, [scores])
    assert first[1] <= first[0] <= first[2] and first[1] < first[2]
    # every run of a task has the same score: resampling runs within tasks cannot move the estimate
    constant_per_task = np.tile(np.array([0.1, 0.4, 0.6, 0.9]), (5, 1))
    value, low, high = bootstrap_interval(interquartile_mean, [constant_per_task])
    assert low == high == value


@pytest.mark.parametrize(
    ("group", "baseline"),
    [
        ("babyai-bc-filtered", "babyai-bc-real"),
        ("babyai-bc-real+imaginary-goal-legal", "babyai-bc-real"),
        ("babyai-bc-real", None),
        ("babyai-iql-oracle", None),
    ],
)
def test_a_group_is_compared_with_the_real_only_group_of_its_algorithm(group, baseline):
    groups = dict.fromkeys(
        ["babyai-bc-real", "babyai-bc-filtered", "babyai-bc-real+imaginary-goal-legal", "babyai-iql-oracle"]
    )
    assert baseline_of(group, groups) == baseline
