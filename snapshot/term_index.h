// Builds the TermIndex (0x05) and DocLengths (0x06) bodies (docs/FORMAT.md §8.5-8.6)
// with common/tokenizer.h. Internal to snapshot/.
#ifndef AMEM_SNAPSHOT_TERM_INDEX_H_
#define AMEM_SNAPSHOT_TERM_INDEX_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace amem::snapshot {

// contents[i] and metas[i] are node i's content and meta JSON (dense order).
Status BuildTermIndex(const std::vector<std::string_view>& contents,
                      const std::vector<std::string_view>& metas, std::string* term_body,
                      std::string* doc_lengths_body);

}  // namespace amem::snapshot

#endif  // AMEM_SNAPSHOT_TERM_INDEX_H_
