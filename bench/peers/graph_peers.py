#!/usr/bin/python3
"""Graph peers for bench/query_bench.cc: igraph (C core) and networkx on the same
graph, sources and node pairs that amem uses. Run with Debian's /usr/bin/python3
(python3-igraph, python3-networkx).

  graph_peers.py --edges FILE --nodes N --pairs FILE --sources FILE
                 [--reps 5] [--nx-betweenness 1] [--igraph-betweenness 1]

FILE formats: edges "src dst weight" per line (dense indices, directed, the
snapshot's edge order); pairs "src dst" per line; sources one index per line.
Prints one JSON object: {"name": median seconds per operation, ...}. Names:
  pagerank_igraph, pagerank_networkx          one whole PageRank
  betweenness_igraph_per200                   igraph exact betweenness / N * 200
  betweenness_networkx                        networkx k=|sources| sampled run
  bfs_networkx, bfs_igraph                    one shortest unweighted path
  dijkstra_networkx, dijkstra_igraph          one shortest weighted path
Each median is over --reps runs (whole-graph metrics) or over the pairs.
"""
import argparse
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
    if args.igraph_betweenness:
        t = timed(lambda: gu.betweenness(directed=False), 1)
        out["betweenness_igraph_per200"] = t / n * len(sources)
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
        out["betweenness_networkx"] = timed(
            lambda: nx.betweenness_centrality(U, k=len(sources), seed=7), 1)
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
