"""One Django flow through mssql-django against a TDS peer: migrate, model CRUD, transactions,
aggregates, bulk_create, select_for_update and a few query shapes. Each step is run and recorded
(passed, or the error's first line); the result is one JSON object on the last line of stdout.

Run by eng/suites/django_suite.py (which starts the peer and sets the environment settings.py
reads); FERRODBC_INSTALL_AS=pyodbc|mssql_python installs ferrodbc under that name first.
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import sys
import traceback
from collections.abc import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")

_as = os.environ.get("FERRODBC_INSTALL_AS", "")
if _as:
    import ferrodbc

    getattr(ferrodbc, f"install_as_{_as}")()

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.db.models import Avg, Count, F, Max, Q, Sum  # noqa: E402
from shop.models import Author, Book, Counter  # noqa: E402

D = decimal.Decimal
STEPS: list[tuple[str, Callable[[], None]]] = []


def step(fn: Callable[[], None]) -> Callable[[], None]:
    STEPS.append((fn.__name__, fn))
    return fn


def check(got: object, want: object) -> None:
    if got != want:
        raise AssertionError(f"got {got!r}, want {want!r}")


@step
def migrate() -> None:
    call_command("migrate", verbosity=0, interactive=False)
    names = set(connection.introspection.table_names())
    for t in ("django_migrations", "shop_author", "shop_book", "shop_counter"):
        if t not in names:
            raise AssertionError(f"{t} not created (tables: {sorted(names)})")


@step
def create() -> None:
    a = Author.objects.create(name="Ann", email="ann@example.com",
                              joined=datetime.datetime(2024, 1, 2, 3, 4, 5, 123000))
    check(isinstance(a.pk, int), True)
    Book.objects.create(title="Alpha", author=a, price=D("12.50"), published=datetime.date(2020, 5, 1))
    Book.objects.create(title="Beta", author=a, price=D("7.25"), in_stock=False, blurb="é漢字" * 100)


@step
def read() -> None:
    a = Author.objects.get(email="ann@example.com")
    check(a.joined, datetime.datetime(2024, 1, 2, 3, 4, 5, 123000))
    b = Book.objects.get(title="Beta")
    check((b.price, b.in_stock, b.blurb[:3], b.author_id), (D("7.25"), False, "é漢字", a.pk))
    check(Book.objects.get(code=b.code).pk, b.pk)
    check(list(Book.objects.filter(author__name="Ann").order_by("title").values_list("title", flat=True)),
          ["Alpha", "Beta"])
    check(Book.objects.filter(published__year=2020).count(), 1)
    check(Book.objects.filter(Q(price__gt=10) | Q(in_stock=False)).count(), 2)
    check(Book.objects.filter(published__isnull=True).exists(), True)


@step
def update() -> None:
    check(Book.objects.filter(title="Alpha").update(price=F("price") + 1), 1)
    b = Book.objects.get(title="Alpha")
    check(b.price, D("13.50"))
    b.title = "Alpha 2"
    b.save()
    check(Book.objects.filter(title="Alpha 2").count(), 1)


@step
def delete() -> None:
    a = Author.objects.create(name="Gone", email="gone@example.com", joined=datetime.datetime(2024, 1, 1))
    Book.objects.create(title="Doomed", author=a, price=D("1.00"))
    deleted, per_model = a.delete()
    check((deleted, per_model.get("shop.Book")), (2, 1))
    check(Author.objects.filter(email="gone@example.com").exists(), False)


@step
def transaction_commit() -> None:
    with transaction.atomic():
        Counter.objects.create(name="c1", value=1)
    check(Counter.objects.get(name="c1").value, 1)


@step
def transaction_rollback() -> None:
    try:
        with transaction.atomic():
            Counter.objects.create(name="c2", value=2)
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    check(Counter.objects.filter(name="c2").exists(), False)


@step
def savepoint_rollback() -> None:
    with transaction.atomic():
        Counter.objects.create(name="outer", value=1)
        try:
            with transaction.atomic():
                Counter.objects.create(name="inner", value=2)
                raise RuntimeError("inner only")
        except RuntimeError:
            pass
    check(sorted(Counter.objects.filter(name__in=["outer", "inner"]).values_list("name", flat=True)),
          ["outer"])


@step
def integrity_error() -> None:
    from django.db import IntegrityError

    try:
        with transaction.atomic():
            Author.objects.create(name="Dup", email="ann@example.com", joined=datetime.datetime(2024, 1, 1))
    except IntegrityError:
        return
    raise AssertionError("a duplicate unique key did not raise IntegrityError")


@step
def bulk_create() -> None:
    a = Author.objects.create(name="Bulk", email="bulk@example.com", joined=datetime.datetime(2024, 2, 2))
    made = Book.objects.bulk_create(
        [Book(title=f"B{i:03}", author=a, price=D(i) / 4) for i in range(250)], batch_size=100)
    check(len(made), 250)
    check(Book.objects.filter(author=a).count(), 250)
    books = list(Book.objects.filter(author=a).order_by("title")[:10])
    for bk in books:
        bk.in_stock = False
    Book.objects.bulk_update(books, ["in_stock"])
    check(Book.objects.filter(author=a, in_stock=False).count(), 10)


@step
def aggregates() -> None:
    a = Author.objects.get(email="bulk@example.com")
    agg = Book.objects.filter(author=a).aggregate(n=Count("id"), total=Sum("price"),
                                                  top=Max("price"), mean=Avg("price"))
    total = sum(D(i) / 4 for i in range(250))
    check((agg["n"], agg["total"], agg["top"]), (250, total, D("62.25")))
    check(round(agg["mean"], 3), round(total / 250, 3))
    per_author = dict(Author.objects.annotate(n=Count("books")).values_list("email", "n"))
    check(per_author["bulk@example.com"], 250)
    check(per_author["ann@example.com"], 2)


@step
def slicing_and_distinct() -> None:
    a = Author.objects.get(email="bulk@example.com")
    page = list(Book.objects.filter(author=a).order_by("-title").values_list("title", flat=True)[10:13])
    check(page, ["B239", "B238", "B237"])
    check(Book.objects.filter(author=a).values("in_stock").distinct().count(), 2)


@step
def select_for_update() -> None:
    Counter.objects.create(name="locked", value=10)
    with transaction.atomic():
        c = Counter.objects.select_for_update().get(name="locked")
        c.value += 5
        c.save()
    check(Counter.objects.get(name="locked").value, 15)


@step
def raw_cursor() -> None:
    with connection.cursor() as cur:
        cur.execute("SELECT %s + %s, %s", [40, 2, "x"])
        check(tuple(cur.fetchone()), (42, "x"))


def main() -> int:
    results: dict[str, str] = {}
    for name, fn in STEPS:
        try:
            fn()
            results[name] = "passed"
        except Exception as e:  # noqa: BLE001  (each step's failure is recorded, the flow goes on)
            first = (str(e).strip().splitlines() or [""])[0]
            results[name] = f"failed: {type(e).__name__}: {first[:300]}"
            if os.environ.get("DJANGO_FLOW_TRACEBACK"):
                traceback.print_exc()
    driver = type(connection.connection).__module__ if connection.connection is not None else "?"
    print(json.dumps({"steps": results, "connection_class_module": driver}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
