"""MetaWorld-v0: metaworld 3.1.1 tasks behind the original's fixed 91-number entity layout (spec §3).

Importing this package loads ``mujoco`` and ``metaworld``; ``imaginebench.registry`` imports it only
when ``MetaWorld-v0`` is asked for. (All imports are absolute: this package is named like the
``metaworld`` distribution it wraps.)
"""

from __future__ import annotations

from imaginebench.envs.domain import Domain
from imaginebench.envs.metaworld.env import MetaWorldEnv
from imaginebench.envs.metaworld.expert import MetaWorldExpert
from imaginebench.envs.metaworld.layout import STATE_DIM
from imaginebench.envs.metaworld.phrasings import PHRASINGS
from imaginebench.envs.metaworld.tasks import LEVEL_TASKS, TASKS
from imaginebench.levels import resolve_level


def instruction_texts(level: str) -> list[str]:
    level = resolve_level(level)
    return list(dict.fromkeys(text for task in LEVEL_TASKS[level] for text in PHRASINGS[level][task]))


DOMAIN = Domain(
    env_id="MetaWorld-v0",
    tasks=LEVEL_TASKS,
    instruction_texts=instruction_texts,
    env_factory=MetaWorldEnv,
    expert=MetaWorldExpert,
    state_dim=STATE_DIM,
    action_kind="continuous",
    action_dim=4,
)

__all__ = ["DOMAIN", "TASKS", "MetaWorldEnv", "MetaWorldExpert", "instruction_texts"]
