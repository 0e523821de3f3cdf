"""Mujoco-v0: gymnasium's HalfCheetah-v5 with run and jump tasks (docs/original-benchmark.md#halfcheetah, quirks 7-8 fixed).

Importing this package loads ``mujoco``; ``imaginebench.registry`` imports it only when
``Mujoco-v0`` is asked for. The experts are SAC actors shipped under ``EXPERT_DIR``.
"""

from __future__ import annotations

from imaginebench.envs.domain import Domain, LearnedExperts, tabled_instruction_texts
from imaginebench.envs.halfcheetah.env import HalfCheetahEnv
from imaginebench.envs.halfcheetah.expert import EXPERT_DIR, HalfCheetahExpert
from imaginebench.envs.halfcheetah.layout import STATE_DIM
from imaginebench.envs.halfcheetah.phrasings import PHRASINGS
from imaginebench.envs.halfcheetah.simulator import ACTION_DIM, SkillTrainingEnv
from imaginebench.envs.halfcheetah.tasks import LEVEL_TASKS, SKILL_REWARDS, TASKS

SKILLS = tuple(SKILL_REWARDS)
instruction_texts = tabled_instruction_texts(LEVEL_TASKS, PHRASINGS)


DOMAIN = Domain(
    env_id="Mujoco-v0",
    tasks=LEVEL_TASKS,
    instruction_texts=instruction_texts,
    env_factory=HalfCheetahEnv,
    expert=HalfCheetahExpert,
    state_dim=STATE_DIM,
    config_dir="halfcheetah",
    real_episodes=1000,
    # A step costs ~0.1 ms: 2 workers evaluate 1.16x faster on kept envs and 0.56x at the first evaluation
    # (benchmarks/results/parallel_evaluation_Mujoco-v0.json), and a sweep's second run needs the other core.
    evaluation_in_subprocesses=False,
    action_kind="continuous",
    action_dim=ACTION_DIM,
    learned_experts=LearnedExperts(skills=SKILLS, training_env=SkillTrainingEnv, directory=EXPERT_DIR),
    reward_version=2,  # 2: every step less tasks.STEP_COST, so success never pays less than going on
)

__all__ = [
    "DOMAIN",
    "EXPERT_DIR",
    "SKILLS",
    "SKILL_REWARDS",
    "TASKS",
    "HalfCheetahEnv",
    "HalfCheetahExpert",
    "instruction_texts",
]
