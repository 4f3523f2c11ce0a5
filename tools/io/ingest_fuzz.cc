// libFuzzer target for the JSON Lines ingest parser (tools/io/ingest.h): any bytes
// must parse into a batch or give InvalidArgument naming a line, never a crash, a
// hang or an allocation its input does not justify. Built and run by
// tests/fuzz.cmake through tests/run_fuzz.sh with the inputs in
// tests/data/fuzz_tools_ingest/ (among them a line nested far past the limit).
// fuzz-link: tools/io/ingest.cc tools/io/ingest_line.cc tools/io/json_input.cc store/*.cc store/internal/*.cc common/*.cc
// fuzz-pkg: lmdb libxxhash simdjson
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tools/io/ingest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = amem::io::ParseIngest(text);
  if (!parsed.ok()) {
    const std::string& msg = parsed.status().message();
    if (!parsed.status().IsInvalidArgument() || msg.rfind("line ", 0) != 0) __builtin_trap();
    return 0;
  }
  if (parsed->op_lines.size() != parsed->batch.ops().size()) __builtin_trap();
  return 0;
}
