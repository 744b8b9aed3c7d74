"""The same sweep on a Dask cluster (LocalCluster, worker processes) gives the local rows."""

import pytest

from gaussdp import sweep

distributed = pytest.importorskip("dask.distributed")

GRID = {
    "sweep": {"deltas": [1e-5], "epsilons": [1.0]},
    "mechanism": [
        {
            "type": "dpsgd",
            "noise_multiplier": [1.0, 2.0],
            "sampling_probability": [0.01, 0.02],
            "steps": [100, 200],
        }
    ],
}


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as local_cluster:
        yield local_cluster


def test_dask_rows_equal_local_rows(cluster, tmp_path):
    local = sweep(GRID, workers=2)
    remote = sweep(GRID, scheduler=cluster.scheduler_address)
    assert remote == local
    assert len(remote) == 16 and all(row["error"] is None for row in remote)
    # With an output file, a second run on the cluster resumes (nothing left to do).
    output = tmp_path / "results.csv"
    first = sweep(GRID, scheduler=cluster.scheduler_address, output=output)
    assert first == local
    assert sweep(GRID, scheduler=cluster.scheduler_address, output=output) == local


def test_workers_and_scheduler_together_are_refused(cluster):
    from gaussdp import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="not both"):
        sweep(GRID, workers=2, scheduler=cluster.scheduler_address)
