"""Which bfloat16 units the CPU has: they name the machine in stored figures and decide whether ``bf16-mixed`` warns."""

import warnings

import pytest
from jsonargparse import Namespace

from imaginebench import provenance
from imaginebench.commands import lightning_cli

FLAGS = {
    "Xeon": "fpu sse avx2 avx512f avx512_bf16 amx_bf16 amx_tile",
    "EPYC Zen 4": "fpu sse avx2 avx512f avx512_bf16",
    "EPYC AVX2": "fpu sse avx2 fma",
}


@pytest.mark.parametrize(("cpu", "units"), [("Xeon", "AMX"), ("EPYC Zen 4", "AVX512-BF16"), ("EPYC AVX2", "")])
def test_the_machine_name_says_which_bfloat16_units_the_cpu_has(monkeypatch, cpu, units):
    monkeypatch.setattr(provenance, "_cpuinfo", lambda: (cpu, FLAGS[cpu]))
    assert provenance.cpu_bfloat16_units() == units
    name = provenance.machine_name()
    assert name.startswith(f"{cpu} with {units}, " if units else f"{cpu}, ")


def test_without_cpuinfo_flags_the_units_are_unknown(monkeypatch):
    monkeypatch.setattr(provenance, "_cpuinfo", lambda: ("", ""))
    assert provenance.cpu_bfloat16_units() is None
    assert " with " not in provenance.machine_name()


def trainer(precision: str, accelerator: str = "cpu") -> Namespace:
    return Namespace(precision=precision, accelerator=accelerator)


@pytest.mark.parametrize("units", ["", "AMX", None])
@pytest.mark.parametrize("settings", [trainer("bf16-mixed"), trainer("bf16-true"), trainer("32-true")])
def test_bf16_on_a_cpu_without_bfloat16_units_warns_in_one_line_naming_the_option(monkeypatch, units, settings):
    monkeypatch.setattr(lightning_cli, "cpu_bfloat16_units", lambda: units)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lightning_cli.warn_if_bfloat16_is_slow(settings)
    expected = units == "" and settings.precision.startswith("bf16")
    assert len(caught) == int(expected)
    if expected:
        message = str(caught[0].message)
        assert message.startswith(f"trainer.precision {settings.precision}:") and "\n" not in message
        assert "--trainer.precision 32-true" in message


def test_bf16_on_a_gpu_does_not_warn(monkeypatch):
    monkeypatch.setattr(lightning_cli, "cpu_bfloat16_units", lambda: "")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lightning_cli.warn_if_bfloat16_is_slow(trainer("bf16-mixed", "gpu"))
    assert caught == []
