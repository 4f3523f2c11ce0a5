// Builds the TermIndex (0x05) and DocLengths (0x06) bodies (docs/FORMAT.md §8.5-8.6)
// with common/tokenizer.h. Internal to snapshot/.
#ifndef AMEM_SNAPSHOT_TERM_INDEX_H_
#define AMEM_SNAPSHOT_TERM_INDEX_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "snapshot/emitter.h"

namespace amem::snapshot {

class TermIndex {
 public:
  // contents[i] and metas[i] are node i's content and meta JSON (dense order).
  // With embedding_dim > 0 it also builds the Embeddings block (0x1D) in that
  // dimension from the same tokens: a content's bucket counts come from its
  // distinct terms' hashes and frequencies. InvalidArgument if the index would
  // exceed the format's 32-bit counts.
  Status Build(const std::vector<std::string_view>& contents,
               const std::vector<std::string_view>& metas, uint32_t embedding_dim = 0);

  // REQUIRES: Build() succeeded, for the rest.
  uint64_t term_index_length() const;  // body bytes of block 0x05
  uint64_t doc_lengths_length() const { return 4 * static_cast<uint64_t>(doc_lengths_.size()); }
  void EmitTermIndex(Emitter* out) const;
  void EmitDocLengths(Emitter* out) const;
  // REQUIRES: Build() got embedding_dim > 0.
  uint64_t embeddings_length() const;  // body bytes of block 0x1D
  void EmitEmbeddings(Emitter* out) const;

 private:
  std::string arena_;                   // the term names, first-seen order
  std::vector<std::string_view> names_;  // into arena_, sorted bytewise
  std::vector<uint32_t> bucket_start_;   // (term rank, field) -> first posting; + end
  std::string postings_;                 // the encoded postings, in file order
  std::vector<uint32_t> doc_lengths_;
  uint32_t embedding_dim_ = 0;
  std::vector<uint32_t> embedding_offsets_;  // n + 1
  std::vector<uint32_t> embedding_entries_;  // EmbeddingBlock::Entry values
  std::vector<uint32_t> embedding_overflow_;
};

}  // namespace amem::snapshot

#endif  // AMEM_SNAPSHOT_TERM_INDEX_H_
