#include "query/code_impact.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "common/json_parse.h"
#include "query/internal/scratch.h"
#include "snapshot/reader.h"

namespace amem::query {

namespace {

bool IsCode(NodeType t) {
  return t == NodeType::kFile || t == NodeType::kSymbol || t == NodeType::kModule;
}

std::string FileKey(std::string_view path) { return "file:" + std::string(path); }

std::optional<uint32_t> LiveNode(const snapshot::Reader& r, std::string_view key) {
  std::optional<uint32_t> i = r.FindKey(key);
  if (i && r.is_stub(*i)) return std::nullopt;
  return i;
}

// "S-E" (or "S"), 1-based, S <= E.
bool ParseLines(std::string_view s, LineSpan* out) {
  auto number = [](std::string_view d, uint32_t* v) {
    if (d.empty() || d.size() > 10) return false;
    uint64_t x = 0;
    for (char c : d) {
      if (c < '0' || c > '9') return false;
      x = x * 10 + static_cast<uint64_t>(c - '0');
    }
    if (x > UINT32_MAX) return false;
    *v = static_cast<uint32_t>(x);
    return true;
  };
  size_t dash = s.find('-');
  if (dash == std::string_view::npos) {
    if (!number(s, &out->first)) return false;
    out->last = out->first;
  } else if (!number(s.substr(0, dash), &out->first) || !number(s.substr(dash + 1), &out->last)) {
    return false;
  }
  return out->first >= 1 && out->first <= out->last;
}

struct SymbolSpan {
  LineSpan lines;
  uint32_t node;
};

// The symbols file node f (at `path`) defines whose lines are known.
std::vector<SymbolSpan> FileSymbols(const snapshot::Reader& r, uint32_t f, std::string_view path) {
  std::vector<SymbolSpan> out;
  auto [b, e] = r.OutEdgesWithRel(f, kDefines);
  for (uint32_t j = b; j < e; ++j) {
    const uint32_t s = r.edge_target(j);
    if (r.is_stub(s)) continue;
    std::string_view meta = r.meta(s);
    auto parsed = ParseJsonLimited(meta, "meta");
    if (!parsed.ok() || !parsed->is_object()) continue;
    auto file = parsed->find("file");
    if (file != parsed->end() && (!file->is_string() || file->get<std::string>() != path)) continue;
    auto lines = parsed->find("lines");
    LineSpan span;
    if (lines == parsed->end() || !lines->is_string() ||
        !ParseLines(lines->get<std::string>(), &span)) {
      continue;
    }
    out.push_back({span, s});
  }
  return out;
}

void AddSpan(std::vector<LineSpan>* spans, LineSpan s) {
  if (!spans->empty() && uint64_t{spans->back().last} + 1 >= s.first &&
      spans->back().first <= s.first) {
    spans->back().last = std::max(spans->back().last, s.last);
  } else {
    spans->push_back(s);
  }
}

// Sorted, overlapping and touching spans joined.
void Normalize(std::vector<LineSpan>* spans) {
  std::sort(spans->begin(), spans->end(), [](const LineSpan& a, const LineSpan& b) {
    return a.first != b.first ? a.first < b.first : a.last < b.last;
  });
  std::vector<LineSpan> out;
  for (const LineSpan& s : *spans) AddSpan(&out, s);
  *spans = std::move(out);
}

class ChangedSet {
 public:
  explicit ChangedSet(const snapshot::Reader& r) : r_(r) {}

  void Add(const std::string& key, ChangeKind kind, const std::vector<LineSpan>& lines) {
    auto [it, inserted] = rows_.try_emplace(key);
    if (inserted) {
      it->second.key = key;
      it->second.change = kind;  // the first change named wins
    }
    for (const LineSpan& s : lines) it->second.lines.push_back(s);
  }

  // Each span goes to the innermost symbols holding its lines, or to the file.
  void MapLines(const std::string& path, const std::vector<LineSpan>& spans) {
    const std::string file_key = FileKey(path);
    std::optional<uint32_t> f = LiveNode(r_, file_key);
    if (!f) {
      Add(file_key, ChangeKind::kModified, spans);
      return;
    }
    const std::vector<SymbolSpan> symbols = FileSymbols(r_, *f, path);
    for (const LineSpan& span : spans) MapSpan(file_key, symbols, span);
  }

  std::vector<ChangedCode> Take() {
    std::vector<ChangedCode> out;
    for (auto& [key, row] : rows_) {
      Normalize(&row.lines);
      row.node = LiveNode(r_, key);
      out.push_back(std::move(row));
    }
    return out;
  }

 private:
  // A sweep over the symbols overlapping `span`: between two consecutive
  // boundaries the set of symbols holding a line does not change, and its
  // shortest members hold that stretch.
  void MapSpan(const std::string& file_key, const std::vector<SymbolSpan>& symbols,
               LineSpan span) {
    struct Event {
      uint64_t pos;
      bool add;
      size_t symbol;
    };
    std::vector<Event> events;
    for (size_t k = 0; k < symbols.size(); ++k) {
      const LineSpan& s = symbols[k].lines;
      if (s.first > span.last || s.last < span.first) continue;
      events.push_back({std::max(s.first, span.first), true, k});
      events.push_back({uint64_t{std::min(s.last, span.last)} + 1, false, k});
    }
    std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
      return a.pos != b.pos ? a.pos < b.pos : a.add < b.add;
    });
    std::set<std::pair<uint64_t, size_t>> active;  // (length, symbol)
    auto length = [&](size_t k) {
      return uint64_t{symbols[k].lines.last} - symbols[k].lines.first;
    };
    uint64_t pos = span.first;
    size_t e = 0;
    const uint64_t end = uint64_t{span.last} + 1;
    while (pos < end) {
      for (; e < events.size() && events[e].pos <= pos; ++e) {
        if (events[e].add) {
          active.insert({length(events[e].symbol), events[e].symbol});
        } else {
          active.erase({length(events[e].symbol), events[e].symbol});
        }
      }
      const uint64_t next = e < events.size() ? std::min(events[e].pos, end) : end;
      const LineSpan stretch{static_cast<uint32_t>(pos), static_cast<uint32_t>(next - 1)};
      if (active.empty()) {
        Add(file_key, ChangeKind::kModified, {stretch});
      } else {
        const uint64_t shortest = active.begin()->first;
        for (auto it = active.begin(); it != active.end() && it->first == shortest; ++it) {
          Add(std::string(r_.key(symbols[it->second].node)), ChangeKind::kModified, {stretch});
        }
      }
      pos = next;
    }
  }

  const snapshot::Reader& r_;
  std::map<std::string, ChangedCode> rows_;
};

bool ByKey(const snapshot::Reader& r, uint32_t a, uint32_t b) {
  std::string_view ka = r.key(a), kb = r.key(b);
  return ka != kb ? ka < kb : a < b;
}

// reached[from..] in (key, node) order. Nodes are numbered in (session, key) order
// (docs/FORMAT.md §4), so code a single run indexed is in key order once sorted by
// number: that order is taken when one pass over the keys confirms it, and the keys
// are sorted only otherwise (several sessions, a live view's new nodes). Each key is
// read once, not once a comparison.
void SortByKey(const snapshot::Reader& r, std::vector<ReachedCode>* reached, size_t from) {
  std::vector<std::pair<std::string_view, ReachedCode>> rows;
  rows.reserve(reached->size() - from);
  for (size_t k = from; k < reached->size(); ++k) rows.emplace_back(std::string_view(), (*reached)[k]);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.node < b.second.node; });
  bool in_key_order = true;
  for (size_t k = 0; k < rows.size(); ++k) {
    rows[k].first = r.key(rows[k].second.node);
    if (k > 0 && rows[k].first < rows[k - 1].first) in_key_order = false;
  }
  if (!in_key_order) {
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second.node < b.second.node;
    });
  }
  for (size_t k = 0; k < rows.size(); ++k) (*reached)[from + k] = rows[k].second;
}

bool HasOut(const snapshot::Reader& r, uint32_t u, RelationId rel) {
  auto [b, e] = r.OutEdgesWithRel(u, rel);
  return b < e;
}

// Tests among `reached`, in its order: sources of `tests` edges, and the symbols of
// files that define one. A symbol's file is the source of its first `defines`
// in-edge; the file defines the symbol too, so a symbol with a file is a test
// exactly when its file is. Each file's symbols are read once, the files in node
// order: a file's symbols are numbered together, so their out-edges lie side by
// side and the reads move forward through the edges instead of jumping about.
std::vector<ReachedCode> FindTests(const snapshot::Reader& r, const std::vector<ReachedCode>& reached) {
  constexpr uint32_t kNoFile = UINT32_MAX;
  std::vector<uint32_t> file_of(reached.size(), kNoFile);
  std::vector<bool> source(reached.size(), false);  // of a `tests` edge (without a file)
  std::vector<uint32_t> files;
  for (size_t k = 0; k < reached.size(); ++k) {
    const uint32_t u = reached[k].node;
    if (r.type(u) == NodeType::kSymbol) {
      // An edge, so no content block is read.
      auto [b, e] = r.InEdgesWithRel(u, kDefines);
      if (b < e) {
        file_of[k] = r.in_source(b);
        files.push_back(file_of[k]);
        continue;
      }
    }
    source[k] = HasOut(r, u, kTests);
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  std::vector<bool> test_file(files.size(), false);
  for (size_t i = 0; i < files.size(); ++i) {
    auto [b, e] = r.OutEdgesWithRel(files[i], kDefines);
    for (uint32_t j = b; j < e && !test_file[i]; ++j) test_file[i] = HasOut(r, r.edge_target(j), kTests);
  }
  std::vector<ReachedCode> tests;
  for (size_t k = 0; k < reached.size(); ++k) {
    const bool test = file_of[k] == kNoFile
                          ? source[k]
                          : test_file[std::lower_bound(files.begin(), files.end(), file_of[k]) - files.begin()];
    if (test) tests.push_back(reached[k]);
  }
  return tests;
}

bool IsMemory(const snapshot::Reader& r, uint32_t m) {
  return !IsCode(r.type(m)) && !r.is_stub(m);  // code first: most neighbours are
}

// The memories linked to `code` ((node, depth) in the order they were reached),
// each once, for the first code node in that order that links it: that node's
// out-edges (code -> memory) before its in-edges, each list in its own order.
// From the code side: O(their edges), each a random read of the neighbour's
// record.
void LinkFromCode(const snapshot::Reader& r,
                  const std::vector<std::pair<uint32_t, uint32_t>>& code,
                  std::vector<LinkedMemory>* out) {
  NodeMap<uint8_t>& linked = ThreadScratch<uint8_t, kScratchB>();
  linked.Reset(r.node_count());
  auto link = [&](uint32_t m, uint32_t c, uint32_t depth, uint32_t edge, bool outgoing) {
    if (IsMemory(r, m) && linked.Insert(m, 1)) out->push_back({m, c, depth, edge, outgoing});
  };
  for (auto [c, depth] : code) {
    for (uint32_t j = r.out_begin(c); j < r.out_end(c); ++j) {
      link(r.edge_target(j), c, depth, j, false);
    }
    for (uint32_t k = r.in_begin(c); k < r.in_end(c); ++k) {
      const uint32_t j = r.in_edge(k);
      link(r.edge_source(j), c, depth, j, true);
    }
  }
}

// The same links found from the other end: one sequential pass over the node
// records for the memories, then their edges. Each memory keeps its link to the
// earliest code node, out-edges of that node (edges code -> memory) first, then
// by edge number: within one (source, target) pair edges are ordered by relation,
// as the code node's in-list orders them. False, with `out` untouched, once the
// memories' edges pass `edge_budget`: the code side is then the cheaper one.
bool LinkFromMemories(const snapshot::Reader& r,
                      const std::vector<std::pair<uint32_t, uint32_t>>& code,
                      uint64_t edge_budget, std::vector<LinkedMemory>* out) {
  NodeMap<uint32_t>& position = ThreadScratch<uint32_t, kScratchB>();
  position.Reset(r.node_count());
  position.ExpectTouches(code.size());
  for (size_t k = 0; k < code.size(); ++k) position.Insert(code[k].first, static_cast<uint32_t>(k));
  std::vector<LinkedMemory> found;
  uint64_t edges = 0;
  for (uint32_t m = 0; m < r.node_count(); ++m) {
    if (!IsMemory(r, m)) continue;
    const uint32_t ob = r.out_begin(m), oe = r.out_end(m), ib = r.in_begin(m), ie = r.in_end(m);
    edges += (oe - ob) + (ie - ib);
    if (edges > edge_budget) return false;
    // (position, in-list of the code node, edge): smallest wins.
    std::tuple<uint32_t, bool, uint32_t> best{UINT32_MAX, true, UINT32_MAX};
    for (uint32_t k = ib; k < ie; ++k) {  // code -> memory
      const uint32_t j = r.in_edge(k);
      const uint32_t c = r.edge_source(j);
      if (position.Has(c)) best = std::min(best, {position.Get(c), false, j});
    }
    for (uint32_t j = ob; j < oe; ++j) {  // memory -> code
      const uint32_t c = r.edge_target(j);
      if (position.Has(c)) best = std::min(best, {position.Get(c), true, j});
    }
    auto [p, outgoing, j] = best;
    if (p != UINT32_MAX) found.push_back({m, code[p].first, code[p].second, j, outgoing});
  }
  *out = std::move(found);
  return true;
}

// LinkFromCode's answer, from whichever side reads less. The code side reads each
// neighbour's record at random; once that is a good part of the graph, a pass over
// every record and the memories' own edges costs less (a change reaching thousands
// of symbols in a graph of few memories), and it gives up past the code side's cost.
void LinkMemories(const snapshot::Reader& r,
                  const std::vector<std::pair<uint32_t, uint32_t>>& code, MemoryScan scan,
                  std::vector<LinkedMemory>* out) {
  const uint64_t n = r.node_count();
  if (n == 0) return;
  const uint64_t code_edges = code.size() * (2 * uint64_t{r.edge_count()} / n + 1);
  const bool from_memories = scan == MemoryScan::kFromMemories ||
                             (scan == MemoryScan::kAuto && code_edges * 4 >= n);
  const uint64_t budget = scan == MemoryScan::kFromMemories ? UINT64_MAX : code_edges;
  if (from_memories && LinkFromMemories(r, code, budget, out)) return;
  LinkFromCode(r, code, out);
}

template <typename T>
void Cut(std::vector<T>* rows, size_t limit, bool* truncated) {
  if (rows->size() > limit) {
    rows->resize(limit);
    *truncated = true;
  }
}

std::string SpanText(const LineSpan& s) {
  return s.first == s.last ? std::to_string(s.first)
                           : std::to_string(s.first) + "-" + std::to_string(s.last);
}

// A JSON array of fn(item) for each item.
template <typename T, typename Fn>
Json Rows(const std::vector<T>& items, Fn fn) {
  Json rows = Json::array();
  for (const T& item : items) rows.push_back(fn(item));
  return rows;
}

}  // namespace

CodeImpactResult CodeImpact(const snapshot::Reader& r, const std::vector<FileChange>& changes,
                            const CodeImpactOptions& options) {
  CodeImpactResult result;
  result.files = static_cast<uint32_t>(changes.size());
  ChangedSet changed(r);
  for (const FileChange& c : changes) {
    switch (c.kind) {
      case ChangeKind::kAdded:
        changed.Add(FileKey(c.new_path), ChangeKind::kAdded, {});
        break;
      case ChangeKind::kDeleted: {
        const std::string key = FileKey(c.old_path);
        changed.Add(key, ChangeKind::kDeleted, {});
        if (std::optional<uint32_t> f = LiveNode(r, key)) {
          auto [b, e] = r.OutEdgesWithRel(*f, kDefines);
          for (uint32_t j = b; j < e; ++j) {
            const uint32_t s = r.edge_target(j);
            if (!r.is_stub(s)) changed.Add(std::string(r.key(s)), ChangeKind::kDeleted, {});
          }
        }
        break;
      }
      case ChangeKind::kRenamed:
        changed.Add(FileKey(c.old_path), ChangeKind::kRenamed, {});
        changed.Add(FileKey(c.new_path), ChangeKind::kRenamed, {});
        if (!c.old_lines.empty()) changed.MapLines(c.old_path, c.old_lines);
        break;
      case ChangeKind::kModified:
        if (c.old_lines.empty()) {
          changed.Add(FileKey(c.old_path), ChangeKind::kModified, {});
        } else {
          changed.MapLines(c.old_path, c.old_lines);
        }
        break;
    }
  }
  result.changed = changed.Take();

  // The walk: backwards over the code relations the store defines.
  std::vector<RelationId> rels = {kCalls, kReferences, kImplements, kImports, kTests};
  for (std::string_view custom : {"contains", "overrides"}) {
    if (std::optional<RelationId> id = r.FindRelation(custom)) rels.push_back(*id);
  }
  std::array<bool, kMaxRelationId + 1> walked{};
  for (RelationId rel : rels) walked[rel] = true;

  NodeMap<uint8_t>& seen = ThreadScratch<uint8_t, kScratchA>();
  seen.Reset(r.node_count());
  std::vector<ReachedCode> reached;  // changed live nodes first, then by (depth, key)
  std::vector<uint32_t> frontier;
  for (const ChangedCode& c : result.changed) {
    if (c.node && seen.Insert(*c.node, 1)) {
      reached.push_back({*c.node, 0, 0});
      frontier.push_back(*c.node);
    }
  }
  const size_t changed_live = reached.size();
  std::vector<uint32_t> next;
  for (uint32_t d = 0; d < options.depth && !frontier.empty(); ++d) {
    next.clear();
    uint64_t in_edges = 0;  // each reads `seen` at its source
    for (uint32_t u : frontier) in_edges += r.in_end(u) - r.in_begin(u);
    seen.ExpectTouches(in_edges);
    for (uint32_t u : frontier) {
      // One pass over the in-list, sorted by (rel, source): the same order as
      // asking for each relation in turn.
      for (uint32_t k = r.in_begin(u); k < r.in_end(u); ++k) {
        const uint32_t j = r.in_edge(k);
        if (!walked[r.edge_rel(j)]) continue;
        const uint32_t s = r.edge_source(j);
        // Cheapest test first: most sources were reached already.
        if (seen.Has(s) || !IsCode(r.type(s)) || r.is_stub(s)) continue;
        seen.Set(s, 1);
        reached.push_back({s, d + 1, j});
        next.push_back(s);
      }
    }
    const size_t level = reached.size() - next.size();
    SortByKey(r, &reached, level);
    frontier.clear();
    for (size_t k = level; k < reached.size(); ++k) frontier.push_back(reached[k].node);
  }
  result.affected.assign(reached.begin() + static_cast<ptrdiff_t>(changed_live), reached.end());

  result.tests = FindTests(r, reached);

  // Memories, nearest link first: changed keys (a stub too: a memory may name code
  // not indexed yet) in key order, then the affected nodes in (depth, key) order.
  std::vector<std::pair<uint32_t, uint32_t>> code;  // (node, depth)
  for (const ChangedCode& c : result.changed) {
    if (std::optional<uint32_t> i = r.FindKey(c.key)) code.emplace_back(*i, 0);
  }
  for (const ReachedCode& a : result.affected) code.emplace_back(a.node, a.depth);
  LinkMemories(r, code, options.memory_scan, &result.memories);
  std::stable_sort(result.memories.begin(), result.memories.end(),
                   [&](const LinkedMemory& a, const LinkedMemory& b) {
                     if (a.depth != b.depth) return a.depth < b.depth;
                     return ByKey(r, a.memory, b.memory);
                   });

  result.changed_count = result.changed.size();
  result.affected_count = result.affected.size();
  result.tests_count = result.tests.size();
  result.memories_count = result.memories.size();
  Cut(&result.changed, options.limit, &result.truncated);
  Cut(&result.affected, options.limit, &result.truncated);
  Cut(&result.tests, options.limit, &result.truncated);
  Cut(&result.memories, options.limit, &result.truncated);
  return result;
}

Json CodeImpactJson(const snapshot::Reader& r, const CodeImpactResult& result,
                    const CodeImpactOptions& options) {
  Json doc;
  doc["query"] = "impact";
  doc["mode"] = "diff";
  doc["files"] = result.files;
  doc["depth"] = options.depth;
  doc["counts"] = Json{{"changed", result.changed_count},
                       {"affected", result.affected_count},
                       {"tests", result.tests_count},
                       {"memories", result.memories_count}};
  doc["truncated"] = result.truncated;
  doc["changed"] = Rows(result.changed, [&](const ChangedCode& c) {
    Json row;
    if (c.node) {
      row = NodeJson(r, *c.node);
    } else {
      row["key"] = c.key;
      row["in_graph"] = false;
    }
    row["change"] = ChangeKindName(c.change);
    row["lines"] = Rows(c.lines, SpanText);
    return row;
  });
  doc["affected"] = Rows(result.affected, [&](const ReachedCode& a) {
    Json row = NodeJson(r, a.node);
    row["depth"] = a.depth;
    row["relation"] = r.relation_name(r.edge_rel(a.edge));
    row["via"] = EdgeJson(r, a.edge);
    return row;
  });
  doc["tests"] = Rows(result.tests, [&](const ReachedCode& t) {
    Json row = NodeJson(r, t.node);
    row["depth"] = t.depth;
    return row;
  });
  doc["memories"] = Rows(result.memories, [&](const LinkedMemory& m) {
    Json row = NodeJson(r, m.memory);
    row["code"] = r.key(m.code);
    row["relation"] = r.relation_name(r.edge_rel(m.edge));
    row["direction"] = m.outgoing ? "out" : "in";
    row["depth"] = m.depth;
    return row;
  });
  return doc;
}

Status CutToTokenBudget(Json* doc, const std::vector<std::string>& fields, Format format,
                        size_t budget_tokens) {
  if (budget_tokens == 0) return Status::OK();
  auto tokens = [&](const Json& d) { return (Render(d, format).size() + 3) / 4; };
  auto too_small = [&](size_t need) {
    return Status::InvalidArgument(
        "impact: a budget of " + std::to_string(budget_tokens) +
        " tokens cannot hold the answer without its rows, which needs " + std::to_string(need) +
        "; give at least " + std::to_string(need) + ", or 0 for no limit");
  };
  if (size_t need = tokens(*doc); need <= budget_tokens) {
    return Status::OK();
  } else if (std::all_of(fields.begin(), fields.end(),
                         [&](const std::string& f) { return (*doc)[f].empty(); })) {
    return too_small(need);
  }
  std::vector<Json> rows;  // every row, in priority order
  std::vector<size_t> ends;
  for (const std::string& f : fields) {
    for (Json& row : (*doc)[f]) rows.push_back(std::move(row));
    ends.push_back(rows.size());
  }
  (*doc)["truncated"] = true;
  // The document holding the first n rows.
  auto with = [&](size_t n) {
    size_t begin = 0;
    for (size_t k = 0; k < fields.size(); ++k) {
      Json list = Json::array();
      for (size_t i = begin; i < std::min(n, ends[k]); ++i) list.push_back(rows[i]);
      (*doc)[fields[k]] = std::move(list);
      begin = ends[k];
    }
  };
  with(0);
  if (size_t need = tokens(*doc); need > budget_tokens) return too_small(need);
  // The whole document did not fit: at least one row goes (even when "truncated":
  // true, shorter than false, would make room).
  size_t lo = 0, hi = rows.size() - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo + 1) / 2;
    with(mid);
    if (tokens(*doc) <= budget_tokens) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  with(lo);
  return Status::OK();
}

}  // namespace amem::query
