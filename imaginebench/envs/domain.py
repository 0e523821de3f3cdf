"""The domain contract: what every benchmark domain declares once (tasks per level, every instruction text, env,
expert, configs), checked for every registered domain by ``tests/envs/test_domain_contract.py``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import gymnasium as gym

from imaginebench.env_spec import EnvSpec
from imaginebench.levels import resolve_level

if TYPE_CHECKING:
    from imaginebench.envs.base import ImagineBenchEnv


@dataclass(frozen=True)
class LearnedExperts:
    """Experts trained by ``imaginebench experts train`` (SAC) instead of scripted: the skills they learn,
    the env they learn them in (with ``skills`` and ``info["skill_rewards"]``, see ``experts.sac.skills_of``)
    and where the shipped checkpoints live."""

    skills: tuple[str, ...]
    training_env: Callable[[tuple[str, ...]], gym.Env]
    directory: Path


class Expert(Protocol):
    """A scripted policy with privileged access to the simulator (``env`` is unwrapped)."""

    def __call__(self, env: ImagineBenchEnv) -> object: ...


@dataclass(frozen=True)
class Domain:
    """One benchmark domain. Tasks and instructions are data, so tests can use them without a simulator."""

    env_id: str
    tasks: Mapping[str, tuple[str, ...]]
    """level → task names evaluated at that level."""
    instruction_texts: Callable[[str], list[str]]
    """level → every instruction string the level's env can emit (encoded once, up front)."""
    env_factory: Callable[..., ImagineBenchEnv]
    """``(level=, instructions: InstructionTable, task: str | None) → env``."""
    expert: Callable[[], Expert]
    """Builds a fresh expert (experts may keep per-episode state)."""
    state_dim: int
    action_kind: str
    config_dir: str
    """Its folder under ``lightning_config/`` (data and algorithm configs) and the name of its
    grounding config ``lightning_config/grounding/<config_dir>.yaml``; declared here only."""
    real_episodes: int
    """Expert episodes of the train tasks in its default real dataset, collected on first use by
    ``get_dataset`` and ``imaginebench pipeline``; its configs' ``collect_if_missing`` agree (tested)."""
    evaluation_in_subprocesses: bool
    """Whether evaluation steps its envs in worker processes by default (one per core,
    :class:`imaginebench.evaluation.EvaluationEnvs`): where a simulator step costs far more than the
    batched policy (Meta-World, LIBERO), not where steps are so cheap that the workers' start-up and
    pipes would eat the gain (BabyAI, CLEVR-Robot, HalfCheetah: ``benchmarks/evaluation_speed.py``)."""
    num_actions: int = 0
    action_dim: int = 0
    evaluation_starts: Callable[[str, str], list[dict]] | None = None
    """``(level, task) → reset options`` of a stored evaluation set, one per episode; evaluation
    then starts episode ``k`` from entry ``k`` instead of from reset seeds (``None``: seeds only)."""
    learned_experts: LearnedExperts | None = None
    """Set where the experts are trained rather than scripted (``imaginebench experts train``)."""
    collect_action_noise: float = 0.0
    """Standard deviation of Gaussian noise added to the action the env executes while collecting
    expert data (continuous actions; DART, Laskey et al. 2017): the data then cover the states a
    learner's small errors lead to, and the recorded action stays the expert's clean one (so a
    transition's next state follows the executed action, not the recorded one)."""
    reward_version: int = 1
    """Raised whenever the env's reward changes. Datasets record the version they were rewarded under
    (``metadata.json`` field ``reward_version``, 1 when absent) and loading one of another version is refused,
    so no run learns from rewards the env no longer pays."""
    states_version: int = 1
    """Raised whenever the states the env reports change (metadata field ``states_version``, 1 when absent), with
    the same effect: no run mixes states the env no longer produces with those it does."""

    @property
    def data_versions(self) -> dict[str, int]:
        """The versions every dataset of this domain records in ``metadata.json`` and must match to be used."""
        return {"reward_version": self.reward_version, "states_version": self.states_version}

    @property
    def grounding_config(self) -> Path:
        """``lightning_config/grounding/<config_dir>.yaml``, relative to the repository root (where
        every command runs), so the pipeline, benchmarks and tests name it the same way."""
        return Path("lightning_config") / "grounding" / f"{self.config_dir}.yaml"

    def expected_metadata(self, source: str, encoder_id: str) -> dict[str, object]:
        """The ``metadata.json`` fields a dataset of this domain must have to be trained on as ``source`` data
        encoded by ``encoder_id`` (:func:`imaginebench.datasets.episodes.check_metadata`)."""
        return {
            "env_id": self.env_id,
            "encoder_id": encoder_id,
            "source": source,
            "state_dim": self.state_dim,
            **self.data_versions,
        }

    def spec(self, embedding_dim: int) -> EnvSpec:
        return EnvSpec(
            state_dim=self.state_dim,
            embedding_dim=embedding_dim,
            action_kind=self.action_kind,  # type: ignore[arg-type]
            num_actions=self.num_actions,
            action_dim=self.action_dim,
        )


def tabled_instruction_texts(
    level_tasks: Mapping[str, tuple[str, ...]], phrasings: Mapping[str, Mapping[str, tuple[str, ...] | list[str]]]
) -> Callable[[str], list[str]]:
    """``Domain.instruction_texts`` for a domain whose instructions are a fixed table
    level → task → phrasings: the level's tasks' phrasings in order, each text once."""

    def instruction_texts(level: str) -> list[str]:
        level = resolve_level(level)
        return list(dict.fromkeys(text for task in level_tasks[level] for text in phrasings[level][task]))

    return instruction_texts
