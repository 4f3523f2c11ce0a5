// libFuzzer target for the universal-ctags reader (tools/index/ctags.h): any bytes
// must read into an index that keeps the reader's promises (documents sorted by
// unique normalised paths, keys unique and prefixed by their path, lines in
// order, references only to keys the index defines) or give InvalidArgument or
// IOError, never a crash or a hang. The input is ctags JSON Lines, then, after a
// NUL byte, the content of the one file under the root (a.c), so the reference
// scan runs too. Built and run by tests/fuzz.cmake through tests/run_fuzz.sh with
// the inputs in tests/data/fuzz_tools_index_ctags/.
// fuzz-link: tools/index/ctags.cc common/*.cc
// fuzz-pkg: libxxhash
#include <stdlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <string_view>

#include "tools/index/ctags.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "ctags_fuzz: broken promise: %s\n", what);
    abort();
  }
}

const std::string& Root() {
  static const std::string root = [] {
    char tmpl[] = "/tmp/amem-ctags-fuzz-XXXXXX";
    const char* dir = ::mkdtemp(tmpl);
    Check(dir != nullptr, "mkdtemp");
    return std::string(dir);
  }();
  static const bool cleanup = [] {
    std::atexit([] {
      std::remove((root + "/a.c").c_str());
      std::remove(root.c_str());
    });
    return true;
  }();
  (void)cleanup;
  return root;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string_view jsonl = input.substr(0, nul);
  const std::string_view content =
      nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);
  FILE* f = std::fopen((Root() + "/a.c").c_str(), "wb");
  Check(f != nullptr, "write a.c");
  std::fwrite(content.data(), 1, content.size(), f);
  std::fclose(f);

  amem::index::CtagsOptions options;
  for (bool with_root : {false, true}) {
    options.root = with_root ? Root() : "";
    auto r = amem::index::ReadCtags(jsonl, options);
    if (!r.ok()) {
      Check(r.status().IsInvalidArgument() || r.status().IsIOError(), "error class");
      continue;
    }
    std::set<std::string> keys;
    for (const auto& doc : r->documents) {
      for (const auto& s : doc.symbols) {
        Check(s.symbol.rfind(doc.path + "#", 0) == 0, "key starts with its path");
        Check(keys.insert(s.symbol).second, "keys unique");
      }
    }
    for (size_t i = 0; i < r->documents.size(); ++i) {
      const auto& doc = r->documents[i];
      Check(i == 0 || r->documents[i - 1].path < doc.path, "documents sorted, unique");
      // Relative, '/'-separated, no empty, "." or ".." segment ("...a.c" is a name).
      Check(!doc.path.empty() && doc.path.front() != '/', "path relative");
      for (size_t b = 0; b <= doc.path.size();) {
        const size_t e = std::min(doc.path.find('/', b), doc.path.size());
        const std::string_view seg = std::string_view(doc.path).substr(b, e - b);
        Check(!seg.empty() && seg != "." && seg != "..", "path normalised");
        b = e + 1;
      }
      Check(doc.occurrences.size() >= doc.symbols.size(), "a definition per symbol");
      for (const auto& o : doc.occurrences) {
        Check(o.range.start_line <= o.range.end_line, "range in order");
        Check(keys.count(o.symbol) == 1, "occurrence names a defined key");
        Check(with_root || o.roles == amem::index::kRoleDefinition, "no references without root");
      }
    }
  }
  return 0;
}
