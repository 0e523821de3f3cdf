"""Behaviour every benchmark env shares: dict observations, level and task bookkeeping."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from imaginebench.instructions import InstructionTable


class ImagineBenchEnv(gym.Env):
    """A goal-conditioned env whose observation keeps ``state`` and ``instruction_embedding`` apart.

    A domain's env (``envs/<domain>/env.py``) implements ``reset`` (``super().reset(seed=seed)``, the task
    from ``_choose_task``, ``self.instruction`` from the level's phrasings), ``step``, ``state`` and
    ``goal_flags``, and declares ``state_rules`` (its ``layout.py``'s ``state_violations``), ``horizon``,
    ``state_tolerance`` and ``state_space``. ``info`` always holds ``is_success``, ``task`` and ``instruction``.
    Without a fixed ``task`` each reset draws one of the level's tasks uniformly (seeded);
    ``options={"task": name}`` picks one explicitly.

    Imaginary rollouts are judged against the simulator through ``success_flags`` (the current episode's
    goal on generated states, legal ones only), ``state_violations``, ``state_tolerance``, ``state`` and,
    where the state vector determines the simulator (``state_determines_simulator``), ``set_state`` for
    judging each generated transition on its own; ``imagined_rewards`` rewards them as ``step`` would.
    ``tests/envs/test_domain_contract.py`` checks every registered domain against this.
    """

    horizon: int = 0
    """Steps per episode (episodes are truncated after this many); imagination uses it too."""
    state_tolerance: float = 0.0
    """Largest absolute difference per dimension at which a generated state still matches the
    simulated one (0 for exact, discrete states; physics domains allow for float noise)."""

    state_determines_simulator: bool = False
    """Whether a state vector fixes everything the next ``step`` depends on, so ``set_state`` can
    put the simulator in any legal state (the one-step transition check needs it)."""

    state_fields: tuple[str, ...] = ()
    """Names of the state vector's dimensions where the domain has them; reports print indices otherwise."""

    env_id: str = ""
    state_space: gym.spaces.Box

    def __init__(self, level: str, tasks: tuple[str, ...], instructions: InstructionTable, task: str | None = None):
        if task is not None and task not in tasks:
            raise ValueError(f"{self.env_id}: task {task!r} is not in level {level!r}; valid tasks: {', '.join(tasks)}")
        self.level = level
        self.tasks = tasks
        self.fixed_task = task
        self.instructions = instructions
        self.observation_space = gym.spaces.Dict(
            {
                "state": self.state_space,
                "instruction_embedding": gym.spaces.Box(-np.inf, np.inf, (instructions.dim,), np.float32),
            }
        )
        self.task: str = task or tasks[0]
        self.instruction: str = ""

    def _choose_task(self, options: dict[str, Any] | None) -> str:
        requested = (options or {}).get("task", self.fixed_task)
        if requested is None:
            return self.tasks[int(self.np_random.integers(len(self.tasks)))]
        if requested not in self.tasks:
            raise ValueError(
                f"{self.env_id}: task {requested!r} is not in level {self.level!r}; valid: {', '.join(self.tasks)}"
            )
        return requested

    def _observation(self, state: np.ndarray) -> dict[str, np.ndarray]:
        return {
            "state": state.astype(np.float32),
            "instruction_embedding": self.instructions.embedding(
                self.instruction
            ).copy(),  # never hand out a view of the table
        }

    def _info(self, is_success: bool) -> dict[str, Any]:
        return {"is_success": bool(is_success), "task": self.task, "instruction": self.instruction}

    def success_flags(self, states: np.ndarray, legal: np.ndarray | None = None) -> np.ndarray:
        """Whether the current episode's goal (set by the last ``reset``) holds at each of
        ``states`` ``(T, state_dim)``, read in order from the episode's first state: ``goal_flags`` on
        legal states; a state the env cannot be in never counts as success. ``legal`` ``(T,)``: the states'
        legality where the caller has judged it already (rollout quality, by ``state_violations_within_tolerance``);
        by default ``state_violations`` judges it. Returns ``bool`` ``(T,)``."""
        states = np.asarray(states, dtype=np.float64)
        if legal is None:
            legal = np.array([not self.state_violations(state) for state in states], dtype=bool)
        return self.goal_flags(states, legal) & legal

    def goal_flags(self, states: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """The domain's goal check along ``states`` (float64, from the episode's first state); staged tasks
        track their stages along the sequence. ``legal`` marks the legal rows: a check that cannot read an
        illegal state may skip it (its flag is dropped anyway)."""
        raise NotImplementedError(f"{self.env_id} does not check goals on generated states")

    def reward_on_success(self, steps_taken: int) -> float:
        """The reward of the step that reaches the goal after ``steps_taken`` steps, where every other
        step gives 0 (the default ``imagined_rewards``). Sparse 1 unless a domain overrides it."""
        return 1.0

    def imagined_rewards(self, states: np.ndarray, actions: np.ndarray, success: np.ndarray) -> np.ndarray:
        """The reward of each step of a generated rollout of the current episode, under the definition of
        ``step``'s reward as far as the generated states and actions determine it, so that imaginary and
        real data mix on one reward scale. ``states`` ``(T + 1, state_dim)`` from the episode's first
        state, ``actions`` ``(T, ...)``, ``success`` ``(T + 1,)`` the ``success_flags`` of ``states``;
        returns float64 ``(T,)``. Default: ``reward_on_success(t + 1)`` on step ``t`` when ``success[t + 1]``,
        else 0, which is ``step``'s reward in domains with sparse rewards; dense domains override it."""
        reached = np.asarray(success, dtype=bool)[1:]
        return np.array([self.reward_on_success(t + 1) if hit else 0.0 for t, hit in enumerate(reached)])

    @staticmethod
    def state_rules(state: np.ndarray) -> list[str]:
        """The domain's legality check, a pure function of the state declared by each env as
        ``state_rules = staticmethod(state_violations)`` from its ``layout.py``."""
        raise NotImplementedError("this env declares no state_rules")

    def state_violations(self, state: np.ndarray) -> list[str]:
        """Reasons ``state`` cannot occur in this env (out of bounds, overlapping objects,
        impossible carries, ...); empty when it is legal. Independent of the episode's goal."""
        return self.state_rules(state)

    def state_violations_within_tolerance(self, state: np.ndarray) -> list[str]:
        """Reasons no legal state lies within ``state_tolerance`` of ``state``: how rollout quality judges
        generated states, so that a state the transition checks accept as the simulator's is never illegal
        and a goal reached there counts. Domains whose rules sit on contacts closer than the tolerance
        loosen them (CLEVR-Robot's touching balls); by default the rules themselves (BabyAI's exact states;
        Meta-World's, LIBERO's and HalfCheetah's bounds, whose margins are at least the tolerance)."""
        return self.state_violations(state)

    def state(self) -> np.ndarray:
        """The current state vector (what the last observation's ``state`` held)."""
        raise NotImplementedError(f"{self.env_id} does not report its current state")

    def set_state(self, state: np.ndarray) -> None:
        """Put the simulator in ``state`` mid-episode, so that ``step`` continues exactly as from a
        reached state; the episode's task, goal and step count stay. Raises ``ValueError`` for a
        state the env cannot be in (``state_violations``). Only where ``state_determines_simulator``."""
        raise NotImplementedError(
            f"{self.env_id}: the state vector does not determine the simulator's state, so it cannot be set from one"
        )

    def _settable(self, state: np.ndarray) -> np.ndarray:
        """``state`` as float64 once it is legal: ``set_state``'s first check in every domain."""
        state = np.asarray(state, dtype=np.float64)
        if reasons := self.state_violations(state):
            raise ValueError(f"{self.env_id}: set_state got a state the env cannot be in: {'; '.join(reasons)}")
        return state


def malformed(values: np.ndarray, state_dim: int) -> list[str]:
    """Why ``values`` is not a state at all (wrong size, non-finite numbers): the first check of
    every domain's ``state_violations``; empty when it is well formed."""
    if values.shape != (state_dim,):
        return [f"state has shape {values.shape}, expected ({state_dim},)"]
    if not np.all(np.isfinite(values)):
        return ["state has non-finite numbers"]
    return []
