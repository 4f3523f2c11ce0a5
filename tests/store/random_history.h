// Random store histories for property tests (snapshot deltas, log and replay):
// batches of puts, overwrites, deletes, dangling edges, custom relations, run
// changes and kv over a small key space, so that items are written, deleted and
// written again, often several times in one batch.
#ifndef AMEM_TESTS_STORE_RANDOM_HISTORY_H_
#define AMEM_TESTS_STORE_RANDOM_HISTORY_H_

#include <cstdint>
#include <random>
#include <string>

#include "store/store.h"
#include "tests/store/store_test_util.h"

namespace amem::testing {

class History {
 public:
  // `per_op_attribution`: operations (deletes too) also carry their own ts, run,
  // task and scope, and weights and confidences are arbitrary floats.
  explicit History(uint32_t seed, bool per_op_attribution = false)
      : rng_(seed), rich_(per_op_attribution) {}

  // One random batch; returns false when it was refused.
  bool Step(Store* store) {
    Batch batch;
    int ops = 1 + Pick(6);
    for (int k = 0; k < ops; ++k) {
      switch (Pick(12)) {
        case 0:
        case 1:
        case 2:
        case 3: batch.PutNode(RandomNode()); break;
        case 4: DeleteNode(&batch); break;
        case 5:
        case 6:
        case 7: batch.PutEdge(RandomEdge()); break;
        case 8: DeleteEdge(&batch); break;
        case 9: {
          KvInput kv = Kv(Pick(2) ? "proj" : "team", "ns", "k" + std::to_string(Pick(5)),
                          Words(2));
          if (Pick(3) == 0) kv.run = Run();
          if (rich_ && Pick(3) == 0) kv.ts = 800 + Pick(900);
          batch.PutKv(kv);
          break;
        }
        case 10: DeleteKv(&batch); break;
        case 11: batch.DefineRelation(kCustom[Pick(3)]); break;
      }
    }
    WriteOptions w;
    if (Pick(3) == 0) w.ts = 1000 + Pick(500);  // explicit, sometimes in the past
    if (Pick(2) == 0) w.run = Run();
    if (rich_ && Pick(3) == 0) w.task = "batch-task";
    if (rich_ && Pick(4) == 0) w.scope = "batch-scope";
    auto rev = store->Apply(batch, w);
    return rev.ok();  // a batch may be refused (e.g. an undefined relation): fine
  }

  // Steps until the store has `revisions` revisions.
  void Grow(Store* store, uint64_t revisions) {
    while (store->revision().value() < revisions) Step(store);
  }

 private:
  static constexpr const char* kCustom[3] = {"zeta", "alpha", "mid"};
  uint32_t Pick(uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng_); }
  std::string Key() { return "k" + std::to_string(Pick(24)); }
  std::string Run() {
    static const char* runs[] = {"", "run-a", "run-b", "run-c"};
    return runs[Pick(4)];
  }
  std::string Words(int n) {
    static const char* words[] = {"retry", "cache", "policy", "not", "timeout", "lmdb",
                                  "graph", "never", "build", "merge", "delta", "index"};
    std::string s;
    for (int k = 0; k < n; ++k) s += std::string(k ? " " : "") + words[Pick(12)];
    return s;
  }
  float AnyFloat() { return std::uniform_real_distribution<float>(0.0f, 1.0f)(rng_); }
  NodeInput RandomNode() {
    NodeInput n = Node(Key(), Words(1 + Pick(5)), static_cast<NodeType>(Pick(11)));
    if (Pick(3) == 0) n.run = Run();
    if (Pick(4) == 0) n.scope = Pick(2) ? "repo" : "user";
    if (Pick(4) == 0) n.task = "t" + std::to_string(Pick(3));
    if (Pick(4) == 0) n.meta = R"({"lang":"cpp"})";
    if (Pick(3) == 0) n.confidence = 0.25f * static_cast<float>(Pick(5));
    if (rich_ && Pick(3) == 0) n.confidence = AnyFloat();
    if (Pick(5) == 0) {
      n.vector.assign(kDefaultDimension, 0.0f);
      n.vector[Pick(kDefaultDimension)] = 1.0f;
      if (rich_) n.vector[Pick(kDefaultDimension)] = AnyFloat();
    }
    if (Pick(4) == 0) n.ts = 900 + Pick(900);
    return n;
  }
  EdgeInput RandomEdge() {
    static const char* builtins[] = {"supports", "contradicts", "supersedes", "related_to",
                                     "calls"};
    std::string rel = Pick(4) == 0 ? kCustom[Pick(3)] : builtins[Pick(5)];
    EdgeInput e = Edge(Key(), rel, Key(), 0.5f + 0.25f * static_cast<float>(Pick(3)));
    if (Pick(4) == 0) e.payload = R"({"why":"test","n":[1,2.5]})";
    if (Pick(4) == 0) e.run = Run();
    if (rich_ && Pick(3) == 0) e.weight = AnyFloat() * 4 - 2;
    if (rich_ && Pick(3) == 0) e.ts = 800 + Pick(900);
    if (rich_ && Pick(4) == 0) e.task = "t" + std::to_string(Pick(3));
    return e;
  }
  void DeleteNode(Batch* batch) {
    if (!rich_) return batch->DeleteNode(Key());
    NodeInput n;
    n.key = Key();
    if (Pick(2) == 0) n.ts = 800 + Pick(900);
    if (Pick(2) == 0) n.run = Run();
    if (Pick(3) == 0) n.scope = "del-scope";
    batch->DeleteNode(std::move(n));
  }
  void DeleteEdge(Batch* batch) {
    EdgeInput e = RandomEdge();
    if (!rich_) return batch->DeleteEdge(e.src, e.rel, e.dst);
    e.payload = "{}";
    batch->DeleteEdge(std::move(e));
  }
  void DeleteKv(Batch* batch) {
    std::string scope = Pick(2) ? "proj" : "team", key = "k" + std::to_string(Pick(5));
    if (!rich_) return batch->DeleteKv(scope, "ns", key);
    KvInput kv = Kv(scope, "ns", key, "");
    if (Pick(2) == 0) kv.ts = 800 + Pick(900);
    if (Pick(2) == 0) kv.run = Run();
    batch->DeleteKv(std::move(kv));
  }

  std::mt19937 rng_;
  bool rich_;
};

}  // namespace amem::testing

#endif  // AMEM_TESTS_STORE_RANDOM_HISTORY_H_
