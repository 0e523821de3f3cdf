"""Can a grounded model flag its own wrong transitions, with no simulator? Agreement of its two reads of s'.

A grounded model can read each imagined ``s_{t+1}`` two ways: inside the goal's rollout (how ``imagine`` reads it by
default) and from the goal-free dynamics-prediction prompt of ``(s_t, a_t)`` (``imagine --next-states dynamics``).
This reads every transition of a dataset imagined the first way a second time, from the dynamics prompt, and says
how often the two agree and how that agreement predicts what the simulator, put in ``s_t``, does (the one-step
check of ``rollout-quality``). A rollout whose every transition the two reads agree on is *self-consistent*: keeping
only those is a filter that needs no simulator, unlike ``data.imaginary_filter: [transitions]``.

    .venv/bin/python benchmarks/transition_agreement.py CKPT DATASET [DATASET ...]
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from imaginebench.collect import episode_seed
from imaginebench.commands.imagine import load_grounded_model
from imaginebench.datasets import load_episodes
from imaginebench.datasets.episodes import episode_row_ranges
from imaginebench.registry import make
from imaginebench.rollout_quality import one_step_wrong
from modules.grounding.generation import dynamics_next_states


@torch.no_grad()
def dynamics_reads(module, states: np.ndarray, actions: np.ndarray, batch_size: int = 256) -> np.ndarray:
    """The dynamics prompt's ``s'`` for every ``(states[i], actions[i])``."""
    reads = []
    for start in range(0, len(states), batch_size):
        chunk = slice(start, start + batch_size)
        state = torch.from_numpy(states[chunk]).float().to(module.device)
        reads.append(dynamics_next_states(module, state, torch.from_numpy(actions[chunk]).to(module.device)).cpu())
    return torch.cat(reads).numpy()


def agreement(module, path: str) -> dict[str, float]:
    """Transition- and rollout-level agreement of the two reads against the simulator, for one dataset."""
    dataset = load_episodes(path)
    env = make(dataset.metadata["env_id"], dataset.metadata["level"])
    if not env.state_determines_simulator:
        raise SystemExit(f"{path}: {env.env_id}'s state vector does not set its simulator")
    steps, seed = dataset.steps, dataset.metadata["generator"]["seed"]
    state, next_state, action = steps["state"].numpy(), steps["next_state"].numpy(), steps["action"].numpy()
    agrees = np.abs(dynamics_reads(module, state, action) - next_state).max(-1) <= env.state_tolerance
    wrong = np.zeros(len(state), dtype=bool)
    consistent, clean = [], []
    for start, end in episode_row_ranges(steps):
        task = dataset.tasks[int(steps["task_id"][start])]
        env.reset(seed=episode_seed(seed, int(steps["episode_id"][start])), options={"task": task})
        states = np.concatenate([state[start:end], next_state[end - 1 : end]])
        legal = [not env.state_violations(s) for s in states]
        wrong[start:end] = one_step_wrong(env, states, action[start:end], legal)
        reached = bool(env.success_flags(states).any())
        consistent.append(reached and bool(agrees[start:end].all()))
        clean.append(reached and not wrong[start:end].any())
    env.close()
    consistent, clean = np.array(consistent), np.array(clean)
    return {
        "transitions": len(state),
        "agree": agrees.mean(),
        "wrong | agree": wrong[agrees].mean() if agrees.any() else float("nan"),
        "wrong | disagree": wrong[~agrees].mean() if (~agrees).any() else float("nan"),
        "wrong transitions flagged": (~agrees[wrong]).mean() if wrong.any() else float("nan"),
        "rollouts": len(clean),
        "clean": clean.mean(),
        "kept (goal + agree)": consistent.mean(),
        "clean among kept": clean[consistent].mean() if consistent.any() else float("nan"),
        "clean ones kept": consistent[clean].mean() if clean.any() else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", help="the checkpoint the datasets were imagined with")
    parser.add_argument("datasets", nargs="+", help="imaginary dataset directories (imagined inside the rollout)")
    args = parser.parse_args()
    module = load_grounded_model(args.checkpoint)
    for path in args.datasets:
        figures = agreement(module, path)
        print(path)
        for name, value in figures.items():
            print(f"  {name:28s} {value:8.3f}" if isinstance(value, float) else f"  {name:28s} {value:8d}")


if __name__ == "__main__":
    main()
