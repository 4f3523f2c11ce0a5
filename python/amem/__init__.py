"""amem: an embedded graph memory for coding agents, in-process.

    import amem
    store = amem.Store(".amem", create=True)
    store.put_node("decision:use-lmdb", type="decision", content="Use LMDB")
    with store.batch(run="r1") as b:
        b.put_node("file:src/a.cc", type="file")
        b.put_edge("decision:use-lmdb", "affects", "file:src/a.cc")
    view = store.view()                 # the live state; store.view(as_of=REV)
    view.text_search("lmdb", limit=5)   # the 16 queries, as `amem <query> --json`
    amem.Snapshot("run.amem").centrality(metric="pagerank")

Errors are amem.Error subclasses (NotFound, InvalidArgument, Corruption, IOError,
NotSupported, Aborted) whose str() is the CLI's error text. docs/PYTHON.md.
"""
from ._amem import (  # noqa: F401
    Aborted,
    Batch,
    Corruption,
    Error,
    InvalidArgument,
    IOError,
    NotFound,
    NotSupported,
    Snapshot,
    Store,
    View,
    __version__,
    replay_queries,
)

QUERY_METHODS = tuple(q["method"] for q in __import__("amem._amem", fromlist=["_"])._query_table())

__all__ = [
    "Aborted", "Batch", "Corruption", "Error", "InvalidArgument", "IOError", "NotFound",
    "NotSupported", "Snapshot", "Store", "View", "__version__", "replay_queries",
    "QUERY_METHODS",
]
