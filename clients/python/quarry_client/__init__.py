"""A typed Python client for Quarry's JSON-RPC API (docs/python-client.md).

    from quarry_client import QuarryClient, QuarryError

    quarry = QuarryClient("http://127.0.0.1:8080", token)
    page = quarry.queries.execute(index="movies", query="Title:star", pageSize=5)
"""

from ._client import ExportDownload, QuarryClient, QuarryError, Result
from ._generated import METHOD_NAMES
from ._runtime import UNSET

__all__ = ["QuarryClient", "QuarryError", "Result", "ExportDownload", "METHOD_NAMES", "UNSET"]
__version__ = "0.1.0"
