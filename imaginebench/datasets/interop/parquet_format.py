"""Parquet for Hugging Face ``datasets`` (where the original benchmark moved its data), and back.

A directory: ``steps.parquet`` (one row per step: every field of the episode format plus the
``task`` and ``instruction`` texts), ``instructions.parquet`` (``instruction_id``, ``instruction``,
``embedding``: the embedding table, kept out of the rows because a 384-d copy per row made the file
six times larger) and ``metadata.json``. Vectors are fixed-size float32 lists, so
``datasets.load_dataset("parquet", ...)`` reads them as float32 sequences.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from imaginebench.datasets.episodes import DatasetError, EpisodeDataset
from imaginebench.datasets.interop.flat import STEP_FIELDS, dataset_from_columns, export_metadata, refuse_existing
from imaginebench.storage import atomic_directory

STEPS_FILE, INSTRUCTIONS_FILE, METADATA_FILE = "steps.parquet", "instructions.parquet", "metadata.json"


def export_parquet(dataset: EpisodeDataset, out: str | Path, overwrite: bool = False) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out)
    refuse_existing(out, overwrite, "parquet")
    steps = {name: _arrow_column(dataset.steps[name].numpy()) for name in STEP_FIELDS}
    steps["task"] = pa.array(np.asarray(dataset.tasks, dtype=object)[dataset.steps["task_id"].numpy()], pa.string())
    steps["instruction"] = pa.array(
        np.asarray(dataset.instruction_texts, dtype=object)[dataset.steps["instruction_id"].numpy()], pa.string()
    )
    instructions = {
        "instruction_id": pa.array(np.arange(len(dataset.instruction_texts))),
        "instruction": pa.array(dataset.instruction_texts, pa.string()),
        "embedding": _arrow_column(np.asarray(dataset.instruction_embeddings)),
    }
    metadata = export_metadata(dataset, "parquet", steps=STEPS_FILE, instructions=INSTRUCTIONS_FILE)
    with atomic_directory(out) as tmp:
        pq.write_table(pa.table(steps), tmp / STEPS_FILE, compression="zstd")
        pq.write_table(pa.table(instructions), tmp / INSTRUCTIONS_FILE, compression="zstd")
        (tmp / METADATA_FILE).write_text(json.dumps(metadata, indent=2))
    return out


def _arrow_column(values: np.ndarray):
    import pyarrow as pa

    if values.ndim == 1:
        return pa.array(values)
    return pa.FixedSizeListArray.from_arrays(pa.array(values.reshape(-1)), values.shape[1])


def load_parquet(path: str | Path) -> EpisodeDataset:
    """An episode dataset back from a directory written by :func:`export_parquet`."""
    path = Path(path)
    try:
        metadata = json.loads((path / METADATA_FILE).read_text())
    except (FileNotFoundError, json.JSONDecodeError) as error:
        raise DatasetError(f"{path / METADATA_FILE}: cannot read ({error})") from None
    steps, instructions = (
        _read_columns(path / STEPS_FILE, STEP_FIELDS),
        _read_columns(path / INSTRUCTIONS_FILE, ("instruction", "embedding")),
    )
    return dataset_from_columns(
        steps, [str(text) for text in instructions["instruction"]], instructions["embedding"], metadata, path
    )


def _read_columns(file: Path, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(file)
    except (FileNotFoundError, pa.ArrowInvalid) as error:
        raise DatasetError(f"{file}: cannot read ({error})") from None
    columns = {}
    for name in names:
        if name not in table.column_names:
            raise DatasetError(f"{file}: field {name!r} is missing")
        array = table[name].combine_chunks()
        if pa.types.is_fixed_size_list(array.type):
            columns[name] = array.flatten().to_numpy().reshape(len(array), array.type.list_size)
        else:
            columns[name] = array.to_numpy(zero_copy_only=False)
    return columns
