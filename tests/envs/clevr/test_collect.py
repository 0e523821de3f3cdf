import pytest
import torch

from imaginebench.collect import collect
from imaginebench.datasets import load_episodes
from imaginebench.envs.clevr import DOMAIN
from imaginebench.envs.clevr.layout import state_violations


@pytest.mark.parametrize("level", ["train", "easy", "hard"])
def test_collect_gives_successful_expert_episodes_of_every_task(tmp_path, level):
    episodes = 2 * len(DOMAIN.tasks[level])
    data = load_episodes(collect("Ball-v0", level, episodes, tmp_path / level, seed=5, progress=False))
    steps = data.steps
    assert (
        data.num_episodes == episodes
        and data.metadata["action_kind"] == "discrete"
        and data.metadata["num_actions"] == 40
    )
    assert steps["state"].shape[1] == 10 and steps["action"].dtype == torch.int64
    assert int(steps["success"].sum()) == episodes  # every episode ends on its first success
    assert all(not state_violations(s) for s in steps["next_state"].numpy())
    assert {task: c["episodes"] for task, c in data.metadata["counts"]["per_task"].items()} == {
        t: 2 for t in DOMAIN.tasks[level]
    }
