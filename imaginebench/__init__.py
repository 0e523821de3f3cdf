"""imaginebench: reinforcement learning from real and LLM-imagined rollouts."""

from imaginebench.benchmark import make, register_gymnasium_envs
from imaginebench.levels import LEVELS, resolve_level
from imaginebench.registry import env_ids, get_domain

register_gymnasium_envs()

__all__ = ["LEVELS", "env_ids", "get_domain", "make", "resolve_level"]
