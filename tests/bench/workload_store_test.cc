#include <catch2/catch.hpp>

#include "bench/bench_util.h"
#include "bench/workload.h"
#include "store/store.h"

using namespace amem;
using namespace amem::bench;

TEST_CASE("The store accepts a workload and returns it intact", "[bench][workload][store]") {
  WorkloadOptions o;
  o.num_nodes = 500;
  Workload w = GenerateWorkload(o);
  ScratchDir dir("amem-workload-test");
  StoreOptions so;
  so.durable = false;
  Result<std::unique_ptr<Store>> store = Store::Open(dir.Sub("store"), so);
  REQUIRE(store.ok());
  Batch batch;
  AddToBatch(w, &batch);
  REQUIRE(batch.size() == w.nodes.size() + w.edges.size());
  Result<uint64_t> rev = (*store)->Apply(batch);
  INFO(rev.status().ToString());
  REQUIRE(rev.ok());

  Result<StoreStats> stats = (*store)->Stats();
  REQUIRE(stats.ok());
  CHECK(stats->live_nodes == w.nodes.size());
  CHECK(stats->live_edges == w.edges.size());
  CHECK(stats->dangling_edges == 0);

  for (size_t i : {size_t{0}, size_t{123}, size_t{499}}) {
    const NodeInput& in = w.nodes[i];
    Result<NodeRecord> got = (*store)->GetNode(in.key);
    REQUIRE(got.ok());
    CHECK(got->type == in.type);
    CHECK(got->content == in.content);
    CHECK(got->vector == in.vector);
    CHECK(got->confidence == in.confidence);
    CHECK(got->created_ts == *in.ts);
    CHECK(got->run == *in.run);
    CHECK(got->scope == *in.scope);
  }
  // A planted supersedes link reads back in the documented direction (new -> old).
  REQUIRE_FALSE(w.chains.empty());
  const std::vector<uint32_t>& chain = w.chains.front();
  Result<std::vector<EdgeRecord>> out = (*store)->Out(w.nodes[chain[1]].key, "supersedes");
  REQUIRE(out.ok());
  REQUIRE(out->size() == 1);
  CHECK(out->front().dst_key == w.nodes[chain[0]].key);
}
