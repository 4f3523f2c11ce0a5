// libFuzzer target for the SCIP reader (tools/index/scip.h): any bytes must read
// into a CodeIndex or give InvalidArgument, never a crash, a hang or an allocation
// its input does not justify. An index that reads must keep the reader's promises:
// documents sorted by unique, canonical paths, valid ranges; and reading it again
// while skipping every document must agree on the paths and digests. Built and run
// by tests/fuzz.cmake through tests/run_fuzz.sh with the inputs in
// tests/data/fuzz_tools_index_scip/.
// fuzz-link: tools/index/scip.cc common/hash.cc common/utf8.cc common/status.cc
// fuzz-pkg: libxxhash
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tools/index/scip.h"

namespace {

bool RangeOk(const amem::index::SourceRange& r) {
  return r.start_line < r.end_line || (r.start_line == r.end_line && r.start_col <= r.end_col);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto full = amem::index::ReadScip(bytes);
  if (!full.ok()) {
    if (!full.status().IsInvalidArgument() || full.status().message().empty()) __builtin_trap();
    return 0;
  }
  const auto& docs = full->documents;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (docs[i].path.empty() || docs[i].path.front() == '/' || !docs[i].decoded) __builtin_trap();
    if (i > 0 && !(docs[i - 1].path < docs[i].path)) __builtin_trap();
    for (const auto& occ : docs[i].occurrences) {
      if (occ.symbol.empty() || occ.symbol.size() > amem::index::kMaxScipSymbolBytes ||
          !RangeOk(occ.range) || (occ.enclosing_range && !RangeOk(*occ.enclosing_range))) {
        __builtin_trap();
      }
    }
    for (const auto& sym : docs[i].symbols) {
      if (sym.symbol.empty()) __builtin_trap();
    }
  }
  amem::index::ScipOptions skip_all;
  size_t calls = 0;
  skip_all.skip_document = [&calls](std::string_view, uint64_t) {
    ++calls;
    return true;
  };
  auto skipped = amem::index::ReadScip(bytes, skip_all);
  if (!skipped.ok() || calls != docs.size() || skipped->documents.size() != docs.size()) {
    __builtin_trap();
  }
  for (size_t i = 0; i < docs.size(); ++i) {
    const auto& s = skipped->documents[i];
    if (s.decoded || s.path != docs[i].path || s.digest != docs[i].digest ||
        s.language != docs[i].language || !s.occurrences.empty() || !s.symbols.empty()) {
      __builtin_trap();
    }
  }
  return 0;
}
