"""A small shop: the models the flow (eng/suites/django/flow.py) migrates and exercises."""

import uuid

from django.db import models


class Author(models.Model):
    name = models.CharField(max_length=100)
    email = models.EmailField(unique=True)
    joined = models.DateTimeField()

    class Meta:
        app_label = "shop"


class Book(models.Model):
    title = models.CharField(max_length=200, db_index=True)
    author = models.ForeignKey(Author, on_delete=models.CASCADE, related_name="books")
    price = models.DecimalField(max_digits=10, decimal_places=2)
    published = models.DateField(null=True)
    in_stock = models.BooleanField(default=True)
    code = models.UUIDField(default=uuid.uuid4, unique=True)
    blurb = models.TextField(blank=True, default="")

    class Meta:
        app_label = "shop"


class Counter(models.Model):
    name = models.CharField(max_length=50, unique=True)
    value = models.IntegerField(default=0)

    class Meta:
        app_label = "shop"
