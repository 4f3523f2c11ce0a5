#include "query/query.h"

#include <algorithm>
#include <charconv>

#include "common/hash.h"
#include "common/utf8.h"
#include "snapshot/reader.h"

namespace amem::query {

NodeRow MakeNodeRow(const snapshot::Reader& reader, uint32_t index, size_t preview_bytes) {
  assert(index < reader.node_count());
  NodeRow row;
  row.index = index;
  row.id = reader.id(index);
  row.key = std::string(reader.key(index));
  row.type = reader.type(index);
  row.preview = Preview(reader.content(index), preview_bytes);
  return row;
}

namespace {

bool ParseIndex(std::string_view text, uint32_t* out) {
  if (!text.empty() && text[0] == '#') text.remove_prefix(1);
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

Result<uint32_t> ResolveNode(const snapshot::Reader& reader, std::string_view arg) {
  if (arg.empty()) return Status::InvalidArgument("empty node argument");
  if (auto i = reader.FindKey(arg)) return *i;
  uint64_t id = 0;
  if (ParseHexId(arg, &id)) {
    if (auto i = reader.FindId(id)) return *i;
  }
  uint32_t index = 0;
  if (ParseIndex(arg, &index) && index < reader.node_count()) return index;
  return Status::NotFound("no node with key, id or index '" + Preview(arg, 200) + "'");
}

Result<Direction> ParseDirection(std::string_view text) {
  if (text == "out") return Direction::kOut;
  if (text == "in") return Direction::kIn;
  if (text == "both") return Direction::kBoth;
  return Status::InvalidArgument("direction must be out, in or both, not '" +
                                 Preview(text, 40) + "'");
}

const char* DirectionName(Direction d) {
  switch (d) {
    case Direction::kOut: return "out";
    case Direction::kIn: return "in";
    case Direction::kBoth: return "both";
  }
  return "?";
}

std::vector<std::string> SplitList(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const std::string& item : items) {
    size_t start = 0;
    while (start <= item.size()) {
      size_t comma = item.find(',', start);
      if (comma == std::string::npos) comma = item.size();
      if (comma > start) out.push_back(item.substr(start, comma - start));
      start = comma + 1;
    }
  }
  return out;
}

Result<RelationFilter> ParseRelations(const snapshot::Reader& reader,
                                      const std::vector<std::string>& names) {
  RelationFilter filter;
  for (const std::string& name : SplitList(names)) {
    if (auto rel = reader.FindRelation(name)) {
      filter.Add(*rel);
      continue;
    }
    uint32_t id = 0;
    if (ParseIndex(name, &id) && name[0] != '#' && id <= kMaxRelationId &&
        !reader.relation_name(static_cast<RelationId>(id)).empty()) {
      filter.Add(static_cast<RelationId>(id));
      continue;
    }
    return Status::InvalidArgument("unknown relation '" + Preview(name, 80) + "'");
  }
  return filter;
}

Result<TypeFilter> ParseTypes(const std::vector<std::string>& names) {
  TypeFilter filter;
  for (const std::string& name : SplitList(names)) {
    auto type = ParseNodeType(name);
    if (!type) return Status::InvalidArgument("unknown node type '" + Preview(name, 80) + "'");
    filter.Add(*type);
  }
  return filter;
}

bool RunFilter::Matches(uint32_t session) const {
  return all_ || std::binary_search(sessions_.begin(), sessions_.end(), session);
}

void RunFilter::Add(uint32_t session) {
  all_ = false;
  auto it = std::lower_bound(sessions_.begin(), sessions_.end(), session);
  if (it == sessions_.end() || *it != session) sessions_.insert(it, session);
}

RunFilter ParseRuns(const snapshot::Reader& reader, const std::vector<std::string>& runs) {
  RunFilter filter;
  std::vector<std::string> names = SplitList(runs);
  if (names.empty()) return filter;
  filter.MatchNothing();
  for (const std::string& run : names) {
    if (auto s = reader.FindSession(run)) filter.Add(*s);
  }
  return filter;
}

}  // namespace amem::query
