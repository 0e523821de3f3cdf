"""Episode datasets on disk: TensorDict memory-mapped tensors plus JSON metadata.

Layout of a dataset directory (schema version 1)::

    metadata.json        schema_version, env_id, level, source (real|imaginary), encoder_id,
                         embedding_dim, state_dim, action_kind, num_actions|action_dim, tasks,
                         counts, produced_by {command, config}, generator (imaginary data)
    instructions.json    the instruction table: a list of texts, row i ↔ embedding row i
    tensors/             TensorDict memmap: steps[N] (one row per environment step) and
                         instruction_embeddings[K, embedding_dim]

Per step: state, next_state, action, reward, terminated, truncated, success, episode_id, step,
task_id (index into metadata.tasks) and instruction_id (row of the instruction table).
Directories are written atomically and validated on load; errors name the file and field. A loaded
dataset is mapped copy-on-write: changing its tensors never changes the files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from numbers import Integral
from pathlib import Path
from typing import Any

import torch
from tensordict import TensorDict

from imaginebench.errors import UserInputError
from imaginebench.storage import atomic_directory, read_json
from imaginebench.upstream.tensordict_memmap import load_memmap_copy_on_write

SCHEMA_VERSION = 1
SOURCES = ("real", "imaginary")
METADATA_FIELDS = (
    "schema_version",
    "env_id",
    "level",
    "source",
    "encoder_id",
    "embedding_dim",
    "state_dim",
    "action_kind",
    "tasks",
    "counts",
    "produced_by",
)
METADATA_DEFAULTS = {"reward_version": 1, "states_version": 1}
"""Fields added after schema 1, with the value data written before them implicitly have."""
INDEX_FIELDS = ("episode_id", "step", "task_id", "instruction_id")
FLAG_FIELDS = ("terminated", "truncated", "success")


class DatasetError(UserInputError):
    """A dataset on disk is missing, malformed or inconsistent."""


@dataclass
class EpisodeDataset:
    """An in-memory (or memory-mapped) episode dataset; see the module docstring for fields."""

    steps: TensorDict
    instruction_texts: list[str]
    instruction_embeddings: torch.Tensor
    metadata: dict[str, Any]
    path: Path | None = field(default=None, compare=False)

    @property
    def num_steps(self) -> int:
        return int(self.steps.batch_size[0])

    @property
    def num_episodes(self) -> int:
        return int(self.steps["episode_id"].unique().numel()) if self.num_steps else 0

    @property
    def tasks(self) -> list[str]:
        return list(self.metadata["tasks"])

    @property
    def source(self) -> str:
        return self.metadata["source"]

    def with_episodes(self, episode_ids: list[int]) -> EpisodeDataset:
        """Only the steps of ``episode_ids`` (a copy, in their order here); instructions, metadata and path as
        they are: the caller decides whether the metadata still describe the rows."""
        rows = torch.isin(self.steps["episode_id"], torch.tensor(episode_ids, dtype=torch.long))
        return EpisodeDataset(
            self.steps[rows], self.instruction_texts, self.instruction_embeddings, self.metadata, self.path
        )

    def counts(self) -> dict[str, Any]:
        """Episodes and successes per task, recomputed from the steps. An episode succeeded if its goal held at any
        step: the last one where episodes stop at success, an earlier one where they go on past it."""
        last = _episode_last_rows(self.steps)
        episode_index = torch.zeros(self.num_steps, dtype=torch.long)
        episode_index[last[:-1] + 1] = 1
        reached = torch.zeros(last.numel(), dtype=torch.bool)
        reached.index_put_((episode_index.cumsum(0),), self.steps["success"].bool(), accumulate=True)
        per_task: dict[str, dict[str, int]] = {}
        for task_id, success in zip(self.steps["task_id"][last].tolist(), reached.tolist()):
            entry = per_task.setdefault(self.tasks[task_id], {"episodes": 0, "successes": 0})
            entry["episodes"] += 1
            entry["successes"] += int(success)
        return {"episodes": int(last.numel()), "steps": self.num_steps, "per_task": per_task}


def check_metadata(dataset: EpisodeDataset, expected: dict[str, Any], context: str) -> None:
    """Refuse a dataset made for another env, encoder, level or source before its rows get mixed
    with the rest; the error names the metadata file, the field and who asked (``context``)."""
    for name, value in expected.items():
        found = metadata_field(dataset.metadata, name)
        if found != value:
            hint = f"; {FIELD_HINTS[name]}" if name in FIELD_HINTS else ""
            raise DatasetError(
                f"{dataset.path / 'metadata.json'}: field {name!r} is {found!r}, expected {value!r} ({context}){hint}"
            )


FIELD_HINTS = {
    "reward_version": "the env's reward changed since it was made: collect or imagine it again (--overwrite)",
    "states_version": "the env's states changed since it was made: collect or imagine it again (--overwrite)",
}


def metadata_field(metadata: dict[str, Any], name: str) -> Any:
    """``metadata[name]``, or the value data written before the field existed have (``METADATA_DEFAULTS``)."""
    return metadata.get(name, METADATA_DEFAULTS.get(name))


def _episode_last_rows(steps: TensorDict) -> torch.Tensor:
    episode_id = steps["episode_id"]
    if episode_id.numel() == 0:
        return torch.zeros(0, dtype=torch.long)
    is_last = torch.ones_like(episode_id, dtype=torch.bool)
    is_last[:-1] = episode_id[1:] != episode_id[:-1]
    return is_last.nonzero().squeeze(-1)


def episode_row_ranges(steps: TensorDict) -> list[tuple[int, int]]:
    """``(first row, end row)`` of every episode, in order (episodes are contiguous rows)."""
    ends = (_episode_last_rows(steps) + 1).tolist()
    return list(zip([0, *ends[:-1]], ends))


def write_episodes(dataset: EpisodeDataset, path: str | Path, overwrite: bool = False) -> Path:
    """Validate and write ``dataset`` to ``path`` atomically (a temp dir renamed into place).

    An existing ``path`` is replaced only with ``overwrite`` and only if it is a dataset directory."""
    path = Path(path)
    metadata = {**dataset.metadata, "schema_version": SCHEMA_VERSION, "counts": dataset.counts()}
    _validate(dataset.steps, dataset.instruction_texts, dataset.instruction_embeddings, metadata, path)
    if path.exists():
        require_replaceable(path, overwrite)
    with atomic_directory(path, replace=overwrite) as tmp:
        tensors = TensorDict(
            {"steps": dataset.steps, "instruction_embeddings": dataset.instruction_embeddings}, batch_size=[]
        )
        tensors.memmap(tmp / "tensors", copy_existing=True)  # copy_existing: a loaded dataset is memory-mapped already
        (tmp / "instructions.json").write_text(json.dumps(dataset.instruction_texts, indent=0))
        (tmp / "metadata.json").write_text(json.dumps(metadata, indent=2))
    return path


def is_dataset_dir(path: Path) -> bool:
    """Whether ``path`` looks like a directory :func:`write_episodes` wrote (it need not be valid)."""
    metadata = read_json(path / "metadata.json")
    return (
        isinstance(metadata, dict)
        and "schema_version" in metadata
        and "source" in metadata
        and (path / "tensors").is_dir()
    )


def require_replaceable(path: Path, overwrite: bool) -> None:
    """Refuse to replace ``path`` unless asked to (``overwrite``) and it is a dataset: replacing
    deletes it, and a mistyped output path must never delete a project folder."""
    if not overwrite:
        raise DatasetError(f"{path} already exists (pass --overwrite to replace it)")
    if not is_dataset_dir(path):
        raise DatasetError(
            f"{path} is not a dataset directory (no metadata.json and tensors/ written by imaginebench); refusing to replace it"
        )


def load_episodes(path: str | Path) -> EpisodeDataset:
    """Load and validate a dataset directory; a bad file raises :class:`DatasetError` naming it."""
    path = Path(path)
    if not path.is_dir():
        raise DatasetError(f"{path}: no such dataset directory")
    metadata = _read_json(path / "metadata.json", dict)
    texts = _read_json(path / "instructions.json", list)
    tensors_dir = path / "tensors"
    try:
        tensors = load_memmap_copy_on_write(tensors_dir)
    except Exception as error:  # the memmap loader raises many types; a truncated file is one of them
        raise DatasetError(f"{tensors_dir}: cannot load tensors ({error})") from error
    for key in ("steps", "instruction_embeddings"):
        if key not in tensors.keys():
            raise DatasetError(f"{tensors_dir}: field {key!r} is missing")
    steps, embeddings = tensors["steps"], tensors["instruction_embeddings"]
    _validate(steps, texts, embeddings, metadata, path)
    recorded = metadata["counts"].get("steps") if isinstance(metadata["counts"], dict) else None
    if recorded is not None and recorded != int(steps.batch_size[0]):
        raise DatasetError(
            f"{tensors_dir}: holds {int(steps.batch_size[0])} steps but {path / 'metadata.json'} counts {recorded}"
        )
    return EpisodeDataset(steps, texts, embeddings, metadata, path)


def _read_json(file: Path, kind: type) -> Any:
    try:
        value = json.loads(file.read_text())
    except FileNotFoundError:
        raise DatasetError(f"{file}: missing (not a complete dataset directory)") from None
    except json.JSONDecodeError as error:
        raise DatasetError(f"{file}: invalid JSON ({error})") from None
    if not isinstance(value, kind):
        raise DatasetError(f"{file}: expected a JSON {kind.__name__}")
    return value


def _validate(steps: TensorDict, texts: list[str], embeddings: torch.Tensor, metadata: dict, path: Path) -> None:
    meta_file, tensor_dir = path / "metadata.json", path / "tensors"
    for name in METADATA_FIELDS:
        if name not in metadata:
            raise DatasetError(f"{meta_file}: field {name!r} is missing")
    if metadata["schema_version"] != SCHEMA_VERSION:
        raise DatasetError(
            f"{meta_file}: field 'schema_version' is {metadata['schema_version']!r}; this code reads {SCHEMA_VERSION}"
        )
    if metadata["source"] not in SOURCES:
        raise DatasetError(f"{meta_file}: field 'source' is {metadata['source']!r}; expected one of {SOURCES}")
    if metadata["action_kind"] not in ("discrete", "continuous"):
        raise DatasetError(f"{meta_file}: field 'action_kind' must be 'discrete' or 'continuous'")
    action_size = "num_actions" if metadata["action_kind"] == "discrete" else "action_dim"
    if action_size not in metadata:
        raise DatasetError(
            f"{meta_file}: field {action_size!r} is missing (action_kind {metadata['action_kind']!r} needs it)"
        )
    field_kinds = (
        (("env_id", "level", "encoder_id"), "a string", lambda v: isinstance(v, str)),
        (
            ("state_dim", "embedding_dim", action_size),
            "a positive integer",
            lambda v: isinstance(v, Integral) and not isinstance(v, bool) and v > 0,
        ),
        (
            ("tasks",),
            "a list of task names",
            lambda v: isinstance(v, (list, tuple)) and all(isinstance(t, str) for t in v),
        ),
        (("counts", "produced_by"), "a JSON object", lambda v: isinstance(v, dict)),
    )
    for names, kind, holds in field_kinds:
        for name in names:
            if not holds(metadata[name]):
                raise DatasetError(f"{meta_file}: field {name!r} must be {kind}, got {metadata[name]!r}")

    def fail(name: str, problem: str) -> DatasetError:
        return DatasetError(f"{tensor_dir}: field {name!r} {problem}")

    n = int(steps.batch_size[0]) if steps.batch_dims else -1
    if n < 0:
        raise fail("steps", "must have one batch dimension")
    state_dim, embedding_dim = metadata["state_dim"], metadata["embedding_dim"]
    discrete = metadata["action_kind"] == "discrete"
    expected: dict[str, tuple[torch.dtype, tuple[int, ...]]] = {
        "state": (torch.float32, (n, state_dim)),
        "next_state": (torch.float32, (n, state_dim)),
        "action": (torch.int64, (n,)) if discrete else (torch.float32, (n, metadata["action_dim"])),
        "reward": (torch.float32, (n,)),
        **{name: (torch.bool, (n,)) for name in FLAG_FIELDS},
        **{name: (torch.int64, (n,)) for name in INDEX_FIELDS},
    }
    for name, (dtype, shape) in expected.items():
        if name not in steps.keys():
            raise fail(name, "is missing")
        value = steps[name]
        if value.dtype != dtype:
            raise fail(name, f"has dtype {value.dtype}; expected {dtype}")
        if tuple(value.shape) != shape:
            raise fail(name, f"has shape {tuple(value.shape)}; expected {shape}")
        if value.is_floating_point() and not torch.isfinite(value).all():
            raise fail(name, "contains NaN or infinite values")
    if embeddings.dtype != torch.float32 or embeddings.ndim != 2 or embeddings.shape[1] != embedding_dim:
        raise fail(
            "instruction_embeddings",
            f"must be float32 (K, {embedding_dim}); got {embeddings.dtype} {tuple(embeddings.shape)}",
        )
    if not torch.isfinite(embeddings).all():
        raise fail("instruction_embeddings", "contains NaN or infinite values")
    if len(texts) != embeddings.shape[0]:
        raise DatasetError(f"{path / 'instructions.json'}: {len(texts)} texts but {embeddings.shape[0]} embedding rows")
    if n == 0:
        return
    if discrete and not (0 <= int(steps["action"].min()) and int(steps["action"].max()) < metadata["num_actions"]):
        raise fail("action", f"has values outside [0, {metadata['num_actions']})")
    for name, bound in (("task_id", len(metadata["tasks"])), ("instruction_id", len(texts))):
        ids = steps[name]
        if int(ids.min()) < 0 or int(ids.max()) >= bound:
            raise fail(name, f"has values outside [0, {bound})")
    episode_id, step = steps["episode_id"], steps["step"]
    new_episode = torch.ones(n, dtype=torch.bool)
    new_episode[1:] = episode_id[1:] != episode_id[:-1]
    if not torch.equal(step[new_episode], torch.zeros_like(step[new_episode])):
        raise fail("step", "must start at 0 in every episode (rows of an episode are contiguous)")
    if not torch.equal(step[1:][~new_episode[1:]], step[:-1][~new_episode[1:]] + 1):
        raise fail("step", "must increase by 1 within an episode")
    if episode_id[new_episode].unique().numel() != int(new_episode.sum()):
        raise fail("episode_id", "repeats a non-contiguous episode")
    check_end_flags(steps, tensor_dir)


def check_end_flags(steps: TensorDict, where: Path | str) -> None:
    """``terminated``/``truncated`` set on an episode's last row, one of them at least, and nowhere
    else: so two episodes merged into one, or an episode cut off, are errors (naming ``where``)."""
    if steps.batch_size[0] == 0:
        return
    last_row = torch.ones(steps.batch_size[0], dtype=torch.bool)
    last_row[:-1] = steps["episode_id"][1:] != steps["episode_id"][:-1]
    for name in ("terminated", "truncated"):
        if (steps[name] & ~last_row).any():
            row = int((steps[name] & ~last_row).nonzero()[0])
            raise DatasetError(f"{where}: field {name!r} is set on row {row}, which is not the last row of its episode")
    unfinished = ~(steps["terminated"] | steps["truncated"]) & last_row
    if unfinished.any():
        raise DatasetError(
            f"{where}: field 'terminated' and 'truncated' are both unset on row {int(unfinished.nonzero()[0])}, "
            "the last row of its episode (a cut-off episode)"
        )


def concat_datasets(datasets: list[EpisodeDataset], metadata: dict[str, Any] | None = None) -> EpisodeDataset:
    """Join datasets of one env: episode ids renumbered, task and instruction tables merged by name."""
    if not datasets:
        raise ValueError("concat_datasets needs at least one dataset")
    first = datasets[0].metadata
    for other in datasets[1:]:
        for key in ("env_id", "encoder_id", "state_dim", "action_kind"):
            if other.metadata[key] != first[key]:
                where = other.path or "a dataset"
                raise DatasetError(
                    f"{where}: metadata field {key!r} is {other.metadata[key]!r}, expected {first[key]!r}"
                )
    tasks = list(dict.fromkeys(t for d in datasets for t in d.tasks))
    texts = list(dict.fromkeys(t for d in datasets for t in d.instruction_texts))
    text_row = {t: i for i, t in enumerate(texts)}
    embeddings = torch.zeros(len(texts), datasets[0].instruction_embeddings.shape[1])
    parts, episode_offset = [], 0
    for dataset in datasets:
        rows = torch.tensor([text_row[t] for t in dataset.instruction_texts], dtype=torch.long)
        embeddings[rows] = torch.as_tensor(dataset.instruction_embeddings)
        task_map = torch.tensor([tasks.index(t) for t in dataset.tasks], dtype=torch.long)
        part = dataset.steps.to_tensordict() if hasattr(dataset.steps, "to_tensordict") else dataset.steps.clone()
        if part.batch_size[0]:
            _, dense_episode = torch.unique_consecutive(part["episode_id"], return_inverse=True)
            part["episode_id"] = dense_episode + episode_offset
            episode_offset = int(part["episode_id"].max()) + 1
            part["task_id"] = task_map[part["task_id"]]
            part["instruction_id"] = rows[part["instruction_id"]]
        parts.append(part)
    merged_meta = {**first, **(metadata or {}), "tasks": tasks}
    return EpisodeDataset(torch.cat(parts), texts, embeddings, merged_meta)


def validate_episodes(dataset: EpisodeDataset) -> None:
    """Check a dataset built in memory (e.g. imported from another format) as :func:`load_episodes`
    checks one on disk; errors name ``dataset.path``."""
    path = dataset.path or Path("<in memory>")
    _validate(dataset.steps, dataset.instruction_texts, dataset.instruction_embeddings, dataset.metadata, path)
