#!/usr/bin/python3
"""Graph peers for bench/query_bench.cc: igraph (C core) and networkx on the same
graph, sources and node pairs that amem uses. Run with Debian's /usr/bin/python3
(python3-igraph, python3-networkx).

  graph_peers.py --edges FILE --nodes N --pairs FILE --sources FILE
                 [--reps 5] [--nx-betweenness 1] [--igraph-betweenness 1]
                 [--nx-pagerank 1] [--scores-dir DIR]

FILE formats: edges "src dst weight" per line (dense indices, directed, the
snapshot's edge order); pairs "src dst" per line; sources one index per line.
Prints one JSON object: {"name": median seconds per operation, ...}. Names:
  pagerank_igraph, pagerank_networkx          one whole PageRank
  betweenness_igraph                          Brandes from exactly the given sources
  betweenness_networkx                        (amem's sampled ones), all targets
  betweenness_igraph_api                      how igraph was called (see below)
  bfs_networkx, bfs_igraph                    one shortest unweighted path
  dijkstra_networkx, dijkstra_igraph          one shortest weighted path
Each median is over --reps runs (whole-graph metrics) or over the pairs; a
betweenness time is one run (no warm-up: it is long and does not need one).

Betweenness runs on the undirected simple graph (as amem's) from amem's sources to
every target: networkx's betweenness_centrality_subset(U, sources, all nodes), and
igraph's C function igraph_betweenness_subset. python-igraph exposes sources= only
from 0.10.5 on; Debian's python3-igraph 0.10.2 does not, so the C function is called
through ctypes from libigraph.so.3 (Debian's libigraph3, the same C core). With
--scores-dir, each peer's scores are written as DIR/betweenness_<peer>.txt, one per
node in index order, scaled as amem's (sum of dependencies * N / |sources| /
((N - 1)(N - 2))), so the bench can check that they agree.
"""
import argparse
import ctypes
import json
import statistics
import sys
import time

import igraph
import networkx as nx


def timed(fn, reps):
    fn()  # warm-up
    samples = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def per_pair(fn, pairs):
    for u, v in pairs[:3]:  # warm-up
        fn(u, v)
    samples = []
    for u, v in pairs:
        t = time.perf_counter()
        fn(u, v)
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


class _VecInt(ctypes.Structure):  # igraph_vector_int_t (igraph_integer_t = int64)
    _fields_ = [("begin", ctypes.c_void_p), ("stor_end", ctypes.c_void_p),
                ("end", ctypes.c_void_p)]


class _Vec(ctypes.Structure):  # igraph_vector_t
    _fields_ = [("begin", ctypes.POINTER(ctypes.c_double)), ("stor_end", ctypes.c_void_p),
                ("end", ctypes.c_void_p)]


class _Vs(ctypes.Structure):  # igraph_vs_t: an enum, then a 16-byte union
    _fields_ = [("type", ctypes.c_int), ("data", ctypes.c_int64 * 2)]


def _int_view(array):
    a = ctypes.addressof(array)
    return _VecInt(a, a + ctypes.sizeof(array), a + ctypes.sizeof(array))


def igraph_c_betweenness_subset(n, edges, sources):
    """Returns a function computing igraph_betweenness_subset (undirected, all
    targets, unweighted) on the simple graph `edges`, or None when libigraph.so.3
    (Debian: libigraph3, 0.10.x) is missing."""
    try:
        lib = ctypes.CDLL("libigraph.so.3")
        version = ctypes.c_char_p()
        lib.igraph_version(ctypes.byref(version), None, None, None)
        if not version.value.startswith(b"0.10."):
            return None
    except (OSError, AttributeError):
        return None
    lib.igraph_set_error_handler.argtypes = [ctypes.c_void_p]
    lib.igraph_set_error_handler.restype = ctypes.c_void_p
    lib.igraph_set_error_handler(ctypes.cast(lib.igraph_error_handler_ignore, ctypes.c_void_p))
    lib.igraph_vs_all.restype = _Vs
    lib.igraph_vs_all.argtypes = []
    lib.igraph_vs_vector.argtypes = [ctypes.POINTER(_Vs), ctypes.POINTER(_VecInt)]
    lib.igraph_create.argtypes = [ctypes.c_void_p, ctypes.POINTER(_VecInt), ctypes.c_int64,
                                  ctypes.c_bool]
    lib.igraph_destroy.argtypes = [ctypes.c_void_p]
    lib.igraph_vector_init.argtypes = [ctypes.POINTER(_Vec), ctypes.c_int64]
    lib.igraph_vector_destroy.argtypes = [ctypes.POINTER(_Vec)]
    lib.igraph_betweenness_subset.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Vec), _Vs,
                                              ctypes.c_bool, _Vs, _Vs, ctypes.c_void_p]
    flat = (ctypes.c_int64 * (2 * len(edges)))(*[x for e in edges for x in e])
    src = (ctypes.c_int64 * len(sources))(*sources)
    graph = (ctypes.c_int64 * 512)()  # room for an igraph_t (about 200 bytes)
    flat_view, src_view = _int_view(flat), _int_view(src)
    if lib.igraph_create(graph, ctypes.byref(flat_view), n, False) != 0:
        return None
    src_vs = _Vs()
    if lib.igraph_vs_vector(ctypes.byref(src_vs), ctypes.byref(src_view)) != 0:
        return None

    def run():
        res = _Vec()
        if lib.igraph_vector_init(ctypes.byref(res), 0) != 0:
            raise RuntimeError("igraph_vector_init failed")
        keep = (flat, src, src_view)  # noqa: F841 (igraph reads them during the call)
        every = lib.igraph_vs_all()
        rc = lib.igraph_betweenness_subset(graph, ctypes.byref(res), every, False, src_vs,
                                           every, None)
        if rc != 0:
            lib.igraph_vector_destroy(ctypes.byref(res))
            raise RuntimeError("igraph_betweenness_subset failed: %d" % rc)
        size = (res.end - ctypes.cast(res.begin, ctypes.c_void_p).value) // 8
        out = res.begin[:size]
        lib.igraph_vector_destroy(ctypes.byref(res))
        return out

    return run


def _amem_scale(n, sources):
    # igraph and networkx halve undirected sums (each pair counted once); amem sums
    # the dependencies of each source, then scales by N/|S| and 1/((N-1)(N-2)).
    if n < 3 or not sources:
        return 0.0
    return 2.0 * (n / len(sources)) / ((n - 1) * (n - 2))


def _write_scores(directory, name, scores):
    if directory:
        with open("%s/betweenness_%s.txt" % (directory, name), "w") as f:
            f.write("".join("%.17g\n" % x for x in scores))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--edges", required=True)
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--sources", required=True)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--nx-betweenness", type=int, default=1)
    ap.add_argument("--igraph-betweenness", type=int, default=1)
    ap.add_argument("--nx-pagerank", type=int, default=1)
    ap.add_argument("--scores-dir", default="")
    args = ap.parse_args()

    edges, weights = [], []
    with open(args.edges) as f:
        for line in f:
            u, v, w = line.split()
            edges.append((int(u), int(v)))
            weights.append(float(w))
    with open(args.pairs) as f:
        pairs = [tuple(int(x) for x in line.split()) for line in f if line.strip()]
    with open(args.sources) as f:
        sources = [int(line) for line in f if line.strip()]
    n = args.nodes
    out = {}

    # igraph: directed multigraph for PageRank; undirected simple graph (as amem's
    # betweenness and path --direction both) for betweenness and paths.
    gd = igraph.Graph(n=n, edges=edges, directed=True)
    out["pagerank_igraph"] = timed(lambda: gd.pagerank(damping=0.85), args.reps)
    gu = igraph.Graph(n=n, edges=edges, directed=False)
    gu.es["weight"] = weights
    gu.simplify(multiple=True, loops=True, combine_edges="min")
    scale = _amem_scale(n, sources)
    if args.igraph_betweenness:
        run, api = None, ""
        try:  # python-igraph >= 0.10.5
            gu.betweenness(vertices=[0] if n else None, directed=False, sources=sources[:1],
                           targets=None)
            run, api = (lambda: gu.betweenness(directed=False, sources=sources,
                                               targets=None)), "python-igraph sources="
        except TypeError:
            run = igraph_c_betweenness_subset(n, gu.get_edgelist(), sources)
            api = "ctypes igraph_betweenness_subset (libigraph.so.3)"
        if run is None:
            sys.stderr.write("graph_peers: no igraph with subset betweenness (python-igraph "
                             ">= 0.10.5 or libigraph3 0.10.x); skipping its peer\n")
        else:
            t = time.perf_counter()
            scores = run()
            out["betweenness_igraph"] = time.perf_counter() - t
            out["betweenness_igraph_api"] = api
            _write_scores(args.scores_dir, "igraph", [x * scale for x in scores])
    out["bfs_igraph"] = per_pair(
        lambda u, v: gu.get_shortest_paths(u, to=v, output="vpath"), pairs)
    out["dijkstra_igraph"] = per_pair(
        lambda u, v: gu.get_shortest_paths(u, to=v, weights="weight", output="vpath"), pairs)

    # networkx.
    G = nx.MultiDiGraph()
    G.add_nodes_from(range(n))
    G.add_edges_from(edges)
    if args.nx_pagerank:
        out["pagerank_networkx"] = timed(
            lambda: nx.pagerank(G, alpha=0.85, tol=1e-6 / n, max_iter=100), max(1, args.reps // 2))
    U = nx.Graph()
    U.add_nodes_from(range(n))
    for (u, v), w in zip(edges, weights):
        if u == v:
            continue
        if not U.has_edge(u, v) or U[u][v]["weight"] > w:
            U.add_edge(u, v, weight=w)
    out["bfs_networkx"] = per_pair(lambda u, v: _bfs(U, u, v), pairs)
    out["dijkstra_networkx"] = per_pair(lambda u, v: _dijkstra(U, u, v), pairs)
    if args.nx_betweenness:
        targets = list(U)
        t = time.perf_counter()
        scores = nx.betweenness_centrality_subset(U, sources, targets, normalized=False)
        out["betweenness_networkx"] = time.perf_counter() - t
        _write_scores(args.scores_dir, "networkx", [scores[i] * scale for i in range(n)])
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


def _bfs(U, u, v):
    try:
        return nx.bidirectional_shortest_path(U, u, v)
    except nx.NetworkXNoPath:
        return None


def _dijkstra(U, u, v):
    try:
        return nx.bidirectional_dijkstra(U, u, v, weight="weight")
    except nx.NetworkXNoPath:
        return None


if __name__ == "__main__":
    main()
