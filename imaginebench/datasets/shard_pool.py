"""Writing a dataset's missing shards, in this process or in a pool of worker processes.

Shards are independent (episode ``i`` depends only on the run's arguments and ``i``), so each worker
produces and writes whole shards on its own, each atomically (:func:`write_episodes`): a worker
stopped mid-shard leaves no shard that a resumed run would trust, and the shards finished before a
failure stay for it. Workers are spawned, not forked (safe with torch's threads and simulators).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from imaginebench.datasets.episodes import EpisodeDataset, write_episodes
from imaginebench.processes import spawn_context, use_one_thread

Produce = Callable[[range], EpisodeDataset]


@dataclass(frozen=True)
class Shard:
    """Shard ``number``: the episodes ``indices``, written to ``directory``."""

    number: int
    indices: range
    directory: Path

    def describe(self) -> str:
        return f"shard {self.number} (episodes {self.indices.start}-{self.indices.stop - 1})"


class ShardFailedError(RuntimeError):
    """A worker failed to produce a shard; its own traceback is the ``__cause__``."""


def write_shards(produce: Produce, shards: list[Shard], workers: int, on_written: Callable[[Shard], None]) -> None:
    """Produce and write every shard, calling ``on_written`` (in this process) as each one is on disk.

    With more than one worker (never more than shards), ``produce`` runs in worker processes and must
    be picklable: a module-level function or a ``functools.partial`` of one, not a closure. On a
    failure the shards not started are cancelled, those running are finished, and
    :class:`ShardFailedError` names the shard that failed."""
    workers = min(workers, len(shards))
    if workers <= 1:
        for shard in shards:
            write_shard(produce, shard)
            on_written(shard)
        return
    require_picklable(produce)
    pool = ProcessPoolExecutor(workers, mp_context=spawn_context(), initializer=use_one_thread)
    try:
        running = {pool.submit(write_shard, produce, shard): shard for shard in shards}
        for future in as_completed(running):
            shard = running[future]
            try:
                future.result()
            except Exception as error:
                raise ShardFailedError(
                    f"{shard.describe()} failed in a worker process: {type(error).__name__}: {error}; "
                    f"the shards written are kept in {shard.directory.parent}, and the same command resumes from them"
                ) from error
            on_written(shard)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def write_shard(produce: Produce, shard: Shard) -> None:
    write_episodes(produce(shard.indices), shard.directory)


def require_picklable(produce: Produce) -> None:
    """Fail before any worker starts, naming the cause, rather than once per shard."""
    try:
        pickle.dumps(produce)
    except (pickle.PicklingError, AttributeError, TypeError) as error:
        raise TypeError(
            f"workers > 1 need a picklable producer (a module-level function or a functools.partial of one), "
            f"got {produce!r}: {error}"
        ) from error
