"""Ball-v0: CLEVR-Robot, five balls on a walled table pushed by 40 discrete actions (docs/original-benchmark.md#clevr-robot, quirks fixed)."""

from __future__ import annotations

from imaginebench.envs.clevr.env import ClevrEnv
from imaginebench.envs.clevr.evaluation_set import evaluation_starts
from imaginebench.envs.clevr.expert import ClevrExpert
from imaginebench.envs.clevr.layout import NUM_ACTIONS, STATE_DIM, STATE_FIELDS
from imaginebench.envs.clevr.phrasings import all_instructions
from imaginebench.envs.clevr.tasks import HORIZON, LEVEL_TASKS
from imaginebench.envs.domain import Domain
from imaginebench.levels import resolve_level


def instruction_texts(level: str) -> list[str]:
    return all_instructions(resolve_level(level))


DOMAIN = Domain(
    env_id="Ball-v0",
    tasks=LEVEL_TASKS,
    instruction_texts=instruction_texts,
    env_factory=ClevrEnv,
    expert=ClevrExpert,
    state_dim=STATE_DIM,
    config_dir="clevr",
    real_episodes=10000,
    evaluation_in_subprocesses=False,  # short pushes, not measured: evaluate_level(workers=N) overrides
    action_kind="discrete",
    num_actions=NUM_ACTIONS,
    evaluation_starts=evaluation_starts,
)

__all__ = ["DOMAIN", "HORIZON", "STATE_FIELDS", "ClevrEnv", "ClevrExpert", "instruction_texts"]
