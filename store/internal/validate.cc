#include "store/internal/validate.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/json_parse.h"
#include "common/utf8.h"

namespace amem::store_internal {

namespace {
Status Invalid(std::string_view field, std::string_view why) {
  std::string msg(field);
  msg += ": ";
  msg += why;
  return Status::InvalidArgument(msg);
}

Status ValidateAttribution(const std::optional<std::string>& run,
                           const std::optional<std::string>& task,
                           const std::optional<std::string>* scope) {
  if (run) AMEM_RETURN_IF_ERROR(ValidateName("run", *run, true));
  if (task) AMEM_RETURN_IF_ERROR(ValidateName("task", *task, true));
  if (scope && *scope) AMEM_RETURN_IF_ERROR(ValidateName("scope", **scope, true));
  return Status::OK();
}

// Parses `text` as JSON; "" counts as an empty object.
Status ParseJson(std::string_view field, std::string_view text, size_t limit,
                 nlohmann::json* out) {
  if (text.size() > limit) {
    return Invalid(field, "longer than " + std::to_string(limit) + " bytes");
  }
  if (text.empty()) {
    *out = nlohmann::json::object();
    return Status::OK();
  }
  Result<nlohmann::json> parsed =
      ParseJsonLimited(text, std::string(field) + ": malformed JSON");
  if (!parsed.ok()) return parsed.status();
  *out = std::move(*parsed);
  return Status::OK();
}

// Reads a JSON string that needs no escaping ("..." of bytes >= 0x20 other
// than '"' and '\\'), as nlohmann's dump would write it. false otherwise.
bool TakePlainString(std::string_view* in, std::string_view* out) {
  if (in->empty() || (*in)[0] != '"') return false;
  size_t i = 1;
  while (i < in->size()) {
    auto c = static_cast<unsigned char>((*in)[i]);
    if (c == '"') break;
    if (c < 0x20 || c == '\\') return false;
    ++i;
  }
  if (i == in->size()) return false;
  *out = in->substr(1, i - 1);
  in->remove_prefix(i + 1);
  return true;
}

// True if `text` is already what CanonicalMeta would produce: a compact object
// of plain strings with strictly ascending keys. Lets the common case skip the
// JSON parser.
bool IsCanonicalFlatObject(std::string_view text) {
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return false;
  std::string_view in = text.substr(1, text.size() - 2);
  std::string_view prev_key, key, value;
  bool first = true;
  while (!in.empty()) {
    if (!first) {
      if (in[0] != ',') return false;
      in.remove_prefix(1);
    }
    if (!TakePlainString(&in, &key) || in.empty() || in[0] != ':') return false;
    in.remove_prefix(1);
    if (!TakePlainString(&in, &value)) return false;
    if (!first && !(prev_key < key)) return false;
    prev_key = key;
    first = false;
  }
  return IsValidUtf8(text);
}

Status Dump(std::string_view field, const nlohmann::json& j, std::string* out) {
  try {
    *out = j.dump();
  } catch (const nlohmann::json::exception& e) {
    return Invalid(field, std::string("cannot encode JSON: ") + e.what());
  }
  return Status::OK();
}
}  // namespace

Status ValidateNodeKey(std::string_view field, std::string_view key) {
  if (key.empty()) return Invalid(field, "empty");
  if (key.size() > kMaxKeyBytes) {
    return Invalid(field, "longer than " + std::to_string(kMaxKeyBytes) + " bytes");
  }
  if (!IsValidUtf8(key)) return Invalid(field, "not valid UTF-8");
  return Status::OK();
}

Status ValidateName(std::string_view field, std::string_view name, bool allow_empty) {
  if (name.empty() && !allow_empty) return Invalid(field, "empty");
  if (name.size() > kMaxNameBytes) {
    return Invalid(field, "longer than " + std::to_string(kMaxNameBytes) + " bytes");
  }
  if (name.find('\0') != std::string_view::npos) return Invalid(field, "contains NUL");
  if (!IsValidUtf8(name)) return Invalid(field, "not valid UTF-8");
  return Status::OK();
}

Status CanonicalMeta(std::string_view text, std::string* out) {
  if (text == "{}" || text.empty()) {
    *out = "{}";
    return Status::OK();
  }
  if (text.size() <= kMaxMetaBytes && IsCanonicalFlatObject(text)) {
    *out = text;
    return Status::OK();
  }
  nlohmann::json j;
  AMEM_RETURN_IF_ERROR(ParseJson("meta", text, kMaxMetaBytes, &j));
  if (!j.is_object()) return Invalid("meta", "not a JSON object");
  for (const auto& [k, v] : j.items()) {
    if (!v.is_string()) return Invalid("meta", "value of \"" + k + "\" is not a string");
  }
  return Dump("meta", j, out);
}

Status CanonicalPayload(std::string_view text, std::string* out) {
  if (text == "{}" || text.empty()) {
    *out = "{}";
    return Status::OK();
  }
  if (text.size() <= kMaxPayloadBytes && IsCanonicalFlatObject(text)) {
    *out = text;
    return Status::OK();
  }
  nlohmann::json j;
  AMEM_RETURN_IF_ERROR(ParseJson("payload", text, kMaxPayloadBytes, &j));
  AMEM_RETURN_IF_ERROR(Dump("payload", j, out));
  if (out->size() > kMaxPayloadBytes) {
    return Invalid("payload", "longer than " + std::to_string(kMaxPayloadBytes) + " bytes");
  }
  return Status::OK();
}

Status ValidateNode(const NodeInput& node, uint32_t dimension, std::string* meta) {
  AMEM_RETURN_IF_ERROR(ValidateNodeKey("key", node.key));
  if (!IsValidNodeType(static_cast<uint32_t>(node.type))) {
    return Invalid("type", "unknown node type " +
                               std::to_string(static_cast<unsigned>(node.type)));
  }
  if (node.content.size() > kMaxContentBytes) {
    return Invalid("content", "longer than " + std::to_string(kMaxContentBytes) + " bytes");
  }
  if (!IsValidUtf8(node.content)) return Invalid("content", "not valid UTF-8");
  if (!std::isfinite(node.confidence) || node.confidence < 0.0f || node.confidence > 1.0f) {
    return Invalid("confidence", "must be a finite number in 0..1");
  }
  if (!node.vector.empty()) {
    if (node.vector.size() != dimension) {
      return Invalid("vector", "has " + std::to_string(node.vector.size()) +
                                   " values; the store's dimension is " +
                                   std::to_string(dimension));
    }
    for (size_t i = 0; i < node.vector.size(); ++i) {
      if (!std::isfinite(node.vector[i])) {
        return Invalid("vector", "value " + std::to_string(i) + " is not finite");
      }
    }
  }
  AMEM_RETURN_IF_ERROR(ValidateAttribution(node.run, node.task, &node.scope));
  return CanonicalMeta(node.meta, meta);
}

Status ValidateEdge(const EdgeInput& edge, std::string* payload) {
  AMEM_RETURN_IF_ERROR(ValidateNodeKey("src", edge.src));
  AMEM_RETURN_IF_ERROR(ValidateNodeKey("dst", edge.dst));
  if (edge.rel.empty()) return Invalid("rel", "empty");
  if (!std::isfinite(edge.weight)) return Invalid("weight", "must be a finite number");
  AMEM_RETURN_IF_ERROR(ValidateAttribution(edge.run, edge.task, nullptr));
  return CanonicalPayload(edge.payload, payload);
}

Status ValidateKvName(const KvInput& kv) {
  AMEM_RETURN_IF_ERROR(ValidateName("scope", kv.scope, false));
  AMEM_RETURN_IF_ERROR(ValidateName("ns", kv.ns, false));
  return ValidateName("key", kv.key, false);
}

Status ValidateKv(const KvInput& kv) {
  AMEM_RETURN_IF_ERROR(ValidateKvName(kv));
  if (kv.value.size() > kMaxKvValueBytes) {
    return Invalid("value", "longer than " + std::to_string(kMaxKvValueBytes) + " bytes");
  }
  if (!IsValidUtf8(kv.value)) return Invalid("value", "not valid UTF-8");
  return ValidateAttribution(kv.run, kv.task, nullptr);
}

}  // namespace amem::store_internal
