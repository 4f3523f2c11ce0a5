#include "common/json_parse.h"

#include <cmath>
#include <set>
#include <vector>

namespace amem {

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

// Builds the document from nlohmann's SAX events with an explicit stack (no
// recursion), stopping at the first event that breaks a limit.
template <typename Json>
class Builder {
 public:
  explicit Builder(const JsonParseOptions& options) : options_(options) {}

  bool null() { return Add(Json(nullptr)); }
  bool boolean(bool v) { return Add(Json(v)); }
  bool number_integer(typename Json::number_integer_t v) { return Add(Json(v)); }
  bool number_unsigned(typename Json::number_unsigned_t v) { return Add(Json(v)); }
  bool number_float(typename Json::number_float_t v, const std::string& literal) {
    if (!options_.literal_number_member.empty() && key_ == options_.literal_number_member &&
        AtMessageLevel()) {
      typename Json::binary_t::container_type bytes(literal.begin(), literal.end());
      return Add(Json::binary(std::move(bytes)));
    }
    if (!std::isfinite(v)) return Fail("number overflow parsing '" + literal + "'");
    return Add(Json(v));
  }
  bool string(std::string& v) { return Add(Json(std::move(v))); }
  bool binary(typename Json::binary_t& v) { return Add(Json::binary(std::move(v))); }

  bool start_object(size_t) { return Open(Json::object()); }
  bool end_object() { return Close(); }
  bool start_array(size_t) { return Open(Json::array()); }
  bool end_array() { return Close(); }
  bool key(std::string& k) {
    if (options_.reject_duplicate_top_keys && stack_.size() == 1 && !top_keys_.insert(k).second) {
      return Fail("duplicate field \"" + k + "\"");
    }
    key_ = std::move(k);
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::json::exception& e) {
    return Fail(CleanJsonMessage(e.what()));
  }

  Json& root() { return root_; }
  const std::string& error() const { return error_; }

 private:
  bool Fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return false;
  }
  // The object being filled is a message: the top-level object, or an object
  // directly inside a top-level array.
  bool AtMessageLevel() const {
    return (stack_.size() == 1 && stack_[0]->is_object()) ||
           (stack_.size() == 2 && stack_[0]->is_array() && stack_[1]->is_object());
  }
  // Places `v` in the current container (or as the root) and returns where it went.
  Json* Place(Json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json* top = stack_.back();
    if (top->is_array()) {
      top->push_back(std::move(v));
      return &top->back();
    }
    Json& slot = (*top)[key_];  // a repeated key: the last value wins, as in nlohmann
    slot = std::move(v);
    return &slot;
  }
  bool Add(Json v) {
    Place(std::move(v));
    return true;
  }
  bool Open(Json container) {
    if (stack_.size() >= options_.max_depth) {
      return Fail(std::string(kJsonTooDeep) + " " + std::to_string(options_.max_depth) +
                  " levels");
    }
    // Elements of an array never move while a child of theirs is open: the array
    // grows only when its open child has been closed.
    stack_.push_back(Place(std::move(container)));
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }

  const JsonParseOptions& options_;
  Json root_;
  std::vector<Json*> stack_;
  std::string key_;
  std::set<std::string> top_keys_;
  std::string error_;
};

}  // namespace

template <typename Json>
Result<Json> ParseJsonLimited(std::string_view text, std::string_view what,
                              const JsonParseOptions& options) {
  Builder<Json> builder(options);
  bool ok = Json::sax_parse(text.begin(), text.end(), &builder, Json::input_format_t::json,
                            /*strict=*/true);
  if (!ok) {
    std::string why = builder.error().empty() ? "malformed JSON" : builder.error();
    return Status::InvalidArgument(std::string(what) + ": " + why);
  }
  return std::move(builder.root());
}

template Result<nlohmann::json> ParseJsonLimited(std::string_view, std::string_view,
                                                 const JsonParseOptions&);
template Result<nlohmann::ordered_json> ParseJsonLimited(std::string_view, std::string_view,
                                                         const JsonParseOptions&);

}  // namespace amem
