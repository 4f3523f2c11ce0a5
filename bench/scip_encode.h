// A SCIP writer for tests and benchmarks: protobuf wire-format pieces, a CodeIndex
// encoded as a SCIP index (the inverse of tools/index/scip.h for what that reads),
// and a synthetic index generator (bench/scip_gen, bench/scip_parse_bench). Header
// only, so that the test binary and the bench programs share it without linking
// bench/. Field numbers are those of the published scip.proto; the reader keeps its
// own copy of them on purpose, so that a wrong number in one is caught by the other
// only together with the specification (bench/scip.proto, read by Debian's protobuf
// in scip_parse_bench).
#ifndef AMEM_BENCH_SCIP_ENCODE_H_
#define AMEM_BENCH_SCIP_ENCODE_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/coding.h"
#include "tools/index/code_index.h"

namespace amem::bench::scip {

// ---- wire format ----
inline void PutKey(std::string* out, uint32_t field, uint32_t wire) {
  PutVarint64(out, (static_cast<uint64_t>(field) << 3) | wire);
}
inline void PutVarintField(std::string* out, uint32_t field, uint64_t v) {
  PutKey(out, field, 0);
  PutVarint64(out, v);
}
// An int32 as protobuf writes it: negative values sign-extended to 10 bytes.
inline void PutInt32Field(std::string* out, uint32_t field, int32_t v) {
  PutVarintField(out, field, static_cast<uint64_t>(static_cast<int64_t>(v)));
}
inline void PutLenField(std::string* out, uint32_t field, std::string_view v) {
  PutKey(out, field, 2);
  PutVarint64(out, v.size());
  out->append(v);
}
inline void PutPackedInt32(std::string* out, uint32_t field, const std::vector<int32_t>& v) {
  std::string packed;
  for (int32_t x : v) PutVarint64(&packed, static_cast<uint64_t>(static_cast<int64_t>(x)));
  PutLenField(out, field, packed);
}

// ---- scip.proto field numbers ----
namespace field {
constexpr uint32_t kIndexMetadata = 1, kIndexDocuments = 2, kIndexExternalSymbols = 3;
constexpr uint32_t kMetadataVersion = 1, kMetadataToolInfo = 2, kMetadataProjectRoot = 3;
constexpr uint32_t kToolName = 1, kToolVersion = 2, kToolArguments = 3;
constexpr uint32_t kDocPath = 1, kDocOccurrences = 2, kDocSymbols = 3, kDocLanguage = 4,
                   kDocText = 5;
constexpr uint32_t kOccRange = 1, kOccSymbol = 2, kOccRoles = 3, kOccOverrideDoc = 4,
                   kOccSyntaxKind = 5, kOccEnclosingRange = 7;
constexpr uint32_t kSymSymbol = 1, kSymDocumentation = 3, kSymRelationships = 4, kSymKind = 5,
                   kSymDisplayName = 6, kSymSignature = 7, kSymEnclosing = 8;
constexpr uint32_t kRelSymbol = 1, kRelIsReference = 2, kRelIsImplementation = 3,
                   kRelIsTypeDefinition = 4, kRelIsDefinition = 5;
}  // namespace field

// The SymbolInformation.Kind value of a kind word the reader produces (a few common
// ones); 0 (UnspecifiedKind) for any other.
inline uint32_t KindValue(std::string_view kind) {
  static constexpr struct {
    std::string_view name;
    uint32_t value;
  } kKinds[] = {{"class", 7},      {"constructor", 9}, {"enum", 11},     {"enum_member", 12},
                {"field", 15},     {"function", 17},   {"interface", 21}, {"macro", 25},
                {"method", 26},    {"namespace", 30},  {"struct", 49},    {"type", 55},
                {"variable", 61},  {"static_method", 80}};
  for (const auto& k : kKinds) {
    if (k.name == kind) return k.value;
  }
  return 0;
}

// [startLine, startChar, endChar] when the range is on one line, else four elements.
inline std::vector<int32_t> RangeElements(const index::SourceRange& r) {
  if (r.start_line == r.end_line) {
    return {static_cast<int32_t>(r.start_line), static_cast<int32_t>(r.start_col),
            static_cast<int32_t>(r.end_col)};
  }
  return {static_cast<int32_t>(r.start_line), static_cast<int32_t>(r.start_col),
          static_cast<int32_t>(r.end_line), static_cast<int32_t>(r.end_col)};
}

inline std::string EncodeOccurrence(const index::Occurrence& o) {
  std::string m;
  PutPackedInt32(&m, field::kOccRange, RangeElements(o.range));
  if (!o.symbol.empty()) PutLenField(&m, field::kOccSymbol, o.symbol);
  if (o.roles != 0) PutVarintField(&m, field::kOccRoles, o.roles);
  if (o.enclosing_range) {
    PutPackedInt32(&m, field::kOccEnclosingRange, RangeElements(*o.enclosing_range));
  }
  return m;
}

inline std::string EncodeRelationship(const index::Relationship& r) {
  std::string m;
  PutLenField(&m, field::kRelSymbol, r.symbol);
  if (r.is_reference) PutVarintField(&m, field::kRelIsReference, 1);
  if (r.is_implementation) PutVarintField(&m, field::kRelIsImplementation, 1);
  if (r.is_type_definition) PutVarintField(&m, field::kRelIsTypeDefinition, 1);
  if (r.is_definition) PutVarintField(&m, field::kRelIsDefinition, 1);
  return m;
}

// Documentation is written as one paragraph per "\n\n"-separated part, as the reader
// joins them.
inline std::string EncodeSymbolInfo(const index::SymbolInfo& s) {
  std::string m;
  PutLenField(&m, field::kSymSymbol, s.symbol);
  std::string_view doc = s.documentation;
  while (!doc.empty()) {
    const size_t cut = doc.find("\n\n");
    PutLenField(&m, field::kSymDocumentation, doc.substr(0, cut));
    doc.remove_prefix(cut == std::string_view::npos ? doc.size() : cut + 2);
  }
  for (const index::Relationship& r : s.relationships) {
    PutLenField(&m, field::kSymRelationships, EncodeRelationship(r));
  }
  if (uint32_t kind = KindValue(s.kind); kind != 0) PutVarintField(&m, field::kSymKind, kind);
  if (!s.display_name.empty()) PutLenField(&m, field::kSymDisplayName, s.display_name);
  if (!s.signature.empty()) {
    std::string sig;
    PutLenField(&sig, field::kDocLanguage, "cpp");
    PutLenField(&sig, field::kDocText, s.signature);
    PutLenField(&m, field::kSymSignature, sig);
  }
  if (!s.enclosing_symbol.empty()) PutLenField(&m, field::kSymEnclosing, s.enclosing_symbol);
  return m;
}

// The Document message (its digest in the reader is the XXH3-64 of these bytes).
inline std::string EncodeDocument(const index::Document& d) {
  std::string m;
  if (!d.language.empty()) PutLenField(&m, field::kDocLanguage, d.language);
  PutLenField(&m, field::kDocPath, d.path);
  for (const index::Occurrence& o : d.occurrences) {
    PutLenField(&m, field::kDocOccurrences, EncodeOccurrence(o));
  }
  for (const index::SymbolInfo& s : d.symbols) {
    PutLenField(&m, field::kDocSymbols, EncodeSymbolInfo(s));
  }
  return m;
}

inline std::string EncodeMetadata(std::string_view tool_name, std::string_view tool_version) {
  std::string tool;
  PutLenField(&tool, field::kToolName, tool_name);
  PutLenField(&tool, field::kToolVersion, tool_version);
  PutLenField(&tool, field::kToolArguments, "--flag");
  std::string m;
  PutVarintField(&m, field::kMetadataVersion, 0);
  PutLenField(&m, field::kMetadataToolInfo, tool);
  PutLenField(&m, field::kMetadataProjectRoot, "file:///src/project");
  return m;
}

// The whole index; `tool` "NAME VERSION" is split at its first space.
inline std::string EncodeIndex(const index::CodeIndex& index) {
  std::string out;
  const size_t space = index.tool.find(' ');
  PutLenField(&out, field::kIndexMetadata,
              EncodeMetadata(index.tool.substr(0, space),
                             space == std::string::npos ? "" : index.tool.substr(space + 1)));
  for (const index::Document& d : index.documents) {
    PutLenField(&out, field::kIndexDocuments, EncodeDocument(d));
  }
  for (const index::SymbolInfo& s : index.external_symbols) {
    PutLenField(&out, field::kIndexExternalSymbols, EncodeSymbolInfo(s));
  }
  return out;
}

// ---- synthetic indexes ----
struct GenOptions {
  uint64_t docs = 5000;
  uint64_t occ_per_doc = 200;
  uint64_t symbols_per_doc = 20;  // each with a definition occurrence among occ_per_doc
  uint64_t seed = 42;
  // This document's references are drawn again with another seed: the index of the
  // same tree after an edit of one file (bench/index_bench.sh). Past docs: none.
  uint64_t changed_doc = UINT64_MAX;
};

// A deterministic synthetic index: docs files of symbols_per_doc functions, methods
// and classes each (SymbolInformation with kind, display name, signature and
// documentation; a definition with an enclosing range), the remaining occurrences
// references to symbols anywhere in the index. Same options, same bytes.
inline std::string GenerateIndex(const GenOptions& opt) {
  uint64_t state = 0;
  auto next = [&state] {  // splitmix64
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  auto symbol_name = [](uint64_t doc, uint64_t i) {
    return "scip-cpp cargo synth 1.0 src/mod" + std::to_string(doc % 97) + "/file" +
           std::to_string(doc) + "/Type" + std::to_string(i / 4) + "#method" +
           std::to_string(i) + "().";
  };
  const uint64_t defs = std::min(opt.symbols_per_doc, opt.occ_per_doc);
  std::string out;
  PutLenField(&out, field::kIndexMetadata, EncodeMetadata("scip-synth", "1.0.0"));
  std::string doc_bytes;
  for (uint64_t d = 0; d < opt.docs; ++d) {
    // Each document draws from its own stream, so one changed document leaves the
    // others' bytes as they were.
    state = (opt.seed * 0x9E3779B97F4A7C15ull + 1) ^ (d * 0xD1B54A32D192ED03ull) ^
            (d == opt.changed_doc ? 0x5555555555555555ull : 0);
    index::Document doc;
    doc.path = "src/mod" + std::to_string(d % 97) + "/file" + std::to_string(d) + ".cc";
    doc.language = "cpp";
    static constexpr std::string_view kKinds[] = {"method", "function", "class", "field"};
    for (uint64_t i = 0; i < defs; ++i) {
      index::SymbolInfo& s = doc.symbols.emplace_back();
      s.symbol = symbol_name(d, i);
      s.kind = kKinds[i % 4];
      s.display_name = "method" + std::to_string(i);
      s.signature = "int method" + std::to_string(i) + "(int a, const std::string& b)";
      s.documentation = "Computes the value of method " + std::to_string(i) + ".";
      if (i % 4 == 1 && i > 0) {
        s.relationships.push_back({symbol_name(d, i - 1), true, true, false, false});
      }
    }
    const uint32_t lines_per_def = static_cast<uint32_t>(opt.occ_per_doc / (defs ? defs : 1) + 2);
    for (uint64_t i = 0; i < opt.occ_per_doc; ++i) {
      index::Occurrence& o = doc.occurrences.emplace_back();
      const uint32_t line = static_cast<uint32_t>(i + i / lines_per_def);
      if (i < defs) {
        const uint32_t start = static_cast<uint32_t>(i) * lines_per_def;
        o.symbol = symbol_name(d, i);
        o.roles = index::kRoleDefinition;
        o.range = {start, 4, start, 12};
        o.enclosing_range = index::SourceRange{start, 0, start + lines_per_def - 1, 1};
      } else {
        const uint64_t target = next() % (opt.docs * (defs ? defs : 1));
        o.symbol = defs ? symbol_name(target / defs, target % defs) : "local 1";
        o.roles = (i % 7 == 0) ? index::kRoleImport : index::kRoleReadAccess;
        o.range = {line, 8, line, 20};
      }
    }
    doc_bytes = EncodeDocument(doc);
    PutLenField(&out, field::kIndexDocuments, doc_bytes);
  }
  return out;
}

}  // namespace amem::bench::scip

#endif  // AMEM_BENCH_SCIP_ENCODE_H_
