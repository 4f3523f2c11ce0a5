// libFuzzer target for the AgenticMemory reader (snapshot/agentic_memory.h): any
// bytes must give Corruption or NotSupported, or parse into records that keep the
// reader's promises (known enums, edges between present nodes, valid UTF-8), never
// a crash, hang or an allocation the input does not justify. Built and run by
// tests/fuzz.cmake through tests/run_fuzz.sh, seeded with the golden empty file and
// the inputs in tests/data/fuzz_snapshot_agentic_memory/.
// fuzz-link: snapshot/agentic_memory.cc common/*.cc
// fuzz-link: snapshot/reader.cc snapshot/format.cc snapshot/entity_search.cc snapshot/internal/string_list.cc
// fuzz-link: snapshot/internal/layered.cc snapshot/delta.cc snapshot/merged_sequence.cc snapshot/writer.cc snapshot/internal/emitter.cc snapshot/internal/term_index.cc store/*.cc store/internal/*.cc
// fuzz-pkg: liblz4 libxxhash lmdb
// fuzz-seed: tests/data/agentic_memory/v1_empty.amem
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/utf8.h"
#include "snapshot/agentic_memory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace ag = amem::snapshot::agentic;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)ag::MatchHeader(bytes);
  auto f = ag::Parse(bytes);
  if (!f.ok()) {
    if (!f.status().IsCorruption() && !f.status().IsNotSupported()) __builtin_trap();
    return 0;
  }
  std::vector<uint64_t> ids;
  for (const ag::Node& n : f->nodes) {
    if (n.event_type >= ag::kEventTypeCount || !amem::IsValidUtf8(n.content)) __builtin_trap();
    if (!n.vector.empty() && n.vector.size() != f->dimension) __builtin_trap();
    ids.push_back(n.id);
  }
  std::sort(ids.begin(), ids.end());
  for (const ag::Edge& e : f->edges) {
    if (e.edge_type >= ag::kEdgeTypeCount) __builtin_trap();
    if (!std::binary_search(ids.begin(), ids.end(), e.source) ||
        !std::binary_search(ids.begin(), ids.end(), e.target)) {
      __builtin_trap();
    }
  }
  (void)ag::InfoToText(*f, "fuzz.amem");
  return 0;
}
