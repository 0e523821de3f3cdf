"""MetaWorld-v0: metaworld 3.1.1 tasks behind the original's fixed 91-number entity layout (docs/original-benchmark.md#meta-world).

Importing this package loads ``mujoco`` and ``metaworld``; ``imaginebench.registry`` imports it only
when ``MetaWorld-v0`` is asked for. (All imports are absolute: this package is named like the
``metaworld`` distribution it wraps.)
"""

from __future__ import annotations

from imaginebench.envs.domain import Domain, tabled_instruction_texts
from imaginebench.envs.metaworld.env import MetaWorldEnv
from imaginebench.envs.metaworld.expert import MetaWorldExpert
from imaginebench.envs.metaworld.layout import STATE_DIM
from imaginebench.envs.metaworld.phrasings import PHRASINGS
from imaginebench.envs.metaworld.tasks import LEVEL_TASKS, TASKS

instruction_texts = tabled_instruction_texts(LEVEL_TASKS, PHRASINGS)


DOMAIN = Domain(
    env_id="MetaWorld-v0",
    tasks=LEVEL_TASKS,
    instruction_texts=instruction_texts,
    env_factory=MetaWorldEnv,
    expert=MetaWorldExpert,
    state_dim=STATE_DIM,
    config_dir="metaworld",
    real_episodes=2000,
    evaluation_in_subprocesses=True,
    action_kind="continuous",
    action_dim=4,
    states_version=2,  # 2: the reset state shows every object where it is (simulator.reset_observation)
)

__all__ = ["DOMAIN", "TASKS", "MetaWorldEnv", "MetaWorldExpert", "instruction_texts"]
