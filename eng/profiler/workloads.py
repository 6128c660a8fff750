"""The task registry: what a user does, timed; set up and validated outside the timed window
(the contract is in task.py).

Sizes are (full, quick); ``n`` is the picked one. Synthetic tables are the TDS peer's
``peer.<shape>_<rows>`` (only ``SELECT [TOP n] cols FROM peer.x`` is served from them); joins,
CTEs and writes use real tables the setup creates (the peer runs them in SQLite).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import arrow_tasks as at
from . import workdata as wd
from .bulk_tasks import TASKS as BULK_TASKS
from .dataframe_tasks import TASKS as DATAFRAME_TASKS
from .digest import Digest, of_rows, of_sets, of_values
from .drivers import INPUT_SIZES
from .task import Ctx, Size, Task
from .vector_tasks import TASKS as VECTOR_TASKS
from .write_tasks import TASKS as WRITE_TASKS


def synthetic(shape: str, n: int) -> list[tuple]:
    from eng.peers import synthetic as syn  # the peer's generators, mirrored in Python

    return [tuple(r) for r in syn.rows(shape, n)]


def synthetic_columns(shape: str) -> list[str]:
    from eng.peers import synthetic as syn

    return [c[0] if isinstance(c, (tuple, list)) else getattr(c, "name", c) for c in syn.columns(shape)]


def rows_digest(ctx: Ctx, rows: Any) -> Digest:
    return of_rows(rows)


def synthetic_digest(shape: str) -> Callable[[int], Digest]:
    return lambda n: of_rows(synthetic(shape, n))


def select_all(shape: str) -> Callable[[int], str]:
    return lambda n: f"SELECT * FROM peer.{shape}_{n}"


# ---- fetch shapes over one synthetic table -------------------------------------------------


def query_body(shape: str, fetch: Callable[[Any], list]) -> Callable[[Ctx], list]:
    sql = select_all(shape)

    def body(ctx: Ctx) -> list:
        cur = ctx.conn.cursor()
        cur.execute(sql(ctx.n))
        return fetch(cur)

    return body


def fetch_task(name: str, title: str, shape: str, size: Size, fetch: Callable[[Any], list], floor: bool = False,
               floor_chunk: int = 0) -> Task:
    """`floor`: compare with the floor (native fetch + the objects built from memory in chunks of
    `floor_chunk` rows, 0 = all at once, as the task's fetch calls return them)."""
    body = query_body(shape, fetch)
    return Task(name, title, size, body, rows_digest, synthetic_digest(shape),
                floor_query=select_all(shape) if floor else None,
                floor_shape=shape if floor else None, floor_chunk=floor_chunk)


def arrow_table_task(name: str, title: str, shape: str, size: Size, warm: bool = False) -> Task:
    """The result as one pyarrow Table through each driver's Arrow fetch; the floor is the
    native drain alone (no objects: Arrow builds none). `warm`: the query is read once, untimed,
    before the timed read (`arrow_tasks.warm_setup`)."""
    return Task(name, title, size, at.table_body(shape), at.table_check, synthetic_digest(shape),
                at.warm_setup(shape) if warm else at.setup, floor_query=select_all(shape))


def fetchall(cur: Any) -> list:
    return cur.fetchall()


def fetchmany_loop(k: int) -> Callable[[Any], list]:
    def fetch(cur: Any) -> list:
        out: list = []
        while batch := cur.fetchmany(k):
            out += batch
        return out

    return fetch


def fetchone_loop(cur: Any) -> list:
    out = []
    while (row := cur.fetchone()) is not None:
        out.append(row)
    return out


def iterate(cur: Any) -> list:
    return [row for row in cur]


# ---- the same rows from a user table: the peer reads SQLite and encodes every row -----------


def user_table_setup(shape: str) -> Callable[[Ctx], None]:
    """CREATE TABLE + INSERTs of the shape's rows (eng/peers/usertable.py), outside the timing."""

    def setup(ctx: Ctx) -> None:
        from eng.peers import usertable

        name = wd.table_name(shape)
        ctx.tables.append(name)
        usertable.load(ctx.conn, shape, name, ctx.n)
        ctx.table = name

    return setup


def user_table_task(name: str, title: str, shape: str, size: Size, fetch: Callable[[Any], list]) -> Task:
    """`fetch` over `SELECT * FROM <table>` of a table loaded by SQL at set-up; the expectation
    is still the generator's (rows come back in insertion order on the peer)."""

    def body(ctx: Ctx) -> list:
        cur = ctx.conn.cursor()
        cur.execute(f"SELECT * FROM {ctx.table}")
        return fetch(cur)

    return Task(name, title, size, body, rows_digest, synthetic_digest(shape), user_table_setup(shape))


# ---- per-statement overhead ----------------------------------------------------------------


def connect_body(ctx: Ctx) -> int:
    for _ in range(ctx.n):
        ctx.connect().close()
    return ctx.n


def connect_pooled_body(ctx: Ctx) -> int:
    for _ in range(ctx.n):
        ctx.connect_pooled().close()
    return ctx.n


def connect_unpooled_body(ctx: Ctx) -> int:
    with ctx.driver.pooling_off():
        for _ in range(ctx.n):
            ctx.driver.connect_unpooled(ctx.conn_str).close()
    return ctx.n


def connect_check(ctx: Ctx, opened: int) -> Digest:
    conn = ctx.connect()
    cur = conn.cursor()
    cur.execute("SELECT 1")
    (one,) = cur.fetchone()
    conn.close()
    return of_values([one] * opened)


def select_one_body(ctx: Ctx) -> list:
    cur = ctx.conn.cursor()
    out = []
    for _ in range(ctx.n):
        cur.execute("SELECT 1")
        out.append(cur.fetchone()[0])
    return out


def values_check(ctx: Ctx, values: list) -> Digest:
    return of_values(values)


def fetchval_body(ctx: Ctx) -> list:
    cur = ctx.conn.cursor()
    out = []
    for i in range(ctx.n):
        cur.execute("SELECT ?", i)
        out.append(cur.fetchval())
    return out


def params_body(with_sizes: bool) -> Callable[[Ctx], list]:
    def body(ctx: Ctx) -> list:
        cur = ctx.conn.cursor()
        out = []
        for row in ctx.items:
            if with_sizes:
                cur.setinputsizes(INPUT_SIZES)
            cur.execute("SELECT ?, ?, ?", *row)
            out.append(cur.fetchone())
        return out

    return body


def params_setup(ctx: Ctx) -> None:
    ctx.items = wd.item_rows(ctx.n)


# ---- writes --------------------------------------------------------------------------------

INSERT_SQL = "INSERT INTO {t} (id, name, val) VALUES (?, ?, ?)"


def items_setup(ctx: Ctx) -> None:
    ctx.table = ctx.create_table("items", wd.ITEM_DDL)
    ctx.items = wd.item_rows(ctx.n)


def items_check(ctx: Ctx, _: Any) -> Digest:
    return of_rows(ctx.read_back(ctx.table))


def items_expect(n: int) -> Digest:
    return of_rows(wd.item_rows(n))


def insert_single_body(ctx: Ctx) -> None:
    cur = ctx.conn.cursor()
    sql = INSERT_SQL.format(t=ctx.table)
    for row in ctx.items:
        cur.execute(sql, *row)
    ctx.conn.commit()


def executemany_body(ctx: Ctx) -> None:
    cur = ctx.conn.cursor()
    cur.executemany(INSERT_SQL.format(t=ctx.table), ctx.items)
    ctx.conn.commit()


# SQL Server allows 2100 parameters per statement: 500 rows x 3 columns per INSERT.
MULTI_ROWS = 500


def insert_multi_values_body(ctx: Ctx) -> None:
    """The insertmanyvalues pattern (SQLAlchemy): many rows per parameterised INSERT."""
    cur = ctx.conn.cursor()
    items = ctx.items
    full_sql = None
    for start in range(0, len(items), MULTI_ROWS):
        chunk = items[start : start + MULTI_ROWS]
        if len(chunk) == MULTI_ROWS and full_sql is not None:
            sql = full_sql
        else:
            sql = INSERT_SQL.format(t=ctx.table) + ", (?, ?, ?)" * (len(chunk) - 1)
            if len(chunk) == MULTI_ROWS:
                full_sql = sql
        cur.execute(sql, [v for row in chunk for v in row])
    ctx.conn.commit()


def transaction_body(commit: bool) -> Callable[[Ctx], None]:
    def body(ctx: Ctx) -> None:
        cur = ctx.conn.cursor()
        sql = INSERT_SQL.format(t=ctx.table)
        for row in ctx.items:
            cur.execute(sql, *row)
            ctx.conn.commit() if commit else ctx.conn.rollback()

    return body


# ---- joins, CTE ----------------------------------------------------------------------------


def shop_setup(ctx: Ctx) -> None:
    nc, np_ = wd.shop_sizes(ctx.n)
    ctx.shop["c"] = ctx.create_table("customers", "(id INT NOT NULL, name NVARCHAR(50), region NVARCHAR(20))", wd.customers(nc))
    ctx.shop["p"] = ctx.create_table("products", "(id INT NOT NULL, name NVARCHAR(50), price_cents INT)", wd.products(np_))
    ctx.shop["o"] = ctx.create_table("orders", "(id INT NOT NULL, customer_id INT, product_id INT, qty INT)", wd.orders(ctx.n, nc, np_))


def shop_query(template: str) -> Callable[[Ctx], list]:
    def body(ctx: Ctx) -> list:
        cur = ctx.conn.cursor()
        cur.execute(template.format(**ctx.shop))
        return cur.fetchall()

    return body


JOIN_AGGREGATION = (
    "SELECT c.region, COUNT(*) AS orders, SUM(o.qty * p.price_cents) AS revenue "
    "FROM {o} o JOIN {c} c ON c.id = o.customer_id JOIN {p} p ON p.id = o.product_id "
    "GROUP BY c.region HAVING COUNT(*) > 10 ORDER BY c.region"
)
JOIN_LARGE = (
    "SELECT o.id, c.name, p.name, o.qty, p.price_cents "
    "FROM {o} o JOIN {c} c ON c.id = o.customer_id JOIN {p} p ON p.id = o.product_id ORDER BY o.id"
)
CTE_TOP3 = (
    "WITH ranked AS (SELECT o.customer_id, o.id, o.qty, "
    "ROW_NUMBER() OVER (PARTITION BY o.customer_id ORDER BY o.qty DESC, o.id) AS rn FROM {o} o) "
    "SELECT customer_id, id, qty, rn FROM ranked WHERE rn <= 3 ORDER BY customer_id, rn"
)


# ---- converters, mappings, wide types, multiple result sets --------------------------------


def converter_setup(ctx: Ctx) -> None:
    note = ctx.driver.add_upper_converter(ctx.conn)
    if note:
        ctx.notes.append(note)


def converted_expect(n: int) -> Digest:
    return of_rows([(i, None if s is None else s.upper()) for i, s in synthetic("int_nvarchar", n)])


# ---- pyodbc-compatible paths: raw-bytes converters on varchar, catalog calls, fast_executemany


def varchar_rows(n: int) -> list[tuple[int, str | None]]:
    # ASCII, so the raw bytes are the same in any code page (see _upper_from_narrow).
    return [(i, None if i % 10 == 9 else f"item {i}") for i in range(n)]


def varchar_converter_setup(ctx: Ctx) -> None:
    ctx.table = ctx.create_table("vitems", "(id INT NOT NULL, name VARCHAR(50) NULL)", varchar_rows(ctx.n))
    note = ctx.driver.add_upper_varchar_converter(ctx.conn)
    if note:
        ctx.notes.append(note)


def varchar_converter_body(ctx: Ctx) -> list:
    cur = ctx.conn.cursor()
    cur.execute(f"SELECT id, name FROM {ctx.table} ORDER BY id")
    return cur.fetchall()


def varchar_converted_expect(n: int) -> Digest:
    return of_rows([(i, None if s is None else s.upper()) for i, s in varchar_rows(n)])


CATALOG_DDL = "(id INT NOT NULL, name NVARCHAR(50) NULL, val FLOAT NULL, created DATETIME2 NULL, price DECIMAL(18, 4) NULL)"
CATALOG_NAMES = ["id", "name", "val", "created", "price"]


def catalog_setup(ctx: Ctx) -> None:
    ctx.table = ctx.create_table("catalog", CATALOG_DDL)


def catalog_columns_body(ctx: Ctx) -> list:
    """What an ORM's reflection does: SQLColumns on one table, again and again."""
    cur = ctx.conn.cursor()
    return [ctx.driver.column_names(cur, ctx.table) for _ in range(ctx.n)]


def catalog_check(ctx: Ctx, names: list) -> Digest:
    return of_values([tuple(n) for n in names])


def fast_executemany_setup(ctx: Ctx) -> None:
    items_setup(ctx)
    note = ctx.driver.fast_executemany(ctx.conn.cursor())
    if note:
        ctx.notes.append(note)


def fast_executemany_body(ctx: Ctx) -> None:
    cur = ctx.conn.cursor()
    ctx.driver.fast_executemany(cur)
    cur.executemany(INSERT_SQL.format(t=ctx.table), ctx.items)
    ctx.conn.commit()


def mapping_body(ctx: Ctx) -> list:
    cur = ctx.conn.cursor()
    cur.execute(f"SELECT * FROM peer.wide32_{ctx.n}")
    mapping = ctx.driver.mapping
    return [mapping(row) for row in cur.fetchall()]


def mapping_check(ctx: Ctx, dicts: list) -> Digest:
    names = synthetic_columns("wide32")
    bad = next((list(d) for d in dicts if list(d) != names), None)
    if bad is not None:
        raise AssertionError(f"row._mapping keys {bad[:4]}... differ from the columns {names[:4]}...")
    return of_rows([tuple(d.values()) for d in dicts])


# ---- row factories and lazy rows: 2 of 32 columns read, dict rows ----------------------------

#: The two columns read of each 32-column row (an int and an nvarchar).
TWO_OF_32 = (0, 1)


def two_of_32_body(lazy: bool) -> Callable[[Ctx], list]:
    """Every row of peer.wide32_n, two of its 32 columns read; `lazy`: through lazy rows (the
    driver decodes only what is read), else through the driver's ordinary rows."""
    a, b = TWO_OF_32

    def body(ctx: Ctx) -> list:
        cur = ctx.conn.cursor()
        if lazy:
            ctx.driver.lazy_rows(cur)
        cur.execute(f"SELECT * FROM peer.wide32_{ctx.n}")
        return [(row[a], row[b]) for row in cur.fetchall()]

    return body


def two_of_32_expect(n: int) -> Digest:
    a, b = TWO_OF_32
    return of_rows([(r[a], r[b]) for r in synthetic("wide32", n)])


def dict_rows_body(ctx: Ctx) -> list:
    cur = ctx.conn.cursor()
    cur.execute(f"SELECT * FROM peer.mixed_{ctx.n}")
    return ctx.driver.dict_rows(cur)


def dict_rows_check(ctx: Ctx, dicts: list) -> Digest:
    names = synthetic_columns("mixed")
    bad = next((list(d) for d in dicts if list(d) != names), None)
    if bad is not None:
        raise AssertionError(f"dict keys {bad} differ from the columns {names}")
    return of_rows([tuple(d.values()) for d in dicts])


def dto_setup(ctx: Ctx) -> None:
    note = ctx.driver.prepare_datetimeoffset(ctx.conn)
    if note:
        ctx.notes.append(note)


MULTI_SETS = ("int_nvarchar", "mixed", "int_nvarchar_float")


def multiple_sets_body(ctx: Ctx) -> list:
    cur = ctx.conn.cursor()
    cur.execute("; ".join(f"SELECT * FROM peer.{s}_{ctx.n}" for s in MULTI_SETS))
    sets = [cur.fetchall()]
    while cur.nextset():
        sets.append(cur.fetchall())
    return sets


def sets_check(ctx: Ctx, sets: list) -> Digest:
    return of_sets(sets)


def sets_expect(n: int) -> Digest:
    return of_sets([synthetic(s, n) for s in MULTI_SETS])


# ---- the registry: n is rows fetched or written, or iterations of per-statement tasks ----------

_TASKS = [
    Task("connect", "open a connection (each driver's default)", Size(20, 5), connect_body, connect_check,
         lambda n: of_values([1] * n), needs_connection=False),
    Task("connect_unpooled", "open a connection, pooling off (a login each time)", Size(20, 5),
         connect_unpooled_body, connect_check, lambda n: of_values([1] * n), needs_connection=False),
    Task("connect_pooled", "open a connection from the driver's pool", Size(20, 5), connect_pooled_body,
         connect_check, lambda n: of_values([1] * n), needs_connection=False),
    Task("select_one", "SELECT 1 round trip", Size(1000, 200), select_one_body, values_check,
         lambda n: of_values([1] * n)),
    Task("insert_single", "insert single rows, parameterised", Size(1000, 200), insert_single_body,
         items_check, items_expect, items_setup),
    Task("executemany", "executemany inserts", Size(10_000, 1000), executemany_body, items_check,
         items_expect, items_setup),
    Task("insert_100k", "insert rows, 500-row multi-VALUES INSERTs", Size(100_000, 5000),
         insert_multi_values_body, items_check, items_expect, items_setup),
    fetch_task("fetchall_mixed", "fetchall of mixed rows", "mixed", Size(100_000, 10_000), fetchall,
               floor=True),
    arrow_table_task("arrow_mixed", "Arrow table of mixed rows", "mixed", Size(100_000, 10_000)),
    arrow_table_task("arrow_wide32", "Arrow table of 32-column rows", "wide32", Size(10_000, 2000)),
    arrow_table_task("arrow_mixed_warm", "arrow_mixed, the query read once before (untimed)", "mixed",
                     Size(100_000, 10_000), warm=True),
    arrow_table_task("arrow_wide32_warm", "arrow_wide32, the query read once before (untimed)", "wide32",
                     Size(10_000, 2000), warm=True),
    arrow_table_task("arrow_nvarcharmax", "Arrow table of 4 KiB NVARCHAR(MAX) values", "lob_nvarcharmax_4k",
                     Size(5000, 500)),
    Task("arrow_batches_1_2m", "1.2M rows as 8,192-row record batches (peak RSS reported)", Size(1_200_000, 100_000),
         at.batches_body("int_nvarchar_float"), at.batches_check, at.batches_expect("int_nvarchar_float"),
         at.rss_setup, floor_query=select_all("int_nvarchar_float")),
    fetch_task("fetch_1_2m", "1.2M-row fetch, fetchmany(10000) loop", "int_nvarchar_float",
               Size(1_200_000, 100_000), fetchmany_loop(10_000), floor=True, floor_chunk=10_000),
    fetch_task("fetchone_mixed", "fetchone over mixed rows", "mixed", Size(100_000, 10_000),
               fetchone_loop),
    user_table_task("fetchall_mixed_table", "fetchall of mixed rows from a user table", "mixed",
                    Size(100_000, 10_000), fetchall),
    user_table_task("fetchone_mixed_table", "fetchone over mixed rows from a user table", "mixed",
                    Size(100_000, 10_000), fetchone_loop),
    fetch_task("fetchmany1_int_nvarchar", "fetchmany(1) over INT/NVARCHAR rows", "int_nvarchar",
               Size(10_000, 2000), fetchmany_loop(1)),
    fetch_task("fetchmany_100", "fetchmany(100) loop, mixed", "mixed", Size(100_000, 10_000), fetchmany_loop(100)),
    fetch_task("fetchmany_1000", "fetchmany(1000) loop, mixed", "mixed", Size(100_000, 10_000),
               fetchmany_loop(1000)),
    fetch_task("fetchmany_10000", "fetchmany(10000) loop, mixed", "mixed", Size(100_000, 10_000),
               fetchmany_loop(10_000)),
    fetch_task("iterate_mixed", "iterate the cursor, mixed", "mixed", Size(100_000, 10_000), iterate),
    Task("fetchval", "fetchval over scalar queries", Size(10_000, 1000), fetchval_body, values_check,
         lambda n: of_values(list(range(n)))),
    Task("commit", "insert + commit", Size(1000, 200), transaction_body(True), items_check, items_expect,
         items_setup),
    Task("rollback", "insert + rollback", Size(1000, 200), transaction_body(False), items_check,
         lambda n: of_rows([]), items_setup),
    Task("params_positional", "repeated queries with positional parameters", Size(1000, 200),
         params_body(False), rows_digest, items_expect, params_setup),
    Task("params_setinputsizes", "repeated queries with setinputsizes", Size(1000, 200),
         params_body(True), rows_digest, items_expect, params_setup),
    Task("join_aggregation", "joined aggregation, GROUP BY/HAVING over n orders", Size(50_000, 5000),
         shop_query(JOIN_AGGREGATION), rows_digest, lambda n: of_rows(wd.join_aggregation(n)), shop_setup),
    Task("join_large", "large joined result", Size(50_000, 5000), shop_query(JOIN_LARGE), rows_digest,
         lambda n: of_rows(wd.join_large(n)), shop_setup),
    Task("cte", "CTE with ROW_NUMBER, top 3 per customer", Size(50_000, 5000), shop_query(CTE_TOP3), rows_digest,
         lambda n: of_rows(wd.cte_top3(n)), shop_setup),
    fetch_task("lob_nvarcharmax", "256 KiB NVARCHAR(MAX) values, fetchall", "lob_nvarcharmax_256k", Size(20, 20),
               fetchall),
    Task("converters_fetchall", "output-converted rows via fetchall", Size(10_000, 2000),
         query_body("int_nvarchar", fetchall), rows_digest,
         converted_expect, converter_setup),
    Task("converters_fetchmany", "output-converted rows via fetchmany(1000)", Size(10_000, 2000),
         query_body("int_nvarchar", fetchmany_loop(1000)), rows_digest,
         converted_expect, converter_setup),
    fetch_task("wide32_fetchall", "fetchall of 32-column rows", "wide32", Size(10_000, 2000), fetchall),
    Task("wide32_mapping", "32-column rows read as dict(row._mapping)", Size(10_000, 2000), mapping_body,
         mapping_check, synthetic_digest("wide32")),
    Task("wide32_2cols_eager", "2 of 32 columns read from eager rows (fetchall)", Size(100_000, 10_000),
         two_of_32_body(False), rows_digest, two_of_32_expect),
    Task("wide32_2cols_lazy", "2 of 32 columns read from lazy rows (fetchall)", Size(100_000, 10_000),
         two_of_32_body(True), rows_digest, two_of_32_expect),
    Task("dict_rows_mixed", "fetchall of mixed rows as dicts", Size(100_000, 10_000), dict_rows_body,
         dict_rows_check, synthetic_digest("mixed")),
    Task("dto_dec_guid", "datetimeoffset/decimal/uniqueidentifier table, fetchall", Size(10_000, 2000),
         query_body("dto_dec_guid", fetchall), rows_digest,
         synthetic_digest("dto_dec_guid"), dto_setup),
    Task("converters_varchar_raw", "raw-bytes converter on VARCHAR rows (pyodbc semantics)", Size(10_000, 2000),
         varchar_converter_body, rows_digest, varchar_converted_expect, varchar_converter_setup),
    Task("catalog_columns", "cursor.columns(table=...) over a 5-column table", Size(200, 50),
         catalog_columns_body, catalog_check, lambda n: of_values([tuple(CATALOG_NAMES)] * n), catalog_setup),
    Task("fast_executemany", "executemany inserts with fast_executemany = True", Size(10_000, 1000),
         fast_executemany_body, items_check, items_expect, fast_executemany_setup),
    Task("multiple_result_sets", "three result sets via nextset", Size(1000, 500), multiple_sets_body, sets_check,
         sets_expect),
    *DATAFRAME_TASKS,
    *BULK_TASKS,
    *VECTOR_TASKS,
    *WRITE_TASKS,
]

REGISTRY: dict[str, Task] = {t.name: t for t in _TASKS}
assert len(REGISTRY) == len(_TASKS), "duplicate task names"

#: The tasks whose time is dominated by decoding rows (the native floor runs for these).
FLOOR_TASKS = [t.name for t in _TASKS if t.floor_query is not None]


def select(names: list[str] | None) -> list[Task]:
    if not names:
        return list(_TASKS)
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise SystemExit(f"unknown task(s): {', '.join(unknown)}; known: {', '.join(REGISTRY)}")
    return [REGISTRY[n] for n in names]
