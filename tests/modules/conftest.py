import pytest
import torch


@pytest.fixture(autouse=True)
def one_torch_thread():
    """These tiny networks gain nothing from a second thread, and on a shared 2-core machine the
    threads' spin-waiting can slow an update down tenfold."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
