import numpy as np
import pytest

from imaginebench.collect import collect
from imaginebench.datasets import load_episodes

pytestmark = pytest.mark.filterwarnings("ignore:Constant")


def test_collect_writes_continuous_expert_episodes(tmp_path):
    out = collect("MetaWorld-v0", "train", episodes=2, out=tmp_path / "mw", seed=0, progress=False)
    dataset = load_episodes(out)
    steps = dataset.steps
    assert dataset.metadata["action_kind"] == "continuous" and dataset.metadata["action_dim"] == 4
    assert steps["state"].shape[1] == 91 and steps["action"].shape[1] == 4
    assert steps["action"].dtype.is_floating_point and float(steps["action"].abs().max()) <= 1.0
    assert dataset.metadata["tasks"][:2] == ["reach", "push"]
    assert int(steps["success"].sum()) == 2  # both expert episodes end in success
    np.testing.assert_array_equal(
        steps["next_state"][:-1][~steps["terminated"][:-1]].numpy(),
        steps["state"][1:][~steps["terminated"][:-1]].numpy(),
    )
