"""The episode dataset format shared by real and imaginary data."""

from imaginebench.datasets.episodes import (
    SCHEMA_VERSION,
    DatasetError,
    EpisodeDataset,
    check_metadata,
    concat_datasets,
    load_episodes,
    write_episodes,
)
from imaginebench.datasets.interop import EXPORT_FORMATS, dataset_exists, export_dataset, open_dataset
from imaginebench.datasets.transitions import Transitions, to_transitions, with_instruction_embeddings

__all__ = [
    "SCHEMA_VERSION",
    "DatasetError",
    "EXPORT_FORMATS",
    "EpisodeDataset",
    "check_metadata",
    "concat_datasets",
    "export_dataset",
    "load_episodes",
    "dataset_exists",
    "open_dataset",
    "Transitions",
    "to_transitions",
    "with_instruction_embeddings",
    "write_episodes",
]
