// libFuzzer target for snapshot::Delta: a delta compiled against a base, patched
// by the input with its checksum redone (tests/snapshot/delta_fuzz_fixture.h), so
// that every check after the checksum meets the damage. Delta::Open must give
// Corruption (InvalidArgument for a header naming another base), or a Delta whose
// every table the merge and the merged numbering read without a crash.
// fuzz-link: snapshot/delta.cc snapshot/reader.cc snapshot/format.cc snapshot/entity_search.cc snapshot/writer.cc
// fuzz-link: snapshot/merged_sequence.cc snapshot/internal/*.cc common/*.cc store/*.cc store/internal/*.cc
// fuzz-pkg: liblz4 libxxhash lmdb
#include <cstddef>
#include <cstdint>
#include <string>

#include "snapshot/delta.h"
#include "tests/snapshot/delta_fuzz_fixture.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace amem;
  const fuzz::DeltaFixture& f = fuzz::Fixture();
  static const std::unique_ptr<snapshot::Reader> base = [&] {
    auto r = snapshot::Reader::OpenBuffer(f.base);
    fuzz::Check(r.ok());
    return std::move(r).value();
  }();
  std::string delta = f.delta;
  fuzz::Patch(data, size, &delta, nullptr);
  fuzz::RedoDeltaChecksum(&delta);
  auto d = snapshot::Delta::OpenBuffer(delta, *base);
  if (!d.ok()) {
    if (!d.status().IsCorruption() && !d.status().IsInvalidArgument()) __builtin_trap();
    return 0;
  }
  // Opened: the merge and both numberings use every table the delta has.
  (void)snapshot::NodeSequence(*base, **d);
  (void)snapshot::EdgeSequence(*base, **d);
  auto merged = snapshot::MergeState(*base, **d);
  if (merged.ok()) (void)snapshot::BuildSnapshot(*merged);
  return 0;
}
