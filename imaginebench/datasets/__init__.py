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
from imaginebench.datasets.transitions import Transitions, to_transitions, with_instruction_embeddings

__all__ = [
    "SCHEMA_VERSION",
    "DatasetError",
    "EpisodeDataset",
    "check_metadata",
    "concat_datasets",
    "load_episodes",
    "Transitions",
    "to_transitions",
    "with_instruction_embeddings",
    "write_episodes",
]
