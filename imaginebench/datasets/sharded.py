"""Resumable, sharded writing of a dataset whose episodes are produced in independent chunks.

Used by expert collection and by imagination: episode ``i`` depends only on the run's
arguments and ``i``, so work is written in shards, each atomically (in worker processes if asked:
:mod:`imaginebench.datasets.shard_pool`); an interrupted run resumes from its last complete shard,
and the final dataset appears (by rename) only when all are done.
Two runs never write one output at once (a lock), and leftovers of killed runs are removed by the next.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from imaginebench.datasets.episodes import (
    concat_datasets,
    load_episodes,
    require_replaceable,
    write_episodes,
)
from imaginebench.datasets.shard_pool import Produce, Shard, write_shards
from imaginebench.errors import naming
from imaginebench.locks import exclusive_lock
from imaginebench.storage import atomic_write_text, read_json, remove_stale_siblings

CONFIG_FILE = "config.json"


def write_sharded(
    produce: Produce,
    episodes: int,
    out: str | Path,
    config: dict[str, Any],
    shard_episodes: int,
    description: str,
    overwrite: bool = False,
    progress: bool = True,
    wait: bool = False,
    workers: int = 1,
) -> Path:
    """Write ``produce(range(i, j))`` for consecutive shards of ``episodes`` into ``out``.

    ``config`` (JSON-able) identifies the run: a partial run with a different config is discarded,
    not resumed. It is also recorded in the dataset's ``produced_by``.

    One writer at a time holds ``out``'s lock (:mod:`imaginebench.locks`); another one fails naming
    it, or with ``wait`` waits and then returns the ``out`` the holder wrote ("write if missing").

    ``workers`` > 1 produces the missing shards in that many processes (:mod:`imaginebench.datasets.shard_pool`;
    ``produce`` must then be picklable); the dataset is the same for any number, so it is not part of ``config``.
    """
    out = Path(out)
    with exclusive_lock(out, wait=wait):
        remove_stale_siblings(out)
        partial = out.parent / f".{out.name}.partial"
        if out.exists():
            made_by = read_json(out / "metadata.json", "produced_by", "config")
            if partial.exists() and made_by == read_json(partial / CONFIG_FILE):
                shutil.rmtree(partial)  # its run finished but was stopped before removing it
            if wait and not overwrite:
                return out  # written by the run waited for: it was missing, now it is not
            with naming("--out"):
                require_replaceable(out, overwrite)
        if partial.exists() and read_json(partial / CONFIG_FILE) != config:
            shutil.rmtree(partial)  # a different run was interrupted here: restart cleanly
        partial.mkdir(parents=True, exist_ok=True)
        atomic_write_text(json.dumps(config), partial / CONFIG_FILE)

        shards = [
            Shard(number, range(start, min(start + shard_episodes, episodes)), partial / f"shard-{number:05d}")
            for number, start in enumerate(range(0, episodes, shard_episodes))
        ]
        missing = [shard for shard in shards if not shard.directory.exists()]
        for shard in missing:
            remove_stale_siblings(shard.directory)  # temporary directories of a shard's killed writer
        bar = tqdm(total=episodes, desc=description, unit="ep", disable=not progress)
        bar.update(episodes - sum(len(shard.indices) for shard in missing))
        write_shards(produce, missing, workers, lambda shard: bar.update(len(shard.indices)))
        bar.close()
        produced_by = {"command": shlex.join(sys.argv), "config": config}
        datasets = [load_episodes(shard.directory) for shard in shards]  # in index order, whatever order they came in
        write_episodes(concat_datasets(datasets, {"produced_by": produced_by}), out, overwrite=overwrite)
        shutil.rmtree(partial)
    return out
