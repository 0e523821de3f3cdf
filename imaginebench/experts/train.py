"""``imaginebench experts train``: train one domain skill's expert with SAC and save its actor.

A domain with learned experts exposes ``skill_training_env(task) -> gymnasium.Env`` (the skill's
reward on the bare state) and ``EXPERT_DIR`` (where its shipped checkpoints live).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from importlib import import_module
from pathlib import Path

from imaginebench.experts.policy import MeanAction, save_policy
from imaginebench.experts.sac import SACConfig, evaluate, train_sac


def domain_module(env_id: str):
    from imaginebench.registry import DOMAIN_MODULES

    if env_id not in DOMAIN_MODULES:
        raise ValueError(f"unknown env id {env_id!r} (--env); valid: {', '.join(sorted(DOMAIN_MODULES))}")
    module = import_module(DOMAIN_MODULES[env_id])
    if not hasattr(module, "skill_training_env"):
        raise ValueError(f"{env_id} has no learned experts (--env); its experts are scripted")
    return module


def experts_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="imaginebench experts", description="Train learned experts (SAC).")
    sub = parser.add_subparsers(dest="action", required=True)
    train = sub.add_parser("train", help="train one skill's expert and save its actor")
    train.add_argument("--env", required=True, help="env id, e.g. Mujoco-v0")
    train.add_argument("--task", required=True, help="the skill to train (the domain's skill names)")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--steps", type=int, default=SACConfig.steps, help="env steps (one update each after warm-up)")
    train.add_argument("--warmup", type=int, default=SACConfig.warmup, help="random steps before learning")
    train.add_argument("--out", default=None, help="checkpoint path (default: the domain's shipped expert path)")
    train.add_argument("--eval-episodes", type=int, default=5)
    args = parser.parse_args(argv)
    if args.steps <= args.warmup:
        sys.exit(f"imaginebench experts train: --steps ({args.steps}) must exceed --warmup ({args.warmup})")
    try:
        module = domain_module(args.env)
        env = module.skill_training_env(args.task)
    except ValueError as error:
        sys.exit(f"imaginebench experts train: {error}")
    out = Path(args.out or Path(module.EXPERT_DIR) / f"{args.task}.pt")
    config = SACConfig(steps=args.steps, warmup=args.warmup)
    start = time.perf_counter()
    net = train_sac(env, config, args.seed)
    seconds = time.perf_counter() - start
    policy = MeanAction(net)
    mean_return = evaluate(env, policy, args.eval_episodes, seed=10_000 + args.seed)
    info = {
        "env_id": args.env, "task": args.task, "seed": args.seed, "steps": args.steps, "warmup": args.warmup,
        "observation_dim": env.observation_space.shape[0], "action_dim": env.action_space.shape[0],
        "hidden_sizes": list(config.hidden_sizes), "train_seconds": round(seconds, 1),
        "mean_return": round(mean_return, 2), "eval_episodes": args.eval_episodes,
        "command": "imaginebench experts train " + shlex.join(argv[1:]),
    }  # fmt: skip
    save_policy(net, out, info)
    print(json.dumps(info, indent=1))
    print(f"saved {out}")
