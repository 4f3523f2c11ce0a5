#include "tools/io/ingest_line.h"

#include <simdjson.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "common/json_parse.h"
#include "common/model.h"

namespace amem::io {

namespace od = simdjson::ondemand;

namespace {

// The fields an ingest line may carry. A bit per field finds repeated ones.
// kRev and kRevTs: the revision fields of a line of amem log (AddLogLine only).
enum Field : uint32_t {
  kOp, kTs, kRun, kTask, kScope, kKey, kType, kContent, kMeta, kConfidence, kVector,
  kSrc, kRel, kDst, kWeight, kPayload, kNs, kValue, kName, kRev, kRevTs, kFieldCount
};
constexpr std::string_view kFieldNames[kFieldCount] = {
    "op", "ts", "run", "task", "scope", "key", "type", "content", "meta", "confidence",
    "vector", "src", "rel", "dst", "weight", "payload", "ns", "value", "name", "rev", "rev_ts"};

constexpr uint32_t Bit(Field f) { return uint32_t{1} << f; }
constexpr uint32_t kCommonFields = Bit(kOp) | Bit(kTs) | Bit(kRun) | Bit(kTask) | Bit(kScope);

std::optional<Field> FieldOf(std::string_view name) {
  for (uint32_t i = 0; i < kFieldCount; ++i) {
    if (kFieldNames[i] == name) return static_cast<Field>(i);
  }
  return std::nullopt;
}

// The raw values of one line, as read; views point into the parser or the line and
// live until the next line.
struct Line {
  uint32_t seen = 0;
  std::string_view str[kFieldCount];  // string fields
  std::string_view json[kFieldCount];  // meta, payload, value: canonical JSON text
  std::string json_owned[3];           // meta, payload, value
  bool value_is_string = false;
  float confidence = 1.0f, weight = 1.0f;
  int64_t ts = 0, rev = 0, rev_ts = 0;
  std::vector<float> vector;
  size_t last_vector_size = 0;  // the room to reserve: a file's vectors share one size
};

bool ToFloat(double v, float* out) {
  // The reference path's FiniteFloat: finite and within the f32 range.
  if (!std::isfinite(v) || std::fabs(v) > std::numeric_limits<float>::max()) return false;
  *out = static_cast<float>(v);
  return true;
}

// A number as the reference parser reads it: an integer literal becomes a double
// after integer parsing, so "-0" is +0 there while "-0.0" stays -0.
template <typename V>
bool GetDouble(V& v, double* out) {
  if (v.get_double().get(*out)) return false;
  if (*out == 0 && std::signbit(*out)) {
    std::string_view token = v.raw_json_token();
    if (token.find_first_of(".eE") == std::string_view::npos) *out = 0.0;
  }
  return true;
}

// An object or array value as the compact text nlohmann's dump() gives, which is
// what the reference path stores. Its depth limit is one less than the line's:
// the value sits inside the line's object.
bool CanonicalJson(od::value v, std::string* out) {
  od::json_type type;
  if (v.type().get(type)) return false;
  std::string_view raw;
  if (type == od::json_type::object) {
    od::object obj;
    if (v.get_object().get(obj) || obj.raw_json().get(raw)) return false;
  } else if (type == od::json_type::array) {
    od::array arr;
    if (v.get_array().get(arr) || arr.raw_json().get(raw)) return false;
  } else {
    return false;  // rare scalars: the reference path takes them
  }
  if (raw == "{}" || raw == "[]") {  // the common empty meta or payload, already canonical
    out->assign(raw);
    return true;
  }
  JsonParseOptions options;
  options.max_depth = kMaxJsonDepth - 1;
  Result<nlohmann::json> parsed = ParseJsonLimited(raw, "value", options);
  if (!parsed.ok()) return false;
  *out = parsed->dump();
  return true;
}

bool ReadField(Field f, od::value v, Line* line) {
  switch (f) {
    case kConfidence:
    case kWeight: {
      double d;
      if (!GetDouble(v, &d)) return false;
      return ToFloat(d, f == kConfidence ? &line->confidence : &line->weight);
    }
    case kTs:
      return !v.get_int64().get(line->ts);
    case kRev:
      return !v.get_int64().get(line->rev);
    case kRevTs:
      return !v.get_int64().get(line->rev_ts);
    case kVector: {
      od::array arr;
      if (v.get_array().get(arr)) return false;
      line->vector.clear();
      line->vector.reserve(line->last_vector_size);  // moved into the batch by the last line
      for (auto element : arr) {
        od::value e;
        double d;
        float f32;
        if (element.get(e) || !GetDouble(e, &d) || !ToFloat(d, &f32)) return false;
        line->vector.push_back(f32);
      }
      // A short vector after a long one keeps no more than it needs.
      if (line->vector.capacity() > 2 * line->vector.size() + 64) line->vector.shrink_to_fit();
      line->last_vector_size = line->vector.size();
      return true;
    }
    case kMeta:
    case kPayload:
    case kValue: {
      if (f == kValue) {
        od::json_type type;
        if (v.type().get(type)) return false;
        if (type == od::json_type::string) {
          line->value_is_string = true;
          return !v.get_string().get(line->str[f]);
        }
      }
      std::string& owned = line->json_owned[f == kMeta ? 0 : f == kPayload ? 1 : 2];
      if (!CanonicalJson(v, &owned)) return false;
      line->json[f] = owned;
      return true;
    }
    default:
      return !v.get_string().get(line->str[f]);
  }
}

std::optional<std::string> Opt(const Line& line, Field f) {
  if (!(line.seen & Bit(f))) return std::nullopt;
  return std::string(line.str[f]);
}

// Builds the operation when the line's op, fields and types are all good.
bool Build(Line& line, Batch* batch) {
  auto only = [&](uint32_t allowed) { return (line.seen & ~(kCommonFields | allowed)) == 0; };
  auto has = [&](uint32_t required) { return (line.seen & required) == required; };
  auto str = [&](Field f) { return std::string(line.str[f]); };
  std::optional<int64_t> ts;
  if (line.seen & Bit(kTs)) ts = line.ts;
  const std::string_view op = line.str[kOp];
  if (op == "node" || op == "del_node") {
    const bool put = op == "node";
    if (put ? !only(Bit(kKey) | Bit(kType) | Bit(kContent) | Bit(kMeta) | Bit(kConfidence) |
                    Bit(kVector)) || !has(Bit(kKey) | Bit(kType))
            : !only(Bit(kKey)) || !has(Bit(kKey))) {
      return false;
    }
    NodeInput node;
    node.key = str(kKey);
    if (put) {
      std::optional<NodeType> type = ParseNodeType(line.str[kType]);
      if (!type) return false;
      node.type = *type;
      node.content = str(kContent);
      if (line.seen & Bit(kMeta)) node.meta = line.json[kMeta];
      node.confidence = line.confidence;
      node.vector = std::move(line.vector);
    }
    node.ts = ts;
    node.run = Opt(line, kRun);
    node.task = Opt(line, kTask);
    node.scope = Opt(line, kScope);
    put ? batch->PutNode(std::move(node)) : batch->DeleteNode(std::move(node));
    return true;
  }
  if (op == "edge" || op == "del_edge") {
    const bool put = op == "edge";
    const uint32_t ends = Bit(kSrc) | Bit(kRel) | Bit(kDst);
    if (!only(put ? ends | Bit(kWeight) | Bit(kPayload) : ends) || !has(ends)) return false;
    EdgeInput edge;
    edge.src = str(kSrc);
    edge.rel = str(kRel);
    edge.dst = str(kDst);
    if (put) {
      edge.weight = line.weight;
      if (line.seen & Bit(kPayload)) edge.payload = line.json[kPayload];
    }
    edge.ts = ts;
    edge.run = Opt(line, kRun);
    edge.task = Opt(line, kTask);
    put ? batch->PutEdge(std::move(edge)) : batch->DeleteEdge(std::move(edge));
    return true;
  }
  if (op == "kv" || op == "del_kv") {
    const bool put = op == "kv";
    const uint32_t names = Bit(kScope) | Bit(kNs) | Bit(kKey);
    if (!only(put ? names | Bit(kValue) : names) || !has(put ? names | Bit(kValue) : names)) {
      return false;
    }
    KvInput kv;
    kv.scope = str(kScope);
    kv.ns = str(kNs);
    kv.key = str(kKey);
    if (put) kv.value = line.value_is_string ? str(kValue) : std::string(line.json[kValue]);
    kv.ts = ts;
    kv.run = Opt(line, kRun);
    kv.task = Opt(line, kTask);
    put ? batch->PutKv(std::move(kv)) : batch->DeleteKv(std::move(kv));
    return true;
  }
  if (op == "rel") {
    if (!only(Bit(kName)) || !has(Bit(kName))) return false;
    EdgeInput relation;
    relation.rel = str(kName);
    relation.run = Opt(line, kRun);
    relation.task = Opt(line, kTask);
    batch->DefineRelation(std::move(relation));
    return true;
  }
  return false;
}

}  // namespace

struct FastLineParser::Rep {
  od::parser parser;
  Line line;
};

FastLineParser::FastLineParser() : rep_(std::make_unique<Rep>()) {}
FastLineParser::~FastLineParser() = default;

bool FastLineParser::Add(const char* data, size_t size, Batch* batch) {
  return Parse(data, size, nullptr, batch);
}

bool FastLineParser::AddLogLine(const char* data, size_t size, Batch* batch, LogRevision* rev) {
  return Parse(data, size, rev, batch);
}

bool FastLineParser::Parse(const char* data, size_t size, LogRevision* rev, Batch* batch) {
  Line& line = rep_->line;
  line.seen = 0;
  // Fields this line lacks read as empty, never as the previous line's.
  for (std::string_view& v : line.str) v = {};
  for (std::string_view& v : line.json) v = {};
  line.value_is_string = false;
  line.confidence = 1.0f;
  line.weight = 1.0f;
  line.vector.clear();
  od::document doc;
  if (rep_->parser.iterate(data, size, size + kLinePadding).get(doc)) return false;
  od::object obj;
  if (doc.get_object().get(obj)) return false;
  for (auto field : obj) {
    std::string_view name;
    if (field.unescaped_key().get(name)) return false;
    std::optional<Field> f = FieldOf(name);
    if (!f || (line.seen & Bit(*f))) return false;  // unknown or repeated
    line.seen |= Bit(*f);
    od::value value;
    if (field.value().get(value) || !ReadField(*f, value, &line)) return false;
  }
  // Anything after the object (the reference parser rejects it).
  const char* rest = nullptr;
  if (!doc.current_location().get(rest)) return false;
  if (!(line.seen & Bit(kOp))) return false;
  const uint32_t revision = Bit(kRev) | Bit(kRevTs);
  if ((line.seen & revision) != (rev != nullptr ? revision : 0)) return false;
  line.seen &= ~revision;
  if (!Build(line, batch)) return false;
  if (rev != nullptr) *rev = {line.rev, line.rev_ts};
  return true;
}

}  // namespace amem::io
