"""What the generated types refuse: mypy must report an error on each line marked wrong, and on no other."""

from __future__ import annotations

from quarry_client import QuarryClient


def mistakes(quarry: QuarryClient) -> None:
    quarry.queries.execute(index="movies", pageSize="5")  # wrong: pageSize is an integer
    quarry.queries.execute(query="x")  # wrong: index is required
    quarry.queries.execute(index="movies", pagesize=5)  # wrong: no such parameter
    quarry.crosstab.execute(index="m", rows=[1], totals=[{"aggregationType": "Count", "field": "x"}])  # wrong: a row is a field name or an object
    quarry.reports.delete(guid="g", idempotency_key="k")  # wrong: REPORTS.DELETE takes no key
    page = quarry.indexes.find()
    page["nextcursor"]  # wrong: the key is nextCursor
    quarry.sources.update(sourceId="s", name=None, refresh=None)
