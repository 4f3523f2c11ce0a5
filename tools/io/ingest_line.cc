#include "tools/io/ingest_line.h"

#include <simdjson.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
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

// A vector's numbers, read from the array's text: a vector is most of a node's
// line, and this reads its numbers in a third less time than the On-Demand
// iterator's get_double, one by one, did. Each must be a number in JSON's
// grammar (with JSON's whitespace around it), and each becomes what GetDouble
// and ToFloat make of it: the correctly rounded double (digits scaled by a
// power of ten when both are exact doubles, Clinger's fast path; std::from_chars
// otherwise), then the float. Anything else (a string, a nested value, a number
// out of range) returns false, and the line goes to the reference parser, which
// names the error.
//
// REQUIRES: 7 readable bytes after the array's closing bracket (the line's
// padding covers them): the digits are read 8 at a time.
class VectorText {
 public:
  static bool Read(std::string_view raw, std::vector<float>* out) {
    static_assert(std::endian::native == std::endian::little, "Load8 reads the first byte lowest");
    // raw_json() runs to the next token: the whitespace after the bracket too.
    while (!raw.empty() && IsSpace(raw.back())) raw.remove_suffix(1);
    const char* p = raw.data();
    const char* const end = p + raw.size();
    // The closing bracket stops every scan below (it is no digit, space or part
    // of a number), so none reads past it but for Load8's padding.
    if (raw.size() < 2 || raw.front() != '[' || raw.back() != ']') return false;
    p = SkipSpace(p + 1);
    if (*p == ']') return p + 1 == end;
    for (;;) {
      float f;
      if (!ReadNumber(&p, &f)) return false;
      out->push_back(f);
      p = SkipSpace(p);
      if (*p == ']') return p + 1 == end;
      if (*p != ',') return false;
      p = SkipSpace(p + 1);
    }
  }

 private:
  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }
  static bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  static const char* SkipSpace(const char* p) {
    while (IsSpace(*p)) ++p;
    return p;
  }
  static uint64_t Load8(const char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  // How many of the 8 bytes in v (first byte lowest) are digits before the first
  // one that is not: a byte is a digit when it is 0x30..0x39, so after XOR 0x30
  // it is at most 9 and adding 0x76 leaves its top bit clear (no carry leaves a
  // digit's byte, so the first non-digit is found exactly).
  static int DigitRun(uint64_t v) {
    const uint64_t a = v ^ 0x3030303030303030ull;
    const uint64_t t = ((a + 0x7676767676767676ull) | a) & 0x8080808080808080ull;
    return t == 0 ? 8 : std::countr_zero(t) / 8;
  }
  // The value of the first n (1..8) digits of v: shifted up so that zeros fill
  // the bytes below, then pairs, quads and the eight combined.
  static uint64_t DigitsValue(uint64_t v, int n) {
    uint64_t a = (v - 0x3030303030303030ull) << (8 * (8 - n));
    a = (a * 10 + (a >> 8)) & 0x00FF00FF00FF00FFull;
    a = (a * 100 + (a >> 16)) & 0x0000FFFF0000FFFFull;
    return (a * 10000 + (a >> 32)) & 0xFFFFFFFFull;
  }

  static bool ReadNumber(const char** at, float* out) {
    static constexpr uint64_t kPow10Int[] = {1,      10,      100,      1000,     10000,
                                             100000, 1000000, 10000000, 100000000};
    static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                        1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char* p = *at;
    const char* const start = p;
    const bool negative = *p == '-';
    p += negative;
    if (!IsDigit(*p)) return false;
    // The digits as the integer w (while at most 19 are taken, so w < 2^64) and
    // the power of ten that scales it.
    uint64_t w = 0;
    int digits = 0, e10 = 0;
    auto take_digits = [&](bool fraction) {
      for (;;) {
        const int n = DigitRun(Load8(p));
        if (n == 0) return;
        if (digits + n <= 19) {
          w = w * kPow10Int[n] + DigitsValue(Load8(p), n);
          if (fraction) e10 -= n;
        }
        digits = std::min(digits + n, 20);  // past 19 only "too many" matters
        p += n;
        if (n < 8) return;
      }
    };
    if (*p == '0') {
      ++p;  // a leading zero stands alone
    } else {
      take_digits(false);
    }
    bool integer = true;
    if (*p == '.') {
      integer = false;
      ++p;
      if (!IsDigit(*p)) return false;
      take_digits(true);
    }
    if (*p == 'e' || *p == 'E') {
      integer = false;
      ++p;
      const bool minus = *p == '-';
      if (*p == '+' || *p == '-') ++p;
      if (!IsDigit(*p)) return false;
      int exp = 0;
      for (; IsDigit(*p); ++p) exp = std::min(10 * exp + (*p - '0'), 100000);
      e10 += minus ? -exp : exp;
    }
    *at = p;
    if (digits <= 19 && w <= (uint64_t{1} << 53) && e10 >= -22 && e10 <= 22) {
      // w and 10^|e10| are exact doubles, so one multiplication or division
      // rounds correctly; |w * 10^e10| <= 2^53 * 1e22 is within float's range.
      double d = static_cast<double>(w);
      d = e10 < 0 ? d / kPow10[-e10] : d * kPow10[e10];
      if (negative && !(w == 0 && integer)) d = -d;  // "-0" is +0, as GetDouble reads it
      *out = static_cast<float>(d);
      return true;
    }
    // (An integer literal here has more than 19 digits, the first not 0: never
    // "-0". Underflow and overflow are errors, declined.)
    double d;
    const auto [end, ec] = std::from_chars(start, p, d);
    if (ec != std::errc() || end != p) return false;
    return ToFloat(d, out);
  }
};

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
      std::string_view raw;  // in the padded line
      if (arr.raw_json().get(raw)) return false;
      line->vector.clear();
      line->vector.reserve(line->last_vector_size);  // moved into the batch by the last line
      if (!VectorText::Read(raw, &line->vector)) return false;
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
