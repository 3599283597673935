"""What the generated types accept: checked with mypy --strict by tests/python-client.test.ts."""

from __future__ import annotations

from typing import List

from quarry_client import QuarryClient


def titles(quarry: QuarryClient) -> List[str]:
    page = quarry.queries.execute(index="movies", query="Title:star", pageSize=5, sort=[{"field": "Title"}])
    total: int = page["total"]
    assert total >= 0
    return [str(r.get("Title")) for r in page["records"]]


def genres(quarry: QuarryClient) -> str:
    table = quarry.crosstab.execute(
        index="movies",
        rows=["Major Genre"],
        totals=[{"aggregationType": "Count", "field": "Title"}],
        format="csv",
        idempotency_key="k",
    )
    return str(table["contentType"])


def names(quarry: QuarryClient) -> List[str]:
    return [i["name"] for i in quarry.indexes.find_all(limit=10)]
