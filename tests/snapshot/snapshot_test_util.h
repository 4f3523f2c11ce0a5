// Helpers for the snapshot tests: build a snapshot and open it (failing the test
// with the error), read a file, and touch every accessor of a Reader (so
// corrupted-but-accepted files are exercised under ASan).
#ifndef AMEM_TESTS_SNAPSHOT_SNAPSHOT_TEST_UTIL_H_
#define AMEM_TESTS_SNAPSHOT_SNAPSHOT_TEST_UTIL_H_

#include <catch2/catch.hpp>

#include <fstream>
#include <memory>
#include <sstream>
#include <span>
#include <string>

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

// Calls every accessor over every element; returns a digest so nothing is skipped.
inline uint64_t TouchEverything(const snapshot::Reader& r) {
  // Unsigned sums only: a corrupted file may hold timestamps that would overflow int64.
  auto u = [](auto v) { return static_cast<uint64_t>(v); };
  uint64_t h = u(r.node_count()) + u(r.edge_count()) + u(r.newest_timestamp());
  auto mix = [&](std::string_view s) { h = h * 31 + s.size() + (s.empty() ? 0 : s[0]); };
  for (uint32_t i = 0; i < r.node_count(); ++i) {
    h += u(r.type_code(i)) + u(r.session(i)) + u(r.created_ts(i)) + u(r.updated_ts(i)) + r.id(i);
    h += static_cast<uint64_t>(r.confidence(i) * 8);
    mix(r.content(i));
    mix(r.meta(i));
    mix(r.key(i));
    mix(r.scope(i));
    mix(r.run(i));
    mix(r.task(i));
    h += r.is_stub(i) + r.doc_length(i);
    if (const float* v = r.vector(i)) {
      for (uint32_t d = 0; d < r.dimension(); ++d) h += v[d] != 0.0f;
    }
    if (auto k = r.FindKey(r.key(i))) h += *k;
    if (auto k = r.FindId(r.id(i))) h += *k;
    for (uint32_t j = r.out_begin(i); j < r.out_end(i); ++j) h += r.edge_target(j);
    for (uint32_t k = r.in_begin(i); k < r.in_end(i); ++k) h += r.in_source(k);
    auto [b, e] = r.OutEdgesWithRel(i, 4);
    auto [ib, ie] = r.InEdgesWithRel(i, 4);
    h += e - b + ie - ib;
  }
  for (uint32_t j = 0; j < r.edge_count(); ++j) {
    snapshot::Edge e = r.edge(j);
    h += u(e.source) + u(e.target) + u(e.rel) + u(r.edge_created_ts(j)) + u(r.edge_updated_ts(j));
    mix(r.edge_payload(j));
    mix(r.edge_run(j));
    mix(r.edge_task(j));
    mix(r.relation_name(e.rel));
    if (auto f = r.FindEdge(e.source, e.rel, e.target)) h += *f;
  }
  for (RelationId rel : r.relations()) {
    if (r.FindRelation(r.relation_name(rel))) ++h;
  }
  for (int t = 0; t < 12; ++t) {
    h += r.NodesOfType(static_cast<uint8_t>(t)).size();
    mix(r.type_name(static_cast<uint8_t>(t)));
  }
  for (uint32_t t = 0; t < r.term_count(); ++t) {
    mix(r.term(t));
    if (auto f = r.FindTerm(r.term(t))) h += *f;
    snapshot::PostingList p = r.postings(t);
    for (uint32_t k = 0; k < p.size(); ++k) h += p.node(k) + p.tf(k);
    h += r.postings(t, snapshot::Field::kMeta).size() + r.doc_frequency(t);
  }
  for (uint32_t s = 0; s < r.session_count(); ++s) {
    snapshot::SessionRange sr = r.session_range(s);
    h += sr.begin + sr.end;
    if (auto f = r.FindSession(r.session_run(s))) h += *f;
  }
  for (uint32_t k = 0; k < r.time_entry_count(); ++k) h += r.time_entry(k).node;
  h += r.TimeLowerBound(1500);
  for (uint32_t c = 0; c < r.cluster_count(); ++c) h += r.centroid(c)[0] != 0.0f;
  for (uint32_t k = 0; k < r.kv_count(); ++k) {
    snapshot::KvEntry e = r.kv(k);
    mix(e.scope);
    mix(e.value);
    mix(e.run);
    mix(e.task);
    if (auto f = r.FindKv(e.scope, e.ns, e.key)) h += *f;
  }
  double avg = r.average_doc_length();  // may be NaN or huge in a corrupted file
  return h + (avg >= 0.0 && avg < 1e18 ? static_cast<uint64_t>(avg) : 1);
}

// The lazy reader's promise (docs/FORMAT.md §9): a file read lazily, every
// accessor called (embeddings included), answers exactly as a file checked whole
// at open, or its sticky ReadStatus() is Corruption. Returns "" when that holds,
// else what differed. `bytes` may be anything.
inline std::string LazyAgreesWithEager(std::string_view bytes) {
  auto touch = [](const snapshot::Reader& r) {
    uint64_t h = TouchEverything(r);
    for (uint32_t i = 0; i < r.node_count(); ++i) {
      std::span<const uint32_t> entries;
      if (r.embedding(i, &entries)) h += entries.size() + (entries.empty() ? 0 : entries[0]);
    }
    return h;
  };
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

}  // namespace amem::snapshot_test

#endif  // AMEM_TESTS_SNAPSHOT_SNAPSHOT_TEST_UTIL_H_
