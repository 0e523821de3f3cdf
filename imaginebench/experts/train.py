"""``imaginebench experts train``: train a domain's skill experts with SAC and save the actor.

A domain with learned experts declares them in its ``Domain.learned_experts`` (skills, training env,
checkpoint directory).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

from imaginebench.envs.domain import LearnedExperts
from imaginebench.errors import naming
from imaginebench.experts.policy import MeanAction, save_policy
from imaginebench.experts.sac import SACConfig, evaluate, train_sac
from imaginebench.registry import get_domain


def learned_experts(env_id: str) -> LearnedExperts:
    with naming("--env"):
        experts = get_domain(env_id).learned_experts
    if experts is None:
        raise ValueError(f"{env_id} has no learned experts (--env); its experts are scripted")
    return experts


def experts_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="imaginebench experts", description="Train learned experts (SAC).")
    sub = parser.add_subparsers(dest="action", required=True)
    train = sub.add_parser("train", help="train one skill-conditioned actor for a domain's skills and save it")
    train.add_argument("--env", required=True, help="env id, e.g. Mujoco-v0")
    train.add_argument("--skills", default=None, help="comma-separated skills (default: all of the domain's)")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--steps", type=int, default=SACConfig.steps, help="env steps (one update each after warm-up)")
    train.add_argument("--warmup", type=int, default=SACConfig.warmup, help="random steps before learning")
    train.add_argument("--out", default=None, help="checkpoint path (default: the domain's shipped experts)")
    train.add_argument("--eval-episodes", type=int, default=3, help="episodes per skill for the reported returns")
    args = parser.parse_args(argv)
    if args.steps <= args.warmup:
        sys.exit(f"imaginebench experts train: --steps ({args.steps}) must exceed --warmup ({args.warmup})")
    try:
        experts = learned_experts(args.env)
        skills = tuple(args.skills.split(",")) if args.skills else experts.skills
        env = experts.training_env(skills)
    except ValueError as error:
        sys.exit(f"imaginebench experts train: {error}")
    out = Path(args.out or experts.directory / "skills.pt")
    config = SACConfig(steps=args.steps, warmup=args.warmup)
    info = {
        "env_id": args.env,
        "skills": list(skills),
        "seed": args.seed,
        "steps": args.steps,
        "warmup": args.warmup,
        "observation_dim": env.observation_space.shape[0],
        "action_dim": env.action_space.shape[0],
        "hidden_sizes": list(config.hidden_sizes),
        "batch_size": config.batch_size,
        "command": "imaginebench experts train " + shlex.join(argv[1:]),
    }
    start = time.perf_counter()
    # an interrupted run leaves its latest actor, marked with the steps it had reached
    net = train_sac(
        env, config, args.seed, on_log=lambda actor, step: save_policy(actor, out, {**info, "steps_done": step})
    )
    info["train_seconds"] = round(time.perf_counter() - start, 1)
    returns = evaluate(env, MeanAction(net, len(skills)), args.eval_episodes, seed=10_000 + args.seed)
    info["mean_return"] = {skill: round(r, 2) for skill, r in zip(skills, returns)}
    info["eval_episodes"] = args.eval_episodes
    save_policy(net, out, {**info, "steps_done": args.steps})
    print(json.dumps(info, indent=1))
    print(f"saved {out}")
