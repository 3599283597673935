"""Quarry's JSON-RPC API over the standard library's HTTP: errors, retries, paging, downloads, uploads."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from email.utils import parsedate_to_datetime
from typing import IO, Any, Callable, Dict, Iterable, Iterator, Mapping, Optional, Union

from ._generated import (
    KEYED_METHODS,
    NEVER_RETRIED,
    ExportsMethods,
    ExportsStatusResult,
    GeneratedMethods,
    IndexesMethods,
)

__all__ = ["QuarryClient", "QuarryError", "Result", "ExportDownload"]

_CHUNK = 1 << 16

#: The media type of an upload's body by its file name's ending.
_UPLOAD_TYPES = {
    ".csv": "text/csv",
    ".json": "application/json",
    ".jsonl": "application/x-ndjson",
    ".ndjson": "application/x-ndjson",
    ".parquet": "application/vnd.apache.parquet",
}


class QuarryError(Exception):
    """Every failure of a call.

    code: the JSON-RPC error code (the HTTP status for business errors: 400, 403, 404, 409, 429, 503 …;
    -32xxx for protocol errors), the status of an HTTP problem (401), or "NETWORK_ERROR" / "TIMEOUT"
    when the server answered nothing. title: "Bad Request", "Not Found" …; detail: the server's own
    message; request_id: the server's X-Request-Id (quote it when reporting a problem);
    retry_after: the seconds a 429 or 503 asked to wait, when it said.
    """

    def __init__(
        self,
        code: Union[int, str],
        title: str,
        detail: Optional[str] = None,
        *,
        type: str = "about:blank",
        request_id: Optional[str] = None,
        retry_after: Optional[float] = None,
        status: Optional[int] = None,
        body: Optional[Dict[str, Any]] = None,
    ) -> None:
        self.code = code
        self.title = title
        self.detail = detail if detail is not None else title
        self.type = type
        self.request_id = request_id
        self.retry_after = retry_after
        #: The HTTP status of the answer, when there was one.
        self.status = status
        #: An HTTP problem's whole object: an upload's failure carries its accounting (rejects, loaded …).
        self.body: Dict[str, Any] = body or {}
        super().__init__(f"{code} {title}: {self.detail}" if detail else f"{code} {title}")

    @property
    def is_transport(self) -> bool:
        """True when the server never answered: a network failure or a timeout."""
        return isinstance(self.code, str)


class Result:
    """A call's `result`: `data` (what the method answers) and `meta` (requestId, cache, servedBy …).

    rate_limit and rate_limit_policy are the answer's RateLimit and RateLimit-Policy headers, when a limit
    governs the call: how much is left before a 429.
    """

    def __init__(self, data: Any, meta: Dict[str, Any], headers: Mapping[str, str]) -> None:
        self.data = data
        self.meta = meta
        self.request_id: Optional[str] = headers.get("x-request-id")
        self.rate_limit: Optional[str] = headers.get("ratelimit")
        self.rate_limit_policy: Optional[str] = headers.get("ratelimit-policy")

    def __repr__(self) -> str:
        return f"Result(meta={self.meta!r})"


class ExportDownload:
    """A done export's file, read as it arrives: iterate it (`iter_bytes`), `save` it, or `read` it.

    Close it (or use it in a `with` block) when done: it holds the connection until then.
    """

    def __init__(self, response: Any, export_id: str) -> None:
        self._response = response
        disposition = response.headers.get("content-disposition") or ""
        name = disposition.split('filename="', 1)[1].split('"', 1)[0] if 'filename="' in disposition else ""
        #: From Content-Disposition: export-<exportId>.<format>
        self.file_name: str = name or f"export-{export_id}"
        self.content_type: str = response.headers.get("content-type") or "application/octet-stream"
        length = response.headers.get("content-length")
        #: Content-Length, when the server said.
        self.bytes: Optional[int] = int(length) if length is not None else None

    def iter_bytes(self, chunk_size: int = _CHUNK) -> Iterator[bytes]:
        """The file's bytes as they arrive, never more than chunk_size held at once."""
        while True:
            piece = self._response.read(chunk_size)
            if not piece:
                return
            yield piece

    def read(self) -> bytes:
        """The whole file (for small files: iter_bytes or save keep memory flat)."""
        return b"".join(self.iter_bytes())

    def save(self, path: Union[str, "os.PathLike[str]"]) -> int:
        """Writes the file to path as it arrives; returns the bytes written."""
        with open(path, "wb") as out:
            shutil.copyfileobj(self._response, out, _CHUNK)
            return out.tell()

    def close(self) -> None:
        self._response.close()

    def __enter__(self) -> "ExportDownload":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _retry_after(value: Optional[str]) -> Optional[float]:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class _Exports(ExportsMethods):
    def download(self, export_id: str, *, timeout: Optional[float] = None) -> ExportDownload:
        """A done export's file as a stream (GET /exports/<exportId>).

        Raises QuarryError: 404 (unknown, or another user's), 409 (not done yet), 410 (expired).
        """
        return self._client._download(export_id, timeout)

    def wait(self, export_id: str, *, timeout: float = 600.0, poll: float = 0.25) -> ExportsStatusResult:
        """EXPORTS.STATUS until the export is done, failed or expired (polled, backing off to 2 s).

        Raises QuarryError with code "TIMEOUT" when it is still running after `timeout` seconds.
        """
        until = time.monotonic() + timeout
        while True:
            status = self.status(exportId=export_id)
            if status["state"] != "running" and status["state"] != "queued":
                return status
            if time.monotonic() >= until:
                raise QuarryError("TIMEOUT", "Timeout", f"Export {export_id} is still {status['state']} after {timeout} s")
            time.sleep(poll)
            poll = min(poll * 2, 2.0)


class _Indexes(IndexesMethods):
    def upload(
        self,
        index: str,
        body: Union[bytes, str, "os.PathLike[str]", IO[bytes], Iterable[bytes]],
        *,
        content_type: Optional[str] = None,
        gzip: Optional[bool] = None,
        mode: Optional[str] = None,
        key: Optional[str] = None,
        on_error: Optional[str] = None,
        max_errors: Optional[int] = None,
        idempotency_key: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> Dict[str, Any]:
        """Loads records into an index (POST /indexes/<index>/records; needs indexes:write).

        body: the file's bytes, its path, an open binary file or an iterable of bytes, sent as it is read
        (a path or file is never held in memory). content_type and gzip follow a path's name
        (orders.csv.gz: text/csv, gzipped) unless given. mode: replace (default), append or upsert (with
        key, the key field); on_error: fail (default) or skip, with max_errors. idempotency_key: a retry
        of the same bytes under it gets the first upload's answer instead of loading twice.
        Returns the accounting (index, version, rowsRead, loaded, rejected, rejects, recordCount …);
        raises QuarryError when the load failed (its detail names the line), nothing being published.
        """
        return self._client._upload(
            index,
            body,
            content_type=content_type,
            gzip=gzip,
            query={"mode": mode, "key": key, "onError": on_error, "maxErrors": max_errors},
            idempotency_key=idempotency_key,
            timeout=timeout,
        )


class QuarryClient(GeneratedMethods):
    """Quarry's JSON-RPC API: `quarry.queries.execute(index="movies")` returns result.data or raises
    QuarryError. Parameters keep the contract's names (pageSize, saveReport), as docs/api.md has them.

    url: the gateway's base URL (http://host:8080) or its endpoint (…/api/v1). token: an API token (or an
    OpenID Connect JWT); leave it out for discover() only. timeout: seconds a call may wait for the
    server (default 60). retries: tries after the first (default 0) on a network failure, a timeout, a
    429 or a 503 (after its Retry-After), for calls that only read, and for calls that create something
    under an Idempotency-Key (with retries, one is made for them when none is given); REPORTS.UPDATE,
    REPORTS.DELETE and the other writes without a key are never retried. retry_delay: the first wait
    between tries in seconds, doubled each time.
    """

    exports: _Exports
    indexes: _Indexes

    def __init__(
        self,
        url: str,
        token: Optional[str] = None,
        *,
        timeout: float = 60.0,
        retries: int = 0,
        retry_delay: float = 0.25,
    ) -> None:
        base = url.rstrip("/")
        if base.endswith("/api/v1"):
            base = base[: -len("/api/v1")]
        if not base.startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https://, got {url!r}")
        self.base_url = base
        self.endpoint = f"{base}/api/v1"
        self.token = token
        self.timeout = timeout
        self.retries = max(0, int(retries))
        self.retry_delay = retry_delay
        self._ids = itertools.count(1)
        super().__init__(self)
        self.exports = _Exports(self)
        self.indexes = _Indexes(self)

    # -- calls -----------------------------------------------------------------------------------------

    def call(
        self,
        method: str,
        params: Optional[Dict[str, Any]] = None,
        *,
        idempotency_key: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> Result:
        """Any method by name, with result.data and result.meta (a Result)."""
        params = dict(params or {})
        creates = method in KEYED_METHODS and (
            method not in ("QUERIES.EXECUTE", "CROSSTAB.EXECUTE") or params.get("saveReport") is not None
        )
        if creates and idempotency_key is None and self.retries > 0:
            # A retry of a call that creates something is safe only under a key the server keeps.
            idempotency_key = str(uuid.uuid4())
        safe = (creates and idempotency_key is not None) or (
            not creates and method not in NEVER_RETRIED and params.get("saveReport") is None
        )
        body = json.dumps({"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params})
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        return self._with_retries(
            lambda: self._post(body.encode(), headers, timeout), self.retries if safe else 0
        )

    def discover(self, *, timeout: Optional[float] = None) -> Dict[str, Any]:
        """The server's OpenRPC document (rpc.discover; no token needed)."""
        answer = self.call("rpc.discover", timeout=timeout)
        return answer.data if isinstance(answer.data, dict) else {}

    def paginate(
        self,
        method: str,
        params: Optional[Dict[str, Any]],
        items: str,
        *,
        timeout: Optional[float] = None,
    ) -> Iterator[Any]:
        """Every item of `items` of every page of a cursor-paged method (INDEXES.FIND, REPORTS.FIND),
        following nextCursor until it is null; each page is asked for when the one before is used up."""
        page = dict(params or {})
        while True:
            data = self.call(method, page, timeout=timeout).data
            for item in data[items]:
                yield item
            cursor = data.get("nextCursor")
            if not cursor:
                return
            page["cursor"] = cursor

    def _data(
        self, method: str, params: Dict[str, Any], idempotency_key: Optional[str], timeout: Optional[float]
    ) -> Any:
        return self.call(method, params, idempotency_key=idempotency_key, timeout=timeout).data

    # -- HTTP ------------------------------------------------------------------------------------------

    def _with_retries(self, attempt: Callable[[], Result], retries: int) -> Result:
        for n in itertools.count():
            try:
                return attempt()
            except QuarryError as err:
                # A 409 with Retry-After is a first call under the same key still running: its answer comes.
                retryable = err.code in ("NETWORK_ERROR", "TIMEOUT", 429, 503) or (
                    err.code == 409 and err.retry_after is not None
                )
                if not retryable or n >= retries:
                    raise
                time.sleep(err.retry_after if err.retry_after is not None else self.retry_delay * 2**n)
        raise AssertionError("unreachable")

    def _headers(self, extra: Dict[str, str]) -> Dict[str, str]:
        headers = {"User-Agent": "quarry-client-python/0.1"}
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        headers.update(extra)
        return headers

    def _open(self, request: urllib.request.Request, timeout: Optional[float]) -> Any:
        """The response to request (any status), or a transport QuarryError."""
        limit = self.timeout if timeout is None else timeout
        try:
            return urllib.request.urlopen(request, timeout=limit)
        except urllib.error.HTTPError as err:
            return err
        except (socket.timeout, TimeoutError) as err:
            raise QuarryError("TIMEOUT", "Timeout", f"No answer within {limit} s") from err
        except urllib.error.URLError as err:
            reason = err.reason
            if isinstance(reason, (socket.timeout, TimeoutError)):
                raise QuarryError("TIMEOUT", "Timeout", f"No answer within {limit} s") from err
            raise QuarryError("NETWORK_ERROR", "Network error", f"Could not reach {request.full_url}: {reason}") from err
        except (ConnectionError, OSError) as err:
            raise QuarryError("NETWORK_ERROR", "Network error", f"Could not reach {request.full_url}: {err}") from err

    def _post(self, body: bytes, headers: Dict[str, str], timeout: Optional[float]) -> Result:
        request = urllib.request.Request(self.endpoint, data=body, headers=self._headers(headers), method="POST")
        response = self._open(request, timeout)
        with response:
            try:
                text = response.read()
            except (socket.timeout, TimeoutError) as err:
                raise QuarryError("TIMEOUT", "Timeout", "The answer stopped arriving") from err
            except OSError as err:
                raise QuarryError("NETWORK_ERROR", "Network error", f"The connection broke: {err}") from err
            return self._read(response, text)

    def _read(self, response: Any, text: bytes) -> Result:
        """A JSON-RPC answer's result, or its error (or an HTTP problem) as a QuarryError."""
        status = int(getattr(response, "status", None) or response.getcode())
        headers = {k.lower(): v for k, v in response.headers.items()}
        request_id = headers.get("x-request-id")
        retry_after = _retry_after(headers.get("retry-after"))
        try:
            body = json.loads(text)
        except ValueError:
            raise QuarryError(
                status,
                getattr(response, "reason", "") or "Unreadable response",
                f"The server answered HTTP {status} with a body that is not JSON",
                request_id=request_id,
                status=status,
            ) from None
        if not isinstance(body, dict):
            raise QuarryError(status, "Invalid response", "The response is not a JSON object", request_id=request_id, status=status)
        if headers.get("content-type", "").startswith("application/problem+json") or (
            status >= 400 and "jsonrpc" not in body
        ):
            raise QuarryError(
                int(body.get("status") or status),
                str(body.get("title") or getattr(response, "reason", "") or "Error"),
                body.get("detail"),
                type=str(body.get("type") or "about:blank"),
                request_id=request_id,
                retry_after=retry_after,
                status=status,
                body=body,
            )
        error = body.get("error")
        if isinstance(error, dict):
            given = error.get("data")
            data: Dict[str, Any] = given if isinstance(given, dict) else {}
            raise QuarryError(
                error.get("code", status),
                str(error.get("message", "Error")),
                data.get("detail"),
                type=str(data.get("type") or "about:blank"),
                request_id=request_id,
                retry_after=retry_after,
                status=status,
            )
        result = body.get("result")
        if result is None:
            raise QuarryError(status, "Invalid response", "The response has neither result nor error", request_id=request_id, status=status)
        if "data" in result and "meta" in result:
            return Result(result["data"], result["meta"], headers)
        # rpc.discover answers the document itself.
        return Result(result, {"requestId": request_id}, headers)

    def _download(self, export_id: str, timeout: Optional[float]) -> ExportDownload:
        url = f"{self.base_url}/exports/{urllib.parse.quote(export_id, safe='')}"
        request = urllib.request.Request(url, headers=self._headers({}), method="GET")
        response = self._open(request, timeout)
        status = int(getattr(response, "status", None) or response.getcode())
        if status != 200:
            with response:
                self._read(response, response.read())
            raise QuarryError(status, "Unexpected answer", f"GET {url} answered {status}", status=status)
        return ExportDownload(response, export_id)

    def _upload(
        self,
        index: str,
        body: Union[bytes, str, "os.PathLike[str]", IO[bytes], Iterable[bytes]],
        *,
        content_type: Optional[str],
        gzip: Optional[bool],
        query: Dict[str, Any],
        idempotency_key: Optional[str],
        timeout: Optional[float],
    ) -> Dict[str, Any]:
        opened: Optional[IO[bytes]] = None
        headers: Dict[str, str] = {}
        data: Any = body
        if isinstance(body, (str, os.PathLike)):
            name = os.fspath(body).lower()
            if gzip is None:
                gzip = name.endswith(".gz")
            stem = name[:-3] if name.endswith(".gz") else name
            if content_type is None:
                content_type = next((t for ext, t in _UPLOAD_TYPES.items() if stem.endswith(ext)), None)
            opened = open(body, "rb")
            headers["Content-Length"] = str(os.fstat(opened.fileno()).st_size)
            data = opened
        elif isinstance(body, (bytes, bytearray)):
            headers["Content-Length"] = str(len(body))
        if content_type is None:
            raise ValueError("content_type is needed (text/csv, application/json, application/x-ndjson or application/vnd.apache.parquet)")
        headers["Content-Type"] = content_type
        if gzip:
            headers["Content-Encoding"] = "gzip"
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        given = {k: str(v) for k, v in query.items() if v is not None}
        url = f"{self.base_url}/indexes/{urllib.parse.quote(index, safe='')}/records"
        if given:
            url += "?" + urllib.parse.urlencode(given)
        try:
            request = urllib.request.Request(url, data=data, headers=self._headers(headers), method="POST")
            response = self._open(request, timeout)
            with response:
                text = response.read()
                status = int(getattr(response, "status", None) or response.getcode())
                if status == 200:
                    answer = json.loads(text)
                    return answer if isinstance(answer, dict) else {}
                self._read(response, text)
                raise QuarryError(status, "Unexpected answer", f"POST {url} answered {status}", status=status)
        finally:
            if opened is not None:
                opened.close()
