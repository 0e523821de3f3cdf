"""Resumable, sharded writing of a dataset whose episodes are produced in independent chunks.

Used by expert collection and by imagination: episode ``i`` depends only on the run's
arguments and ``i``, so work is written in shards, each atomically; an interrupted run resumes
from its last complete shard, and the final dataset appears (by rename) only when all are done.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any, Callable

from tqdm.auto import tqdm

from imaginebench.datasets.episodes import EpisodeDataset, concat_datasets, load_episodes, write_episodes
from imaginebench.storage import atomic_write_text


def write_sharded(
    produce: Callable[[range], EpisodeDataset],
    episodes: int,
    out: str | Path,
    config: dict[str, Any],
    shard_episodes: int,
    description: str,
    overwrite: bool = False,
    progress: bool = True,
) -> Path:
    """Write ``produce(range(i, j))`` for consecutive shards of ``episodes`` into ``out``.

    ``config`` (JSON-able) identifies the run: a partial run with a different config is discarded,
    not resumed. It is also recorded in the dataset's ``produced_by``.
    """
    out = Path(out)
    if out.exists() and not overwrite:
        raise FileExistsError(f"{out} already exists (pass --overwrite to replace it)")
    partial = out.parent / f".{out.name}.partial"
    config_file = partial / "config.json"
    if partial.exists() and (not config_file.is_file() or json.loads(config_file.read_text()) != config):
        shutil.rmtree(partial)  # a different run was interrupted here: restart cleanly
    partial.mkdir(parents=True, exist_ok=True)
    atomic_write_text(json.dumps(config), config_file)

    bar = tqdm(total=episodes, desc=description, unit="ep", disable=not progress)
    shards = []
    for number, start in enumerate(range(0, episodes, shard_episodes)):
        shard_dir = partial / f"shard-{number:05d}"
        if not shard_dir.exists():
            write_episodes(produce(range(start, min(start + shard_episodes, episodes))), shard_dir)
        shards.append(load_episodes(shard_dir))
        bar.update(min(shard_episodes, episodes - start))
    bar.close()
    produced_by = {"command": shlex.join(sys.argv), "config": config}
    write_episodes(concat_datasets(shards, {"produced_by": produced_by}), out)
    shutil.rmtree(partial)
    return out
