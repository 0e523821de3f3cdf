"""LightningCLI wiring: the datamodule tells the algorithm the env's dimensions; every run has a named
directory, and a checkpoint is loaded only into the module class that wrote it."""

from __future__ import annotations

import warnings
from argparse import ArgumentError
from importlib import import_module
from pathlib import Path

import torch
from jsonargparse import Namespace
from lightning.pytorch.cli import LightningCLI
from lightning.pytorch.loggers import CSVLogger, TensorBoardLogger

from datamodules.offline_data import OfflineDataModule
from imaginebench.checkpoints import check_module_class, last_checkpoint, read_lightning_checkpoint
from imaginebench.commands.imagine import find_or_imagine
from imaginebench.errors import UserInputError
from imaginebench.provenance import cpu_bfloat16_units
from imaginebench.shipped import missing_imaginary_data
from modules.base import OfflineRLModule

NAMED_RUN_LOGGERS = (TensorBoardLogger, CSVLogger)
"""Loggers that keep a run in ``<save_dir>/<name>/<version>``, the directory a run name names."""


class CheckedCLI(LightningCLI):
    """A bad option, config file or ``--ckpt_path`` is a :class:`UserInputError` (one line), not
    a usage dump or a traceback from deep inside ``torch.load``."""

    def __init__(self, *args, **kwargs) -> None:
        with warnings.catch_warnings():  # `imaginebench fit` passes its own argv on purpose
            warnings.filterwarnings(
                "ignore", message="LightningCLI's args parameter is intended to run from within Python"
            )
            try:
                super().__init__(*args, **kwargs)
            except ArgumentError as error:  # raised by the parser only: a bad option or config
                raise UserInputError(str(error)) from error

    def init_parser(self, **kwargs):
        return super().init_parser(**{**kwargs, "exit_on_error": False})

    def _parse_ckpt_path(self) -> None:
        """LightningCLI's own step that reads the model's hyperparameters from ``--ckpt_path``: a
        checkpoint of another module fails here."""
        try:
            super()._parse_ckpt_path()
        except ArgumentError as error:
            path = self.config[self.config.subcommand].get("ckpt_path")
            raise UserInputError(
                f"--ckpt_path {path}: its hyperparameters do not fit the configured model ({error})"
            ) from error


class NamedRunCLI(CheckedCLI):
    """A run lives in ``<save_dir>/<name>/<run name>`` of its logger, where the run name is ``--run_name``
    (default :meth:`default_run_name`, from the config alone), so the same command always finds the same
    directory: ``--ckpt_path last`` resumes that run, and a fresh ``fit`` refuses to write over one.
    ``validate``/``test`` read the run's checkpoints and write into ``<run name>/<subcommand>``.

    Everything here happens in :meth:`parse_arguments`, before LightningCLI reads the checkpoint's
    hyperparameters (``_parse_ckpt_path``), which would otherwise replace the configured module class
    with the checkpoint's own."""

    def add_arguments_to_parser(self, parser) -> None:
        parser.add_argument(
            "--run_name",
            type=str | None,
            default=None,
            help="the run's directory under the logger's save_dir/name (default: derived from the config and seed)",
        )

    def default_run_name(self, config: Namespace) -> str:
        return seeded("", config.seed_everything)

    def module_class_path(self, config: Namespace) -> str:
        """The class the config trains: ``model.class_path`` in subclass mode, else the CLI's model class."""
        if self.subclass_mode_model:
            return config.model.class_path
        return f"{self.model_class.__module__}.{self.model_class.__qualname__}"

    def parse_arguments(self, parser, args) -> None:
        super().parse_arguments(parser, args)
        subcommand = self.config.get("subcommand")
        if subcommand:
            self._settle_run(self.config[subcommand], subcommand)
            warn_if_bfloat16_is_slow(self.config[subcommand].trainer)

    def _settle_run(self, config: Namespace, subcommand: str) -> None:
        run_dir = self._name_run(config, subcommand)
        if run_dir is not None and config.ckpt_path == "last":
            last = last_checkpoint(run_dir)
            if not last.is_file():
                raise UserInputError(
                    f"--ckpt_path last: {last} does not exist (no earlier run in {run_dir}; leave out --ckpt_path to start one)"
                )
            config.ckpt_path = str(last)
        if run_dir is not None and subcommand == "fit":
            refuse_to_overwrite(run_dir, config.ckpt_path)
        checkpoint = read_lightning_checkpoint(config.ckpt_path, "--ckpt_path")
        if checkpoint is not None:
            check_module_class(
                checkpoint, config.ckpt_path, self.module_class_path(config), required=self.subclass_mode_model
            )

    def _name_run(self, config: Namespace, subcommand: str) -> Path | None:
        """Sets the logger's version to the run name; returns the run's directory (``None``: the logger
        keeps no run directory, and Lightning's own behaviour stays)."""
        logger = config.trainer.logger
        if not (isinstance(logger, Namespace) and keeps_run_directories(logger.class_path)):
            if config.run_name is not None:
                raise UserInputError("--run_name needs trainer.logger to be a TensorBoardLogger or CSVLogger")
            return None
        version = logger.init_args.version
        if config.run_name is not None:
            name = config.run_name
        elif version is not None:
            name = version if isinstance(version, str) else f"version_{version}"
        else:
            name = self.default_run_name(config)
        config.run_name = name
        logger.init_args.version = name if subcommand == "fit" else f"{name}/{subcommand}"
        return Path(logger.init_args.save_dir) / (logger.init_args.name or "") / name


class ImagineBenchCLI(NamedRunCLI):
    def add_arguments_to_parser(self, parser) -> None:
        super().add_arguments_to_parser(parser)
        parser.link_arguments("data.env_spec", "model.init_args.env_spec", apply_on="instantiate")

    def default_run_name(self, config: Namespace) -> str:
        """``<algorithm>-seed<seed>``, the algorithm being the module file (``modules.td3_bc.TD3BC`` → ``td3_bc``)."""
        return seeded(config.model.class_path.split(".")[-2], config.seed_everything)

    def before_fit(self) -> None:
        """Imagine the default imaginary data the run asks for and lacks, from the env's shipped grounded
        model, before the trainer starts (every process waits for the one that holds the output's lock);
        data that nothing can imagine (no shipped model) stop the run here, before real data are collected."""
        for level in self.datamodule.imaginary_levels:
            if find_or_imagine(self.datamodule.env_id, level) is None:
                raise UserInputError(f"data.imaginary_levels: {missing_imaginary_data(self.datamodule.env_id, level)}")

    before_validate = before_test = before_fit


def warn_if_bfloat16_is_slow(trainer: Namespace) -> None:
    """One line where ``--trainer.precision`` asks for bfloat16 on a CPU without bfloat16 units: there
    ``bf16-mixed`` is slower, not faster (BabyAI BC 19 against 135 updates/s on an AVX2-only AMD EPYC)."""
    precision, accelerator = str(trainer.get("precision")), str(trainer.get("accelerator") or "auto")
    on_cpu = accelerator == "cpu" or (accelerator == "auto" and not torch.cuda.is_available())
    if precision.startswith("bf16") and on_cpu and cpu_bfloat16_units() == "":
        warnings.warn(
            f"trainer.precision {precision}: this CPU has no bfloat16 units (neither AMX nor AVX512-BF16), so its "
            "bfloat16 products run far slower than float32; use --trainer.precision 32-true",
            stacklevel=2,
        )


def keeps_run_directories(class_path: str) -> bool:
    module, _, name = class_path.rpartition(".")
    return issubclass(getattr(import_module(module), name), NAMED_RUN_LOGGERS)


def seeded(label: str, seed: int | bool) -> str:
    """``label-seed<seed>``; without the seed when ``seed_everything`` is not a number."""
    suffix = f"seed{seed}" if not isinstance(seed, bool) else ""
    return "-".join(part for part in (label, suffix) if part) or "run"


def refuse_to_overwrite(run_dir: Path, ckpt_path: str | None) -> None:
    """A ``fit`` into a directory holding checkpoints must resume one of them, never write over them."""
    checkpoints = run_dir / "checkpoints"
    held = sorted(checkpoints.glob("*.ckpt"))
    if held and not (ckpt_path and Path(ckpt_path).resolve().parent == checkpoints.resolve()):
        raise UserInputError(
            f"{run_dir} already holds a run ({', '.join(p.name for p in held)}): resume it with --ckpt_path last, "
            "or start a separate run with --run_name NAME"
        )


def run_lightning_cli(args: list[str]) -> None:
    ImagineBenchCLI(
        OfflineRLModule,
        OfflineDataModule,
        subclass_mode_model=True,
        args=args,
        save_config_kwargs={"overwrite": True},
    )


class GroundingCLI(NamedRunCLI):
    def add_arguments_to_parser(self, parser) -> None:
        super().add_arguments_to_parser(parser)
        parser.link_arguments("data.env_spec", "model.env_spec", apply_on="instantiate")
        parser.link_arguments("data.vocabulary", "model.vocabulary", apply_on="instantiate")
        parser.link_arguments("data.window_steps", "model.window_steps")  # imagination reads it from the checkpoint


def run_grounding_cli(args: list[str]) -> None:
    """``imaginebench ground``: LightningCLI ``fit`` of the grounding module on real episodes."""
    from datamodules.grounding_data import GroundingDataModule
    from modules.grounding.model import GroundingModule

    GroundingCLI(GroundingModule, GroundingDataModule, args=["fit", *args], save_config_kwargs={"overwrite": True})
