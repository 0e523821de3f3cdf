"""Write a subset of an episode dataset's episodes, relabelled as another source: a probe, not a data variant.

It separates what imaginary rollouts teach from how many there are. Expert episodes of a novel level, sent through
the imaginary stream of a run (``--source imaginary``) in the number the filters keep of a model's rollouts, and with
the episode lengths of those rollouts (``--lengths-like``) or drawn at random, take the rollouts' share of every
batch with none of their errors:

    .venv/bin/python benchmarks/episode_subset.py data/Ball-v0/real-rephrase data/Ball-v0/expert-rephrase-random \
        --episodes 214
    .venv/bin/python benchmarks/episode_subset.py data/Ball-v0/real-rephrase data/Ball-v0/expert-rephrase-lenmatched \
        --lengths-like data/Ball-v0/imaginary-rephrase --filter goal transitions

(sweeps/clevr-rephrase-cause.yaml trains on them).
"""

from __future__ import annotations

import argparse
import random
from collections import Counter, defaultdict
from dataclasses import replace

from imaginebench.datasets.episodes import EpisodeDataset, episode_row_ranges, load_episodes, write_episodes
from imaginebench.errors import UserInputError, reported_to_user
from imaginebench.rollout_quality import ROLLOUT_CHECKS, check_rollouts, failed_checks


def episode_lengths(dataset: EpisodeDataset) -> dict[int, int]:
    """Episode id → number of steps."""
    steps = dataset.steps
    return {int(steps["episode_id"][start]): end - start for start, end in episode_row_ranges(steps)}


def kept_length_counts(dataset: EpisodeDataset, checks: list[str]) -> Counter[int]:
    """How many of ``dataset``'s rollouts of each length pass every one of ``checks`` (the filters of a run)."""
    return Counter(c.length for c in check_rollouts(dataset, progress=True) if not failed_checks(c) & set(checks))


def drawn_episodes(lengths: dict[int, int], wanted: Counter[int] | int, seed: int) -> list[int]:
    """``wanted`` episode ids drawn without replacement, per length when ``wanted`` counts lengths."""
    rng = random.Random(seed)
    if isinstance(wanted, int):
        if wanted > len(lengths):
            raise UserInputError(f"--episodes {wanted}: the dataset holds {len(lengths)}")
        return rng.sample(sorted(lengths), wanted)
    by_length: dict[int, list[int]] = defaultdict(list)
    for episode, length in sorted(lengths.items()):
        by_length[length].append(episode)
    short = {n: k for n, k in wanted.items() if k > len(by_length[n])}
    if short:
        raise UserInputError(f"--lengths-like: too few source episodes of lengths {sorted(short)} (wanted {short})")
    return [episode for n, k in sorted(wanted.items()) for episode in rng.sample(by_length[n], k)]


def subset(dataset: EpisodeDataset, episodes: list[int], source: str) -> EpisodeDataset:
    """``episodes`` of ``dataset`` as a new dataset of ``source``, its counts recomputed and its origin named."""
    chosen = dataset.with_episodes(episodes)
    metadata = {**dataset.metadata, "source": source, "counts": chosen.counts(), "subset_of": str(dataset.path)}
    return replace(chosen, metadata=metadata, path=None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source_dataset")
    parser.add_argument("out")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--episodes", type=int, help="this many episodes, drawn at random")
    which.add_argument("--lengths-like", help="as many episodes of each length as this dataset's kept rollouts")
    parser.add_argument("--filter", nargs="*", default=[], choices=ROLLOUT_CHECKS, help="checks a kept rollout passes")
    parser.add_argument("--source", default="imaginary", choices=["real", "imaginary"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--overwrite", action="store_true", help="replace an existing dataset at OUT")
    args = parser.parse_args()
    with reported_to_user("episode_subset.py"):
        dataset = load_episodes(args.source_dataset)
        if args.episodes is not None and args.episodes < 1:
            raise UserInputError(f"--episodes {args.episodes}: must be at least 1")
        wanted = args.episodes or kept_length_counts(load_episodes(args.lengths_like), args.filter)
        chosen = subset(dataset, drawn_episodes(episode_lengths(dataset), wanted, args.seed), args.source)
        write_episodes(chosen, args.out, overwrite=args.overwrite)
    print(f"wrote {chosen.num_episodes} episodes, {chosen.num_steps} steps to {args.out}")


if __name__ == "__main__":
    main()
