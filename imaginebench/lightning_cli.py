"""LightningCLI wiring: the datamodule tells the algorithm the env's dimensions."""

from __future__ import annotations

from lightning.pytorch.cli import LightningCLI

from datamodules.offline_data import OfflineDataModule
from modules.base import OfflineRLModule


class ImagineBenchCLI(LightningCLI):
    def add_arguments_to_parser(self, parser) -> None:
        parser.link_arguments("data.env_spec", "model.init_args.env_spec", apply_on="instantiate")


def run_lightning_cli(args: list[str]) -> None:
    ImagineBenchCLI(
        OfflineRLModule,
        OfflineDataModule,
        subclass_mode_model=True,
        args=args,
        save_config_kwargs={"overwrite": True},
    )


class GroundingCLI(LightningCLI):
    def add_arguments_to_parser(self, parser) -> None:
        parser.link_arguments("data.env_spec", "model.env_spec", apply_on="instantiate")
        parser.link_arguments("data.vocabulary", "model.vocabulary", apply_on="instantiate")


def run_grounding_cli(args: list[str]) -> None:
    """``imaginebench ground``: LightningCLI ``fit`` of the grounding module on real episodes."""
    from datamodules.grounding_data import GroundingDataModule
    from modules.grounding.model import GroundingModule

    GroundingCLI(GroundingModule, GroundingDataModule, args=["fit", *args], save_config_kwargs={"overwrite": True})
