#include "tools/mcp/memory_line.h"

#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

#include "tools/io/ingest_line.h"

namespace amem::mcp {

namespace od = simdjson::ondemand;

namespace {

enum Field : uint32_t { kType, kName, kEntityType, kObservations, kFrom, kTo, kRelationType, kCount };
constexpr std::string_view kFieldNames[kCount] = {"type", "name",  "entityType",  "observations",
                                                 "from", "to",    "relationType"};
constexpr uint32_t Bit(Field f) { return uint32_t{1} << f; }
constexpr uint32_t kEntityFields = Bit(kType) | Bit(kName) | Bit(kEntityType) | Bit(kObservations);
constexpr uint32_t kRelationFields = Bit(kType) | Bit(kFrom) | Bit(kTo) | Bit(kRelationType);

}  // namespace

struct FastMemoryLineParser::Rep {
  od::parser parser;
  std::vector<std::string> observations;  // reused from line to line
};

FastMemoryLineParser::FastMemoryLineParser() : rep_(std::make_unique<Rep>()) {}
FastMemoryLineParser::~FastMemoryLineParser() = default;

bool FastMemoryLineParser::Add(const char* data, size_t size, KnowledgeGraph* graph) {
  od::document doc;
  if (rep_->parser.iterate(data, size, size + io::kLinePadding).get(doc)) return false;
  od::object obj;
  if (doc.get_object().get(obj)) return false;
  uint32_t seen = 0;
  std::string_view str[kCount];  // views into the parser, valid for this line
  size_t observations = 0;
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    uint32_t f = 0;
    while (f < kCount && kFieldNames[f] != key) ++f;
    if (f == kCount || (seen & Bit(Field(f)))) return false;  // another or a repeated field
    seen |= Bit(Field(f));
    od::value value;
    if (field.value().get(value)) return false;
    if (f != kObservations) {
      if (value.get_string().get(str[f])) return false;
      continue;
    }
    od::array array;
    if (value.get_array().get(array)) return false;
    for (auto element : array) {
      std::string_view s;
      if (element.get_string().get(s)) return false;
      if (observations == rep_->observations.size()) rep_->observations.emplace_back();
      rep_->observations[observations++].assign(s);
    }
  }
  const char* rest = nullptr;
  if (!doc.current_location().get(rest)) return false;  // something after the object
  if (seen == kEntityFields && str[kType] == "entity") {
    graph->entities.push_back(Entity{std::string(str[kName]), std::string(str[kEntityType]),
                                     {rep_->observations.begin(),
                                      rep_->observations.begin() + static_cast<ptrdiff_t>(observations)}});
    return true;
  }
  if (seen == kRelationFields && str[kType] == "relation") {
    graph->relations.push_back(
        Relation{std::string(str[kFrom]), std::string(str[kTo]), std::string(str[kRelationType])});
    return true;
  }
  return false;
}

}  // namespace amem::mcp
