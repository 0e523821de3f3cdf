"""Resumable, sharded writing of a dataset whose episodes are produced in independent chunks.

Used by expert collection and by imagination: episode ``i`` depends only on the run's
arguments and ``i``, so work is written in shards, each atomically; an interrupted run resumes
from its last complete shard, and the final dataset appears (by rename) only when all are done.
Two runs never write one output at once (a lock), and leftovers of killed runs are removed by the next.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from imaginebench.datasets.episodes import (
    EpisodeDataset,
    concat_datasets,
    load_episodes,
    require_replaceable,
    write_episodes,
)
from imaginebench.errors import naming
from imaginebench.locks import exclusive_lock
from imaginebench.storage import atomic_write_text, read_json, remove_stale_siblings

CONFIG_FILE = "config.json"


def write_sharded(
    produce: Callable[[range], EpisodeDataset],
    episodes: int,
    out: str | Path,
    config: dict[str, Any],
    shard_episodes: int,
    description: str,
    overwrite: bool = False,
    progress: bool = True,
    wait: bool = False,
) -> Path:
    """Write ``produce(range(i, j))`` for consecutive shards of ``episodes`` into ``out``.

    ``config`` (JSON-able) identifies the run: a partial run with a different config is discarded,
    not resumed. It is also recorded in the dataset's ``produced_by``.

    One writer at a time holds ``out``'s lock (:mod:`imaginebench.locks`); another one fails naming
    it, or with ``wait`` waits and then returns the ``out`` the holder wrote ("write if missing").
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
        write_episodes(concat_datasets(shards, {"produced_by": produced_by}), out, overwrite=overwrite)
        shutil.rmtree(partial)
    return out
