// temporal (docs/QUERIES.md #3). Choices where docs/QUERIES.md is silent:
// - Membership of a node in a period is by created_ts (windows) or by run.
// - "updated" needs a real update (updated_ts != created_ts) inside B's window, and a
//   corrected node is reported as corrected only, so the four lists of A-side
//   outcomes (corrected, updated, unchanged) partition A.
// - Lists are in (created_ts, dense index) order, corrections by (newer, older).
#include "query/temporal.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "common/utf8.h"
#include "query/internal/scratch.h"
#include "snapshot/reader.h"

namespace amem::query {

namespace {

bool ParseTs(std::string_view s, std::optional<int64_t>* out) {
  if (s.empty()) return true;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return false;
  *out = v;
  return true;
}

// Calls fn(node) for every node of the period, in (created_ts, index) order for
// windows and session order for runs.
template <typename Fn>
void ForEachInPeriod(const snapshot::Reader& reader, const Period& p, Fn&& fn) {
  if (p.by_runs()) {
    RunFilter runs = ParseRuns(reader, p.runs);
    for (uint32_t s = 0; s < reader.session_count(); ++s) {
      if (!runs.Matches(s)) continue;
      snapshot::SessionRange r = reader.session_range(s);
      for (uint32_t i = r.begin; i < r.end; ++i) fn(i);
    }
    return;
  }
  uint32_t begin = p.from ? reader.TimeLowerBound(*p.from) : 0;
  uint32_t end = p.to ? reader.TimeLowerBound(*p.to) : reader.time_entry_count();
  for (uint32_t k = begin; k < end; ++k) fn(reader.time_entry(k).node);
}

void SortByTime(const snapshot::Reader& reader, std::vector<uint32_t>* nodes) {
  std::sort(nodes->begin(), nodes->end(), [&](uint32_t x, uint32_t y) {
    int64_t tx = reader.created_ts(x), ty = reader.created_ts(y);
    return tx != ty ? tx < ty : x < y;
  });
}

}  // namespace

Result<Period> ParsePeriod(std::string_view text) {
  Period p;
  if (text.substr(0, 4) == "run:") {
    p.runs = SplitList({std::string(text.substr(4))});
    if (p.runs.empty()) return Status::InvalidArgument("period 'run:' names no run");
    return p;
  }
  size_t dots = text.find("..");
  if (dots == std::string_view::npos || !ParseTs(text.substr(0, dots), &p.from) ||
      !ParseTs(text.substr(dots + 2), &p.to)) {
    return Status::InvalidArgument("period must be FROM..TO (Unix seconds, either may be "
                                   "empty) or run:NAME[,NAME], not '" +
                                   Preview(text, 60) + "'");
  }
  return p;
}

TemporalResult Temporal(const snapshot::Reader& reader, const TemporalOptions& options) {
  TemporalResult r;
  const uint32_t n = reader.node_count();
  // Slot A: membership bits (1 = in A, 2 = in B). Slot B: A nodes already corrected.
  NodeMap<uint8_t>& in = ThreadScratch<uint8_t, kScratchA>();
  NodeMap<uint8_t>& corrected = ThreadScratch<uint8_t, kScratchB>();
  in.Reset(n);
  corrected.Reset(n);
  std::vector<uint32_t> a_nodes, b_nodes;
  ForEachInPeriod(reader, options.a, [&](uint32_t i) {
    if (in.Insert(i, 1)) a_nodes.push_back(i);
  });
  int64_t b_min = std::numeric_limits<int64_t>::max(), b_max = std::numeric_limits<int64_t>::min();
  ForEachInPeriod(reader, options.b, [&](uint32_t i) {
    if (!in.Has(i)) {
      in.Set(i, 2);
    } else if (in.Get(i) & 2) {
      return;
    } else {
      in.Mutable(i) |= 2;
    }
    b_nodes.push_back(i);
    b_min = std::min(b_min, reader.created_ts(i));
    b_max = std::max(b_max, reader.updated_ts(i));
  });
  r.a_count = a_nodes.size();
  r.b_count = b_nodes.size();
  if (options.b.by_runs()) {
    r.b_from = b_nodes.empty() ? 0 : b_min;
    r.b_to = b_nodes.empty() ? 0 : b_max + 1;
  } else {
    r.b_from = options.b.from.value_or(std::numeric_limits<int64_t>::min());
    r.b_to = options.b.to.value_or(std::numeric_limits<int64_t>::max());
  }

  std::vector<uint32_t> added;
  std::vector<Correction> corrections;
  for (uint32_t b : b_nodes) {
    if (!(in.Get(b) & 1)) added.push_back(b);
    auto [ob, oe] = reader.OutEdgesWithRel(b, kSupersedes);
    for (uint32_t e = ob; e < oe; ++e) {
      uint32_t a = reader.edge_target(e);
      if (a == b || !in.Has(a) || !(in.Get(a) & 1)) continue;
      corrections.push_back({b, a, e});
      corrected.Set(a, 1);
    }
  }
  std::vector<uint32_t> updated, unchanged;
  for (uint32_t a : a_nodes) {
    if (corrected.Has(a)) continue;
    int64_t u = reader.updated_ts(a);
    if (u != reader.created_ts(a) && u >= r.b_from && u < r.b_to) {
      updated.push_back(a);
    } else {
      unchanged.push_back(a);
    }
  }
  SortByTime(reader, &added);
  SortByTime(reader, &updated);
  SortByTime(reader, &unchanged);
  std::sort(corrections.begin(), corrections.end(), [](const Correction& x, const Correction& y) {
    return x.newer != y.newer ? x.newer < y.newer : x.older < y.older;
  });
  r.added_count = added.size();
  r.corrected_count = corrections.size();
  r.updated_count = updated.size();
  r.unchanged_count = unchanged.size();
  const auto cut = [&](auto& v) {
    if (v.size() > options.limit) v.resize(options.limit);
  };
  cut(added);
  cut(corrections);
  cut(updated);
  cut(unchanged);
  r.added = std::move(added);
  r.corrected = std::move(corrections);
  r.updated = std::move(updated);
  r.unchanged = std::move(unchanged);
  return r;
}

}  // namespace amem::query
