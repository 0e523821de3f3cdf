"""Every registered domain by env id, and its envs (the bare env; :mod:`imaginebench.benchmark` adds the API)."""

from __future__ import annotations

from functools import cache
from importlib import import_module

from imaginebench.envs.domain import Domain
from imaginebench.errors import UserInputError
from imaginebench.instructions import DEFAULT_ENCODER, InstructionEncoder, InstructionTable
from imaginebench.levels import resolve_level

DOMAIN_MODULES: dict[str, str] = {
    "BabyAI-v0": "imaginebench.envs.babyai",
    "Ball-v0": "imaginebench.envs.clevr",
    "MetaWorld-v0": "imaginebench.envs.metaworld",
    "Mujoco-v0": "imaginebench.envs.halfcheetah",
    "Libero-v0": "imaginebench.envs.libero",
}
"""env id → module defining ``DOMAIN``; imported on first use so unused simulators never load."""


def get_domain(env_id: str) -> Domain:
    if env_id not in DOMAIN_MODULES:
        raise UserInputError(f"unknown env id {env_id!r}; valid env ids: {', '.join(env_ids())}")
    return import_module(DOMAIN_MODULES[env_id]).DOMAIN


def env_ids() -> list[str]:
    return sorted(DOMAIN_MODULES)


@cache
def _encoder(model: str, pooling: str) -> InstructionEncoder:
    return InstructionEncoder(model, pooling)  # type: ignore[arg-type]


@cache
def instruction_table(
    env_id: str, level: str, encoder: str = DEFAULT_ENCODER, pooling: str = "mean"
) -> InstructionTable:
    """Every instruction of a level, encoded once per process (and cached on disk by the encoder)."""
    domain = get_domain(env_id)
    return InstructionTable.build(domain.instruction_texts(resolve_level(level)), _encoder(encoder, pooling))


def make(
    env_id: str,
    level: str = "train",
    task: str | None = None,
    encoder: str = DEFAULT_ENCODER,
    pooling: str = "mean",
    **env_kwargs,
):
    """Create a benchmark env for one level (optionally restricted to one task).

    ``env_kwargs`` (e.g. ``render_mode="rgb_array"``) go to the domain's env.

    Returns the env itself; ``imaginebench.make`` (:mod:`imaginebench.benchmark`) adds the original's
    ``get_dataset``.
    """
    domain = get_domain(env_id)
    level = resolve_level(level)
    table = instruction_table(env_id, level, encoder, pooling)
    return domain.env_factory(level=level, instructions=table, task=task, **env_kwargs)
