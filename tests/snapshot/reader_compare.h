// The one comparison every view of a store state must pass: a Reader answers each
// accessor exactly as the Reader over a full export of that state does (layered
// views, stacked or not, against Reader::OpenBuffer of the export).
#ifndef AMEM_TESTS_SNAPSHOT_READER_COMPARE_H_
#define AMEM_TESTS_SNAPSHOT_READER_COMPARE_H_

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <tuple>

#include "snapshot/reader.h"

namespace amem::snapshot_test {

// The cursor of `v`'s term t (field f) walks `want`, head's list of that term,
// with head's document lengths; seeks land where a binary search of `want` does:
// at, just before and just after every posting, and in strides of postings.
// One check per list (a mismatch names itself), so that a store's every term costs
// O(postings) assertions.
inline void CheckSameCursor(const snapshot::Reader& v, uint32_t t, const snapshot::Reader& head,
                            const snapshot::PostingList& want, snapshot::Field f) {
  using namespace amem::snapshot;
  std::string wrong;
  auto same = [&](const PostingCursor& c, uint32_t k, const char* what, uint32_t at) {
    if (!wrong.empty()) return;
    const bool end = k == want.size();
    if (c.done() != end ||
        (!end && (c.node() != want.node(k) || c.tf() != want.tf(k) ||
                  c.doc_length() != head.doc_length(want.node(k))))) {
      wrong = std::string(what) + " at " + std::to_string(at) + ": posting " + std::to_string(k) +
              " of " + std::to_string(want.size());
    }
  };
  PostingCursor c = v.postings_cursor(t, f);
  CHECK(c.size() == want.size());
  for (uint32_t k = 0; k <= want.size(); ++k) {
    same(c, k, "walk", k);
    if (k < want.size() && !c.done()) c.Next();
  }
  // ForEachBelow in steps of `step` node numbers, a Next() between steps now and
  // then: the same postings, each with its file's doc length.
  for (uint32_t step : {1u, 3u, 64u, UINT32_MAX / 2}) {
    PostingCursor e = v.postings_cursor(t, f);
    uint32_t k = 0, end = 0, round = 0;
    while (!e.done() && wrong.empty()) {
      end = std::max(end, e.node());  // at least one posting a step
      end = end > UINT32_MAX - step ? UINT32_MAX : end + step;
      e.ForEachBelow(end, [&](uint32_t node, uint32_t tf, const Reader* file, uint32_t local) {
        if (!wrong.empty()) return;
        if (k >= want.size() || node != want.node(k) || tf != want.tf(k) ||
            file->doc_length(local) != head.doc_length(node)) {
          wrong = "ForEachBelow by " + std::to_string(step) + ": posting " + std::to_string(k) +
                  " of " + std::to_string(want.size());
        }
        ++k;
      });
      same(e, k, "ForEachBelow's stop", end);
      if (++round % 3 == 0 && !e.done()) {
        e.Next();
        ++k;
        same(e, k, "Next after ForEachBelow", end);
      }
      if (end == UINT32_MAX) break;
    }
    if (wrong.empty() && k != want.size()) wrong = "ForEachBelow stopped at " + std::to_string(k);
  }
  for (uint32_t stride : {1u, 2u, 5u}) {
    for (int before : {-1, 0, 1}) {
      PostingCursor s = v.postings_cursor(t, f);
      uint32_t k = 0;
      for (uint32_t p = 0; p < want.size() + stride; p += stride) {
        const uint32_t node = p < want.size() ? want.node(p) : head.node_count();
        if (before < 0 && node == 0) continue;
        const uint32_t target = node + before;
        s.Seek(target);
        while (k < want.size() && want.node(k) < target) ++k;
        same(s, k, "seek", target);
      }
    }
  }
  INFO(wrong);
  CHECK(wrong.empty());
}

// `v` answers as `head`. `bulk` false: every accessor is answered from a layered
// view's merged sequences (a few hundred edge accesses stay far below the point
// where the view builds its tables); true: enough edge accesses first make it
// build its flat tables.
inline void CheckSameReader(const snapshot::Reader& v, const snapshot::Reader& head, bool bulk) {
  using namespace amem::snapshot;
  REQUIRE(v.node_count() == head.node_count());
  REQUIRE(v.edge_count() == head.edge_count());
  CHECK(v.stub_count() == head.stub_count());
  CHECK(v.kv_count() == head.kv_count());
  CHECK(v.session_count() == head.session_count());
  CHECK(v.newest_timestamp() == head.newest_timestamp());
  CHECK(v.has_vectors() == head.has_vectors());
  if (head.has_vectors()) CHECK(v.dimension() == head.dimension());
  CHECK(v.average_doc_length() == head.average_doc_length());
  CHECK(v.document_count() == head.document_count());
  REQUIRE(v.EnsureContent().ok());
  REQUIRE(v.CheckIndexes().ok());
  if (bulk && head.edge_count() > 0) {
    uint32_t sum = 0;
    for (int k = 0; k < 70000; ++k) sum += v.edge_source(0);  // past the point limit
    CHECK(sum == 70000 * head.edge_source(0));
  }
  for (uint32_t i = 0; i < head.node_count(); ++i) {
    INFO("node " << i << " " << head.key(i));
    CHECK(v.key(i) == head.key(i));
    CHECK(v.id(i) == head.id(i));
    CHECK(v.type_code(i) == head.type_code(i));
    CHECK(v.session(i) == head.session(i));
    CHECK(v.run(i) == head.run(i));
    CHECK(v.confidence(i) == head.confidence(i));
    CHECK(v.created_ts(i) == head.created_ts(i));
    CHECK(v.updated_ts(i) == head.updated_ts(i));
    CHECK(v.content(i) == head.content(i));
    CHECK(v.meta(i) == head.meta(i));
    CHECK(v.scope(i) == head.scope(i));
    CHECK(v.task(i) == head.task(i));
    CHECK(v.is_stub(i) == head.is_stub(i));
    CHECK(v.doc_length(i) == head.doc_length(i));
    REQUIRE((v.vector(i) == nullptr) == (head.vector(i) == nullptr));
    if (head.vector(i)) {
      CHECK(std::memcmp(v.vector(i), head.vector(i), head.dimension() * sizeof(float)) == 0);
    }
    std::span<const uint32_t> ve, he;
    REQUIRE(v.embedding(i, &ve) == head.embedding(i, &he));
    CHECK(std::equal(ve.begin(), ve.end(), he.begin(), he.end()));
    CHECK(v.FindKey(head.key(i)) == std::optional<uint32_t>(i));
    CHECK(v.FindId(head.id(i)) == std::optional<uint32_t>(i));
  }
  CHECK_FALSE(v.FindKey("no such key"));
  for (uint32_t i = 0; i < head.node_count(); ++i) {
    CHECK(v.out_begin(i) == head.out_begin(i));
    CHECK(v.out_end(i) == head.out_end(i));
    CHECK(v.in_begin(i) == head.in_begin(i));
    CHECK(v.in_end(i) == head.in_end(i));
  }
  for (uint32_t j = 0; j < head.edge_count(); ++j) {
    INFO("edge " << j);
    CHECK(v.edge_source(j) == head.edge_source(j));
    CHECK(v.edge_target(j) == head.edge_target(j));
    CHECK(v.edge_rel(j) == head.edge_rel(j));
    CHECK(v.edge_weight(j) == head.edge_weight(j));
    CHECK(v.edge_payload(j) == head.edge_payload(j));
    CHECK(v.edge_created_ts(j) == head.edge_created_ts(j));
    CHECK(v.edge_updated_ts(j) == head.edge_updated_ts(j));
    CHECK(v.edge_run(j) == head.edge_run(j));
    CHECK(v.edge_task(j) == head.edge_task(j));
    CHECK(v.in_edge(j) == head.in_edge(j));
  }
  for (int r = 0; r <= kMaxRelationId; ++r) {
    const auto rel = static_cast<RelationId>(r);
    CHECK(v.relation_name(rel) == head.relation_name(rel));
  }
  CHECK(v.relations() == head.relations());
  for (uint32_t t = 0; t < head.term_count(); ++t) {
    INFO("term " << head.term(t));
    auto vt = v.FindTerm(head.term(t));
    REQUIRE(vt);
    CHECK(v.term(*vt) == head.term(t));
    CHECK(v.doc_frequency(*vt) == head.doc_frequency(t));
    for (Field f : {Field::kContent, Field::kMeta}) {
      PostingList a = v.postings(*vt, f), b = head.postings(t, f);
      REQUIRE(a.size() == b.size());
      for (uint32_t k = 0; k < a.size(); ++k) {
        CHECK(a.node(k) == b.node(k));
        CHECK(a.tf(k) == b.tf(k));
        CHECK(a.field(k) == b.field(k));
      }
      CheckSameCursor(v, *vt, head, b, f);
    }
  }
  for (uint32_t t = 0; t < v.term_count(); ++t) {
    if (!head.FindTerm(v.term(t))) CHECK(v.postings(t).empty());  // a term gone at H
  }
  for (uint32_t s = 0; s < head.session_count(); ++s) {
    CHECK(v.session_run(s) == head.session_run(s));
    CHECK(v.session_range(s).begin == head.session_range(s).begin);
    CHECK(v.session_range(s).end == head.session_range(s).end);
    CHECK(v.FindSession(head.session_run(s)) == std::optional<uint32_t>(s));
  }
  REQUIRE(v.time_entry_count() == head.time_entry_count());
  for (uint32_t k = 0; k < head.time_entry_count(); ++k) {
    CHECK(v.time_entry(k).ts == head.time_entry(k).ts);
    CHECK(v.time_entry(k).node == head.time_entry(k).node);
  }
  for (int type = 0; type < 16; ++type) {
    CHECK(v.NodesOfType(static_cast<uint8_t>(type)) == head.NodesOfType(static_cast<uint8_t>(type)));
  }
  for (uint32_t k = 0; k < head.kv_count(); ++k) {
    KvEntry a = v.kv(k), b = head.kv(k);
    CHECK(std::tie(a.scope, a.ns, a.key, a.value, a.ts, a.run, a.task) ==
          std::tie(b.scope, b.ns, b.key, b.value, b.ts, b.run, b.task));
    CHECK(v.FindKv(b.scope, b.ns, b.key) == std::optional<uint32_t>(k));
  }
}

}  // namespace amem::snapshot_test

#endif  // AMEM_TESTS_SNAPSHOT_READER_COMPARE_H_
