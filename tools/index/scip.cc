#include "tools/index/scip.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "common/hash.h"
#include "common/utf8.h"

namespace amem::index {
namespace {

// Field numbers of the published scip.proto, for the fields read here.
namespace scip_field {
constexpr uint32_t kIndexMetadata = 1, kIndexDocuments = 2, kIndexExternalSymbols = 3;
constexpr uint32_t kMetadataToolInfo = 2, kMetadataProjectRoot = 3;
constexpr uint32_t kToolName = 1, kToolVersion = 2;
constexpr uint32_t kDocPath = 1, kDocOccurrences = 2, kDocSymbols = 3, kDocLanguage = 4,
                   kDocText = 5;
constexpr uint32_t kOccRange = 1, kOccSymbol = 2, kOccRoles = 3, kOccEnclosingRange = 7;
constexpr uint32_t kSymSymbol = 1, kSymDocumentation = 3, kSymRelationships = 4, kSymKind = 5,
                   kSymDisplayName = 6, kSymSignature = 7, kSymEnclosing = 8;
constexpr uint32_t kRelSymbol = 1, kRelIsReference = 2, kRelIsImplementation = 3,
                   kRelIsTypeDefinition = 4, kRelIsDefinition = 5;
}  // namespace scip_field

enum ScipWireType : uint32_t {
  kWireVarint = 0,
  kWireFixed64 = 1,
  kWireLen = 2,
  kWireStartGroup = 3,
  kWireEndGroup = 4,
  kWireFixed32 = 5,
};

constexpr uint64_t kMaxFieldNumber = (1u << 29) - 1;

// SymbolInformation.Kind by enum value, as lower-case words (TypeAlias reads as
// "type", like Type). Values past the table, and UnspecifiedKind, read as "".
constexpr std::array<std::string_view, 83> kScipKindNames = {
    "", "array", "assertion", "associated_type", "attribute", "axiom", "boolean", "class",
    "constant", "constructor", "data_family", "enum", "enum_member", "event", "fact", "field",
    "file", "function", "getter", "grammar", "instance", "interface", "key", "lang", "lemma",
    "macro", "method", "method_receiver", "message", "module", "namespace", "null", "number",
    "object", "operator", "package", "package_object", "parameter", "parameter_label",
    "pattern", "predicate", "property", "protocol", "quasiquoter", "self_parameter", "setter",
    "signature", "subscript", "string", "struct", "tactic", "theorem", "this_parameter",
    "trait", "type", "type", "type_class", "type_family", "type_parameter", "union", "value",
    "variable", "contract", "error", "library", "modifier", "abstract_method",
    "method_specification", "protocol_method", "pure_virtual_method", "trait_method",
    "type_class_method", "accessor", "delegate", "method_alias", "singleton_class",
    "singleton_method", "static_data_member", "static_event", "static_field", "static_method",
    "static_property", "static_variable"};

// A cursor over one message's bytes [pos, end) of the whole input. Offsets are from
// the start of the input, so every error names an absolute byte. Reads return false
// on malformed input and leave the reason in *error.
class ScipWire {
 public:
  ScipWire(const char* base, size_t pos, size_t end, std::string* error)
      : base_(reinterpret_cast<const unsigned char*>(base)), pos_(pos), end_(end),
        error_(error) {}

  bool done() const { return pos_ >= end_; }
  size_t pos() const { return pos_; }
  size_t key_pos() const { return key_pos_; }

  // A cursor over [begin, end) of the same input: a value Len() returned.
  ScipWire Sub(size_t begin, size_t end) const {
    return ScipWire(reinterpret_cast<const char*>(base_), begin, end, error_);
  }

  bool Key(uint32_t* field, uint32_t* wire) {
    const size_t at = key_pos_ = pos_;
    uint64_t key = 0;
    if (!Varint(&key)) return false;
    *wire = static_cast<uint32_t>(key & 7);
    if (key >> 3 == 0 || key >> 3 > kMaxFieldNumber) {
      return Fail(at, "field number " + std::to_string(key >> 3) + " out of range");
    }
    *field = static_cast<uint32_t>(key >> 3);
    return true;
  }

  bool Varint(uint64_t* v) {
    const size_t avail = end_ - pos_;
    const unsigned char* p = base_ + pos_;
    if (avail > 0 && p[0] < 0x80) {
      *v = p[0];
      ++pos_;
      return true;
    }
    uint64_t result = 0;
    for (size_t i = 0; i < 10; ++i) {
      if (i == avail) return Fail(pos_, "truncated varint");
      const uint64_t byte = p[i];
      // The tenth byte may carry only bit 63.
      if (i == 9 && byte > 1) {
        return Fail(pos_, byte & 0x80 ? "varint longer than 10 bytes" : "varint overflows 64 bits");
      }
      result |= (byte & 0x7f) << (7 * i);
      if (byte < 0x80) {
        pos_ += i + 1;
        *v = result;
        return true;
      }
    }
    return Fail(pos_, "varint longer than 10 bytes");  // not reached
  }

  // A length-delimited value: [*begin, *end) of the input.
  bool Len(size_t* begin, size_t* end) {
    const size_t at = pos_;
    uint64_t len = 0;
    if (!Varint(&len)) return false;
    if (len > end_ - pos_) {
      return Fail(at, "length " + std::to_string(len) + " runs past the end of its message (" +
                          std::to_string(end_ - pos_) + " bytes left)");
    }
    *begin = pos_;
    pos_ += len;
    *end = pos_;
    return true;
  }

  bool Bytes(std::string_view* v) {
    size_t begin, end;
    if (!Len(&begin, &end)) return false;
    *v = std::string_view(reinterpret_cast<const char*>(base_) + begin, end - begin);
    return true;
  }

  // A string field: valid UTF-8 of at most `max_bytes` bytes.
  // Errors name the field's key.
  bool String(std::string_view name, std::string_view* v, size_t max_bytes = SIZE_MAX) {
    const size_t at = key_pos_;
    if (!Bytes(v)) return false;
    if (v->size() > max_bytes) {
      return Fail(at, std::string(name) + " of " + std::to_string(v->size()) +
                          " bytes exceeds the limit of " + std::to_string(max_bytes));
    }
    if (!IsValidUtf8(*v)) return Fail(at, std::string(name) + " is not valid UTF-8");
    return true;
  }

  bool Expect(uint32_t field, uint32_t wire, uint32_t want, std::string_view name) {
    if (wire == want) return true;
    return Fail(key_pos_, "field " + std::string(name) + " (" + std::to_string(field) +
                                     ") has wire type " + std::to_string(wire) + ", expected " +
                                     std::to_string(want));
  }

  // Skips the value of a field whose key was just read. Unknown groups are skipped
  // with their nested groups, at most kMaxScipGroupDepth deep.
  bool Skip(uint32_t field, uint32_t wire) {
    std::array<uint32_t, kMaxScipGroupDepth> open;
    int depth = 0;
    for (;;) {
      const size_t at = pos_;
      switch (wire) {
        case kWireVarint: {
          uint64_t ignored = 0;
          if (!Varint(&ignored)) return false;
          break;
        }
        case kWireFixed64:
          if (end_ - pos_ < 8) return Fail(at, "truncated fixed64");
          pos_ += 8;
          break;
        case kWireFixed32:
          if (end_ - pos_ < 4) return Fail(at, "truncated fixed32");
          pos_ += 4;
          break;
        case kWireLen: {
          size_t b, e;
          if (!Len(&b, &e)) return false;
          break;
        }
        case kWireStartGroup:
          if (depth == kMaxScipGroupDepth) {
            return Fail(key_pos_,
                        "groups nested deeper than " + std::to_string(kMaxScipGroupDepth));
          }
          open[depth++] = field;
          break;
        case kWireEndGroup:
          if (depth == 0 || open[depth - 1] != field) {
            return Fail(key_pos_,
                        "end-group of field " + std::to_string(field) + " without its start");
          }
          --depth;
          break;
        default:
          return Fail(key_pos_, "invalid wire type " + std::to_string(wire));
      }
      if (depth == 0) return true;
      if (done()) return Fail(pos_, "group of field " + std::to_string(open[depth - 1]) +
                                        " not ended");
      if (!Key(&field, &wire)) return false;
    }
  }

  bool Fail(size_t at, std::string_view what) {
    *error_ = "byte " + std::to_string(at) + ": " + std::string(what);
    return false;
  }

 private:
  const unsigned char* base_;
  size_t pos_;
  size_t end_;
  size_t key_pos_ = 0;  // where the last key began: errors about a field name its key
  std::string* error_;
};

// A repeated int32 range of 3 or 4 elements, packed or not, possibly in several
// chunks. More than 4 elements are counted, never stored.
struct RangeBuilder {
  std::array<int64_t, 4> v{};
  size_t count = 0;
  size_t at = 0;  // where the first element's field began, for errors

  bool Add(uint64_t raw, size_t pos, std::string_view name, ScipWire* w) {
    if (count == 0) at = w->key_pos();
    if (raw > INT32_MAX) {
      // An int32 is sign-extended to 64 bits on the wire.
      return w->Fail(pos, std::string(name) + (raw >= 0xFFFFFFFF80000000ull
                                                   ? " has a negative value"
                                                   : " has a value past int32"));
    }
    if (count < v.size()) v[count] = static_cast<int64_t>(raw);
    ++count;
    return true;
  }

  bool Read(uint32_t field, uint32_t wire, std::string_view name, ScipWire* w) {
    if (wire == kWireVarint) {
      const size_t pos = w->pos();
      uint64_t raw = 0;
      return w->Varint(&raw) && Add(raw, pos, name, w);
    }
    if (wire != kWireLen) return w->Expect(field, wire, kWireLen, name);
    size_t b, e;
    if (!w->Len(&b, &e)) return false;
    ScipWire packed = w->Sub(b, e);
    while (!packed.done()) {
      const size_t pos = packed.pos();
      uint64_t raw = 0;
      if (!packed.Varint(&raw) || !Add(raw, pos, name, w)) return false;
    }
    return true;
  }

  // Checks the element count and the order of start and end.
  bool Finish(std::string_view name, SourceRange* out, ScipWire* w) const {
    if (count != 3 && count != 4) {
      return w->Fail(at, std::string(name) + " has " + std::to_string(count) +
                             " elements, expected 3 or 4");
    }
    out->start_line = static_cast<uint32_t>(v[0]);
    out->start_col = static_cast<uint32_t>(v[1]);
    out->end_line = static_cast<uint32_t>(count == 4 ? v[2] : v[0]);
    out->end_col = static_cast<uint32_t>(count == 4 ? v[3] : v[2]);
    if (std::pair(out->start_line, out->start_col) > std::pair(out->end_line, out->end_col)) {
      return w->Fail(at, std::string(name) + " starts after it ends");
    }
    return true;
  }
};

// Why `path` is not a canonical relative path (empty when it is one).
std::string BadPath(std::string_view path) {
  if (path.empty()) return "is empty";
  if (path.front() == '/') return "is absolute";
  if (path.find('\\') != std::string_view::npos) return "has a backslash";
  if (path.find('\0') != std::string_view::npos) return "has a NUL byte";
  if (!IsValidUtf8(path)) return "is not valid UTF-8";
  size_t start = 0;
  for (;;) {
    const size_t slash = path.find('/', start);
    const std::string_view seg =
        path.substr(start, slash == std::string_view::npos ? std::string_view::npos
                                                           : slash - start);
    if (seg.empty()) return "has an empty segment";
    if (seg == ".") return "has a '.' segment";
    if (seg == "..") return "has a '..' segment";
    if (slash == std::string_view::npos) return "";
    start = slash + 1;
  }
}

// Checks that no two SymbolInformation in `symbols` name the same symbol.
Status CheckUniqueSymbols(const std::vector<SymbolInfo>& symbols, std::string_view where) {
  std::vector<const std::string*> sorted;
  sorted.reserve(symbols.size());
  for (const SymbolInfo& s : symbols) sorted.push_back(&s.symbol);
  std::sort(sorted.begin(), sorted.end(),
            [](const std::string* a, const std::string* b) { return *a < *b; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (*sorted[i] == *sorted[i - 1]) {
      return Status::InvalidArgument(std::string(where) + ": duplicate symbol '" +
                                     Preview(*sorted[i], 200) + "'");
    }
  }
  return Status::OK();
}

class ScipDecoder {
 public:
  ScipDecoder(std::string_view bytes, const ScipOptions& options)
      : bytes_(bytes), options_(options) {}

  Result<CodeIndex> Run();

 private:
  ScipWire Whole() { return ScipWire(bytes_.data(), 0, bytes_.size(), &error_); }
  Status Error(std::string_view context) const {
    return Status::InvalidArgument(context.empty() ? error_
                                                   : std::string(context) + ": " + error_);
  }

  bool ReadMetadata(ScipWire w, CodeIndex* out);
  // Also counts the occurrences and symbol informations, for the body to reserve room.
  bool ReadDocumentHead(ScipWire w, Document* doc, size_t* occurrences, size_t* symbols);
  bool ReadDocumentBody(ScipWire w, Document* doc, std::string* context);
  bool ReadOccurrence(ScipWire w, Occurrence* occ, bool* keep);
  bool ReadSymbolInfo(ScipWire w, SymbolInfo* sym);
  bool ReadRelationship(ScipWire w, Relationship* rel);
  bool ReadSignature(ScipWire w, std::string* text);

  // Reads a string field into *out after checking its wire type.
  bool ReadString(ScipWire* w, uint32_t field, uint32_t wire, std::string_view name,
                  std::string* out, size_t max_bytes = SIZE_MAX) {
    std::string_view v;
    if (!w->Expect(field, wire, kWireLen, name) || !w->String(name, &v, max_bytes)) return false;
    out->assign(v);
    return true;
  }
  bool ReadSymbol(ScipWire* w, uint32_t field, uint32_t wire, std::string_view name,
                  std::string* out) {
    const size_t at = w->key_pos();
    if (!ReadString(w, field, wire, name, out, kMaxScipSymbolBytes)) return false;
    if (out->empty()) return w->Fail(at, std::string(name) + " is empty");
    return true;
  }
  bool ReadBool(ScipWire* w, uint32_t field, uint32_t wire, std::string_view name, bool* out) {
    uint64_t v = 0;
    if (!w->Expect(field, wire, kWireVarint, name) || !w->Varint(&v)) return false;
    *out = v != 0;
    return true;
  }

  std::string_view bytes_;
  const ScipOptions& options_;
  std::string error_;
};

Result<CodeIndex> ScipDecoder::Run() {
  CodeIndex out;
  out.indexer = "scip";
  std::vector<size_t> doc_at;  // where each document's message begins
  ScipWire w = Whole();
  while (!w.done()) {
    uint32_t field = 0, wire = 0;
    if (!w.Key(&field, &wire)) return Error("");
    size_t b, e;
    switch (field) {
      case scip_field::kIndexMetadata:
        if (!w.Expect(field, wire, kWireLen, "metadata") || !w.Len(&b, &e)) return Error("");
        if (!ReadMetadata(w.Sub(b, e), &out)) return Error("metadata");
        break;
      case scip_field::kIndexDocuments: {
        if (!w.Expect(field, wire, kWireLen, "documents") || !w.Len(&b, &e)) return Error("");
        Document& doc = out.documents.emplace_back();
        doc_at.push_back(b);
        doc.digest = Hash64(bytes_.substr(b, e - b));
        const std::string head_context = "document at byte " + std::to_string(b);
        size_t occurrences = 0, symbols = 0;
        if (!ReadDocumentHead(w.Sub(b, e), &doc, &occurrences, &symbols)) {
          return Error(head_context);
        }
        if (options_.skip_document && options_.skip_document(doc.path, doc.digest)) {
          doc.decoded = false;
          break;
        }
        // No more than a valid document of this size can hold: a kept occurrence takes
        // at least 10 bytes (key, length, a 3-element range, a symbol), a symbol
        // information 5. A document of empty fields is refused before it grows.
        doc.occurrences.reserve(std::min(occurrences, (e - b) / 10));
        doc.symbols.reserve(std::min(symbols, (e - b) / 5));
        std::string context = "document '" + doc.path + "'";
        if (!ReadDocumentBody(w.Sub(b, e), &doc, &context)) return Error(context);
        if (Status s = CheckUniqueSymbols(doc.symbols, "document '" + doc.path + "'"); !s.ok()) {
          return s;
        }
        break;
      }
      case scip_field::kIndexExternalSymbols: {
        if (!w.Expect(field, wire, kWireLen, "external_symbols") || !w.Len(&b, &e)) {
          return Error("");
        }
        if (!ReadSymbolInfo(w.Sub(b, e), &out.external_symbols.emplace_back())) {
          return Error("external symbol at byte " + std::to_string(b));
        }
        break;
      }
      default:
        if (!w.Skip(field, wire)) return Error("");
    }
  }
  if (Status s = CheckUniqueSymbols(out.external_symbols, "external_symbols"); !s.ok()) return s;

  // Sorted by path, the order of the input breaking no tie since ties are errors.
  std::vector<size_t> order(out.documents.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair<const std::string&, size_t>(out.documents[a].path, a) <
           std::pair<const std::string&, size_t>(out.documents[b].path, b);
  });
  std::vector<Document> sorted;
  sorted.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    Document& doc = out.documents[order[i]];
    if (!sorted.empty() && sorted.back().path == doc.path) {
      return Status::InvalidArgument("duplicate document path '" + doc.path +
                                     "' (documents at byte " +
                                     std::to_string(doc_at[order[i - 1]]) + " and byte " +
                                     std::to_string(doc_at[order[i]]) + ")");
    }
    sorted.push_back(std::move(doc));
  }
  out.documents = std::move(sorted);
  return out;
}

bool ScipDecoder::ReadMetadata(ScipWire w, CodeIndex* out) {
  std::string name, version, project_root;
  while (!w.done()) {
    uint32_t field = 0, wire = 0;
    if (!w.Key(&field, &wire)) return false;
    if (field == scip_field::kMetadataToolInfo) {
      size_t b, e;
      if (!w.Expect(field, wire, kWireLen, "tool_info") || !w.Len(&b, &e)) return false;
      ScipWire t = w.Sub(b, e);
      while (!t.done()) {
        if (!t.Key(&field, &wire)) return false;
        if (field == scip_field::kToolName) {
          if (!ReadString(&t, field, wire, "tool_info.name", &name)) return false;
        } else if (field == scip_field::kToolVersion) {
          if (!ReadString(&t, field, wire, "tool_info.version", &version)) return false;
        } else if (!t.Skip(field, wire)) {
          return false;
        }
      }
    } else if (field == scip_field::kMetadataProjectRoot) {
      // Checked but not kept: paths are relative to the indexed root.
      if (!ReadString(&w, field, wire, "project_root", &project_root)) return false;
    } else if (!w.Skip(field, wire)) {
      return false;
    }
  }
  out->tool = name;
  if (!name.empty() && !version.empty()) out->tool += ' ';
  out->tool += version;
  return true;
}

// The fields a skipped document keeps: path and language.
bool ScipDecoder::ReadDocumentHead(ScipWire w, Document* doc, size_t* occurrences,
                                   size_t* symbols) {
  bool has_path = false;
  size_t path_at = w.pos();
  while (!w.done()) {
    uint32_t field = 0, wire = 0;
    if (!w.Key(&field, &wire)) return false;
    if (field == scip_field::kDocPath) {
      if (!w.Expect(field, wire, kWireLen, "relative_path")) return false;
      path_at = w.key_pos();
      std::string_view v;
      if (!w.Bytes(&v)) return false;
      doc->path.assign(v);
      has_path = true;
    } else if (field == scip_field::kDocLanguage) {
      if (!ReadString(&w, field, wire, "language", &doc->language)) return false;
    } else {
      *occurrences += field == scip_field::kDocOccurrences;
      *symbols += field == scip_field::kDocSymbols;
      if (!w.Skip(field, wire)) return false;
    }
  }
  if (!has_path) return w.Fail(path_at, "no relative_path");
  if (std::string why = BadPath(doc->path); !why.empty()) {
    if (!IsValidUtf8(doc->path)) return w.Fail(path_at, "relative_path " + why);
    return w.Fail(path_at, "relative_path '" + Preview(doc->path, 200) + "' " + why);
  }
  return true;
}

bool ScipDecoder::ReadDocumentBody(ScipWire w, Document* doc, std::string* context) {
  const std::string doc_context = *context;
  while (!w.done()) {
    uint32_t field = 0, wire = 0;
    if (!w.Key(&field, &wire)) return false;
    size_t b, e;
    switch (field) {
      case scip_field::kDocOccurrences: {
        if (!w.Expect(field, wire, kWireLen, "occurrences") || !w.Len(&b, &e)) return false;
        Occurrence occ;
        bool keep = false;
        if (!ReadOccurrence(w.Sub(b, e), &occ, &keep)) {
          *context = doc_context + ": occurrence at byte " + std::to_string(b);
          return false;
        }
        if (keep) doc->occurrences.push_back(std::move(occ));
        break;
      }
      case scip_field::kDocSymbols:
        if (!w.Expect(field, wire, kWireLen, "symbols") || !w.Len(&b, &e)) return false;
        if (!ReadSymbolInfo(w.Sub(b, e), &doc->symbols.emplace_back())) {
          *context = doc_context + ": symbol information at byte " + std::to_string(b);
          return false;
        }
        break;
      case scip_field::kDocText:
        if (!w.Expect(field, wire, kWireLen, "text") || !w.Len(&b, &e)) return false;
        break;
      default:  // path and language were read by DocumentHead
        if (!w.Skip(field, wire)) return false;
    }
  }
  return true;
}

bool ScipDecoder::ReadOccurrence(ScipWire w, Occurrence* occ, bool* keep) {
  RangeBuilder range, enclosing;
  const size_t begin = w.pos();
  while (!w.done()) {
    uint32_t field = 0, wire = 0;
    if (!w.Key(&field, &wire)) return false;
    switch (field) {
      case scip_field::kOccRange:
        if (!range.Read(field, wire, "range", &w)) return false;
        break;
      case scip_field::kOccEnclosingRange:
        if (!enclosing.Read(field, wire, "enclosing_range", &w)) return false;
        break;
      case scip_field::kOccSymbol: {
        if (!ReadString(&w, field, wire, "symbol", &occ->symbol, kMaxScipSymbolBytes)) {
          return false;
        }
        break;
      }
      case scip_field::kOccRoles: {
        uint64_t v = 0;
        if (!w.Expect(field, wire, kWireVarint, "symbol_roles") || !w.Varint(&v)) return false;
        occ->roles = static_cast<uint32_t>(v);  // an int32 bit set: its low 32 bits
        break;
      }
      default:
        if (!w.Skip(field, wire)) return false;
    }
  }
  if (range.count == 0) range.at = begin;
  if (!range.Finish("range", &occ->range, &w)) return false;
  if (enclosing.count > 0) {
    SourceRange r;
    if (!enclosing.Finish("enclosing_range", &r, &w)) return false;
    occ->enclosing_range = r;
  }
  // An occurrence without a symbol only highlights syntax: nothing for the graph.
  *keep = !occ->symbol.empty();
  return true;
}

bool ScipDecoder::ReadSymbolInfo(ScipWire w, SymbolInfo* sym) {
  bool has_symbol = false;
  const size_t begin = w.pos();
  while (!w.done()) {
    uint32_t field = 0, wire = 0;
    if (!w.Key(&field, &wire)) return false;
    size_t b, e;
    switch (field) {
      case scip_field::kSymSymbol:
        if (!ReadSymbol(&w, field, wire, "symbol", &sym->symbol)) return false;
        has_symbol = true;
        break;
      case scip_field::kSymDocumentation: {
        std::string_view v;
        if (!w.Expect(field, wire, kWireLen, "documentation") ||
            !w.String("documentation", &v)) {
          return false;
        }
        if (!sym->documentation.empty()) sym->documentation += "\n\n";
        sym->documentation += v;
        break;
      }
      case scip_field::kSymRelationships:
        if (!w.Expect(field, wire, kWireLen, "relationships") || !w.Len(&b, &e)) return false;
        if (!ReadRelationship(w.Sub(b, e), &sym->relationships.emplace_back())) return false;
        break;
      case scip_field::kSymKind: {
        uint64_t v = 0;
        if (!w.Expect(field, wire, kWireVarint, "kind") || !w.Varint(&v)) return false;
        sym->kind = v < kScipKindNames.size() ? kScipKindNames[v] : "";
        break;
      }
      case scip_field::kSymDisplayName:
        if (!ReadString(&w, field, wire, "display_name", &sym->display_name)) return false;
        break;
      case scip_field::kSymSignature:
        if (!w.Expect(field, wire, kWireLen, "signature_documentation") || !w.Len(&b, &e)) {
          return false;
        }
        if (!ReadSignature(w.Sub(b, e), &sym->signature)) return false;
        break;
      case scip_field::kSymEnclosing:
        if (!ReadString(&w, field, wire, "enclosing_symbol", &sym->enclosing_symbol,
                        kMaxScipSymbolBytes)) {
          return false;
        }
        break;
      default:
        if (!w.Skip(field, wire)) return false;
    }
  }
  if (!has_symbol) return w.Fail(begin, "symbol is empty");
  return true;
}

bool ScipDecoder::ReadRelationship(ScipWire w, Relationship* rel) {
  bool has_symbol = false;
  const size_t begin = w.pos();
  while (!w.done()) {
    uint32_t field = 0, wire = 0;
    if (!w.Key(&field, &wire)) return false;
    bool ok = true;
    switch (field) {
      case scip_field::kRelSymbol:
        ok = ReadSymbol(&w, field, wire, "relationship symbol", &rel->symbol);
        has_symbol = true;
        break;
      case scip_field::kRelIsReference:
        ok = ReadBool(&w, field, wire, "is_reference", &rel->is_reference);
        break;
      case scip_field::kRelIsImplementation:
        ok = ReadBool(&w, field, wire, "is_implementation", &rel->is_implementation);
        break;
      case scip_field::kRelIsTypeDefinition:
        ok = ReadBool(&w, field, wire, "is_type_definition", &rel->is_type_definition);
        break;
      case scip_field::kRelIsDefinition:
        ok = ReadBool(&w, field, wire, "is_definition", &rel->is_definition);
        break;
      default:
        ok = w.Skip(field, wire);
    }
    if (!ok) return false;
  }
  if (!has_symbol) return w.Fail(begin, "relationship symbol is empty");
  return true;
}

// signature_documentation is a Document of which only `text` is the signature.
bool ScipDecoder::ReadSignature(ScipWire w, std::string* text) {
  while (!w.done()) {
    uint32_t field = 0, wire = 0;
    if (!w.Key(&field, &wire)) return false;
    if (field == scip_field::kDocText) {
      if (!ReadString(&w, field, wire, "signature_documentation.text", text)) return false;
    } else if (!w.Skip(field, wire)) {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<CodeIndex> ReadScip(std::string_view bytes, const ScipOptions& options) {
  return ScipDecoder(bytes, options).Run();
}

}  // namespace amem::index
