"""BabyAI-v0: a minigrid room with a ball, a box, a key and a door (docs/original-benchmark.md#babyai, quirks fixed)."""

from __future__ import annotations

from imaginebench.envs.babyai.env import HORIZON, BabyAIEnv
from imaginebench.envs.babyai.expert import BabyAIExpert
from imaginebench.envs.babyai.layout import NUM_ACTIONS, STATE_DIM, STATE_FIELDS
from imaginebench.envs.babyai.phrasings import PHRASINGS
from imaginebench.envs.babyai.tasks import LEVEL_TASKS, all_instruction_slots
from imaginebench.envs.domain import Domain
from imaginebench.levels import resolve_level


def instruction_texts(level: str) -> list[str]:
    """Every instruction the level can emit: each task's templates × all its slot fillings."""
    level = resolve_level(level)
    texts = []
    for task in LEVEL_TASKS[level]:
        fillings = all_instruction_slots(task)
        texts += [template.format(**slots) for template in PHRASINGS[level][task] for slots in fillings]
    return list(dict.fromkeys(texts))


DOMAIN = Domain(
    env_id="BabyAI-v0",
    tasks=LEVEL_TASKS,
    instruction_texts=instruction_texts,
    env_factory=BabyAIEnv,
    expert=BabyAIExpert,
    state_dim=STATE_DIM,
    config_dir="babyai",
    real_episodes=20000,
    evaluation_in_subprocesses=False,
    action_kind="discrete",
    num_actions=NUM_ACTIONS,
)

__all__ = ["DOMAIN", "HORIZON", "STATE_FIELDS", "BabyAIEnv", "BabyAIExpert", "instruction_texts"]
