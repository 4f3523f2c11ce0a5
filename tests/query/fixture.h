// Test fixture shared by every query test: write a small graph by hand as a
// StoreState, compile it with the snapshot writer and open it with a Reader over the
// bytes in memory (no files, no store).
//
//   GraphFixture g;
//   g.Node("decision:lmdb", NodeType::kDecision, "use LMDB").Confidence(0.9f).Ts(100);
//   g.Node("fact:fast", NodeType::kFact, "LMDB reads are fast");
//   g.Edge("fact:fast", "supports", "decision:lmdb");
//   auto reader = g.Open();               // REQUIREs that build and open succeed
//   uint32_t d = g.Index(*reader, "decision:lmdb");
//
// Dense numbers are assigned by the writer (nodes ordered by (session, key)), so
// tests look them up by key with Index(). An edge may name a key that has no Node():
// the writer turns it into a stub node, as it does for a store's dangling edges.
#ifndef AMEM_TESTS_QUERY_FIXTURE_H_
#define AMEM_TESTS_QUERY_FIXTURE_H_

#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/hash.h"
#include "common/model.h"
#include "snapshot/reader.h"
#include "snapshot/writer.h"
#include "store/store.h"

namespace amem::testing {

class GraphFixture {
 public:
  // Chainable setters for the node or edge added last; valid until the next
  // Node() / Edge() call (the records live in vectors).
  class NodeRef {
   public:
    explicit NodeRef(NodeRecord* n) : n_(n) {}
    NodeRef& Confidence(float c) { n_->confidence = c; return *this; }
    NodeRef& Ts(int64_t created, int64_t updated = -1) {
      n_->created_ts = created;
      n_->updated_ts = updated < 0 ? created : updated;
      return *this;
    }
    NodeRef& Run(std::string run) { n_->run = std::move(run); return *this; }
    NodeRef& Scope(std::string scope) { n_->scope = std::move(scope); return *this; }
    NodeRef& Task(std::string task) { n_->task = std::move(task); return *this; }
    NodeRef& Meta(std::string meta) { n_->meta = std::move(meta); return *this; }
    NodeRef& Vector(std::vector<float> v) { n_->vector = std::move(v); return *this; }
    NodeRecord& record() { return *n_; }

   private:
    NodeRecord* n_;
  };
  class EdgeRef {
   public:
    explicit EdgeRef(EdgeRecord* e) : e_(e) {}
    EdgeRef& Ts(int64_t created, int64_t updated = -1) {
      e_->created_ts = created;
      e_->updated_ts = updated < 0 ? created : updated;
      return *this;
    }
    EdgeRef& Payload(std::string p) { e_->payload = std::move(p); return *this; }
    EdgeRef& Run(std::string run) { e_->run = std::move(run); return *this; }
    EdgeRecord& record() { return *e_; }

   private:
    EdgeRecord* e_;
  };

  explicit GraphFixture(uint32_t dimension = 8) {
    state_.dimension = dimension;
    state_.revision = 1;
    for (int r = 0; r < kBuiltinRelationCount; ++r) {
      state_.relations.emplace_back(static_cast<RelationId>(r),
                                    BuiltinRelationName(static_cast<RelationId>(r)));
    }
  }

  // Default created_ts/updated_ts 1000, confidence 1, run "" (session 0).
  NodeRef Node(std::string key, NodeType type = NodeType::kFact, std::string content = "") {
    NodeRecord n;
    n.id = NodeIdForKey(key);
    n.key = std::move(key);
    n.type = type;
    n.content = std::move(content);
    n.created_ts = n.updated_ts = 1000;
    n.rev = 1;
    state_.nodes.push_back(std::move(n));
    return NodeRef(&state_.nodes.back());
  }

  // `rel`: a built-in name, or a custom name (defined on first use from id 64 up).
  EdgeRef Edge(std::string src, std::string rel, std::string dst, float weight = 1.0f) {
    EdgeRecord e;
    e.src = NodeIdForKey(src);
    e.dst = NodeIdForKey(dst);
    e.src_key = std::move(src);
    e.dst_key = std::move(dst);
    e.rel = RelationFor(rel);
    e.rel_name = std::move(rel);
    e.weight = weight;
    e.created_ts = e.updated_ts = 1000;
    e.rev = 1;
    state_.edges.push_back(std::move(e));
    return EdgeRef(&state_.edges.back());
  }

  StoreState& state() { return state_; }

  // Builds and opens the snapshot; REQUIREs success.
  std::unique_ptr<snapshot::Reader> Open(const snapshot::WriterOptions& options = {}) const {
    auto bytes = snapshot::BuildSnapshot(state_, options);
    INFO(bytes.status().ToString());
    REQUIRE(bytes.ok());
    auto reader = snapshot::Reader::OpenBuffer(*bytes);
    INFO(reader.status().ToString());
    REQUIRE(reader.ok());
    return std::move(reader).value();
  }

  // The dense number of `key` in `reader`; REQUIREs that it exists.
  static uint32_t Index(const snapshot::Reader& reader, const std::string& key) {
    auto i = reader.FindKey(key);
    INFO("key " << key);
    REQUIRE(i.has_value());
    return *i;
  }

 private:
  RelationId RelationFor(const std::string& name) {
    for (const auto& [id, known] : state_.relations) {
      if (known == name) return id;
    }
    RelationId id = static_cast<RelationId>(kFirstCustomRelation +
                                            (state_.relations.size() - kBuiltinRelationCount));
    state_.relations.emplace_back(id, name);
    return id;
  }

  StoreState state_;
};

// A distinct word of letters only for k: `prefix` then k's base-26 digits as
// letters ("qa", "qb", ..., "qaa"). Digits would be a term of their own.
inline std::string LettersWord(std::string prefix, uint32_t k) {
  do {
    prefix += static_cast<char>('a' + k % 26);
    k /= 26;
  } while (k > 0);
  return prefix;
}

}  // namespace amem::testing

#endif  // AMEM_TESTS_QUERY_FIXTURE_H_
