"""What each stage of ``imaginebench pipeline`` cost: wall and CPU seconds, kept in ``<out>/stage_costs.json``.

On a CPU-only machine a stage's cost is its CPU time (this process and the worker processes it waited for), and
a pipeline is stopped and resumed stage by stage: each stage's figures are written as soon as it ends, a stage
kept from an earlier run keeps the figures that run wrote, and a stage resumed after it ended once adds the
resume's cost to them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from imaginebench.errors import UserInputError
from imaginebench.processes import process_cpu_s
from imaginebench.provenance import machine_name
from imaginebench.storage import atomic_write_text, read_json_file

FILE_NAME = "stage_costs.json"
RESUMED = ", resumed: this run's part"
"""How a stage's work says it counts only the process that finished it (the run it resumed was stopped)."""
RECORD_FIELDS: dict[str, tuple[type, ...]] = {
    "work": (str,),
    "cpu_s": (int, float),
    "wall_s": (int, float),
    "machine": (str,),
}


def read_stage_costs(path: Path) -> dict[str, Any]:
    """The file's content, checked field by field so that a damaged file stops with one line naming it."""
    content = read_json_file(path)
    if not isinstance(content, dict) or not isinstance(content.get("env_id"), str):
        raise UserInputError(f"{path}: field env_id: expected an env id string")
    if not isinstance(content.get("stages"), dict):
        raise UserInputError(f"{path}: field stages: expected an object of stage records")
    for stage, record in content["stages"].items():
        for field, kinds in RECORD_FIELDS.items():
            if not isinstance(record, dict) or not isinstance(record.get(field), kinds):
                raise UserInputError(f"{path}: field stages.{stage}.{field}: missing or not a {kinds[0].__name__}")
    return content


class StageCosts:
    """The cost file of one pipeline directory: read on start, rewritten after every stage."""

    def __init__(self, out: Path, env_id: str) -> None:
        self.path = out / FILE_NAME
        self.content: dict[str, Any] = {"env_id": env_id, "stages": {}}
        if self.path.is_file():
            earlier = read_stage_costs(self.path)
            if earlier["env_id"] != env_id:
                raise UserInputError(
                    f"--out: {out} holds a pipeline of {earlier['env_id']} ({self.path}), not of {env_id}; "
                    "give another --out"
                )
            self.content["stages"] = earlier["stages"]

    @contextmanager
    def measure(self, stage: str, work: str, resumed: bool = False) -> Iterator[None]:
        """Times the block and records it as ``stage``; ``work`` says how much it did (``"700 rollouts"``).

        ``resumed``: the block continues a run an earlier pipeline started. Its cost is added to that run's
        record where one was written (the run had ended), else the record says it counts only this part."""
        wall, cpu = time.perf_counter(), process_cpu_s()
        yield
        cost = {"cpu_s": process_cpu_s() - cpu, "wall_s": time.perf_counter() - wall}
        earlier = self.content["stages"].get(stage) if resumed else None
        if earlier is None:
            record = {"work": work + (RESUMED if resumed else ""), **cost, "machine": machine_name()}
        else:
            machines = " + ".join(sorted({*earlier["machine"].split(" + "), machine_name()}))
            record = {"work": earlier["work"], **{k: earlier[k] + v for k, v in cost.items()}, "machine": machines}
        self.content["stages"][stage] = record
        atomic_write_text(json.dumps(self.content, indent=1) + "\n", self.path)


def format_stage_costs(content: dict[str, Any]) -> str:
    """The file as a plain table, printed at the end of a pipeline."""
    rows = [f"{'stage':<18}{'CPU min':>9}{'wall min':>10}  work"]
    for stage, record in content["stages"].items():
        rows.append(f"{stage:<18}{record['cpu_s'] / 60:>9.1f}{record['wall_s'] / 60:>10.1f}  {record['work']}")
    return "\n".join(rows)
