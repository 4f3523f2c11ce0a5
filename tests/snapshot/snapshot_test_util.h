// Helpers for the snapshot tests: build a snapshot and open it (failing the test
// with the error), read a file, and touch every accessor of a Reader (so
// corrupted-but-accepted files are exercised under ASan).
#ifndef AMEM_TESTS_SNAPSHOT_SNAPSHOT_TEST_UTIL_H_
#define AMEM_TESTS_SNAPSHOT_SNAPSHOT_TEST_UTIL_H_

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <span>
#include <string>
#include <vector>

#include "common/coding.h"
#include "common/files.h"
#include "common/hash.h"
#include "snapshot/live.h"
#include "snapshot/reader.h"
#include "snapshot/writer.h"

namespace amem::snapshot_test {

// The snapshot bytes of `s`; fails the test on an error.
inline std::string Build(const StoreState& s, const snapshot::WriterOptions& o = {}) {
  auto b = snapshot::BuildSnapshot(s, o);
  INFO(b.status().ToString());
  REQUIRE(b.ok());
  return std::move(b).value();
}

// A reader over `bytes` (it keeps its own copy); fails the test on an error.
inline std::unique_ptr<snapshot::Reader> OpenOrDie(const std::string& bytes) {
  auto r = snapshot::Reader::OpenBuffer(bytes);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(r).value();
}

// A reader over the snapshot of `s`.
inline std::unique_ptr<snapshot::Reader> OpenState(const StoreState& s) {
  return OpenOrDie(Build(s));
}

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Rewrites the page checksums block (0x1E) of the .amem file in `bytes` over its
// bytes as they are now, as if the writer had written them: damage made on
// purpose then reaches the structure checks behind the pages. The checksum block
// 0x1F is left as it is. Nothing happens to a file without the block.
inline void RedoPageChecksums(std::string* bytes) {
  if (bytes->size() < snapshot::Header::kEncodedLength) return;
  uint64_t pos = DecodeFixed64(bytes->data() + snapshot::Header::kIndexOffsetOffset);
  while (pos + snapshot::kBlockHeaderLength <= bytes->size()) {
    const uint32_t tag = DecodeFixed32(bytes->data() + pos);
    const uint32_t len = DecodeFixed32(bytes->data() + pos + 4);
    if (tag == static_cast<uint32_t>(snapshot::BlockTag::kPageChecksums)) {
      const uint64_t pages = snapshot::PageChecksumBlock::PageCount(pos);
      REQUIRE(len == snapshot::PageChecksumBlock::Length(pos));
      char* hashes = bytes->data() + pos + snapshot::kBlockHeaderLength + 8;
      for (uint64_t k = 0; k < pages; ++k) {
        const uint64_t at = k * snapshot::PageChecksumBlock::kPageSize;
        const uint64_t n = std::min<uint64_t>(snapshot::PageChecksumBlock::kPageSize, pos - at);
        EncodeFixed64(hashes + 8 * k, Hash64(bytes->data() + at, n, 0));
      }
      return;
    }
    pos += snapshot::kBlockHeaderLength + len;
  }
}

// Every answer of every accessor over every element, written out whole (strings
// byte for byte, floats bit for bit), embeddings included: two readers give the
// same text exactly when they answer the same. For small files.
inline std::string AllAnswers(const snapshot::Reader& r) {
  // Raw bytes, copied by hand: the tests run this at -O0, once a flipped byte.
  std::string out(size_t{64} << 10, '\0');
  char* buf = out.data();
  size_t used = 0;
  auto put = [&](const void* p, size_t n) {
    if (n == 0) return;  // p may be null (an empty string_view)
    if (used + n > out.size()) {
      out.resize(2 * (used + n));
      buf = out.data();
    }
    std::memcpy(buf + used, p, n);
    used += n;
  };
  auto num = [&](uint64_t v) { put(&v, sizeof(v)); };
  auto str = [&](std::string_view s) {
    num(s.size());
    put(s.data(), s.size());
  };
  auto flt = [&](float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    num(bits);
  };
  auto found = [&](auto opt) { num(opt ? uint64_t{*opt} + 1 : 0); };
  num(r.node_count());
  num(r.edge_count());
  num(static_cast<uint64_t>(r.newest_timestamp()));
  num(r.session_count());
  num(r.stub_count());
  flt(static_cast<float>(r.average_doc_length()));
  // vectors() and embeddings() first, while nothing is checked yet: batches of 5
  // cross the node chunks' boundaries (64 records) and the pages'.
  put("\nvectors ", 9);
  for (uint32_t first = 0; first < r.node_count(); first += 5) {
    const float* batch[5];
    const uint32_t count = std::min<uint32_t>(5, r.node_count() - first);
    r.vectors(first, count, batch);
    for (uint32_t k = 0; k < count; ++k) {
      num(batch[k] != nullptr);
      for (uint32_t d = 0; batch[k] && d < r.dimension(); ++d) flt(batch[k][d]);
    }
  }
  put("\nembeddings ", 12);
  for (uint32_t first = 0; first < r.node_count(); first += 5) {
    std::optional<std::span<const uint32_t>> batch[5];
    const uint32_t count = std::min<uint32_t>(5, r.node_count() - first);
    r.embeddings(first, count, batch);
    for (uint32_t k = 0; k < count; ++k) {
      num(batch[k].has_value());
      if (batch[k]) {
        num(batch[k]->size());
        for (uint32_t e : *batch[k]) num(e);
      }
    }
  }
  for (uint32_t i = 0; i < r.node_count(); ++i) {
    put("\nnode ", 6);
    num(r.type_code(i));
    num(r.session(i));
    flt(r.confidence(i));
    num(static_cast<uint64_t>(r.created_ts(i)));
    num(static_cast<uint64_t>(r.updated_ts(i)));
    num(r.id(i));
    str(r.content(i));
    str(r.meta(i));
    str(r.key(i));
    str(r.scope(i));
    str(r.run(i));
    str(r.task(i));
    num(r.is_stub(i));
    num(r.doc_length(i));
    if (const float* v = r.vector(i)) {
      for (uint32_t d = 0; d < r.dimension(); ++d) flt(v[d]);
    }
    std::span<const uint32_t> entries;
    if (r.embedding(i, &entries)) {
      for (uint32_t e : entries) num(e);
    }
    found(r.FindKey(r.key(i)));
    found(r.FindId(r.id(i)));
    for (uint32_t j = r.out_begin(i); j < r.out_end(i); ++j) num(j);
    put("| ", 2);
    for (uint32_t k = r.in_begin(i); k < r.in_end(i); ++k) num(r.in_edge(k) + (uint64_t{r.in_source(k)} << 32));
    auto [b, e] = r.OutEdgesWithRel(i, 4);
    auto [ib, ie] = r.InEdgesWithRel(i, 4);
    num(b);
    num(e);
    num(ib);
    num(ie);
  }
  for (uint32_t j = 0; j < r.edge_count(); ++j) {
    put("\nedge ", 6);
    const snapshot::Edge e = r.edge(j);
    num(e.source);
    num(e.target);
    num(e.rel);
    flt(e.weight);
    num(static_cast<uint64_t>(r.edge_created_ts(j)));
    num(static_cast<uint64_t>(r.edge_updated_ts(j)));
    str(r.edge_payload(j));
    str(r.edge_run(j));
    str(r.edge_task(j));
    str(r.relation_name(e.rel));
    found(r.FindEdge(e.source, e.rel, e.target));
  }
  put("\nrelations ", 11);
  for (RelationId rel : r.relations()) {
    num(rel);
    found(r.FindRelation(r.relation_name(rel)));
  }
  for (int t = 0; t < 12; ++t) {
    put("\ntype ", 6);
    str(r.type_name(static_cast<uint8_t>(t)));
    for (uint32_t i : r.NodesOfType(static_cast<uint8_t>(t))) num(i);
  }
  for (uint32_t t = 0; t < r.term_count(); ++t) {
    put("\nterm ", 6);
    str(r.term(t));
    found(r.FindTerm(r.term(t)));
    num(r.doc_frequency(t));
    const snapshot::PostingList p = r.postings(t);
    for (uint32_t k = 0; k < p.size(); ++k) {
      num(p.node(k));
      num(p.tf(k));
      num(static_cast<uint64_t>(p.field(k)));
    }
    num(r.postings(t, snapshot::Field::kMeta).size());
    for (snapshot::Field f : {snapshot::Field::kContent, snapshot::Field::kMeta}) {
      snapshot::PostingCursor c = r.postings_cursor(t, f);
      num(c.size());
      for (; !c.done(); c.Next()) {
        num(c.node());
        num(c.tf());
        num(c.doc_length());
      }
      snapshot::PostingCursor s = r.postings_cursor(t, f);
      while (!s.done()) {  // seeks past every other posting
        s.Seek(s.node() + 2);
        if (!s.done()) num(s.node());
      }
    }
  }
  for (uint32_t s = 0; s < r.session_count(); ++s) {
    put("\nsession ", 9);
    const snapshot::SessionRange sr = r.session_range(s);
    num(sr.begin);
    num(sr.end);
    str(r.session_run(s));
    found(r.FindSession(r.session_run(s)));
  }
  put("\ntime ", 6);
  for (uint32_t k = 0; k < r.time_entry_count(); ++k) {
    num(static_cast<uint64_t>(r.time_entry(k).ts));
    num(r.time_entry(k).node);
  }
  num(r.TimeLowerBound(1500));
  for (uint32_t c = 0; c < r.cluster_count(); ++c) {
    for (uint32_t d = 0; d < r.dimension(); ++d) flt(r.centroid(c)[d]);
  }
  for (uint32_t k = 0; k < r.kv_count(); ++k) {
    put("\nkv ", 4);
    const snapshot::KvEntry e = r.kv(k);
    for (std::string_view s : {e.scope, e.ns, e.key, e.value, e.run, e.task}) str(s);
    num(static_cast<uint64_t>(e.ts));
    found(r.FindKv(e.scope, e.ns, e.key));
  }
  put("\nkeys ", 6);
  for (uint32_t p = 0; p < r.node_count(); ++p) {
    found(r.NodeAtKeyRank(p));
    num(r.KeyLowerBound(r.key(p)));
  }
  // The entity search: every entity, and the grams of every key and of each byte.
  put("\nentities ", 10);
  for (uint32_t k = 0; k < r.search_entity_count(); ++k) {
    const auto e = r.search_entity(k);
    found(e ? std::optional<uint32_t>(e->node) : std::nullopt);
    num(e ? e->observations : 0);
  }
  auto gram = [&](uint32_t g) {
    const snapshot::GramList list = r.search_gram(g);
    num(list.count);
    for (uint32_t k : r.search_postings(list)) num(k);
  };
  put("\nodd labels ", 12);
  const auto odd = r.search_odd_labels();
  num(odd ? odd->size() : UINT64_MAX);
  if (odd) for (uint32_t k : *odd) num(k);
  for (uint32_t b = 0; b < 256; ++b) gram(uint32_t{1} << 24 | b);
  for (uint32_t i = 0; i < r.node_count() && r.has_entity_search(); ++i) {
    snapshot::ForEachGram(snapshot::AsciiLower(r.key(i)), gram);
  }
  out.resize(used);
  return out;
}

// Calls every accessor over every element (AllAnswers); returns a digest of the
// answers so nothing is skipped.
inline uint64_t TouchEverything(const snapshot::Reader& r) { return Hash64(AllAnswers(r)); }

// The lazy reader's promise (docs/FORMAT.md §9): a file read lazily, every
// accessor called (embeddings included), answers exactly as a file checked whole
// at open, or its sticky ReadStatus() is Corruption. Returns "" when that holds,
// else what differed. `bytes` may be anything.
inline std::string LazyAgreesWithEager(std::string_view bytes) {
  auto touch = [](const snapshot::Reader& r) { return TouchEverything(r); };  // embeddings too
  auto lazy = snapshot::Reader::OpenBuffer(bytes);
  if (!lazy.ok()) {
    if (!lazy.status().IsCorruption() && !lazy.status().IsNotSupported()) {
      return "lazy open: " + lazy.status().ToString();
    }
    // Whatever the lazy open refuses, the whole check refuses too.
    auto eager = snapshot::Reader::OpenBuffer(bytes, {.check_indexes = true, .check_records = true});
    return eager.ok() ? "lazy open refused what the whole check accepts" : "";
  }
  const uint64_t lazy_digest = touch(**lazy);
  const Status lazy_status = (*lazy)->ReadStatus();
  if (!lazy_status.ok() && !lazy_status.IsCorruption()) return "read status: " + lazy_status.ToString();
  // Files without amem's blocks (or without the session or time index) are checked
  // whole at open either way, their index blocks only by CheckIndexes, as before.
  bool session = false, time = false;
  for (const snapshot::BlockInfo& b : (*lazy)->blocks()) {
    session |= b.tag == static_cast<uint32_t>(snapshot::BlockTag::kSessionIndex);
    time |= b.tag == static_cast<uint32_t>(snapshot::BlockTag::kTimeIndex);
  }
  const bool read_lazily = (*lazy)->has_extensions() && session && time;
  auto eager = snapshot::Reader::OpenBuffer(bytes, {.check_indexes = read_lazily, .check_records = true});
  if (!eager.ok()) {
    return lazy_status.ok() ? "lazy reads found nothing, the whole check: " + eager.status().ToString()
                            : "";
  }
  const uint64_t eager_digest = touch(**eager);
  const Status eager_status = (*eager)->ReadStatus();
  if (lazy_status.ok() != eager_status.ok()) {
    return "read status " + lazy_status.ToString() + " lazily, " + eager_status.ToString() + " whole";
  }
  if (lazy_status.ok() && lazy_digest != eager_digest) return "different answers, both OK";
  return "";
}

// The files in `dir` named like a temp file of AtomicFile ("<target>.tmp.<...>").
inline std::vector<std::string> TempFilesIn(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find(amem::kTempInfix) != std::string::npos) out.push_back(name);
  }
  return out;
}

// amem mcp's LiveOptions as the tests set them: no delta file (the views of the
// latest state are a stack), a merge past `merge_records` records whatever the
// base's size, and the stack's caps when given (0 keeps the default).
inline snapshot::LiveOptions McpLiveOptions(uint64_t merge_records, uint64_t top_level_records = 0,
                                           uint64_t mid_level_records = 0) {
  snapshot::LiveOptions o;
  o.write_delta_file = false;
  o.merge_fraction = 0;
  o.merge_records = merge_records;
  if (top_level_records) o.top_level_records = top_level_records;
  if (mid_level_records) o.mid_level_records = mid_level_records;
  return o;
}

}  // namespace amem::snapshot_test

#endif  // AMEM_TESTS_SNAPSHOT_SNAPSHOT_TEST_UTIL_H_
