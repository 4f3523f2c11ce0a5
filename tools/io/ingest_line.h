// The fast path of ingest line parsing: simdjson's On-Demand parser reads one
// JSON Lines operation straight into the store's input structs (strings copied
// once, numbers parsed exactly and vector elements converted to f32 as they are
// read). It only accepts: a line it cannot take (any error, or anything unusual)
// goes to the reference parser (AddIngestLine in tools/io/ingest.h), which decides
// and names the error. So every rejection keeps its exact message, and the fast
// path accepts only lines the reference parser accepts, with the same result.
#ifndef AMEM_TOOLS_IO_INGEST_LINE_H_
#define AMEM_TOOLS_IO_INGEST_LINE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "store/store.h"

namespace amem::io {

// Bytes that must be readable (any value) after the end of a line passed to
// FastLineParser::Add: simdjson reads ahead in 64-byte blocks.
inline constexpr size_t kLinePadding = 64;

// `line` (a view into a text ending at `text_end`) where a fast parser may read
// it: in place when kLinePadding bytes of the text follow it, else copied into
// *scratch with the padding after it.
inline const char* PaddedLine(std::string_view line, const char* text_end, std::string* scratch) {
  if (static_cast<size_t>(text_end - (line.data() + line.size())) >= kLinePadding) return line.data();
  scratch->assign(line);
  scratch->resize(line.size() + kLinePadding);
  return scratch->data();
}

class FastLineParser {
 public:
  FastLineParser();
  ~FastLineParser();
  FastLineParser(const FastLineParser&) = delete;
  FastLineParser& operator=(const FastLineParser&) = delete;

  // Parses `line` (no newline) and appends its operation to `batch`. Returns false,
  // with `batch` unchanged, when the line must go to the reference parser.
  // REQUIRES: data[size .. size + kLinePadding) is readable.
  bool Add(const char* data, size_t size, Batch* batch);

  // The same for a line of amem log (docs/LOG.md): an ingest operation with its
  // integer "rev" and "rev_ts", which both must have and go to *rev.
  struct LogRevision {
    int64_t rev = 0, rev_ts = 0;
  };
  bool AddLogLine(const char* data, size_t size, Batch* batch, LogRevision* rev);

 private:
  bool Parse(const char* data, size_t size, LogRevision* rev, Batch* batch);

  struct Rep;
  std::unique_ptr<Rep> rep_;
};

}  // namespace amem::io

#endif  // AMEM_TOOLS_IO_INGEST_LINE_H_
