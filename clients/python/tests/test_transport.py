"""quarry_client's retries and params against a local HTTP server that answers what each test scripts.

What the live server cannot be made to do on cue (a 503 and then an answer, a socket that never answers)
is played here by http.server, which records every request it gets.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
import unittest
from typing import Any, Dict, List, Tuple

from quarry_client import UNSET, QuarryClient, QuarryError

Reply = Tuple[int, Dict[str, str], Dict[str, Any]]


class Scripted(http.server.ThreadingHTTPServer):
    def __init__(self, replies: List[Reply]) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.replies = replies
        self.seen: List[Tuple[Dict[str, str], Dict[str, Any]]] = []
        self.hang = threading.Event()


class Handler(http.server.BaseHTTPRequestHandler):
    server: Scripted

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.seen.append(({k.lower(): v for k, v in self.headers.items()}, body))
        if not self.server.replies:
            self.server.hang.wait(10)
            return
        status, headers, answer = self.server.replies.pop(0)
        if "result" in answer or "error" in answer:
            answer = {"jsonrpc": "2.0", "id": body["id"], **answer}
        text = json.dumps(answer).encode()
        self.send_response(status)
        for k, v in {"Content-Type": "application/json", **headers}.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

    def log_message(self, format: str, *args: Any) -> None:
        pass


OK: Reply = (200, {"X-Request-Id": "r-ok"}, {"result": {"data": {"ok": True}, "meta": {"requestId": "r-ok"}}})
BUSY: Reply = (
    503,
    {"Retry-After": "0"},
    {"error": {"code": 503, "message": "Service Unavailable", "data": {"type": "about:blank", "detail": "busy"}}},
)


class TransportTest(unittest.TestCase):
    def serve(self, replies: List[Reply]) -> Scripted:
        server = Scripted(replies)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.addCleanup(server.hang.set)
        return server

    def client(self, server: Scripted, **options: Any) -> QuarryClient:
        return QuarryClient(f"http://127.0.0.1:{server.server_address[1]}", "qk_test", **options)

    def test_a_read_is_retried_after_503s_as_retry_after_says(self) -> None:
        server = self.serve([BUSY, BUSY, OK])
        answer = self.client(server, retries=2).call("TOKENS.WHOAMI")
        self.assertEqual((answer.data, answer.request_id, len(server.seen)), ({"ok": True}, "r-ok", 3))
        self.assertEqual(server.seen[0][0]["authorization"], "Bearer qk_test")

    def test_retries_give_up_with_the_last_error(self) -> None:
        server = self.serve([BUSY, BUSY])
        with self.assertRaises(QuarryError) as err:
            self.client(server, retries=1).call("TOKENS.WHOAMI")
        self.assertEqual((err.exception.code, err.exception.detail, err.exception.retry_after), (503, "busy", 0.0))
        self.assertEqual(len(server.seen), 2)

    def test_writes_without_a_key_are_never_retried(self) -> None:
        server = self.serve([BUSY, OK])
        with self.assertRaises(QuarryError):
            self.client(server, retries=3).reports.delete(guid="g")
        self.assertEqual(len(server.seen), 1)

    def test_a_search_that_saves_a_report_is_retried_under_one_key_of_its_own(self) -> None:
        server = self.serve([BUSY, OK])
        self.client(server, retries=3).queries.execute(index="movies", saveReport={"name": "x"})
        keys = {h.get("idempotency-key") for h, _ in server.seen}
        self.assertEqual(len(server.seen), 2)
        self.assertEqual(len(keys), 1)
        self.assertIsNotNone(keys.pop())
        # Without retries nothing is made up: the call goes as written.
        once = self.serve([OK])
        self.client(once).queries.execute(index="movies", saveReport={"name": "x"})
        self.assertNotIn("idempotency-key", once.seen[0][0])

    def test_a_creating_call_retried_keeps_one_key_on_every_try(self) -> None:
        server = self.serve([BUSY, OK])
        self.client(server, retries=2).exports.start(method="QUERIES.EXECUTE", params={"index": "movies"}, format="csv")
        keys = [h.get("idempotency-key") for h, _ in server.seen]
        self.assertEqual(len(keys), 2)
        self.assertEqual(keys[0], keys[1])
        self.assertRegex(keys[0] or "", r"^[0-9a-f-]{36}$")
        given = self.serve([OK])
        self.client(given).exports.start(method="QUERIES.EXECUTE", params={"index": "m"}, format="csv", idempotency_key="k-1")
        self.assertEqual(given.seen[0][0]["idempotency-key"], "k-1")

    def test_params_left_out_are_absent_and_none_is_null_only_where_null_means_something(self) -> None:
        server = self.serve([OK, OK, OK])
        quarry = self.client(server)
        quarry.queries.execute(index="movies", pageSize=5)
        quarry.sources.update(sourceId="s1", refresh=None)
        quarry.sources.update(sourceId="s1", refresh=UNSET, name="n")
        sent = [body["params"] for _, body in server.seen]
        self.assertEqual(sent, [{"index": "movies", "pageSize": 5}, {"sourceId": "s1", "refresh": None}, {"sourceId": "s1", "name": "n"}])
        self.assertEqual([body["method"] for _, body in server.seen], ["QUERIES.EXECUTE", "SOURCES.UPDATE", "SOURCES.UPDATE"])

    def test_a_server_that_never_answers_is_a_timeout(self) -> None:
        server = self.serve([])
        started = time.monotonic()
        with self.assertRaises(QuarryError) as err:
            self.client(server, timeout=0.5).tokens.whoami()
        self.assertEqual(err.exception.code, "TIMEOUT")
        self.assertLess(time.monotonic() - started, 9)

    def test_an_answer_that_is_not_json_rpc_is_named(self) -> None:
        server = self.serve([(502, {}, {"nothing": 1})])
        with self.assertRaises(QuarryError) as err:
            self.client(server).tokens.whoami()
        self.assertEqual(err.exception.code, 502)


if __name__ == "__main__":
    unittest.main()
