// A small StoreState exercising every field the snapshot carries, for the
// snapshot tests (and the golden file generator).
#ifndef AMEM_TESTS_SNAPSHOT_TEST_STATE_H_
#define AMEM_TESTS_SNAPSHOT_TEST_STATE_H_

#include <string>

#include "common/hash.h"
#include "store/store.h"

namespace amem::snapshot_test {

inline NodeRecord MakeNode(std::string key, NodeType type, std::string content,
                           int64_t ts) {
  NodeRecord n;
  n.id = NodeIdForKey(key);
  n.key = std::move(key);
  n.type = type;
  n.content = std::move(content);
  n.created_ts = ts;
  n.updated_ts = ts;
  return n;
}

inline EdgeRecord MakeEdge(std::string src, RelationId rel, std::string dst, int64_t ts) {
  EdgeRecord e;
  e.src = NodeIdForKey(src);
  e.dst = NodeIdForKey(dst);
  e.src_key = std::move(src);
  e.dst_key = std::move(dst);
  e.rel = rel;
  e.created_ts = ts;
  e.updated_ts = ts;
  return e;
}

// Every node type, every built-in relation, a custom relation, payloads, metadata,
// vectors on some nodes, unicode, empty content, runs, scopes, tasks, a dangling
// edge (-> stub) and kv entries. Dimension 4 keeps it small.
inline StoreState SmallState() {
  StoreState s;
  s.dimension = 4;
  s.relations.push_back({64, "blocks"});
  const char* types[] = {"fact", "decision", "inference", "correction", "skill", "episode",
                         "constraint", "file", "symbol", "module", "entity"};
  for (int t = 0; t < kNodeTypeCount; ++t) {
    NodeRecord n = MakeNode(std::string(types[t]) + ":n" + std::to_string(t),
                            static_cast<NodeType>(t),
                            "The " + std::string(types[t]) + " number " + std::to_string(t) +
                                " mentions lmdb snapshots and graph memory",
                            1000 + t);
    n.confidence = 0.5f + 0.04f * static_cast<float>(t);
    n.run = t % 3 == 0 ? "" : (t % 3 == 1 ? "run-a" : "run-b");
    n.scope = t < 5 ? "proj" : "";
    n.task = t % 2 ? "task-1" : "";
    n.updated_ts = 2000 + t;
    if (t % 4 == 0) n.vector = {0.5f, -0.25f, static_cast<float>(t), 1.0f};
    if (t == 7) n.meta = R"({"kind":"source","lang":"c++"})";
    // Identifiers, so the golden file holds the code-aware tokenizer's words.
    if (t == 8) n.meta = R"({"name":"amem::WriteBatch","file":"store/write_batch.cc"})";
    s.nodes.push_back(std::move(n));
  }
  NodeRecord uni = MakeNode("fact:ünïcödé", NodeType::kFact, "Grüße 日本語 テキスト — naïve café", 1500);
  uni.meta = R"({"note":"ça va"})";
  s.nodes.push_back(std::move(uni));
  s.nodes.push_back(MakeNode("fact:empty", NodeType::kFact, "", 1600));

  int r = 0;
  for (int rel = 0; rel < kBuiltinRelationCount; ++rel) {
    EdgeRecord e = MakeEdge(s.nodes[rel % 11].key, static_cast<RelationId>(rel),
                            s.nodes[(rel + 1 + rel / 11) % 13].key, 3000 + rel);
    e.weight = 0.25f * static_cast<float>(rel % 5);
    e.run = r++ % 2 ? "run-a" : "run-c";
    e.task = rel % 3 ? "task-2" : "";
    if (rel == 3) e.payload = R"({"why":"newer"})";
    s.edges.push_back(std::move(e));
  }
  EdgeRecord custom = MakeEdge("decision:n1", 64, "fact:ünïcödé", 3100);
  custom.rel_name = "blocks";
  s.edges.push_back(std::move(custom));
  s.edges.push_back(MakeEdge("module:n9", kImports, "module:missing", 3200));  // dangling

  KvRecord kv;
  kv.scope = "proj";
  kv.ns = "decisions";
  kv.key = "db";
  kv.value = "use lmdb";
  kv.ts = 4000;
  kv.run = "run-a";
  s.kv.push_back(kv);
  kv.ns = "constraints";
  kv.key = "style";
  kv.value = "google";
  kv.ts = 4001;
  kv.run = "";
  kv.task = "task-1";
  s.kv.push_back(kv);
  return s;
}

}  // namespace amem::snapshot_test

#endif  // AMEM_TESTS_SNAPSHOT_TEST_STATE_H_
