// libFuzzer target for the unified diff reader (tools/index/diff.h): any bytes must
// give file changes or InvalidArgument naming a line, never a crash or a hang; and
// every change it returns must be well formed (paths present as its kind says,
// old lines ascending within a hunk's bounds). Built and run by tests/fuzz.cmake
// through tests/run_fuzz.sh with the inputs in tests/data/fuzz_tools_index_diff/.
// fuzz-link: tools/index/diff.cc query/code_change.cc common/status.cc
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tools/index/diff.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using amem::index::ChangeKind;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = amem::index::ParseUnifiedDiff(text);
  if (!r.ok()) {
    if (!r.status().IsInvalidArgument()) std::abort();
    return 0;
  }
  for (const auto& c : *r) {
    if ((c.kind != ChangeKind::kAdded) == c.old_path.empty()) std::abort();
    if ((c.kind != ChangeKind::kDeleted) == c.new_path.empty()) std::abort();
    if (c.kind == ChangeKind::kAdded && !c.old_lines.empty()) std::abort();
    for (const auto& span : c.old_lines) {
      if (span.first > span.last) std::abort();
    }
  }
  return 0;
}
