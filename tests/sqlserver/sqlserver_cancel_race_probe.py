"""Child process of test_sqlserver_aio.py::test_cancels_racing_execute_starts_never_hang:
ROUNDS rounds of 40 asyncio tasks on one connection, each cancelled 0-7 loop turns after it
started an execute (so the cancel lands while the driver is still writing the request, waiting
for the answer, or reading it), then one statement that must run normally. Prints a line per
round (its outcomes, JSON); a hang shows as a timeout in the parent with the rounds done so far."""

from __future__ import annotations

import asyncio
import json
import sys

import ferrodbc
import ferrodbc.aio as aio


async def main(cs: str, rounds: int) -> None:
    async with await aio.connect(cs, autocommit=True) as conn:
        for _ in range(rounds):
            outcomes: set[str] = set()
            for i in range(40):
                cur = conn.cursor()
                task = asyncio.ensure_future(cur.execute("SELECT * FROM peer.int_nvarchar_200"))
                for _ in range(i % 8):
                    await asyncio.sleep(0)
                task.cancel()
                try:
                    await task
                    outcomes.add(f"{len(await cur.fetchall())} rows")
                except asyncio.CancelledError:
                    outcomes.add("cancelled")
                except ferrodbc.OperationalError as e:
                    outcomes.add(e.sqlstate)
                assert await (await conn.execute("SELECT 14")).fetchval() == 14
            print(json.dumps(sorted(outcomes)), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
