"""Can a grounded model pick, among rollouts it sampled for one goal, the ones that reach the goal?

KALM grounds one model on four tasks; two of them read a rollout back: rollout explanation (rollout → goal text) and
consequence (first state and goal → final state). If either judged its own samples well, sampling N rollouts per start
and keeping the best-judged one would raise goal consistency without asking the simulator. From the level's resets
(rollout i: task i mod #tasks, reset seed ``episode_seed(seed, i)``, as ``imaginebench imagine``), N rollouts are
sampled per start (candidate 0 with imagine's own generator, so it is the rollout ``imagine --temperature T`` makes)
and each judge keeps the one it scores highest:

- explanation: ``log p(goal | rollout)``, the goal's tokens and the end of text teacher-forced after the
  explanation prompt (with ``window_steps``, the rollout's last window, as grounding explains it);
- consequence: ``log p(final state | first state, goal)`` under the consequence prompt, for models with whole-number
  states (``model.state_values``, BabyAI), whose state head gives every value a probability.

Per task it prints the share of starts whose first candidate reaches its goal (the generated states meet the env's
success check: the ``consistent`` column of ``rollout-quality``), the mean over candidates, whether any of the N does
(what a perfect judge would keep), and what each judge keeps; with the mean score gap between reaching and missing
candidates of the starts that have both.

    .venv/bin/python benchmarks/candidate_judges.py CKPT --env BabyAI-v0 --level easy [--rollouts 140] [--candidates 4]
        [--temperature 1.0] [--next-states dynamics]
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F
from torch import Tensor

from datamodules.grounding_prompts import STATE
from imaginebench.collect import episode_seed
from imaginebench.commands.imagine import imagination_starts, load_grounded_model
from imaginebench.registry import get_domain, make
from modules.grounding.generation import ImaginedBatch, imagine_rollouts


@torch.no_grad()
def explanation_scores(module, batch: ImaginedBatch, instructions: list[str]) -> Tensor:
    """``log p(instruction | rollout)`` per row, summed over the instruction's tokens and the end of text."""
    sequences = [
        module.builder.explanation(
            *module.explained_part(batch.states[row, : length + 1], batch.actions[row, :length]), text
        )
        for row, (length, text) in enumerate(zip(batch.lengths.tolist(), instructions))
    ]
    prompt = {k: v.to(module.device) for k, v in module.builder.collate(sequences).items()}
    hidden = module.decode(module.embed(prompt), prompt["attention_mask"]).last_hidden_state[:, :-1]
    head = module.lm.get_output_embeddings()
    log_probs = torch.log_softmax(head(hidden.to(head.weight.dtype)).float(), -1)
    picked = log_probs.gather(-1, prompt["token_ids"][:, 1:].unsqueeze(-1)).squeeze(-1)
    supervised = prompt["supervised"][:, 1:] & prompt["attention_mask"][:, 1:].bool()
    return torch.where(supervised, picked, torch.zeros_like(picked)).sum(-1).cpu()


@torch.no_grad()
def consequence_scores(module, batch: ImaginedBatch, instructions: list[str]) -> Tensor:
    """``log p(final state | first state, instruction)`` per row, summed over the state's dimensions."""
    values = module.hparams.state_values
    finals = [batch.states[row, length] for row, length in enumerate(batch.lengths.tolist())]
    sequences = [
        module.builder.consequence(text, batch.states[row, 0], final)
        for row, (text, final) in enumerate(zip(instructions, finals))
    ]
    prompt = {k: v.to(module.device) for k, v in module.builder.collate(sequences).items()}
    latest = module.latest_states(prompt)
    hidden = module.decode(module.embed(prompt, latest), prompt["attention_mask"]).last_hidden_state[:, :-1].float()
    final_slot = prompt["supervised"][:, 1:] & (prompt["kinds"][:, 1:] == STATE)  # one per row
    log_probs = F.log_softmax(module.state_head(hidden[final_slot], latest[:, :-1][final_slot]), -1)
    target = prompt["states"][:, 1:][final_slot].round().long().clamp(0, values - 1)
    return log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1).sum(-1).cpu()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint")
    parser.add_argument("--env", required=True)
    parser.add_argument("--level", required=True)
    parser.add_argument("--rollouts", type=int, default=140)
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--next-states", default="dynamics")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=64, help="imagine's default, so candidate 0 is its rollout")
    args = parser.parse_args()
    module = load_grounded_model(args.checkpoint)
    judges = {"explanation": explanation_scores}
    if module.hparams.state_values:
        judges["consequence"] = consequence_scores
    tasks = list(get_domain(args.env).tasks[args.level])
    rows: dict[str, list[tuple[Tensor, dict[str, Tensor]]]] = {task: [] for task in [*tasks, "all"]}
    for start in range(0, args.rollouts, args.batch_size):
        chunk = range(start, min(start + args.batch_size, args.rollouts))
        envs = [make(args.env, args.level) for _ in chunk]
        first_states, instructions, chunk_seed = imagination_starts(envs, tasks, args.seed, chunk)

        def goal_reached(row: int, states: Tensor, envs: list = envs) -> bool:
            return bool(envs[row].success_flags(states.numpy())[-1])

        candidates = [
            imagine_rollouts(
                module,
                instructions,
                torch.stack(first_states),
                goal_reached,
                [env.horizon for env in envs],
                args.temperature,
                torch.Generator().manual_seed(chunk_seed if k == 0 else episode_seed(chunk_seed, k)),
                next_states=args.next_states,
            )
            for k in range(args.candidates)
        ]
        reached = torch.stack([c.success.any(1).float() for c in candidates])  # (N, B)
        scores = {
            name: torch.stack([judge(module, c, instructions) for c in candidates]) for name, judge in judges.items()
        }
        for row, index in enumerate(chunk):
            entry = (reached[:, row], {name: score[:, row] for name, score in scores.items()})
            rows[tasks[index % len(tasks)]].append(entry)
            rows["all"].append(entry)
        for env in envs:
            env.close()
    print(
        f"{args.env} {args.level}: {args.rollouts} starts, {args.candidates} candidates at temperature {args.temperature}"
    )
    print(f"{'task':12}{'first':>7}{'mean':>7}{'any':>7}" + "".join(f"{name:>13}{'gap':>8}" for name in judges))
    for task, entries in rows.items():
        reached = torch.stack([r for r, _ in entries])
        line = f"{task:12}{reached[:, 0].mean():7.1%}{reached.mean():7.1%}{reached.max(1).values.mean():7.1%}"
        mixed = (reached.sum(1) > 0) & (reached.sum(1) < reached.shape[1])  # starts with reaching and missing ones
        hit, miss = reached[mixed].bool(), ~reached[mixed].bool()
        for name in judges:
            score = torch.stack([s[name] for _, s in entries])
            kept = reached.gather(1, score.argmax(1, keepdim=True)).mean()
            gap = ((score[mixed] * hit).sum(1) / hit.sum(1) - (score[mixed] * miss).sum(1) / miss.sum(1)).mean()
            line += f"{kept:13.1%}{float(gap) if mixed.any() else float('nan'):+8.2f}"
        print(line)


if __name__ == "__main__":
    main()
