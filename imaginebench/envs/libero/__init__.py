"""Libero-v0: LIBERO's floor scene (alphabet soup, cream cheese, salad dressing, basket) with
44-number states and 7-d OSC_POSE actions (docs/original-benchmark.md#libero).

The simulator comes from the optional extra (``pip install -e .[libero]``); tasks, phrasings and
success checks import without it, and the env factory says how to install it when it is missing.
"""

from __future__ import annotations

from imaginebench.envs.domain import Domain, tabled_instruction_texts
from imaginebench.envs.libero.layout import STATE_DIM
from imaginebench.envs.libero.phrasings import PHRASINGS
from imaginebench.envs.libero.simulator import require_libero
from imaginebench.envs.libero.tasks import LEVEL_TASKS, TASKS

instruction_texts = tabled_instruction_texts(LEVEL_TASKS, PHRASINGS)
COLLECT_ACTION_NOISE = 0.1
"""Expert data are collected with this much Gaussian noise on the executed action (DART): with
none, behaviour cloning never sees how to recover from its own small errors. At 0.1 the expert
still solves every train task; at 0.2 it drops to 50-67 % on pick-cheese."""


def make_env(**kwargs):
    """The env (imports the simulator; raises with the install command when the extra is missing)."""
    require_libero()
    from imaginebench.envs.libero.env import LiberoEnv

    return LiberoEnv(**kwargs)


def make_expert():
    from imaginebench.envs.libero.expert import LiberoExpert

    return LiberoExpert()


DOMAIN = Domain(
    env_id="Libero-v0",
    tasks=LEVEL_TASKS,
    instruction_texts=instruction_texts,
    env_factory=make_env,
    expert=make_expert,
    state_dim=STATE_DIM,
    config_dir="libero",
    real_episodes=480,
    evaluation_in_subprocesses=True,
    action_kind="continuous",
    action_dim=7,
    collect_action_noise=COLLECT_ACTION_NOISE,
)

__all__ = ["DOMAIN", "TASKS", "instruction_texts"]
