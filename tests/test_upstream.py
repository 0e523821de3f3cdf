"""Each workaround in imaginebench.upstream is still needed: these tests fail when upstream changes the
behaviour worked around (then the workaround can go, or must change)."""

import copy
import importlib
import types

import lightning.pytorch as pl
import torch
from torchrl.objectives import IQLLoss, ValueEstimators

from imaginebench.upstream.gymnasium_mujoco import compiling_scene_once
from imaginebench.upstream.torchrl_iql import TargetQOncePerBatch
from modules.discrete_cql import DiscreteCQL
from modules.iql import IQL
from tests.modules.synthetic import CONTINUOUS, DISCRETE, SMALL, InstructionBandit


def test_torchrl_discrete_cql_still_bootstraps_from_the_online_network():
    """Why TargetNetworkTD0 exists: with TorchRL's own TD0 estimator, DiscreteCQLLoss's target ignores
    the target network (here made different from the online one)."""
    torch.manual_seed(0)
    module = DiscreteCQL(DISCRETE, gamma=0.9)
    module.loss.make_value_estimator(ValueEstimators.TD0, gamma=0.9)  # TorchRL's, not ours
    target_net = copy.deepcopy(module.policy)  # the target network keeps these weights
    with torch.no_grad():
        for p in module.policy.parameters():
            p.add_(torch.randn_like(p))
    batch = InstructionBandit(DISCRETE).batch(1)
    batch["next", "terminated"].fill_(False)
    batch["next", "done"].fill_(False)
    target = module.loss(batch.clone())["target_value"]
    next_q_online = module.policy(batch["next"].clone())["action_value"].max(-1).values.squeeze()
    next_q_target = target_net(batch["next"].clone())["action_value"].max(-1).values.squeeze()
    reward = batch["next", "reward"].squeeze()
    torch.testing.assert_close(target, reward + 0.9 * next_q_online)
    assert not torch.allclose(target, reward + 0.9 * next_q_target)


def test_lightning_still_keeps_its_logging_step_test_private():
    trainer = pl.Trainer(logger=False, enable_checkpointing=False, enable_progress_bar=False)
    assert isinstance(trainer._logger_connector.should_update_logs, bool)


def test_tensordict_still_decides_shared_mappings_by_file_permission():
    """load_memmap_copy_on_write patches this function; tests/datasets/test_dataset_integrity.py checks the effect."""
    assert callable(importlib.import_module("tensordict.memmap")._is_writable)


def test_torchrl_iql_still_runs_its_target_critics_twice_per_batch():
    """Why TargetQOncePerBatch exists: TorchRL's IQLLoss.forward runs the target critics in both its actor
    and its value loss, through ``_vmap_qvalue_networkN0``, on the same inputs."""
    torch.manual_seed(0)
    loss = IQL(CONTINUOUS, **SMALL).loss
    evaluate, target_inputs = loss._vmap_qvalue_networkN0, []

    def counted(inputs, params):
        if params is loss.target_qvalue_network_params:
            target_inputs.append(inputs.select("state", "action").clone())
        return evaluate(inputs, params)

    loss._vmap_qvalue_networkN0 = counted
    super(TargetQOncePerBatch, loss).forward(InstructionBandit(CONTINUOUS).batch(8))
    assert isinstance(loss, IQLLoss) and len(target_inputs) == 2
    assert (target_inputs[0] == target_inputs[1]).all()


def test_gymnasium_mujoco_envs_still_compile_their_scene_each(monkeypatch):
    """Why CompiledSceneOncePerProcess exists: every gymnasium MujocoEnv parses its scene file anew;
    with the mixin, the second env of a class compiles nothing."""
    import gymnasium.envs.mujoco.mujoco_env as mujoco_env
    from gymnasium.envs.mujoco.half_cheetah_v5 import HalfCheetahEnv

    real, compiled = mujoco_env.mujoco, []

    def counted(path, *args):
        compiled.append(path)
        return real.MjModel.from_xml_path(path, *args)

    counting = types.ModuleType("mujoco")
    counting.__dict__.update(real.__dict__)
    counting.MjModel = types.SimpleNamespace(from_xml_path=counted)
    monkeypatch.setattr(mujoco_env, "mujoco", counting)
    HalfCheetahEnv(), HalfCheetahEnv()
    assert len(compiled) == 2
    compiling_scene_once(HalfCheetahEnv)(), compiling_scene_once(HalfCheetahEnv)()
    assert len(compiled) <= 3  # none at all if an earlier test compiled the scene in this process
