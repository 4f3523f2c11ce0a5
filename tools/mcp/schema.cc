#include "tools/mcp/schema.h"

#include <cmath>

#include "common/utf8.h"
#include "tools/io/json_input.h"

namespace amem::mcp {
namespace {

// The JSON Schema type name of a value; integral floats count as "integer" too
// (JSON Schema: 1.0 is an integer), see Matches().
const char* TypeName(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "integer";
    case Json::value_t::number_float: return "number";
    case Json::value_t::string: return "string";
    case Json::value_t::array: return "array";
    case Json::value_t::object: return "object";
    default: return "unsupported value";
  }
}

bool IsIntegral(const Json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d && std::abs(d) < 9.007199254740992e15;
}

bool Matches(const Json& v, std::string_view type) {
  if (type == "integer") return IsIntegral(v);
  if (type == "number") return v.is_number();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "null") return v.is_null();
  return false;
}

std::string Article(std::string_view type) {
  bool vowel = !type.empty() && std::string_view("aeiou").find(type[0]) != std::string_view::npos;
  return std::string(vowel ? "an " : "a ") + std::string(type);
}

std::string Where(const std::string& path) { return path.empty() ? "arguments" : path; }

Status Fail(const std::string& path, std::string_view what) {
  return Status::InvalidArgument(Where(path) + ": " + std::string(what));
}

std::string Join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

Status Validate(const Json& schema, const Json& v, const std::string& path) {
  if (auto it = schema.find("type"); it != schema.end()) {
    bool ok = false;
    std::string expected;
    if (it->is_string()) {
      ok = Matches(v, it->get<std::string>());
      expected = Article(it->get<std::string>());
    } else {
      for (const auto& t : *it) {
        ok = ok || Matches(v, t.get<std::string>());
        if (!expected.empty()) expected += " or ";
        expected += Article(t.get<std::string>());
      }
    }
    if (!ok) {
      return Fail(path, "expected " + expected + ", got " + Article(TypeName(v)));
    }
  }
  if (auto it = schema.find("enum"); it != schema.end()) {
    bool found = false;
    std::string allowed;
    for (const auto& e : *it) {
      found = found || e == v;
      if (!allowed.empty()) allowed += ", ";
      allowed += e.dump();
    }
    if (!found) return Fail(path, "must be one of " + allowed + ", got " + v.dump());
  }
  if (v.is_number()) {
    double d = v.get<double>();
    if (auto it = schema.find("minimum"); it != schema.end() && d < it->get<double>()) {
      return Fail(path, "must be at least " + it->dump() + ", got " + v.dump());
    }
    if (auto it = schema.find("maximum"); it != schema.end() && d > it->get<double>()) {
      return Fail(path, "must be at most " + it->dump() + ", got " + v.dump());
    }
  }
  if (v.is_string()) {
    size_t n = Utf8CharCount(v.get_ref<const std::string&>());  // checked UTF-8
    if (auto it = schema.find("minLength"); it != schema.end() && n < it->get<size_t>()) {
      return Fail(path, it->get<size_t>() == 1
                            ? std::string("must not be empty")
                            : "must have at least " + it->dump() + " characters");
    }
    if (auto it = schema.find("maxLength"); it != schema.end() && n > it->get<size_t>()) {
      return Fail(path, "must have at most " + it->dump() + " characters, got " +
                            std::to_string(n));
    }
  }
  if (v.is_array()) {
    if (auto it = schema.find("minItems"); it != schema.end() && v.size() < it->get<size_t>()) {
      return Fail(path, "must have at least " + it->dump() + " items");
    }
    if (auto it = schema.find("maxItems"); it != schema.end() && v.size() > it->get<size_t>()) {
      return Fail(path, "must have at most " + it->dump() + " items, got " +
                            std::to_string(v.size()));
    }
    if (auto it = schema.find("items"); it != schema.end()) {
      for (size_t i = 0; i < v.size(); ++i) {
        AMEM_RETURN_IF_ERROR(
            Validate(*it, v[i], (path.empty() ? "arguments" : path) + "[" + std::to_string(i) + "]"));
      }
    }
  }
  if (v.is_object()) {
    const Json* props = nullptr;
    if (auto it = schema.find("properties"); it != schema.end()) props = &*it;
    auto extra = schema.find("additionalProperties");
    bool closed = extra != schema.end() && extra->is_boolean() && !extra->get<bool>();
    for (const auto& [key, value] : v.items()) {
      const Json* sub = nullptr;
      if (props) {
        if (auto p = props->find(key); p != props->end()) sub = &*p;
      }
      if (sub == nullptr && extra != schema.end() && extra->is_object()) sub = &*extra;
      if (sub == nullptr) {
        if (!closed) continue;
        std::string known;
        if (props) {
          for (const auto& [k, unused] : props->items()) {
            if (!known.empty()) known += ", ";
            known += k;
          }
        }
        return Fail(path, "unknown field \"" + key + "\"" +
                              (known.empty() ? std::string(" (this tool takes no arguments)")
                                             : " (known fields: " + known + ")"));
      }
      AMEM_RETURN_IF_ERROR(Validate(*sub, value, Join(path, key)));
    }
    if (auto it = schema.find("required"); it != schema.end()) {
      for (const auto& r : *it) {
        const auto& name = r.get_ref<const std::string&>();
        if (!v.contains(name)) return Fail(path, "missing required field \"" + name + "\"");
      }
    }
  }
  return Status::OK();
}

const Json* Find(const Json& args, std::string_view name) {
  if (!args.is_object()) return nullptr;
  auto it = args.find(std::string(name));
  if (it == args.end() || it->is_null()) return nullptr;
  return &*it;
}

}  // namespace

Status ValidateAgainstSchema(const Json& schema, const Json& value) {
  return Validate(schema, value, "");
}

std::string ArgString(const Json& args, std::string_view name, std::string_view fallback) {
  const Json* v = Find(args, name);
  return v ? v->get<std::string>() : std::string(fallback);
}

int64_t ArgInt(const Json& args, std::string_view name, int64_t fallback) {
  const Json* v = Find(args, name);
  return v ? io::ClampedInt64(*v) : fallback;
}

double ArgNumber(const Json& args, std::string_view name, double fallback) {
  const Json* v = Find(args, name);
  return v ? v->get<double>() : fallback;
}

bool ArgBool(const Json& args, std::string_view name, bool fallback) {
  const Json* v = Find(args, name);
  return v ? v->get<bool>() : fallback;
}

bool HasArg(const Json& args, std::string_view name) { return Find(args, name) != nullptr; }

}  // namespace amem::mcp
