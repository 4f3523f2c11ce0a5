#include "snapshot/agentic_import.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <tuple>

#include "common/model.h"
#include "common/progress.h"
#include "common/utf8.h"

namespace amem::snapshot::agentic {

namespace {

constexpr int64_t kMicrosPerSecond = 1000000;
// Optimistic concurrency: a writer that commits between our reads and our write
// makes the write Aborted; the comparison is then redone.
constexpr int kMaxAttempts = 8;

std::string FloatText(float f) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f);
  return std::string(buf, end);
}

// The node's meta: the fields amem's model has no place for, as a canonical JSON
// object of strings (sorted keys, compact), which is what the store keeps.
std::string NodeMeta(const Node& n) {
  return "{\"access_count\":\"" + std::to_string(n.access_count) + "\",\"created_at_us\":\"" +
         std::to_string(n.created_at) + "\",\"decay_score\":\"" + FloatText(n.decay_score) +
         "\",\"last_accessed_us\":\"" + std::to_string(n.last_accessed) + "\"}";
}

std::string EdgePayload(const Edge& e) {
  return "{\"created_at_us\":\"" + std::to_string(e.created_at) + "\"}";
}

int64_t Seconds(uint64_t micros) { return static_cast<int64_t>(micros) / kMicrosPerSecond; }

NodeInput MapNode(const Node& n, std::string_view name) {
  NodeInput in;
  in.key = NodeKey(name, n.id);
  in.type = static_cast<NodeType>(n.event_type);
  in.content = n.content;
  in.meta = NodeMeta(n);
  in.confidence = n.confidence;
  in.vector = n.vector;
  in.ts = Seconds(n.created_at);
  in.run = RunName(name, n.session);
  return in;
}

EdgeInput MapEdge(const Edge& e, std::string_view name) {
  EdgeInput in;
  in.src = NodeKey(name, e.source);
  in.rel = BuiltinRelationName(e.edge_type);
  in.dst = NodeKey(name, e.target);
  in.weight = e.weight;
  in.payload = EdgePayload(e);
  in.ts = Seconds(e.created_at);
  return in;
}

bool SameNode(const NodeRecord& r, const NodeInput& in) {
  return r.type == in.type && r.content == in.content && r.meta == in.meta &&
         r.confidence == in.confidence && r.vector == in.vector && r.run == *in.run &&
         r.task.empty() && r.scope.empty() && r.updated_ts == *in.ts;
}

bool SameEdge(const EdgeRecord& r, const EdgeInput& in) {
  return r.weight == in.weight && r.payload == in.payload && r.run.empty() &&
         r.task.empty() && r.updated_ts == *in.ts;
}

// The file's edges with parallel edges of one type collapsed to the last one (amem
// identifies an edge by source, relation and target), in file order.
std::vector<const Edge*> DistinctEdges(const File& file) {
  std::vector<size_t> order(file.edges.size());
  for (size_t j = 0; j < order.size(); ++j) order[j] = j;
  auto key = [&](size_t j) {
    const Edge& e = file.edges[j];
    return std::make_tuple(e.source, e.edge_type, e.target);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return key(a) < key(b); });
  std::vector<bool> keep(order.size(), true);
  for (size_t k = 0; k + 1 < order.size(); ++k) {
    if (key(order[k]) == key(order[k + 1])) keep[order[k]] = false;
  }
  std::vector<const Edge*> out;
  for (size_t j = 0; j < file.edges.size(); ++j) {
    if (keep[j]) out.push_back(&file.edges[j]);
  }
  return out;
}

}  // namespace

std::string KeyPrefix(std::string_view name) { return "agentic:" + std::string(name) + "/"; }

std::string NodeKey(std::string_view name, uint64_t id) {
  return KeyPrefix(name) + std::to_string(id);
}

std::string RunName(std::string_view name, uint32_t session) {
  return KeyPrefix(name) + "session-" + std::to_string(session);
}

Status ValidateImportName(std::string_view name) {
  if (name.empty() || name.size() > kMaxImportNameBytes) {
    return Status::InvalidArgument("import name must be 1-" +
                                   std::to_string(kMaxImportNameBytes) + " bytes");
  }
  if (!IsValidUtf8(name)) return Status::InvalidArgument("import name is not valid UTF-8");
  for (char c : name) {
    if (c == '/' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return Status::InvalidArgument("import name \"" + std::string(name) +
                                     "\" may not contain '/' or control characters");
    }
  }
  return Status::OK();
}

std::string DefaultImportName(const std::string& path) {
  return std::filesystem::path(path).stem().string();
}

Status CheckDimension(const File& file, uint32_t store_dimension) {
  if (file.vector_count == 0 || file.dimension == store_dimension) return Status::OK();
  return Status::InvalidArgument(
      "the file's feature vectors have dimension " + std::to_string(file.dimension) +
      " but the store's dimension is " + std::to_string(store_dimension) +
      " (import into a store made with `amem init --dimension " +
      std::to_string(file.dimension) + "`)");
}

Result<ImportResult> Import(const File& file, std::string_view name, Store* store) {
  AMEM_RETURN_IF_ERROR(ValidateImportName(name));
  AMEM_RETURN_IF_ERROR(CheckDimension(file, store->dimension()));
  Progress progress("amem import");
  ImportResult out;
  out.prefix = KeyPrefix(name);
  out.nodes = file.nodes.size();
  out.sessions = file.sessions.size();
  out.vectors = file.vector_count;
  const std::vector<const Edge*> edges = DistinctEdges(file);
  out.edges = edges.size();
  out.merged_edges = file.edges.size() - edges.size();

  for (int attempt = 1;; ++attempt) {
    AMEM_ASSIGN_OR_RETURN(base, store->revision());
    Batch batch;
    out.nodes_written = out.edges_written = 0;
    // An empty store holds none of it: no need to look.
    const bool compare = base != 0;
    progress.Stage("comparing and mapping nodes", file.nodes.size(), "nodes");
    for (const Node& n : file.nodes) {
      NodeInput in = MapNode(n, name);
      progress.Advance();
      if (compare) {
        Result<NodeRecord> cur = store->GetNode(in.key);
        if (cur.ok() && SameNode(*cur, in)) continue;
        if (!cur.ok() && !cur.status().IsNotFound()) return cur.status();
      }
      batch.PutNode(std::move(in));
      ++out.nodes_written;
    }
    progress.Stage("comparing and mapping edges", edges.size(), "edges");
    for (const Edge* e : edges) {
      EdgeInput in = MapEdge(*e, name);
      progress.Advance();
      if (compare) {
        Result<EdgeRecord> cur = store->GetEdge(in.src, in.rel, in.dst);
        if (cur.ok() && SameEdge(*cur, in)) continue;
        if (!cur.ok() && !cur.status().IsNotFound()) return cur.status();
      }
      batch.PutEdge(std::move(in));
      ++out.edges_written;
    }
    if (batch.empty()) {
      out.revision = base;
      return out;
    }
    progress.Stage("writing " + std::to_string(batch.size()) + " records");
    WriteOptions options;
    options.expected_revision = base;
    Result<uint64_t> rev = store->Apply(batch, options);
    if (rev.ok()) {
      out.revision = *rev;
      return out;
    }
    if (!rev.status().IsAborted() || attempt == kMaxAttempts) return rev.status();
  }
}

}  // namespace amem::snapshot::agentic
