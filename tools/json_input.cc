#include "tools/json_input.h"

#include <cmath>
#include <limits>
#include <set>

namespace amem::cli {

namespace {

// nlohmann's messages start with "[json.exception.parse_error.101] " and may end
// with "; last read: '<raw bytes>'", which can hold invalid UTF-8 or a newline.
std::string CleanJsonMessage(std::string_view msg) {
  if (!msg.empty() && msg.front() == '[') {
    size_t close = msg.find("] ");
    if (close != std::string_view::npos) msg.remove_prefix(close + 2);
  }
  size_t last_read = msg.find("; last read:");
  if (last_read != std::string_view::npos) msg = msg.substr(0, last_read);
  std::string out(msg);
  // Single-line input (an ingest line, a flag value): the column says it all.
  if (size_t pos = out.find("at line 1, column"); pos != std::string::npos) {
    out.erase(pos + 3, 8);
  }
  return out;
}

struct DuplicateKey {
  std::string key;
};

}  // namespace

Result<nlohmann::json> ParseJson(std::string_view text, std::string_view what,
                                 bool reject_duplicate_keys) {
  std::set<std::string> top_keys;
  nlohmann::json::parser_callback_t callback = nullptr;
  if (reject_duplicate_keys) {
    callback = [&top_keys](int depth, nlohmann::json::parse_event_t event,
                           nlohmann::json& parsed) {
      if (event == nlohmann::json::parse_event_t::key && depth == 1 && parsed.is_string()) {
        if (!top_keys.insert(parsed.get<std::string>()).second) {
          throw DuplicateKey{parsed.get<std::string>()};
        }
      }
      return true;
    };
  }
  try {
    return nlohmann::json::parse(text.begin(), text.end(), callback);
  } catch (const DuplicateKey& dup) {
    return Status::InvalidArgument(std::string(what) + ": duplicate field \"" + dup.key +
                                   "\"");
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string(what) + ": " + CleanJsonMessage(e.what()));
  }
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

}  // namespace amem::cli
