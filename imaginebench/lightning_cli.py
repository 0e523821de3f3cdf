"""LightningCLI wiring: the datamodule tells the algorithm the env's dimensions."""

from __future__ import annotations

import warnings
from argparse import ArgumentError

from lightning.pytorch.cli import LightningCLI

from datamodules.offline_data import OfflineDataModule
from imaginebench.checkpoints import check_lightning_checkpoint
from imaginebench.errors import UserInputError
from modules.base import OfflineRLModule


class CheckedCLI(LightningCLI):
    """A bad option, config file or ``--ckpt_path`` is a :class:`UserInputError` (one line), not
    a usage dump or a traceback from deep inside ``torch.load``."""

    def __init__(self, *args, **kwargs) -> None:
        with warnings.catch_warnings():  # `imaginebench fit` passes its own argv on purpose
            warnings.filterwarnings("ignore", message="LightningCLI's args parameter is intended to run from within Python")
            try:
                super().__init__(*args, **kwargs)
            except ArgumentError as error:  # raised by the parser only: a bad option or config
                raise UserInputError(str(error)) from error

    def init_parser(self, **kwargs):
        return super().init_parser(**{**kwargs, "exit_on_error": False})

    def parse_arguments(self, parser, args) -> None:
        super().parse_arguments(parser, args)
        subcommand = self.config.get("subcommand")
        if subcommand:  # before LightningCLI reads the checkpoint's hyperparameters
            check_lightning_checkpoint(self.config[subcommand].get("ckpt_path"), "--ckpt_path")

    def _parse_ckpt_path(self) -> None:
        """LightningCLI's own step that reads the model's hyperparameters from ``--ckpt_path``: a
        checkpoint of another module fails here."""
        try:
            super()._parse_ckpt_path()
        except ArgumentError as error:
            path = self.config[self.config.subcommand].get("ckpt_path")
            raise UserInputError(f"--ckpt_path {path}: its hyperparameters do not fit the configured model ({error})") from error


class ImagineBenchCLI(CheckedCLI):
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


class GroundingCLI(CheckedCLI):
    def add_arguments_to_parser(self, parser) -> None:
        parser.link_arguments("data.env_spec", "model.env_spec", apply_on="instantiate")
        parser.link_arguments("data.vocabulary", "model.vocabulary", apply_on="instantiate")


def run_grounding_cli(args: list[str]) -> None:
    """``imaginebench ground``: LightningCLI ``fit`` of the grounding module on real episodes."""
    from datamodules.grounding_data import GroundingDataModule
    from modules.grounding.model import GroundingModule

    GroundingCLI(GroundingModule, GroundingDataModule, args=["fit", *args], save_config_kwargs={"overwrite": True})
