// libFuzzer target for a base + delta read as one graph (Reader::OpenLayered):
// the input patches the delta and the base, both checksums redone
// (tests/snapshot/delta_fuzz_fixture.h). Whatever opens is walked through every
// accessor twice, first answered from the merged sequences and then, past the
// point limit, from the flat tables; the view must never crash, and its
// ContentStatus() is OK or the Corruption of two files that do not fit.
// fuzz-link: snapshot/delta.cc snapshot/reader.cc snapshot/format.cc snapshot/entity_search.cc snapshot/writer.cc
// fuzz-link: snapshot/merged_sequence.cc snapshot/internal/*.cc common/*.cc store/*.cc store/internal/*.cc
// fuzz-pkg: liblz4 libxxhash lmdb
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "snapshot/delta.h"
#include "tests/snapshot/delta_fuzz_fixture.h"
#include "tests/snapshot/snapshot_test_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace amem;
  const fuzz::DeltaFixture& f = fuzz::Fixture();
  std::string base_bytes = f.base, delta_bytes = f.delta;
  fuzz::Patch(data, size, &delta_bytes, &base_bytes);
  fuzz::RedoSnapshotChecksum(&base_bytes);
  fuzz::RedoDeltaChecksum(&delta_bytes);
  auto base = snapshot::Reader::OpenBuffer(base_bytes);
  if (!base.ok()) return 0;
  std::shared_ptr<const snapshot::Reader> b = std::move(base).value();
  auto delta = snapshot::Delta::OpenBuffer(delta_bytes, *b);
  if (!delta.ok()) {
    if (!delta.status().IsCorruption() && !delta.status().IsInvalidArgument()) __builtin_trap();
    return 0;
  }
  auto view = snapshot::Reader::OpenLayered(b, std::shared_ptr<const snapshot::Delta>(std::move(*delta)));
  if (!view.ok()) {
    if (!view.status().IsCorruption() && !view.status().IsInvalidArgument()) __builtin_trap();
    return 0;
  }
  const snapshot::Reader& r = **view;
  volatile uint64_t sink = snapshot_test::TouchEverything(r);
  // Past the point limit: the flat tables are built (or their fallbacks).
  for (int k = 0; k < 5000 && r.edge_count() > 0; ++k) sink = sink + r.edge_source(0) + r.in_edge(0);
  sink = sink + snapshot_test::TouchEverything(r);
  (void)sink;
  Status s = r.ContentStatus();
  if (!s.ok() && !s.IsCorruption()) __builtin_trap();
  (void)r.CheckIndexes();
  return 0;
}
