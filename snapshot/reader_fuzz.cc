// libFuzzer target for snapshot::Reader: any bytes must give Corruption (or open
// and survive every accessor and Verify()), never a crash, hang or huge
// allocation; and read lazily, every accessor called, they answer as the file
// checked whole at open does, or the reader's sticky ReadStatus() is Corruption. Built and run by tests/fuzz.cmake through tests/run_fuzz.sh, seeded
// with tests/data/small.amem and the inputs in tests/data/fuzz_snapshot_reader/.
// fuzz-link: snapshot/reader.cc snapshot/format.cc snapshot/entity_search.cc snapshot/internal/string_list.cc common/*.cc
// fuzz-link: snapshot/internal/layered.cc snapshot/delta.cc snapshot/merged_sequence.cc snapshot/writer.cc snapshot/internal/emitter.cc snapshot/internal/term_index.cc store/*.cc store/internal/*.cc
// fuzz-pkg: liblz4 libxxhash lmdb
// fuzz-seed: tests/data/small.amem
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "snapshot/reader.h"
#include "tests/snapshot/snapshot_test_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = amem::snapshot::Reader::OpenBuffer(
      std::string_view(reinterpret_cast<const char*>(data), size));
  if (!r.ok()) {
    if (!r.status().IsCorruption() && !r.status().IsNotSupported()) __builtin_trap();
    return 0;
  }
  volatile uint64_t sink = amem::snapshot_test::TouchEverything(**r);
  (void)sink;
  (void)(*r)->Verify();
  if (!amem::snapshot_test::LazyAgreesWithEager(
           std::string_view(reinterpret_cast<const char*>(data), size))
           .empty()) {
    __builtin_trap();
  }
  return 0;
}
