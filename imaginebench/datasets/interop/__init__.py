"""Episode datasets in the field's standard formats: Minari, Hugging Face parquet and d3rlpy arrays.

``open_dataset`` is what ``data.real``/``data.imaginary`` entries go through: a dataset directory,
else a local Minari dataset exported by :func:`export_dataset`.
"""

from __future__ import annotations

from pathlib import Path

from imaginebench.datasets.episodes import DatasetError, EpisodeDataset, load_episodes
from imaginebench.errors import UserInputError

EXPORT_FORMATS = ("minari", "parquet", "d3rlpy")


def export_dataset(
    dataset: EpisodeDataset,
    format_name: str,
    out: str | None = None,
    dataset_id: str | None = None,
    overwrite: bool = False,
) -> str:
    """Export ``dataset``; returns where it went. ``minari`` names a dataset id under minari's root
    (``dataset_id``, default from env, source and level); the others write the directory ``out``."""
    if format_name not in EXPORT_FORMATS:
        raise UserInputError(f"--format {format_name!r}: unknown; choose one of {', '.join(EXPORT_FORMATS)}")
    if format_name == "minari":
        if out is not None:
            raise UserInputError(
                "--out: --format minari writes under $MINARI_DATASETS_PATH; name the dataset with --dataset-id"
            )
        from imaginebench.datasets.interop.minari_format import export_minari

        return export_minari(dataset, dataset_id, overwrite)
    if out is None or dataset_id is not None:
        raise UserInputError(f"--format {format_name} writes the directory --out (and takes no --dataset-id)")
    from imaginebench.datasets.interop.d3rlpy_format import export_d3rlpy
    from imaginebench.datasets.interop.parquet_format import export_parquet

    return str({"parquet": export_parquet, "d3rlpy": export_d3rlpy}[format_name](dataset, out, overwrite))


def dataset_exists(spec: str | Path) -> bool:
    """Whether :func:`open_dataset` finds something under ``spec`` (it may still be invalid)."""
    if Path(spec).exists():
        return True
    from imaginebench.datasets.interop.minari_format import has_local_minari

    return has_local_minari(str(spec))


def open_dataset(spec: str | Path) -> EpisodeDataset:
    """A dataset directory if ``spec`` exists, else the local Minari dataset of that id (under
    ``$MINARI_DATASETS_PATH``, default ``~/.minari/datasets``); the directory wins when both exist."""
    if Path(spec).exists():
        return load_episodes(spec)
    from imaginebench.datasets.interop.minari_format import has_local_minari, load_minari

    if has_local_minari(str(spec)):
        return load_minari(str(spec))
    from minari.storage import get_dataset_path

    raise DatasetError(
        f"{spec}: neither a dataset directory nor a local Minari dataset id (under {get_dataset_path()})"
    )
