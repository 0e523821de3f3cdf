"""A vector env whose sub-envs step in a few worker processes, a contiguous block of them in each.

gymnasium's ``AsyncVectorEnv`` runs one process per sub-env (320 for a Meta-World level of 32 tasks
× 10 episodes), and chunking several sub-envs into one of its processes never landed (gym #1795,
#2072), so this is a small pool by hand: each worker owns a ``SyncVectorEnv`` of its block, and only
seeds, actions and the step results cross the pipes. Each sub-env gets the same reset seed and
autoresets as in one ``SyncVectorEnv`` of them all, so the batches are the same.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence
from contextlib import suppress
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import batch_space

from imaginebench.processes import spawn_context, use_one_thread

CLOSE_TIMEOUT_S = 10.0
"""How long a worker may take to close its envs before it is terminated."""


class WorkerFailedError(RuntimeError):
    """A worker process failed; the message holds its traceback."""


class WorkerVectorEnv(gym.vector.VectorEnv):
    """``SyncVectorEnv(env_fns)`` stepped in ``workers`` spawned, single-threaded processes.

    ``env_fns`` must be picklable (module-level functions or ``functools.partial`` of them).
    ``reset`` takes one seed per sub-env (or none); ``options`` are not supported. Close it (the
    workers are daemons, so they also end with this process); a worker's failure is raised as
    :class:`WorkerFailedError` with its traceback.
    """

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env]], workers: int) -> None:
        self._pipes: list[Connection] = []
        self._processes: list[BaseProcess] = []
        self.num_envs = len(env_fns)
        # each worker's sub-envs: contiguous blocks, the first ones one longer where they differ
        self._blocks: list[slice] = [
            slice(int(block[0]), int(block[-1]) + 1)
            for block in np.array_split(np.arange(self.num_envs), workers)
            if len(block)
        ]
        context = spawn_context()
        try:
            for number, block in enumerate(self._blocks):
                pipe, worker_end = context.Pipe()
                process = context.Process(
                    target=_serve,
                    args=(worker_end, list(env_fns[block])),
                    name=f"{type(self).__name__}-{number}",
                    daemon=True,
                )
                process.start()
                worker_end.close()
                self._pipes.append(pipe)
                self._processes.append(process)
            spaces = self._receive_all()
        except BaseException:
            self.close()
            raise
        self.single_observation_space, self.single_action_space, metadata = spaces[0]
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.metadata = metadata

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        if options is not None:
            raise ValueError(f"{type(self).__name__}.reset takes no options (set them in the sub-envs)")
        seeds = [None] * self.num_envs if seed is None else seed
        if isinstance(seeds, int):
            seeds = [seeds + k for k in range(self.num_envs)]  # what SyncVectorEnv does with one seed
        for pipe, block in zip(self._pipes, self._blocks):
            pipe.send(("reset", list(seeds[block])))
        observations, infos = zip(*self._receive_all())
        return self._join(observations), self._join(infos)

    def step(self, actions):
        for pipe, block in zip(self._pipes, self._blocks):
            pipe.send(("step", actions[block]))
        observations, rewards, terminated, truncated, infos = zip(*self._receive_all())
        return (
            self._join(observations),
            np.concatenate(rewards),
            np.concatenate(terminated),
            np.concatenate(truncated),
            self._join(infos),
        )

    def close_extras(self, **kwargs: Any) -> None:
        for pipe in self._pipes:
            with suppress(OSError):  # a worker that died has closed its end
                pipe.send(("close", None))
        for process in self._processes:
            process.join(CLOSE_TIMEOUT_S)
            if process.is_alive():
                process.terminate()
                process.join()
        for pipe in self._pipes:
            pipe.close()

    def __del__(self) -> None:
        if hasattr(self, "_processes"):
            self.close()

    def _receive_all(self) -> list[Any]:
        """Every worker's answer, in block order; the first failure is raised (the others still answer)."""
        answers, failures = [], []
        for number, (pipe, block) in enumerate(zip(self._pipes, self._blocks)):
            try:
                status, payload = pipe.recv()
            except EOFError:
                status, payload = "error", f"the process ended (exit code {self._processes[number].exitcode})"
            answers.append(payload)
            if status == "error":
                failures.append(f"worker {number} (sub-envs {block.start}-{block.stop - 1}) failed:\n{payload}")
        if failures:
            raise WorkerFailedError(failures[0])
        return answers

    def _join(self, parts: Sequence[Any]) -> Any:
        return _concatenate(list(parts), [block.stop - block.start for block in self._blocks])


def _concatenate(parts: list[Any], sizes: list[int]) -> Any:
    """The blocks' batches (arrays, or dicts of them) as one batch. A key some blocks lack (a vector
    info key none of their sub-envs set) is filled as ``SyncVectorEnv`` fills it: zeros, ``None`` for
    objects, and ``False`` in its ``_key`` mask."""
    template = next(part for part in parts if part is not None)
    if isinstance(template, dict):
        keys = dict.fromkeys(key for part in parts if part is not None for key in part)
        return {key: _concatenate([None if part is None else part.get(key) for part in parts], sizes) for key in keys}
    template = np.asarray(template)
    return np.concatenate(
        [
            np.asarray(part)
            if part is not None
            else np.full((size, *template.shape[1:]), None if template.dtype == object else 0, template.dtype)
            for part, size in zip(parts, sizes)
        ]
    )


def _serve(pipe: Connection, env_fns: list[Callable[[], gym.Env]]) -> None:
    """A worker: builds its block, reports its spaces, then resets and steps it on request until closed."""
    use_one_thread()
    envs = None
    try:
        envs = gym.vector.SyncVectorEnv(env_fns)
        pipe.send(("ok", (envs.single_observation_space, envs.single_action_space, envs.metadata)))
        while (request := pipe.recv())[0] != "close":
            command, data = request
            pipe.send(("ok", envs.reset(seed=data) if command == "reset" else envs.step(data)))
    except (EOFError, KeyboardInterrupt):
        pass  # the parent is gone or interrupted (and then closes or terminates this worker)
    except Exception:
        with suppress(OSError):
            pipe.send(("error", traceback.format_exc()))
    finally:
        if envs is not None:
            envs.close()
        pipe.close()
