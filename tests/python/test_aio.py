"""ferrodbc.aio on SQLite3 ODBC and PostgreSQL (psqlODBC): the API, transactions, tasks on their
own connections, and (PostgreSQL) cancellation and `timeout=` that stop the server's statement.
Each test runs its own event loop with `asyncio.run`."""

from __future__ import annotations

import asyncio
import decimal

import pytest

import ferrodbc
import ferrodbc.aio as aio


def test_round_trip_and_fetch_shapes(peer, table):
    t = peer.types

    async def main() -> None:
        async with await aio.connect(peer.connstr) as conn:
            assert conn.autocommit is False
            cur = conn.cursor()
            await cur.execute(f"CREATE TABLE {table} (id {t['int']}, name {t['varchar']}, amount {t['decimal']})")
            await cur.executemany(
                f"INSERT INTO {table} VALUES (?, ?, ?)",
                [(i, f"n{i}", decimal.Decimal(i) / 4) for i in range(3000)],
            )
            await conn.commit()
            await cur.execute(f"SELECT id, name, amount FROM {table} ORDER BY id")
            assert [d[0] for d in cur.description] == ["id", "name", "amount"]
            rows = [await cur.fetchone(), *await cur.fetchmany(99)]
            rows += [r async for r in cur]
            assert [tuple(r) for r in rows] == [(i, f"n{i}", decimal.Decimal(i) / 4) for i in range(3000)]
            assert await conn.fetchval(f"SELECT COUNT(*) FROM {table}") == 3000
            assert (await conn.fetchone(f"SELECT name FROM {table} WHERE id = ?", 7))[0] == "n7"
            assert len(await conn.fetchall(f"SELECT id FROM {table} WHERE id < ?", 10)) == 10

    asyncio.run(main())


def test_rollback_and_set_autocommit(peer, table):
    t = peer.types

    async def main() -> None:
        conn = await aio.connect(peer.connstr)
        await conn.execute(f"CREATE TABLE {table} (id {t['int']})")
        await conn.commit()
        await conn.execute(f"INSERT INTO {table} VALUES (1)")
        await conn.rollback()
        assert await conn.fetchval(f"SELECT COUNT(*) FROM {table}") == 0
        await conn.set_autocommit(True)
        await conn.execute(f"INSERT INTO {table} VALUES (2)")
        await conn.close()
        async with await aio.connect(peer.connstr) as other:
            assert await other.fetchall(f"SELECT id FROM {table}") == [(2,)]

    asyncio.run(main())


def test_context_manager_commits_or_rolls_back(peer, table):
    async def main() -> None:
        async with await aio.connect(peer.connstr) as conn:
            await conn.execute(f"CREATE TABLE {table} (id {peer.types['int']})")
        with pytest.raises(ZeroDivisionError):
            async with await aio.connect(peer.connstr) as conn:
                await conn.execute(f"INSERT INTO {table} VALUES (1)")
                1 / 0  # noqa: B018
        async with await aio.connect(peer.connstr) as conn:
            await conn.execute(f"INSERT INTO {table} VALUES (2)")
        async with await aio.connect(peer.connstr) as conn:
            assert await conn.fetchall(f"SELECT id FROM {table}") == [(2,)]

    asyncio.run(main())


def test_tasks_with_their_own_connections(peer):
    async def one(i: int) -> int:
        async with await aio.connect(peer.connstr, autocommit=True) as conn:
            return await conn.fetchval("SELECT ?", i)

    async def main() -> list[int]:
        return await asyncio.gather(*(one(i) for i in range(8)))

    assert asyncio.run(main()) == list(range(8))


def test_errors_keep_their_pep249_class(peer):
    async def main() -> None:
        async with await aio.connect(peer.connstr, autocommit=True) as conn:
            # The class the sync API gives (SQLite3 ODBC says HY000 for everything).
            with pytest.raises(ferrodbc.DatabaseError if peer.is_sqlite else ferrodbc.ProgrammingError):
                await conn.execute("SELECT * FROM no_such_table_aio")
            assert await conn.fetchval("SELECT 1") == 1

    asyncio.run(main())


def test_arrow_table(peer):
    pyarrow = pytest.importorskip("pyarrow")

    async def main() -> None:
        async with await aio.connect(peer.connstr, autocommit=True) as conn:
            cur = await conn.execute("SELECT 1 AS a, 'x' AS b")
            table = pyarrow.table(await cur.fetch_arrow_table())
            assert table.to_pylist() == [{"a": 1, "b": "x"}]

    asyncio.run(main())


@pytest.mark.parametrize("how", ["task.cancel", "timeout="])
def test_postgres_statement_cancelled_on_the_server(pg, how):
    """`pg_sleep(60)` cancelled after 0.3 s: the caller is released with CancelledError (or
    HYT00), and the connection's next statement runs at once — it waits for the cancelled driver
    call to return, which only a server-side cancel makes happen before 60 s."""

    async def main() -> None:
        async with await aio.connect(pg.connstr, autocommit=True) as conn:
            cur = conn.cursor()
            if how == "timeout=":
                with pytest.raises(ferrodbc.OperationalError) as ei:
                    await cur.execute("SELECT pg_sleep(60)", timeout=0.3)
                assert ei.value.sqlstate == "HYT00"
            else:
                task = asyncio.ensure_future(cur.execute("SELECT pg_sleep(60)"))
                await asyncio.sleep(0.3)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
            assert await asyncio.wait_for(conn.fetchval("SELECT 21"), 30) == 21
            assert await (await cur.execute("SELECT 22")).fetchval() == 22

    asyncio.run(main())


def test_connect_cancelled_closes_what_it_made(peer):
    """A connect cancelled while its worker is still connecting: the caller gets CancelledError,
    the connection made anyway is closed, and its worker thread ends."""
    import threading

    async def main() -> None:
        task = asyncio.ensure_future(aio.connect(peer.connstr))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.5)  # the connect finishes on its thread, then the close

    asyncio.run(main())
    for t in threading.enumerate():
        if t.name == "ferrodbc.aio worker":
            t.join(5)
    assert not [t for t in threading.enumerate() if t.name == "ferrodbc.aio worker"]
