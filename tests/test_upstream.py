"""Each workaround in imaginebench.upstream is still needed: these tests fail when upstream changes the
behaviour worked around (then the workaround can go, or must change)."""

import importlib
import types

import lightning.pytorch as pl

from imaginebench.upstream.gymnasium_mujoco import compiling_scene_once


def test_lightning_still_keeps_its_logging_step_test_private():
    trainer = pl.Trainer(logger=False, enable_checkpointing=False, enable_progress_bar=False)
    assert isinstance(trainer._logger_connector.should_update_logs, bool)


def test_tensordict_still_decides_shared_mappings_by_file_permission():
    """load_memmap_copy_on_write patches this function; tests/datasets/test_dataset_integrity.py checks the effect."""
    assert callable(importlib.import_module("tensordict.memmap")._is_writable)


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
