"""quarry_client against a live Quarry (what `npm start` serves): QUARRY_URL and QUARRY_TOKEN name it.

Numbers are checked against the records themselves, read here from vega-datasets' movies.json.
tests/python-client.test.ts starts the server and runs this file with Debian's python3.
"""

from __future__ import annotations

import collections
import csv
import gzip
import io
import json
import os
import pathlib
import re
import socket
import tempfile
import unittest
import uuid

from quarry_client import METHOD_NAMES, QuarryClient, QuarryError

URL = os.environ["QUARRY_URL"]
TOKEN = os.environ["QUARRY_TOKEN"]
REPO = pathlib.Path(__file__).resolve().parents[3]
MOVIES = json.loads((REPO / "node_modules" / "vega-datasets" / "data" / "movies.json").read_text())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveTest(unittest.TestCase):
    quarry: QuarryClient

    @classmethod
    def setUpClass(cls) -> None:
        cls.quarry = QuarryClient(URL, TOKEN)

    def test_discover_lists_every_method_the_client_has(self) -> None:
        doc = QuarryClient(URL).discover()
        self.assertEqual(sorted(m["name"] for m in doc["methods"]), sorted(METHOD_NAMES))

    def test_whoami_and_a_search_counted_against_the_records(self) -> None:
        me = self.quarry.tokens.whoami()
        self.assertEqual(me["user"], "demo")
        page = self.quarry.queries.execute(index="movies", pageSize=7, sort=[{"field": "Title", "direction": "asc"}])
        self.assertEqual(page["total"], len(MOVIES))
        self.assertEqual(len(page["records"]), 7)
        titles = sorted(str(m["Title"]) for m in MOVIES if m.get("Title") is not None)
        self.assertEqual([r["Title"] for r in page["records"]], titles[:7])
        # A word in a field, counted by hand: Comedy, Romantic Comedy and Black Comedy all hold the word.
        comedies = sum(1 for m in MOVIES if "comedy" in re.split(r"\W+", str(m.get("Major Genre") or "").lower()))
        found = self.quarry.queries.execute(index="movies", query="(Major Genre):Comedy", pageSize=1)
        self.assertEqual(found["total"], comedies)

    def test_a_crosstab_as_csv_matches_the_records_counted_here(self) -> None:
        answer = self.quarry.crosstab.execute(
            index="movies",
            rows=["Major Genre"],
            totals=[{"aggregationType": "Count", "field": "Title"}, {"aggregationType": "Sum", "field": "Worldwide Gross"}],
            format="csv",
        )
        self.assertEqual(answer["contentType"], "text/csv")
        # The result is the union of every output's; format="csv" makes data the file's text.
        text = answer["data"]
        assert isinstance(text, str)
        table = list(csv.reader(io.StringIO(text)))
        counts = collections.Counter(m["Major Genre"] for m in MOVIES if m.get("Major Genre") is not None)
        gross: dict[str, float] = collections.defaultdict(float)
        for m in MOVIES:
            if m.get("Major Genre") is not None and m.get("Worldwide Gross") is not None:
                gross[m["Major Genre"]] += m["Worldwide Gross"]
        by_genre = {row[0]: row for row in table[1:]}
        for genre, n in counts.items():
            self.assertIn(genre, by_genre)
            self.assertEqual(int(float(by_genre[genre][1])), sum(1 for m in MOVIES if m.get("Major Genre") == genre and m.get("Title") is not None))
            self.assertAlmostEqual(float(by_genre[genre][2]), gross[genre], delta=abs(gross[genre]) * 1e-12 + 1e-6)
        self.assertGreaterEqual(len(counts), 10)

    def test_errors_carry_code_title_detail_and_request_id(self) -> None:
        with self.assertRaises(QuarryError) as bad_query:
            self.quarry.queries.execute(index="movies", query="(Title:")
        self.assertEqual(bad_query.exception.code, 400)
        self.assertEqual(bad_query.exception.title, "Bad Request")
        self.assertTrue(bad_query.exception.detail)
        self.assertTrue(bad_query.exception.request_id)
        with self.assertRaises(QuarryError) as unknown:
            self.quarry.queries.execute(index="no_such_index")
        self.assertEqual(unknown.exception.code, 404)
        self.assertIn("no_such_index", unknown.exception.detail)
        with self.assertRaises(QuarryError) as no_method:
            self.quarry.call("NOPE.NOTHING")
        self.assertEqual(no_method.exception.code, -32601)
        with self.assertRaises(QuarryError) as bad_token:
            QuarryClient(URL, "qk_" + "0" * 40).tokens.whoami()
        self.assertEqual(bad_token.exception.code, 401)
        self.assertFalse(bad_token.exception.is_transport)
        with self.assertRaises(QuarryError) as away:
            QuarryClient(f"http://127.0.0.1:{free_port()}", TOKEN, timeout=5).tokens.whoami()
        self.assertEqual(away.exception.code, "NETWORK_ERROR")
        self.assertTrue(away.exception.is_transport)

    def test_cursor_pages_are_followed_to_the_end(self) -> None:
        every = self.quarry.indexes.find(limit=100)
        self.assertIsNone(every["nextCursor"])
        one_by_one = [i["name"] for i in self.quarry.indexes.find_all(limit=1)]
        self.assertEqual(one_by_one, [i["name"] for i in every["indexes"]])
        self.assertGreaterEqual(len(one_by_one), 2)
        reports = [r["guid"] for r in self.quarry.reports.find_all(limit=1)]
        self.assertEqual(reports, [r["guid"] for r in self.quarry.reports.find(limit=100)["reports"]])
        self.assertEqual(len(reports), len(set(reports)))

    def test_an_export_is_started_once_under_a_key_and_downloaded_as_a_stream(self) -> None:
        key = str(uuid.uuid4())
        params = {"index": "movies", "query": "(Major Genre):Drama"}
        started = self.quarry.exports.start(method="QUERIES.EXECUTE", params=params, format="csv", idempotency_key=key)
        again = self.quarry.exports.start(method="QUERIES.EXECUTE", params=params, format="csv", idempotency_key=key)
        self.assertEqual(again["exportId"], started["exportId"])
        with self.assertRaises(QuarryError) as other:
            self.quarry.exports.start(method="QUERIES.EXECUTE", params=params, format="jsonl", idempotency_key=key)
        self.assertEqual(other.exception.code, 409)
        done = self.quarry.exports.wait(started["exportId"], timeout=120)
        self.assertEqual(done["state"], "done")
        with self.quarry.exports.download(started["exportId"]) as download:
            self.assertTrue(download.file_name.endswith(".csv"))
            self.assertTrue(download.content_type.startswith("text/csv"))
            pieces = list(download.iter_bytes(1024))
        self.assertGreater(len(pieces), 1)
        rows = list(csv.reader(io.StringIO(b"".join(pieces).decode("utf-8-sig"))))
        self.assertEqual(len(rows) - 1, sum(1 for m in MOVIES if m.get("Major Genre") == "Drama"))
        with self.assertRaises(QuarryError) as missing:
            self.quarry.exports.download("no-such-export")
        self.assertEqual(missing.exception.code, 404)

    def test_uploads_load_once_under_a_key_and_a_failure_names_its_line(self) -> None:
        name = f"py_{uuid.uuid4().hex[:8]}"
        created = self.quarry.indexes.upload(name, b"id,amount\n1,10\n2,20\n", content_type="text/csv")
        self.assertEqual((created["version"], created["recordCount"]), (1, 2))
        with tempfile.TemporaryDirectory() as tmp:
            path = pathlib.Path(tmp) / "more.jsonl.gz"
            path.write_bytes(gzip.compress(b'{"id":3,"amount":30}\n{"id":4,"amount":40}\n'))
            key = str(uuid.uuid4())
            first = self.quarry.indexes.upload(name, path, mode="append", idempotency_key=key)
            retry = self.quarry.indexes.upload(name, path, mode="append", idempotency_key=key)
        self.assertEqual((first["version"], first["recordCount"]), (2, 4))
        self.assertEqual(retry, first)
        self.assertEqual(self.quarry.queries.execute(index=name)["total"], 4)
        with self.assertRaises(QuarryError) as failed:
            self.quarry.indexes.upload(name, b"id,amount\n5,five\n", content_type="text/csv", mode="append")
        self.assertEqual(failed.exception.code, 400)
        self.assertIn(":2", failed.exception.detail)
        self.assertEqual(failed.exception.body.get("loaded"), 0)
        self.assertEqual(self.quarry.queries.execute(index=name)["total"], 4)

    def test_rate_limit_headers_are_read_when_the_server_has_a_limit(self) -> None:
        answer = self.quarry.call("TOKENS.WHOAMI")
        if os.environ.get("QUARRY_RATE_LIMIT"):
            self.assertIsNotNone(answer.rate_limit)
            self.assertIn('"token', answer.rate_limit_policy or "")
        self.assertEqual(answer.meta["requestId"], answer.request_id)


if __name__ == "__main__":
    unittest.main()
