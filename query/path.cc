// path (docs/QUERIES.md #11, paper §4.4). Both searches keep their labels in per-thread
// NodeMaps (query/internal/scratch.h), so a query that meets after a few hundred nodes costs
// a few hundred nodes, not V.
//
// Unweighted. Levels are expanded whole, one side at a time, and a meeting is
// checked whenever a node gets its first label. Then the first meeting is a
// shortest path: if the new node v (depth d+1 on this side) had a label k below the
// other side's frontier depth, the other side expanded v at level k and labelled
// its neighbour u (depth d here), and whichever of u's two labels came second
// would have reported a meeting earlier. So every meeting found in this level has
// the same length d + 1 + (the other side's depth), and the search can stop at
// the first one.
//
// Weighted. Classic bidirectional Dijkstra: mu is the best s-t cost seen when an
// edge joins the two searches; stop once top_f + top_b >= mu.
#include "query/path.h"

#include <cmath>
#include <limits>
#include <queue>

#include "query/internal/neighbors.h"
#include "query/internal/scratch.h"
#include "snapshot/reader.h"

namespace amem::query {

namespace {

struct Label {
  uint32_t parent;  // previous node on the way from this side's root
  uint32_t edge;    // edge to the parent
  uint32_t dist;    // hops from the root
};

struct WLabel {
  double dist;
  uint32_t parent;
  uint32_t edge;
  bool settled;
};

// The direction each side walks: the source side follows `d`, the target side the
// reverse.
Direction Reverse(Direction d) {
  if (d == Direction::kOut) return Direction::kIn;
  if (d == Direction::kIn) return Direction::kOut;
  return d;
}

double EdgeCost(const snapshot::Reader& reader, uint32_t edge, PathOptions::Cost cost) {
  float w = reader.edge_weight(edge);
  if (cost == PathOptions::Cost::kWeight) {
    return w >= 0 ? static_cast<double>(w) : -1;  // NaN fails the test too
  }
  if (!(w > 0)) return -1;
  return w >= 1 ? 0.0 : -std::log(static_cast<double>(w));
}

// Appends root..node (from the source side) or node..root (target side).
template <typename L>
void Unwind(const NodeMap<L>& labels, uint32_t node, std::vector<uint32_t>* nodes,
            std::vector<uint32_t>* edges) {
  while (labels.Get(node).parent != node) {
    const L& l = labels.Get(node);
    nodes->push_back(l.parent);
    edges->push_back(l.edge);
    node = l.parent;
  }
}

template <typename L>
void BuildPath(const NodeMap<L>& fwd, const NodeMap<L>& bwd, uint32_t u, uint32_t edge,
               uint32_t v, PathResult* result) {
  // Source side: u back to the source, reversed.
  std::vector<uint32_t> nodes{u}, edges;
  Unwind(fwd, u, &nodes, &edges);
  result->nodes.assign(nodes.rbegin(), nodes.rend());
  result->edges.assign(edges.rbegin(), edges.rend());
  if (edge != std::numeric_limits<uint32_t>::max()) {
    result->nodes.push_back(v);
    result->edges.push_back(edge);
  }
  // Target side: v forward to the target.
  Unwind(bwd, v, &result->nodes, &result->edges);
}

PathResult Bfs(const snapshot::Reader& reader, uint32_t s, uint32_t t, const PathOptions& o) {
  PathResult result;
  NodeMap<Label>& fwd = ThreadScratch<Label, kScratchA>();
  NodeMap<Label>& bwd = ThreadScratch<Label, kScratchB>();
  fwd.Reset(reader.node_count());
  bwd.Reset(reader.node_count());
  fwd.Set(s, {s, 0, 0});
  bwd.Set(t, {t, 0, 0});
  result.visited = 2;
  thread_local std::vector<uint32_t> front_s, front_t, next;
  front_s.assign(1, s);
  front_t.assign(1, t);
  uint32_t depth_s = 0, depth_t = 0;
  const Direction dir_s = o.direction, dir_t = Reverse(o.direction);
  while (!front_s.empty() && !front_t.empty() && depth_s + depth_t < o.max_depth) {
    const bool from_source = front_s.size() <= front_t.size();
    std::vector<uint32_t>& front = from_source ? front_s : front_t;
    NodeMap<Label>& mine = from_source ? fwd : bwd;
    const NodeMap<Label>& other = from_source ? bwd : fwd;
    const uint32_t depth = from_source ? depth_s : depth_t;
    bool met = false;
    uint32_t meet_u = 0, meet_v = 0, meet_edge = 0;
    next.clear();
    for (uint32_t u : front) {
      ForEachNeighbor(reader, u, from_source ? dir_s : dir_t, o.relations,
                      [&](uint32_t v, uint32_t edge, bool) {
                        if (met || !mine.Insert(v, {u, edge, depth + 1})) return;
                        next.push_back(v);
                        ++result.visited;
                        if (other.Has(v)) {
                          met = true;
                          meet_u = u;
                          meet_v = v;
                          meet_edge = edge;
                        }
                      });
      if (met) break;
    }
    if (met) {
      result.found = true;
      result.cost = depth + 1 + other.Get(meet_v).dist;
      if (from_source) {
        BuildPath(fwd, bwd, meet_u, meet_edge, meet_v, &result);
      } else {
        // The target side met: meet_u is on its side, meet_v on the source's.
        BuildPath(fwd, bwd, meet_v, meet_edge, meet_u, &result);
      }
      return result;
    }
    front.swap(next);
    (from_source ? depth_s : depth_t) = depth + 1;
  }
  return result;
}

PathResult Dijkstra(const snapshot::Reader& reader, uint32_t s, uint32_t t,
                    const PathOptions& o) {
  PathResult result;
  NodeMap<WLabel>& fwd = ThreadScratch<WLabel, kScratchA>();
  NodeMap<WLabel>& bwd = ThreadScratch<WLabel, kScratchB>();
  fwd.Reset(reader.node_count());
  bwd.Reset(reader.node_count());
  // Settled in cost order, a weighted search reaches far more nodes than a
  // hop-count one between the same two (88,341 against 925 on the 1M benchmark
  // store): huge pages pay for it, and would only cost a short BFS memory.
  fwd.ExpectWide();
  bwd.ExpectWide();
  using Item = std::pair<double, uint32_t>;  // (dist, node): ties by dense index
  using Heap = std::priority_queue<Item, std::vector<Item>, std::greater<Item>>;
  Heap heap_s, heap_t;
  fwd.Set(s, {0, s, 0, false});
  bwd.Set(t, {0, t, 0, false});
  heap_s.push({0, s});
  heap_t.push({0, t});
  result.visited = 2;
  double mu = std::numeric_limits<double>::infinity();
  uint32_t meet_u = 0, meet_v = 0, meet_edge = 0;
  bool meet_from_source = true;
  const Direction dir_s = o.direction, dir_t = Reverse(o.direction);
  const auto drop_settled = [](Heap& h, const NodeMap<WLabel>& labels) {
    while (!h.empty() && (labels.Get(h.top().second).settled ||
                          h.top().first > labels.Get(h.top().second).dist)) {
      h.pop();
    }
  };
  for (;;) {
    drop_settled(heap_s, fwd);
    drop_settled(heap_t, bwd);
    if (heap_s.empty() || heap_t.empty()) break;
    if (heap_s.top().first + heap_t.top().first >= mu) break;
    const bool from_source = heap_s.top() <= heap_t.top();
    Heap& heap = from_source ? heap_s : heap_t;
    NodeMap<WLabel>& mine = from_source ? fwd : bwd;
    const NodeMap<WLabel>& other = from_source ? bwd : fwd;
    const auto [du, u] = heap.top();
    heap.pop();
    mine.Mutable(u).settled = true;
    ForEachNeighbor(reader, u, from_source ? dir_s : dir_t, o.relations,
                    [&](uint32_t v, uint32_t edge, bool) {
                      double c = EdgeCost(reader, edge, o.cost);
                      if (c < 0) return;
                      double dv = du + c;
                      if (!mine.Has(v)) {
                        mine.Set(v, {dv, u, edge, false});
                        heap.push({dv, v});
                        ++result.visited;
                      } else if (!mine.Get(v).settled && dv < mine.Get(v).dist) {
                        mine.Set(v, {dv, u, edge, false});
                        heap.push({dv, v});
                      }
                      if (other.Has(v) && dv + other.Get(v).dist < mu) {
                        mu = dv + other.Get(v).dist;
                        meet_u = u;
                        meet_v = v;
                        meet_edge = edge;
                        meet_from_source = from_source;
                      }
                    });
  }
  if (mu == std::numeric_limits<double>::infinity()) return result;
  result.found = true;
  if (meet_from_source) {
    BuildPath(fwd, bwd, meet_u, meet_edge, meet_v, &result);
  } else {
    BuildPath(fwd, bwd, meet_v, meet_edge, meet_u, &result);
  }
  // Report the cost of the path actually returned (labels only ever improve, so it
  // equals mu; summing avoids any drift from the order of additions).
  for (uint32_t e : result.edges) result.cost += EdgeCost(reader, e, o.cost);
  return result;
}

}  // namespace

PathResult FindPath(const snapshot::Reader& reader, uint32_t source, uint32_t target,
                    const PathOptions& options) {
  assert(source < reader.node_count() && target < reader.node_count());
  if (source == target) {
    PathResult result;
    result.found = true;
    result.nodes = {source};
    result.visited = 1;
    return result;
  }
  PathResult result = options.weighted ? Dijkstra(reader, source, target, options)
                                        : Bfs(reader, source, target, options);
  result.hops = static_cast<uint32_t>(result.edges.size());
  return result;
}

}  // namespace amem::query
