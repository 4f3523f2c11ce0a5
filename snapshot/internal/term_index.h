// Builds the TermIndex (0x05) and DocLengths (0x06) bodies (docs/FORMAT.md §8.5-8.6)
// with common/tokenizer.h. Internal to snapshot/.
#ifndef AMEM_SNAPSHOT_INTERNAL_TERM_INDEX_H_
#define AMEM_SNAPSHOT_INTERNAL_TERM_INDEX_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "snapshot/internal/emitter.h"

namespace amem::snapshot {

class TermIndex {
 public:
  // Step 1: tokenizes the texts. contents[k] and metas[k] are text k's content
  // and meta JSON, in any order (the caller's). With embedding_dim > 0 it also
  // builds each content's embedding (block 0x1D) in that dimension from the same
  // tokens: a content's bucket counts come from its distinct terms' hashes and
  // frequencies. InvalidArgument if the index would exceed the format's 32-bit
  // counts. Step 1 needs no node order, so it can run while the file's order is
  // still being worked out.
  Status Tokenize(const std::vector<std::string_view>& contents,
                  const std::vector<std::string_view>& metas, uint32_t embedding_dim = 0);

  // After Tokenize(): the body bytes of blocks 0x05, 0x06 and (with
  // embedding_dim > 0) 0x1D, which Place() does not change.
  uint64_t term_index_length() const;
  uint64_t doc_lengths_length() const { return 4 * uint64_t{text_lengths_.size()}; }
  uint64_t embeddings_length() const;

  // Step 2: lays the blocks out in the file's node order: node i is text
  // order[i]. REQUIRES: order is a permutation of the texts.
  void Place(const std::vector<uint32_t>& order);

  // REQUIRES: Place(), for the rest.
  void EmitTermIndex(Emitter* out) const;
  void EmitDocLengths(Emitter* out) const;
  // REQUIRES: Tokenize() got embedding_dim > 0.
  void EmitEmbeddings(Emitter* out) const;

 private:
  // One (term, text, field) posting: the text is implied by the position
  // (text_end_), the field and tf are already packed as in the file.
  struct RawPosting {
    uint32_t term;      // provisional id (first-seen order)
    uint32_t tf_field;  // tf | field << 24
  };

  // Step 1, in text order.
  std::string arena_;                  // the term names, first-seen order
  std::vector<uint64_t> term_ends_;    // provisional id + 1 -> end of its name in arena_
  std::vector<RawPosting> raw_;
  std::vector<uint32_t> text_end_;     // raw_[text_end_[k-1], text_end_[k]) are text k's
  std::vector<uint32_t> text_lengths_;  // content tokens per text
  std::vector<uint32_t> text_embedding_ends_;  // into embedding_entries_, per text
  uint32_t embedding_dim_ = 0;
  uint64_t posting_count_ = 0;  // raw_'s size, kept once Place() frees raw_

  // Step 2, in node order.
  std::vector<std::string_view> names_;  // into arena_, sorted bytewise
  std::vector<uint32_t> bucket_start_;   // (term rank, field) -> first posting; + end
  std::string postings_;                 // the encoded postings, in file order
  std::vector<uint32_t> doc_lengths_;
  std::vector<uint32_t> order_;              // node -> text (Place's), with embeddings
  std::vector<uint32_t> embedding_offsets_;  // node -> first entry, in node order; + end
  std::vector<uint32_t> embedding_entries_;  // EmbeddingBlock::Entry values, text order
  std::vector<uint32_t> embedding_overflow_;  // texts after step 1, nodes after step 2
};

}  // namespace amem::snapshot

#endif  // AMEM_SNAPSHOT_INTERNAL_TERM_INDEX_H_
