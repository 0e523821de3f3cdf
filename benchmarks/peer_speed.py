"""Updates/s of our algorithms and d3rlpy 2.8.1's, measured in pairs on the same data.

    .venv-peer/bin/python benchmarks/peer_speed.py --env MetaWorld-v0 --data data/MetaWorld-v0/real-train \\
        --algorithms BC TD3BC IQL CQL BCQ --steps 300 --repeats 3

Both sides train exactly as in ``peer_check.py`` (data sampling included, the first updates not
timed) but without evaluation, and alternate run by run, so a change in machine load hits both.
Prints the median over ``--repeats`` per algorithm and implementation; results accumulate per
algorithm (a rerun replaces it) in ``benchmarks/results/peer_speed_<env>.json``. Run it on an otherwise idle machine: on a shared
2-core CPU the figures move by a factor of two with the other jobs.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from types import SimpleNamespace

import torch
from peer_check import (
    d3rlpy_config,
    is_discrete,
    mdp_dataset,
    state_scaler,
    train_d3rlpy,
    train_ours,
)  # benchmarks/ is on sys.path

from imaginebench.storage import atomic_write_text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="MetaWorld-v0")
    parser.add_argument("--data", default="data/MetaWorld-v0/real-train")
    parser.add_argument("--algorithms", nargs="+", default=["BC", "TD3BC", "IQL", "CQL", "BCQ"])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args()
    torch.set_num_threads(1)
    discrete = is_discrete(args.data)
    dataset = mdp_dataset(args.data, discrete)
    scaler = None if discrete else state_scaler(args.data)
    run = SimpleNamespace(env=args.env, data=args.data, steps=args.steps, batch_size=args.batch_size)
    path = Path(__file__).parent / "results" / f"peer_speed_{args.env}.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    speeds: dict[str, dict[str, list[float]]] = {}
    for name in args.algorithms:
        for _ in range(args.repeats):
            speeds.setdefault(name, {}).setdefault("ours", []).append(train_ours(name, run, seed=0)[1])
            if d3rlpy_config(name, discrete, args.batch_size) is not None:
                speeds[name].setdefault("d3rlpy", []).append(train_d3rlpy(name, run, 0, dataset, discrete, scaler)[1])
        print(
            name,
            {implementation: f"{statistics.median(values):.1f}" for implementation, values in speeds[name].items()},
            flush=True,
        )
        results[name] = {"steps": args.steps, "batch_size": args.batch_size, "updates_per_second": speeds[name]}
        atomic_write_text(json.dumps(results, indent=1), path)
    print(f"\n{args.env}, 1 thread: median updates/s over paired runs (every algorithm measured so far)")
    print("| algorithm | updates × batch | ours | d3rlpy |\n|---|---|---|---|")
    for name, entry in results.items():
        medians = {
            implementation: f"{statistics.median(values):.1f}"
            for implementation, values in entry["updates_per_second"].items()
        }
        print(
            f"| {name} | {entry['steps']} × {entry['batch_size']} | {medians['ours']} | {medians.get('d3rlpy', '–')} |"
        )


if __name__ == "__main__":
    main()
