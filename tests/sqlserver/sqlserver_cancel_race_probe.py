"""Cancels racing executes, shared by test_sqlserver_aio.py: `race_round` runs 40 asyncio tasks
on one connection, each cancelled 0-7 loop turns after it started an execute (so the cancel
lands while the driver is still writing the request, waiting for the answer, or reading it),
then one statement that must run normally.

Run as a script (the child process of `test_cancels_racing_execute_starts_never_hang`), it runs
ROUNDS rounds and prints a line per round (its outcomes, JSON); a hang shows as a timeout in
the parent with the rounds done so far."""

from __future__ import annotations

import asyncio
import json
import sys

import ferrodbc
import ferrodbc.aio as aio

SQL = "SELECT * FROM peer.int_nvarchar_200"


async def race_round(conn: aio.AsyncConnection, want: list[tuple]) -> set[str]:
    """The outcomes of one round: "rows" (the whole result, equal to `want`), "cancelled",
    or anything else that went wrong ("WRONG" rows, "error <sqlstate>")."""
    outcomes = set()
    for i in range(40):
        cur = conn.cursor()
        task = asyncio.ensure_future(cur.execute(SQL))
        for _ in range(i % 8):
            await asyncio.sleep(0)
        task.cancel()
        try:
            await task
            rows = await cur.fetchall()
            outcomes.add("rows" if [tuple(r) for r in rows] == want else "WRONG")
        except asyncio.CancelledError:
            outcomes.add("cancelled")
        except ferrodbc.OperationalError as e:
            # The fetch after an execute the cancel reached as it completed.
            outcomes.add("cancelled" if e.sqlstate == "HY008" else f"error {e.sqlstate}")
        assert await (await conn.execute("SELECT 14")).fetchval() == 14
    return outcomes


async def main(cs: str, rounds: int) -> None:
    from sqlserver_support import synthetic

    want = [tuple(r) for r in synthetic.rows("int_nvarchar", 200)]
    async with await aio.connect(cs, autocommit=True) as conn:
        for _ in range(rounds):
            print(json.dumps(sorted(await race_round(conn, want))), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
