"""Deterministic data the write and join tasks create, and the results they must produce.

Synthetic peer tables (``peer.<shape>_<rows>``) cover reads; these cover what a user writes and
then queries. Values are exact in every type (floats are multiples of 1/4, text includes
non-ASCII), so a read-back compares equal only if nothing was lost on the way in or out.
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any

# ASCII only: ORDER BY on text must not depend on the server's collation.
REGIONS = ("north", "south", "east", "west", "central", "offshore")


def item_rows(n: int, start: int = 0) -> list[tuple[int, str, float]]:
    """(id INT, name NVARCHAR(50), val FLOAT) rows for the insert tasks."""
    return [(i, f"item {i} é€", i * 0.25 - 1000.0) for i in range(start, start + n)]


ITEM_DDL = "(id INT NOT NULL, name NVARCHAR(50) NULL, val FLOAT NULL)"


def customers(n: int) -> list[tuple[int, str, str]]:
    return [(i, f"customer {i} ß", REGIONS[(i * 7) % len(REGIONS)]) for i in range(1, n + 1)]


def products(n: int = 100) -> list[tuple[int, str, int]]:
    return [(i, f"product {i}", 100 + (i * 37) % 900) for i in range(1, n + 1)]


def orders(n: int, n_customers: int, n_products: int = 100) -> list[tuple[int, int, int, int]]:
    """(id, customer_id, product_id, qty)."""
    return [
        (i, 1 + (i * 7919) % n_customers, 1 + (i * 104729) % n_products, 1 + (i * 31) % 17)
        for i in range(1, n + 1)
    ]


def shop_sizes(n_orders: int) -> tuple[int, int]:
    """(customers, products) for an order count: ~50 orders per customer."""
    return max(20, n_orders // 50), 100


def table_name(prefix: str) -> str:
    """A table name unique to this worker process (the peer's database may be shared)."""
    return f"prof_{prefix}_{os.getpid()}"


def sql_literal(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "N'" + v.replace("'", "''") + "'"
    return repr(v)


def values_batches(rows: list[tuple], per_statement: int = 1000) -> list[str]:
    """Multi-row VALUES lists (SQL Server allows at most 1000 rows per VALUES)."""
    return [
        ", ".join("(" + ", ".join(sql_literal(v) for v in row) + ")" for row in rows[i : i + per_statement])
        for i in range(0, len(rows), per_statement)
    ]


# ---- the results the join tasks must return (computed here, independently of any driver) ----


def join_aggregation(n_orders: int) -> list[tuple[str, int, int]]:
    nc, np_ = shop_sizes(n_orders)
    region = {c[0]: c[2] for c in customers(nc)}
    price = {p[0]: p[2] for p in products(np_)}
    count: dict[str, int] = defaultdict(int)
    revenue: dict[str, int] = defaultdict(int)
    for _, cid, pid, qty in orders(n_orders, nc, np_):
        count[region[cid]] += 1
        revenue[region[cid]] += qty * price[pid]
    return [(r, count[r], revenue[r]) for r in sorted(count) if count[r] > 10]


def join_large(n_orders: int) -> list[tuple[int, str, str, int, int]]:
    nc, np_ = shop_sizes(n_orders)
    cname = {c[0]: c[1] for c in customers(nc)}
    prod = {p[0]: p for p in products(np_)}
    return [(oid, cname[cid], prod[pid][1], qty, prod[pid][2]) for oid, cid, pid, qty in orders(n_orders, nc, np_)]


def cte_top3(n_orders: int) -> list[tuple[int, int, int, int]]:
    nc, np_ = shop_sizes(n_orders)
    by_customer: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for oid, cid, _, qty in orders(n_orders, nc, np_):
        by_customer[cid].append((qty, oid))
    out = []
    for cid in sorted(by_customer):
        ranked = sorted(by_customer[cid], key=lambda t: (-t[0], t[1]))[:3]
        out += [(cid, oid, qty, rn) for rn, (qty, oid) in enumerate(ranked, start=1)]
    return out
