"""``collect`` with the shipped experts writes valid continuous HalfCheetah episodes, no training needed."""

import numpy as np
import pytest

from imaginebench.collect import collect
from imaginebench.datasets import load_episodes
from imaginebench.envs.halfcheetah import EXPERT_DIR
from imaginebench.envs.halfcheetah.layout import DX


@pytest.mark.skipif(not (EXPERT_DIR / "jumps.pt").is_file(), reason="shipped experts missing")
def test_collect_writes_successful_expert_episodes_from_the_shipped_experts(tmp_path):
    out = collect("Mujoco-v0", "train", episodes=4, out=tmp_path / "hc", seed=0, progress=False)
    dataset = load_episodes(out)
    steps = dataset.steps
    assert dataset.metadata["action_kind"] == "continuous" and dataset.metadata["action_dim"] == 6
    assert steps["state"].shape[1] == 18 and float(steps["action"].abs().max()) <= 1.0
    assert dataset.metadata["tasks"] == ["run-forward", "run-backward", "jump-forward", "jump-backward"]
    assert int(steps["success"].sum()) == 4
    first = steps["step"] == 0
    assert np.all(steps["state"][first][:, DX].numpy() == 0.0)  # reset displacement is 0, not the absolute x
