#include "tools/io/json_input.h"

#include <cmath>
#include <limits>

#include "common/json_parse.h"

namespace amem::io {

Result<nlohmann::json> ParseJson(std::string_view text, std::string_view what,
                                 bool reject_duplicate_keys) {
  JsonParseOptions options;
  options.reject_duplicate_top_keys = reject_duplicate_keys;
  return ParseJsonLimited(text, what, options);
}

Result<float> FiniteFloat(double v, std::string_view what) {
  if (!std::isfinite(v) || std::fabs(v) > std::numeric_limits<float>::max()) {
    return Status::InvalidArgument(std::string(what) + ": not a finite number");
  }
  return static_cast<float>(v);
}

Result<float> FiniteFloatFromJson(const nlohmann::json& v, std::string_view what) {
  if (!v.is_number()) return Status::InvalidArgument(std::string(what) + ": not a number");
  return FiniteFloat(v.get<double>(), what);
}

Result<std::vector<float>> VectorFromJson(const nlohmann::json& v, std::string_view what) {
  if (!v.is_array()) {
    return Status::InvalidArgument(std::string(what) + ": not an array of numbers");
  }
  std::vector<float> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    Result<float> f = FiniteFloatFromJson(v[i], std::string(what) + "[" + std::to_string(i) + "]");
    if (!f.ok()) return f.status();
    out.push_back(*f);
  }
  return out;
}

Result<std::vector<float>> VectorFromText(std::string_view text, std::string_view what) {
  Result<nlohmann::json> j = ParseJson(text, what);
  if (!j.ok()) return j.status();
  return VectorFromJson(*j, what);
}

Result<int64_t> Int64FromJson(const nlohmann::json& v, std::string_view what) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Status::InvalidArgument(std::string(what) + ": integer out of range");
    }
    return static_cast<int64_t>(v.get<uint64_t>());
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return Status::InvalidArgument(std::string(what) + ": not an integer");
}

Result<std::string> StringFromJson(const nlohmann::json& v, std::string_view what) {
  if (!v.is_string()) return Status::InvalidArgument(std::string(what) + ": not a string");
  return v.get<std::string>();
}

Result<std::string> ObjectTextFromJson(const nlohmann::json& v, std::string_view what) {
  if (!v.is_object()) return Status::InvalidArgument(std::string(what) + ": not a JSON object");
  return v.dump();
}

}  // namespace amem::io
