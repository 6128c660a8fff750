"""ferrodbc.dask.read_sql on a distributed.LocalCluster of two worker processes, against the TDS
peer through Driver 18: the workers read the partitions themselves (the client only probes and
reads the first rows for meta) and the computed frame equals the single read."""

from __future__ import annotations

import time

import pytest

from sqlserver_support import in_ci

try:
    import distributed
    import pandas as pd
    import pyarrow as pa
except ImportError:  # eng/setup.sh installs them (eng/requirements.txt): CI fails, never skips
    if in_ci():
        raise
    pytest.skip("dask/distributed not installed (eng/requirements.txt)", allow_module_level=True)

import ferrodbc
import ferrodbc.dask

from sqlserver_support import require_driver, tdspeer, tname, usertable

ROWS = 20_000
NPARTITIONS = 4


@pytest.fixture(scope="module")
def cluster_client():
    # processes=True: each worker is its own Python process, which imports ferrodbc and opens
    # its own connections. No dashboard (its port may be taken by another run).
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def loaded(peer):
    require_driver("msodbcsql")
    cs = tdspeer.conn_str(peer, "msodbcsql")
    name = tname("dask")
    cn = ferrodbc.connect(cs, autocommit=True)
    cur = cn.cursor()
    cur.execute(usertable.ddl("mixed", name))
    for sql in usertable.inserts("mixed", name, ROWS):
        cur.execute(sql)
    cn.close()
    return cs, name


def _statements() -> int:
    """Statements this process executed, without the pool's SELECT 1 checks of parked sessions."""
    c = ferrodbc.counters()
    return c["executes"] - c["pool_checks"]


def test_workers_read_the_partitions_and_the_frame_equals_the_single_read(cluster_client, loaded):
    cs, name = loaded
    query = f"SELECT * FROM {name}"
    cn = ferrodbc.connect(cs)
    want = pa.table(cn.cursor().execute(query).fetch_arrow_table()).to_pandas(types_mapper=pd.ArrowDtype)
    cn.close()

    cluster_client.run(ferrodbc.reset_counters)
    ferrodbc.reset_counters()
    started = time.perf_counter()
    ddf = ferrodbc.dask.read_sql(cs, query, "id", NPARTITIONS)
    assert ddf.npartitions == NPARTITIONS
    # meta: the first rows' dtypes, Arrow dtypes (exact decimals, nullable ints).
    assert dict(ddf.dtypes) == dict(want.dtypes)
    client_executes = _statements()
    got = ddf.compute()
    elapsed = time.perf_counter() - started
    # The client executed the type probe, the MIN/MAX probe and the meta read, and nothing while
    # the graph ran; the workers executed one query per partition, on both workers.
    assert client_executes == 3 and _statements() == 3
    # A lambda travels to the workers by value (this test module is not importable there).
    per_worker = cluster_client.run(lambda: ferrodbc.counters()["executes"] - ferrodbc.counters()["pool_checks"])
    assert sum(per_worker.values()) == NPARTITIONS
    assert len([n for n in per_worker.values() if n]) == 2
    pd.testing.assert_frame_equal(got.sort_values("id").reset_index(drop=True), want)
    print(f"\ndask: {len(got)} rows, {ddf.npartitions} partitions on 2 worker processes "
          f"({per_worker} queries per worker), {elapsed:.2f} s from read_sql to compute()")


def test_a_partition_aggregate_runs_on_the_workers(cluster_client, loaded):
    cs, name = loaded
    ddf = ferrodbc.dask.read_sql(cs, f"SELECT id, amount, flag FROM {name}", "id", 3)
    assert int(ddf["id"].count().compute()) == ROWS
    assert int(ddf[ddf["flag"]]["id"].count().compute()) == len(range(0, ROWS, 3))


def test_bad_input_raises_on_the_client(loaded):
    cs, name = loaded
    with pytest.raises(ferrodbc.ProgrammingError, match="integer column"):
        ferrodbc.dask.read_sql(cs, f"SELECT * FROM {name}", "name", 2)
    with pytest.raises(ValueError, match="at least 1"):
        ferrodbc.dask.read_sql(cs, f"SELECT * FROM {name}", "id", 0)
    with pytest.raises(ferrodbc.ProgrammingError, match="ORDER BY"):
        ferrodbc.dask.read_sql(cs, f"SELECT * FROM {name} ORDER BY id", "id", 2)


def test_arrow_options_shape_the_frame(loaded):
    """timestamp_unit reaches the client's schema read (the frame's meta) and the partition
    reader the workers get."""
    cs, name = loaded
    df = ferrodbc.dask.read_sql(cs, f"SELECT id, ts FROM {name}", "id", 2, timestamp_unit="ns")
    assert df.dtypes["ts"] == pd.ArrowDtype(pa.timestamp("ns"))
    part = df.to_delayed()[0].compute(scheduler="synchronous")
    assert part.dtypes["ts"] == pd.ArrowDtype(pa.timestamp("ns"))


def test_only_ferrodbc_dask_imports_dask():
    import subprocess
    import sys

    code = ("import sys, ferrodbc; assert not {'dask', 'distributed', 'pandas', 'pyarrow'} & set(sys.modules); "
            "import ferrodbc.dask; assert 'dask.dataframe' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
