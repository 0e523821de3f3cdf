"""Our algorithms against d3rlpy 2.8.1's on the same dataset, hyperparameters and seeds.

    bash benchmarks/setup_peer.sh      # once: .venv-peer with d3rlpy (it cannot live in .venv)
    .venv-peer/bin/python benchmarks/peer_check.py --env BabyAI-v0 --data data/BabyAI-v0/real-train \\
        --algorithms BC CQL BCQ --seeds 0 1 2 --steps 5000

For each algorithm and seed both implementations train ``--steps`` updates at batch ``--batch-size``
on the real data, then run the same evaluation (``evaluate_level`` on the ``train`` level). d3rlpy
sees ``state ⊕ instruction_embedding`` as its observation, as the original benchmark fed it. Prints
success rate (mean ± std over seeds) and updates/s (data sampling included, the first updates not
timed) per algorithm and implementation. Results accumulate over runs (an algorithm's runs are
replaced when it runs again with ``--implementations`` naming them) in ``benchmarks/results/peer_<env>.json``, plotted in ``peer_<env>.png``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import d3rlpy
import numpy as np
import torch
from matrix_flops import synchronize  # benchmarks/ is on sys.path
from ours_training import WARMUP_STEPS, ours_label, train_ours  # benchmarks/ is on sys.path

from datamodules.statistics import mean_and_std
from imaginebench.datasets import load_episodes
from imaginebench.evaluation import evaluate_level
from imaginebench.plotting import headless_pyplot
from imaginebench.storage import atomic_write_text

HIDDEN = [256, 256]


def state_scaler(path: str) -> d3rlpy.preprocessing.StandardObservationScaler:
    """d3rlpy's scaler set to what our modules do: the state standardised with the real data's
    statistics, the instruction embedding left as it is. Fitted by d3rlpy, it would standardise
    the embedding too, and with 10 distinct instructions that blows 384 near-constant dimensions up
    to unit scale."""
    episodes = load_episodes(path)
    mean, std = mean_and_std(episodes.steps["state"])
    embedding_dim = episodes.metadata["embedding_dim"]
    eps = d3rlpy.preprocessing.StandardObservationScaler().eps  # d3rlpy divides by std + eps
    return d3rlpy.preprocessing.StandardObservationScaler(
        mean=np.concatenate([mean.numpy(), np.zeros(embedding_dim)]),
        std=np.concatenate([std.numpy() - eps, np.full(embedding_dim, 1.0 - eps)]),
    )


def d3rlpy_config(name: str, discrete: bool, batch_size: int, scaler=None):
    """d3rlpy's config set to our modules' defaults (``None``: d3rlpy has no such variant);
    ``scaler`` (continuous only) is :func:`state_scaler`."""
    encoder = d3rlpy.models.VectorEncoderFactory(HIDDEN)
    if discrete:
        configs = {
            "BC": lambda: d3rlpy.algos.DiscreteBCConfig(
                batch_size=batch_size, learning_rate=1e-3, beta=0.5, encoder_factory=encoder
            ),
            "CQL": lambda: d3rlpy.algos.DiscreteCQLConfig(
                batch_size=batch_size,
                learning_rate=3e-4,
                alpha=10.0,
                target_update_interval=500,
                encoder_factory=encoder,
            ),
            "BCQ": lambda: d3rlpy.algos.DiscreteBCQConfig(
                batch_size=batch_size,
                learning_rate=3e-4,
                action_flexibility=0.3,
                beta=0.01,
                target_update_interval=500,
                share_encoder=False,
                encoder_factory=encoder,
            ),
        }
    else:
        common = {
            "batch_size": batch_size,
            "observation_scaler": scaler,
            "actor_encoder_factory": encoder,
            "critic_encoder_factory": encoder,
        }
        configs = {
            "BC": lambda: d3rlpy.algos.BCConfig(
                batch_size=batch_size, learning_rate=1e-3, encoder_factory=encoder, observation_scaler=scaler
            ),
            "CQL": lambda: d3rlpy.algos.CQLConfig(
                **common, conservative_weight=5.0, n_action_samples=10, alpha_learning_rate=0.0, initial_alpha=1.0
            ),
            "BCQ": lambda: d3rlpy.algos.BCQConfig(
                **common,
                imitator_encoder_factory=encoder,
                n_action_samples=100,
                action_flexibility=0.05,
                lam=0.75,
                beta=0.5,
            ),
            "TD3BC": lambda: d3rlpy.algos.TD3PlusBCConfig(**common, alpha=2.5, update_actor_interval=2),
            "IQL": lambda: d3rlpy.algos.IQLConfig(
                **common, expectile=0.7, weight_temp=3.0, value_encoder_factory=encoder
            ),
        }
    factory = configs.get(name)
    return factory() if factory is not None else None


def mdp_dataset(path: str, discrete: bool) -> d3rlpy.dataset.MDPDataset:
    """The episodes in d3rlpy's layout: one row per step, observation = state ⊕ instruction embedding."""
    episodes = load_episodes(path)
    steps = episodes.steps
    order = torch.argsort(
        steps["episode_id"] * (steps.shape[0] + 1) + torch.arange(steps.shape[0])
    )  # episode by episode
    steps = steps[order]
    embedding = torch.as_tensor(episodes.instruction_embeddings)[steps["instruction_id"]]
    observations = torch.cat([steps["state"].float(), embedding.float()], -1).numpy()
    last = torch.ones(steps.shape[0], dtype=torch.bool)
    last[:-1] = steps["episode_id"][1:] != steps["episode_id"][:-1]
    terminals = (steps["terminated"] & last).numpy().astype(np.float32)
    timeouts = (last & ~steps["terminated"]).numpy().astype(np.float32)
    return d3rlpy.dataset.MDPDataset(
        observations=observations,
        actions=steps["action"].numpy(),
        rewards=steps["reward"].float().numpy(),
        terminals=terminals,
        timeouts=timeouts,
        action_space=d3rlpy.ActionSpace.DISCRETE if discrete else d3rlpy.ActionSpace.CONTINUOUS,
        action_size=None,
    )


def is_discrete(path: str) -> bool:
    return load_episodes(path).metadata["action_kind"] == "discrete"


def train_d3rlpy(name: str, args, seed: int, dataset, discrete: bool, scaler=None) -> tuple[object, float]:
    """``scaler``: :func:`state_scaler` for continuous data; ``args.device`` (default ``cpu``): ``cuda`` trains on
    the first GPU."""
    d3rlpy.seed(seed)
    device = "cuda:0" if getattr(args, "device", "cpu") == "cuda" else "cpu:0"
    algo = d3rlpy_config(name, discrete, args.batch_size, scaler).create(device=device)
    marks = {}

    def mark(algo, epoch: int, step: int) -> None:
        synchronize(device)
        marks.setdefault(WARMUP_STEPS if step >= WARMUP_STEPS else 0, time.perf_counter())
        marks["end"] = time.perf_counter()

    algo.fit(
        dataset,
        n_steps=args.steps,
        n_steps_per_epoch=args.steps,
        show_progress=False,
        save_interval=10**9,
        logger_adapter=d3rlpy.logging.NoopAdapterFactory(),
        callback=mark,
    )
    return algo, (args.steps - WARMUP_STEPS) / (marks["end"] - marks[WARMUP_STEPS])


def success_rate(act, args, seed: int) -> float:
    return evaluate_level(act, args.env, "train", args.episodes_per_task, seed=10_000 + seed).success_rate


def d3rlpy_act(algo):
    def act(state: torch.Tensor, embedding: torch.Tensor) -> torch.Tensor:
        return torch.as_tensor(algo.predict(torch.cat([state, embedding], -1).float().numpy()))

    return act


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="BabyAI-v0")
    parser.add_argument("--data", default="data/BabyAI-v0/real-train")
    parser.add_argument("--algorithms", nargs="+", default=["BC", "CQL", "BCQ"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--episodes-per-task", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--precision", default="32-true", choices=["32-true", "bf16-mixed"], help="our Trainer's (d3rlpy: float32)"
    )
    parser.add_argument(
        "--implementations",
        nargs="+",
        choices=["ours", "d3rlpy"],
        default=["ours", "d3rlpy"],
        help="rerun one side only; the other side's stored runs with the same settings are kept (ours: per --precision)",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    discrete = is_discrete(args.data)
    dataset = mdp_dataset(args.data, discrete)
    scaler = None if discrete else state_scaler(args.data)
    results_path = Path(__file__).parent / "results" / f"peer_{args.env}.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    settings = {
        "steps": args.steps,
        "batch_size": args.batch_size,
        "seeds": args.seeds,
        "episodes_per_task": args.episodes_per_task,
    }
    for name in args.algorithms:
        runs: dict[str, list[list[float]]] = {}
        for seed in args.seeds:
            if "ours" in args.implementations:
                label = ours_label(args.precision)
                module, ours_speed = train_ours(name, args, seed)
                runs.setdefault(label, []).append([success_rate(module.act, args, seed), ours_speed])
                print(
                    f"{name} seed {seed} {label}: success {runs[label][-1][0]:.3f}, {ours_speed:.1f} updates/s",
                    flush=True,
                )
            if "d3rlpy" in args.implementations and d3rlpy_config(name, discrete, args.batch_size) is not None:
                algo, peer_speed = train_d3rlpy(name, args, seed, dataset, discrete, scaler)
                runs.setdefault("d3rlpy", []).append([success_rate(d3rlpy_act(algo), args, seed), peer_speed])
                print(
                    f"{name} seed {seed} d3rlpy: success {runs['d3rlpy'][-1][0]:.3f}, {peer_speed:.1f} updates/s",
                    flush=True,
                )
        previous = results.get(name, {})
        kept = (
            previous["runs"] if previous.get("settings") == settings else {}
        )  # the other implementation's runs, if comparable
        results[name] = {"settings": settings, "runs": {**kept, **runs}}
        atomic_write_text(json.dumps(results, indent=1), results_path)  # a long run keeps what it finished
    print_table(args.env, results)
    plot(results, results_path.with_suffix(".png"))


def print_table(env: str, results: dict) -> None:
    """Every algorithm measured so far on ``env`` (runs of this script accumulate in the JSON file)."""
    print(f"\n{env}: train-level success (mean ± std over seeds) and updates/s")
    print(
        "| algorithm | implementation | updates × batch | seeds | train success | updates/s |\n|---|---|---|---|---|---|"
    )
    for name, entry in results.items():
        settings = entry["settings"]
        for implementation, runs in entry["runs"].items():
            success, speed = np.array(runs).T
            spread = success.std(ddof=1) if len(runs) > 1 else 0.0
            print(
                f"| {name} | {implementation} | {settings['steps']} × {settings['batch_size']} | {len(runs)} | {success.mean():.3f} ± {spread:.3f} | {speed.mean():.1f} |"
            )


def plot(results: dict, path: Path) -> None:
    plt = headless_pyplot()

    bars = {
        f"{name}\n{implementation}": np.array(runs)
        for name, entry in results.items()
        for implementation, runs in entry["runs"].items()
    }
    figure, (success_axis, speed_axis) = plt.subplots(1, 2, figsize=(10, 4))
    for axis, column, title in ((success_axis, 0, "train success rate"), (speed_axis, 1, "updates / s")):
        values = [runs[:, column] for runs in bars.values()]
        axis.bar(
            list(bars), [v.mean() for v in values], yerr=[v.std(ddof=1) if len(v) > 1 else 0.0 for v in values]
        )  # as the table
        axis.set_title(title)
    figure.tight_layout()
    figure.savefig(path)


if __name__ == "__main__":
    main()
