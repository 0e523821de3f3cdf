from imaginebench.processes import CORES_VARIABLE, available_cores


def test_the_default_worker_count_follows_the_cap_a_sweep_cell_sets(monkeypatch):
    monkeypatch.delenv(CORES_VARIABLE, raising=False)
    machine = available_cores()
    monkeypatch.setenv(CORES_VARIABLE, "1")
    assert available_cores() == 1
    monkeypatch.setenv(CORES_VARIABLE, str(machine + 5))
    assert available_cores() == machine  # a cap never adds cores
    monkeypatch.setenv(CORES_VARIABLE, "many")
    assert available_cores() == machine  # not a number: ignored
