"""The domain contract, checked for every registered domain: a new domain that misses a piece fails here,
naming it (docs/contributing.md lists the pieces)."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from imaginebench.envs.base import ImagineBenchEnv
from imaginebench.levels import LEVELS
from imaginebench.registry import DOMAIN_MODULES, env_ids, get_domain, make

REPO = Path(__file__).resolve().parents[2]
ROLE_MODULES = ("env.py", "tasks.py", "phrasings.py", "expert.py", "layout.py")
"""One module name per role in every domain folder: the env, tasks and success checks, instruction texts,
the expert, and the state layout with its legality check."""

pytestmark = pytest.mark.filterwarnings("ignore:Constant")  # Meta-World's package warns about its own gains


CONFIGS = REPO / "lightning_config"
PIPELINE_ALGO = "bc"
"""``imaginebench pipeline``'s default ``--algo``: every env needs it."""


def read_yaml(path: Path) -> dict:
    assert path.is_file(), f"missing {path}"
    return yaml.safe_load(path.read_text())


def algorithm_configs(env_id: str) -> dict[str, Path]:
    """The env's algorithm configs by name: the files of its config folder that configure a model."""
    folder = CONFIGS / get_domain(env_id).config_dir
    return {path.stem: path for path in sorted(folder.glob("*.yaml")) if "model" in read_yaml(path)}


@pytest.mark.parametrize("env_id", env_ids())
def test_every_env_has_a_data_config_agreeing_with_its_domain(env_id):
    domain = get_domain(env_id)
    data = read_yaml(CONFIGS / domain.config_dir / "data.yaml")
    assert data["env_id"] == env_id, f"{CONFIGS / domain.config_dir / 'data.yaml'}: env_id {data['env_id']!r}"
    assert data["collect_if_missing"] == domain.real_episodes, (
        f"{CONFIGS / domain.config_dir / 'data.yaml'}: collect_if_missing differs from Domain.real_episodes"
    )
    assert data["real_levels"] == ["train"] and not data.get("real"), (
        f"{CONFIGS / domain.config_dir / 'data.yaml'}: not the default real data of the train level"
    )


@pytest.mark.parametrize("env_id", env_ids())
def test_every_env_has_algorithm_configs_including_the_pipeline_default(env_id):
    folder = CONFIGS / get_domain(env_id).config_dir
    assert (folder / "trainer.yaml").is_file(), f"missing {folder / 'trainer.yaml'}"
    algorithms = algorithm_configs(env_id)
    assert PIPELINE_ALGO in algorithms, (
        f"missing {folder / f'{PIPELINE_ALGO}.yaml'} (algorithm configs there: {sorted(algorithms)})"
    )
    for path in algorithms.values():
        data = read_yaml(path)["data"]
        assert (folder / data).is_file(), f"{path}: data {data!r} does not exist"


@pytest.mark.parametrize("env_id", env_ids())
def test_every_env_has_a_grounding_config(env_id):
    domain = get_domain(env_id)
    path = CONFIGS.parent / domain.grounding_config
    data = read_yaml(path)["data"]
    assert data["env_id"] == env_id, f"{path}: data.env_id {data['env_id']!r}"
    assert data.get("collect_if_missing", domain.real_episodes) == domain.real_episodes, (
        f"{path}: collect_if_missing differs from Domain.real_episodes"
    )
    assert data["real_levels"] == ["train"] and not data.get("real"), (
        f"{path}: not the default real data of the train level"
    )


@pytest.mark.parametrize("env_id", env_ids())
def test_every_grounding_config_builds_and_a_window_with_its_prompt_fits_the_model(env_id, tmp_path):
    """``imaginebench ground``'s parser takes the config as it is (no simulator needed, LIBERO's included), links
    its window into the model (imagination reads it there), and the longest generation or explanation example of
    a window, with the longest instruction of any level, fits the backbone's positions."""
    from datamodules.grounding_data import GroundingDataModule
    from imaginebench.commands.lightning_cli import GroundingCLI
    from modules.grounding.model import GroundingModule

    path = CONFIGS.parent / get_domain(env_id).grounding_config
    cli = GroundingCLI(
        GroundingModule,
        GroundingDataModule,
        args=["--config", str(path), "--trainer.logger.init_args.save_dir", str(tmp_path)],
        run=False,
    )
    window = cli.datamodule.hparams.window_steps
    assert cli.datamodule.env_id == env_id and cli.model.hparams.window_steps == window
    if window is None:
        return  # whole rollouts (BabyAI, CLEVR-Robot: horizons of about 50 steps)
    domain, builder = get_domain(env_id), cli.model.builder
    texts = [text for level in LEVELS for text in domain.instruction_texts(level)]
    longest = max(texts, key=lambda text: len(builder.tokenize(text)))
    states = torch.zeros(window + 1, domain.state_dim)
    actions = torch.zeros(window, domain.action_dim) if domain.action_dim else torch.zeros(window, dtype=torch.int64)
    positions = cli.model.lm.config.max_position_embeddings
    for sequence in (builder.generation(longest, states, actions), builder.explanation(states, actions, longest)):
        assert len(sequence) <= positions, (
            f"{path}: a {window}-step window needs {len(sequence)} of {positions} positions"
        )


def domain_folder(env_id: str) -> Path:
    return REPO / Path(*DOMAIN_MODULES[env_id].split("."))


def needs_simulator(env_id: str) -> None:
    if env_id == "Libero-v0" and importlib.util.find_spec("libero") is None:
        pytest.skip("needs the LIBERO extra: pip install -e .[libero]")


@pytest.mark.parametrize("env_id", env_ids())
def test_the_domain_folder_has_one_module_per_role(env_id):
    folder = domain_folder(env_id)
    missing = [name for name in ROLE_MODULES if not (folder / name).is_file()]
    assert missing == [], f"{folder} lacks {missing}"
    assert get_domain(env_id).env_id == env_id


@pytest.mark.parametrize("env_id", env_ids())
def test_every_level_has_tasks_and_instructions(env_id):
    domain = get_domain(env_id)
    assert set(domain.tasks) >= set(LEVELS)
    for level in LEVELS:
        assert len(domain.tasks[level]) > 0, f"{env_id}: no {level} tasks"
        assert len(domain.instruction_texts(level)) > 0, f"{env_id}: no {level} instructions"
    assert set(domain.tasks["rephrase"]) == set(domain.tasks["train"]), "rephrase = the train tasks, new wording"
    assert not set(domain.instruction_texts("rephrase")) & set(domain.instruction_texts("train"))
    for level in ("easy", "hard"):
        assert not set(domain.tasks[level]) & set(domain.tasks["train"]), f"{env_id}: {level} reuses train tasks"


@pytest.mark.parametrize("env_id", env_ids())
def test_the_action_space_is_declared_for_its_kind(env_id):
    domain = get_domain(env_id)
    assert domain.state_dim > 0 and domain.real_episodes > 0
    if domain.action_kind == "discrete":
        assert domain.num_actions > 0 and domain.action_dim == 0
    else:
        assert domain.action_kind == "continuous" and domain.action_dim > 0 and domain.num_actions == 0


@pytest.mark.parametrize("env_id", env_ids())
def test_where_evaluation_steps_its_envs_is_declared(env_id):
    assert isinstance(get_domain(env_id).evaluation_in_subprocesses, bool)


@pytest.mark.parametrize("env_id", env_ids())
def test_the_env_class_implements_the_contract(env_id):
    module = importlib.import_module(DOMAIN_MODULES[env_id] + ".env")
    classes = [c for c in vars(module).values() if isinstance(c, type) and issubclass(c, ImagineBenchEnv)]
    env_classes = [c for c in classes if c is not ImagineBenchEnv and c.env_id == env_id]
    assert len(env_classes) == 1, f"{module.__name__} defines {len(env_classes)} env classes for {env_id}"
    env_class = env_classes[0]
    for member in ("goal_flags", "state", "state_rules", "reset", "step"):
        assert getattr(env_class, member) is not getattr(ImagineBenchEnv, member), f"{env_id}: no {member}"
    assert env_class.env_id == env_id


@pytest.mark.parametrize("env_id", env_ids())
def test_an_episode_starts_legal_and_the_expert_acts_in_the_action_space(env_id):
    needs_simulator(env_id)
    domain = get_domain(env_id)
    env = make(env_id, level="train")
    observation, info = env.reset(seed=0)
    state = observation["state"]
    assert env.horizon > 0 and state.shape == (domain.state_dim,) and np.allclose(env.state(), state, atol=1e-6)
    assert env.state_violations(state) == []
    assert env.state_violations(np.full(domain.state_dim, np.nan)) != []
    assert env.state_violations(np.zeros(domain.state_dim + 1)) != []
    assert env.state_violations_within_tolerance(state) == []  # the tolerant rules never reject a legal state
    assert env.state_violations_within_tolerance(np.full(domain.state_dim, np.nan)) != []
    flags = env.success_flags(state[None])
    assert flags.dtype == bool and flags.shape == (1,)
    assert {"is_success", "task", "instruction"} <= set(info) and info["task"] in domain.tasks["train"]
    assert env.action_space.contains(np.asarray(domain.expert()(env)).astype(env.action_space.dtype))
    env.close()


def test_stored_evaluation_starts_cover_every_task():
    """Where a domain evaluates from stored starts (not reset seeds), every task of every level has some."""
    for env_id in env_ids():
        domain = get_domain(env_id)
        for level in LEVELS if domain.evaluation_starts is not None else ():
            for task in domain.tasks[level]:
                assert len(domain.evaluation_starts(level, task)) > 0, f"{env_id}: no {level} starts for {task}"
