// The SCIP reader: indexes written by the encoder of bench/scip_encode.h (or by hand,
// byte by byte, where the encoder cannot write the mistake) read back into the model,
// and every malformed input refused with an InvalidArgument that says what and where.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "bench/scip_encode.h"
#include "common/hash.h"
#include "tools/index/scip.h"

namespace amem::testing {
namespace {

using index::CodeIndex;
using index::Document;
using index::Occurrence;
using index::ReadScip;
using index::Relationship;
using index::SourceRange;
using index::SymbolInfo;
namespace enc = bench::scip;
namespace f = bench::scip::field;

// Every field of the model, as text, so that a mismatch shows in full.
std::string Describe(const SymbolInfo& s) {
  std::string out = "  sym " + s.symbol + " kind=" + s.kind + " name=" + s.display_name +
                    " sig=" + s.signature + " doc=" + s.documentation +
                    " in=" + s.enclosing_symbol + "\n";
  for (const Relationship& r : s.relationships) {
    out += "    rel " + r.symbol + " " + std::to_string(r.is_reference) +
           std::to_string(r.is_implementation) + std::to_string(r.is_type_definition) +
           std::to_string(r.is_definition) + "\n";
  }
  return out;
}
std::string Describe(const SourceRange& r) {
  return std::to_string(r.start_line) + ":" + std::to_string(r.start_col) + "-" +
         std::to_string(r.end_line) + ":" + std::to_string(r.end_col);
}
std::string Describe(const CodeIndex& index) {
  std::string out = "indexer=" + index.indexer + " tool=" + index.tool + "\n";
  for (const Document& d : index.documents) {
    out += "doc " + d.path + " lang=" + d.language + " digest=" + FormatHexId(d.digest) +
           " decoded=" + std::to_string(d.decoded) + "\n";
    for (const Occurrence& o : d.occurrences) {
      out += "  occ " + Describe(o.range) + " " + o.symbol + " roles=" + std::to_string(o.roles) +
             " enc=" + (o.enclosing_range ? Describe(*o.enclosing_range) : "-") + "\n";
    }
    for (const SymbolInfo& s : d.symbols) out += Describe(s);
  }
  for (const SymbolInfo& s : index.external_symbols) out += "ext" + Describe(s);
  return out;
}

// A small index using every field the reader keeps, documents out of path order.
CodeIndex SampleIndex() {
  CodeIndex index;
  index.indexer = "scip";
  index.tool = "scip-clang 0.3.1";
  Document& b = index.documents.emplace_back();
  b.path = "src/b.cc";
  b.language = "cpp";
  SymbolInfo& parse = b.symbols.emplace_back();
  parse.symbol = "cxx . . $ ns/Reader#Parse().";
  parse.kind = "method";
  parse.display_name = "Parse";
  parse.signature = "Status Parse(std::string_view in)";
  parse.documentation = "Parses the input.\n\nReturns InvalidArgument on bad input.";
  parse.enclosing_symbol = "cxx . . $ ns/Reader#";
  parse.relationships.push_back({"cxx . . $ ns/Base#Parse().", true, true, false, false});
  parse.relationships.push_back({"cxx . . $ ns/Type#", false, false, true, true});
  SymbolInfo& reader = b.symbols.emplace_back();
  reader.symbol = "cxx . . $ ns/Reader#";
  reader.kind = "class";
  SymbolInfo& local = b.symbols.emplace_back();
  local.symbol = "local 3";
  local.kind = "variable";
  local.enclosing_symbol = "cxx . . $ ns/Reader#Parse().";
  Occurrence& def = b.occurrences.emplace_back();
  def.range = {10, 9, 10, 14};  // one line: three elements on the wire
  def.symbol = "cxx . . $ ns/Reader#Parse().";  // `parse` may have moved
  def.roles = index::kRoleDefinition;
  def.enclosing_range = SourceRange{9, 0, 20, 1};  // four elements
  Occurrence& ref = b.occurrences.emplace_back();
  ref.range = {12, 2, 13, 0};
  ref.symbol = "cxx . . $ ns/Helper().";
  ref.roles = index::kRoleReadAccess | index::kRoleTest;
  Document& a = index.documents.emplace_back();
  a.path = "include/ns/a.h";
  Occurrence& imp = a.occurrences.emplace_back();
  imp.range = {0, 0, 0, 0};
  imp.symbol = "cxx . . $ ns/Reader#";
  imp.roles = index::kRoleImport;
  SymbolInfo& ext = index.external_symbols.emplace_back();
  ext.symbol = "cxx . . $ std/string#";
  ext.kind = "struct";
  ext.documentation = "The string.";
  return index;
}

// What the reader should make of SampleIndex(): documents sorted, digests set.
CodeIndex Expected(CodeIndex index) {
  for (Document& d : index.documents) d.digest = Hash64(enc::EncodeDocument(d));
  std::sort(index.documents.begin(), index.documents.end(),
            [](const Document& x, const Document& y) { return x.path < y.path; });
  return index;
}

// The error of reading `bytes`, or "OK".
std::string ErrorOf(std::string_view bytes, const index::ScipOptions& options = {}) {
  auto r = ReadScip(bytes, options);
  if (r.ok()) return "OK";
  REQUIRE(r.status().IsInvalidArgument());
  return r.status().message();
}

// An index with a metadata message and one document with the given message bytes.
std::string WithDocument(std::string_view doc) {
  std::string out;
  enc::PutLenField(&out, f::kIndexMetadata, enc::EncodeMetadata("t", "1"));
  enc::PutLenField(&out, f::kIndexDocuments, doc);
  return out;
}
std::string DocWith(std::string_view path, std::string_view rest) {
  std::string doc;
  enc::PutLenField(&doc, f::kDocPath, path);
  doc.append(rest);
  return doc;
}
std::string OccurrenceIn(std::string_view occ) {
  std::string field;
  enc::PutLenField(&field, f::kDocOccurrences, occ);
  return WithDocument(DocWith("src/a.cc", field));
}
std::string SymbolIn(std::string_view sym) {
  std::string field;
  enc::PutLenField(&field, f::kDocSymbols, sym);
  return WithDocument(DocWith("src/a.cc", field));
}
// Where WithDocument's document begins, and where the one occurrence or symbol
// information of OccurrenceIn / SymbolIn begins (after its key and length).
size_t DocAt() { return WithDocument("").size(); }
size_t ItemAt() { return DocAt() + DocWith("src/a.cc", "").size() + 2; }
std::string At(size_t byte) { return "byte " + std::to_string(byte) + ": "; }
std::string InOccurrence(size_t byte) {
  return "document 'src/a.cc': occurrence at byte " + std::to_string(ItemAt()) + ": " + At(byte);
}
std::string InSymbol(size_t byte) {
  return "document 'src/a.cc': symbol information at byte " + std::to_string(ItemAt()) + ": " +
         At(byte);
}

std::string Occ(const std::vector<int32_t>& range, std::string_view symbol = "s x") {
  std::string occ;
  enc::PutPackedInt32(&occ, f::kOccRange, range);
  if (!symbol.empty()) enc::PutLenField(&occ, f::kOccSymbol, symbol);
  return occ;
}
std::string Sym(std::string_view symbol) {
  std::string sym;
  enc::PutLenField(&sym, f::kSymSymbol, symbol);
  return sym;
}

// One unknown field of each wire type, a group holding a nested group included.
std::string UnknownFields() {
  std::string u;
  enc::PutVarintField(&u, 90, 300);
  enc::PutKey(&u, 91, 1);
  u.append(8, '\x01');
  enc::PutLenField(&u, 92, "skipped");
  enc::PutKey(&u, 93, 3);
  enc::PutVarintField(&u, 1, 7);
  enc::PutKey(&u, 94, 3);
  enc::PutLenField(&u, 2, "inner");
  enc::PutKey(&u, 94, 4);
  enc::PutKey(&u, 93, 4);
  enc::PutKey(&u, 95, 5);
  u.append(4, '\x02');
  return u;
}

TEST_CASE("ReadScip reads every field it keeps, documents sorted by path", "[scip]") {
  const CodeIndex sample = SampleIndex();
  auto r = ReadScip(enc::EncodeIndex(sample));
  REQUIRE(r.ok());
  CHECK(Describe(*r) == Describe(Expected(sample)));
  REQUIRE(r->documents.size() == 2);
  CHECK(r->documents[0].path == "include/ns/a.h");
  CHECK(r->documents[1].symbols[0].documentation ==
        "Parses the input.\n\nReturns InvalidArgument on bad input.");
  CHECK(r->documents[1].occurrences[0].range == SourceRange{10, 9, 10, 14});
  CHECK(r->documents[1].occurrences[0].enclosing_range == SourceRange{9, 0, 20, 1});
  CHECK_FALSE(r->documents[1].occurrences[1].enclosing_range.has_value());
}

TEST_CASE("ReadScip: an empty input is an empty index", "[scip]") {
  auto r = ReadScip("");
  REQUIRE(r.ok());
  CHECK(r->indexer == "scip");
  CHECK(r->tool.empty());
  CHECK(r->documents.empty());
}

TEST_CASE("ReadScip: tool is NAME VERSION, either part alone without a space", "[scip]") {
  auto tool_of = [](std::string_view name, std::string_view version) {
    std::string tool, meta, out;
    if (!name.empty()) enc::PutLenField(&tool, f::kToolName, name);
    if (!version.empty()) enc::PutLenField(&tool, f::kToolVersion, version);
    enc::PutLenField(&meta, f::kMetadataToolInfo, tool);
    enc::PutLenField(&out, f::kIndexMetadata, meta);
    auto r = ReadScip(out);
    REQUIRE(r.ok());
    return r->tool;
  };
  CHECK(tool_of("scip-go", "v0.1") == "scip-go v0.1");
  CHECK(tool_of("scip-go", "") == "scip-go");
  CHECK(tool_of("", "v0.1") == "v0.1");
}

TEST_CASE("ReadScip skips unknown fields of every wire type at every level", "[scip]") {
  const std::string u = UnknownFields();
  std::string rel = enc::EncodeRelationship({"s rel", false, true, false, false}) + u;
  std::string sig;
  enc::PutLenField(&sig, f::kDocOccurrences, Occ({0, 0, 1}));  // ignored in a signature
  enc::PutLenField(&sig, f::kDocText, "void f()");
  std::string sym = u + Sym("s f") + u;
  enc::PutLenField(&sym, f::kSymRelationships, rel);
  enc::PutLenField(&sym, f::kSymSignature, sig + u);
  std::string occ = u + Occ({1, 2, 3}, "s f");
  enc::PutLenField(&occ, f::kOccOverrideDoc, "ignored");
  enc::PutVarintField(&occ, f::kOccSyntaxKind, 6);
  occ += u;
  std::string doc = u;
  enc::PutLenField(&doc, f::kDocText, "int f();");
  enc::PutVarintField(&doc, 6, 1);  // position_encoding
  enc::PutLenField(&doc, f::kDocOccurrences, occ);
  enc::PutLenField(&doc, f::kDocSymbols, sym);
  enc::PutLenField(&doc, f::kDocPath, "a.cc");
  std::string tool = u;
  enc::PutLenField(&tool, f::kToolName, "x");
  std::string meta = u;
  enc::PutLenField(&meta, f::kMetadataToolInfo, tool);
  std::string index = u;
  enc::PutLenField(&index, f::kIndexMetadata, meta);
  enc::PutLenField(&index, f::kIndexDocuments, doc);
  index += u;
  auto r = ReadScip(index);
  REQUIRE(r.ok());
  CHECK(r->tool == "x");
  REQUIRE(r->documents.size() == 1);
  const Document& d = r->documents[0];
  CHECK(d.path == "a.cc");
  REQUIRE(d.occurrences.size() == 1);
  CHECK(d.occurrences[0].range == SourceRange{1, 2, 1, 3});
  REQUIRE(d.symbols.size() == 1);
  CHECK(d.symbols[0].signature == "void f()");
  REQUIRE(d.symbols[0].relationships.size() == 1);
  CHECK(d.symbols[0].relationships[0].symbol == "s rel");
  CHECK(d.symbols[0].relationships[0].is_implementation);
}

TEST_CASE("ReadScip reads ranges packed, unpacked and in pieces", "[scip]") {
  std::string occ;
  for (int v : {4, 5, 6, 7}) enc::PutInt32Field(&occ, f::kOccRange, v);
  enc::PutLenField(&occ, f::kOccSymbol, "s x");
  enc::PutPackedInt32(&occ, f::kOccEnclosingRange, {1, 0});
  enc::PutInt32Field(&occ, f::kOccEnclosingRange, 9);
  auto r = ReadScip(OccurrenceIn(occ));
  REQUIRE(r.ok());
  const Occurrence& o = r->documents[0].occurrences[0];
  CHECK(o.range == SourceRange{4, 5, 6, 7});
  CHECK(o.enclosing_range == SourceRange{1, 0, 1, 9});
}

TEST_CASE("ReadScip names kinds in lower case", "[scip]") {
  auto kind_of = [](uint64_t value) {
    std::string sym = Sym("s k");
    enc::PutVarintField(&sym, f::kSymKind, value);
    auto r = ReadScip(SymbolIn(sym));
    REQUIRE(r.ok());
    return r->documents[0].symbols[0].kind;
  };
  CHECK(kind_of(26) == "method");
  CHECK(kind_of(17) == "function");
  CHECK(kind_of(7) == "class");
  CHECK(kind_of(49) == "struct");
  CHECK(kind_of(21) == "interface");
  CHECK(kind_of(30) == "namespace");
  CHECK(kind_of(15) == "field");
  CHECK(kind_of(61) == "variable");
  CHECK(kind_of(9) == "constructor");
  CHECK(kind_of(11) == "enum");
  CHECK(kind_of(12) == "enum_member");
  CHECK(kind_of(55) == "type");  // TypeAlias
  CHECK(kind_of(54) == "type");
  CHECK(kind_of(25) == "macro");
  CHECK(kind_of(66) == "abstract_method");
  CHECK(kind_of(82) == "static_variable");
  CHECK(kind_of(0) == "");
  CHECK(kind_of(83) == "");
  CHECK(kind_of(~0ull) == "");
}

TEST_CASE("ReadScip drops occurrences without a symbol", "[scip]") {
  std::string field;
  enc::PutLenField(&field, f::kDocOccurrences, Occ({0, 0, 1}, ""));
  enc::PutLenField(&field, f::kDocOccurrences, Occ({2, 0, 1}, "s y"));
  auto r = ReadScip(WithDocument(DocWith("a.cc", field)));
  REQUIRE(r.ok());
  REQUIRE(r->documents[0].occurrences.size() == 1);
  CHECK(r->documents[0].occurrences[0].symbol == "s y");
}

TEST_CASE("ReadScip: a symbol may be defined in two documents", "[scip]") {
  std::string one, two;
  enc::PutLenField(&one, f::kDocSymbols, Sym("s dup"));
  enc::PutLenField(&two, f::kDocSymbols, Sym("s dup"));
  std::string index = WithDocument(DocWith("a.cc", one));
  enc::PutLenField(&index, f::kIndexDocuments, DocWith("b.cc", two));
  CHECK(ErrorOf(index) == "OK");
}

TEST_CASE("ReadScip: skip_document sees path and digest; skipped ones stay undecoded",
          "[scip]") {
  const CodeIndex sample = SampleIndex();
  const CodeIndex expected = Expected(sample);
  std::vector<std::pair<std::string, uint64_t>> seen;
  index::ScipOptions options;
  options.skip_document = [&](std::string_view path, uint64_t digest) {
    seen.emplace_back(std::string(path), digest);
    return path == "src/b.cc";
  };
  auto r = ReadScip(enc::EncodeIndex(sample), options);
  REQUIRE(r.ok());
  // Called in file order, before the documents are sorted.
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == std::pair<std::string, uint64_t>("src/b.cc", expected.documents[1].digest));
  CHECK(seen[1] ==
        std::pair<std::string, uint64_t>("include/ns/a.h", expected.documents[0].digest));
  REQUIRE(r->documents.size() == 2);
  const Document& skipped = r->documents[1];
  CHECK(skipped.path == "src/b.cc");
  CHECK(skipped.language == "cpp");
  CHECK(skipped.digest == expected.documents[1].digest);
  CHECK_FALSE(skipped.decoded);
  CHECK(skipped.symbols.empty());
  CHECK(skipped.occurrences.empty());
  CHECK(r->documents[0].decoded);
  CHECK(r->documents[0].occurrences.size() == 1);
  CHECK(r->external_symbols.size() == 1);

  // A skipped document's body is not read: a bad range inside it goes unseen, but
  // its path is still checked.
  std::string bad_occ;
  enc::PutLenField(&bad_occ, f::kDocOccurrences, Occ({1, 2}));
  options.skip_document = [](std::string_view, uint64_t) { return true; };
  CHECK(ErrorOf(WithDocument(DocWith("a.cc", bad_occ)), options) == "OK");
  CHECK(ErrorOf(WithDocument(DocWith("a.cc", bad_occ))).find("range has 2 elements") !=
        std::string::npos);
  CHECK(ErrorOf(WithDocument(DocWith("../a.cc", "")), options).find("'..' segment") !=
        std::string::npos);
}

TEST_CASE("ReadScip: every prefix of an index is an error or ends on a field", "[scip]") {
  const std::string bytes = enc::EncodeIndex(SampleIndex());
  // Where the index's own fields end: a cut there is a shorter, valid index.
  std::vector<size_t> boundaries = {0};
  {
    std::string_view in = bytes;
    while (!in.empty()) {
      uint64_t key = 0;
      std::string_view value;
      REQUIRE(GetVarint64(&in, &key));
      REQUIRE(GetLengthPrefixed(&in, &value));
      boundaries.push_back(bytes.size() - in.size());
    }
  }
  for (size_t n = 0; n < bytes.size(); ++n) {
    INFO("prefix of " << n << " bytes");
    auto r = ReadScip(std::string_view(bytes).substr(0, n));
    const bool boundary =
        std::find(boundaries.begin(), boundaries.end(), n) != boundaries.end();
    CHECK(r.ok() == boundary);
    if (!r.ok()) {
      CHECK(r.status().IsInvalidArgument());
      CHECK(r.status().message().find("byte ") != std::string::npos);
    }
  }
}

TEST_CASE("ReadScip: a flipped byte anywhere gives an index or an error", "[scip]") {
  const std::string bytes = enc::EncodeIndex(SampleIndex());
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (unsigned char x : {0x01, 0x80, 0xff}) {
      std::string copy = bytes;
      copy[i] = static_cast<char>(copy[i] ^ x);
      auto r = ReadScip(copy);
      if (!r.ok()) CHECK(r.status().IsInvalidArgument());
    }
  }
}

TEST_CASE("ReadScip refuses malformed protobuf", "[scip]") {
  // Top-level keys of 11 bytes, and a tenth byte with more than bit 63.
  CHECK(ErrorOf(std::string(10, '\xff') + '\x01') == "byte 0: varint longer than 10 bytes");
  CHECK(ErrorOf(std::string(9, '\xff') + '\x02') == "byte 0: varint overflows 64 bits");
  CHECK(ErrorOf("\x12") == "byte 1: truncated varint");
  CHECK(ErrorOf("\x12\x80") == "byte 1: truncated varint");
  CHECK(ErrorOf("\x12\x05" "abc") ==
        "byte 1: length 5 runs past the end of its message (3 bytes left)");
  // A length near 2^64 allocates nothing.
  CHECK(ErrorOf("\x12\xff\xff\xff\xff\xff\xff\xff\xff\x7f") ==
        "byte 1: length 9223372036854775807 runs past the end of its message (0 bytes left)");
  CHECK(ErrorOf(std::string("\x00\x00", 2)) == "byte 0: field number 0 out of range");
  // Field 15 is unknown to the reader: its wire type can only be checked by skipping.
  CHECK(ErrorOf("\x7e") == "byte 0: invalid wire type 6");
  CHECK(ErrorOf("\x7f") == "byte 0: invalid wire type 7");
  CHECK(ErrorOf("\x7c") == "byte 0: end-group of field 15 without its start");
  CHECK(ErrorOf("\x79\x01\x02") == "byte 1: truncated fixed64");
  CHECK(ErrorOf("\x7d\x01\x02") == "byte 1: truncated fixed32");
  // A length inside a document past the document's own end, though not the input's.
  std::string doc = DocWith("a.cc", "");
  doc += "\x12\x04";  // occurrences, 4 bytes of which the document holds none
  std::string index;
  enc::PutLenField(&index, f::kIndexDocuments, doc);
  index += "\x0a\x00\x0a\x00";
  CHECK(ErrorOf(index) ==
        "document at byte 2: byte 9: length 4 runs past the end of its message (0 bytes left)");
}

TEST_CASE("ReadScip bounds the nesting of unknown groups", "[scip]") {
  auto nested = [](int depth) {
    std::string out;
    for (int i = 0; i < depth; ++i) enc::PutKey(&out, 100, 3);
    for (int i = 0; i < depth; ++i) enc::PutKey(&out, 100, 4);
    return out;
  };
  CHECK(ErrorOf(nested(index::kMaxScipGroupDepth)) == "OK");
  CHECK(ErrorOf(nested(index::kMaxScipGroupDepth + 1)) ==
        "byte " + std::to_string(2 * index::kMaxScipGroupDepth) + ": groups nested deeper than " +
            std::to_string(index::kMaxScipGroupDepth));
  std::string unended;
  enc::PutKey(&unended, 100, 3);
  enc::PutVarintField(&unended, 1, 1);
  CHECK(ErrorOf(unended) == "byte 4: group of field 100 not ended");
  std::string crossed;
  enc::PutKey(&crossed, 100, 3);
  enc::PutKey(&crossed, 101, 4);
  CHECK(ErrorOf(crossed) == "byte 2: end-group of field 101 without its start");
}

TEST_CASE("ReadScip refuses a known field of the wrong wire type", "[scip]") {
  std::string index;
  enc::PutVarintField(&index, f::kIndexDocuments, 1);
  CHECK(ErrorOf(index) == "byte 0: field documents (2) has wire type 0, expected 2");
  index.clear();
  enc::PutVarintField(&index, f::kIndexMetadata, 1);
  CHECK(ErrorOf(index) == "byte 0: field metadata (1) has wire type 0, expected 2");
  index.clear();
  enc::PutVarintField(&index, f::kIndexExternalSymbols, 1);
  CHECK(ErrorOf(index) == "byte 0: field external_symbols (3) has wire type 0, expected 2");

  std::string doc;
  enc::PutVarintField(&doc, f::kDocPath, 1);
  CHECK(ErrorOf(WithDocument(doc)).find("field relative_path (1) has wire type 0, expected 2") !=
        std::string::npos);
  std::string roles = Occ({0, 0, 1});
  enc::PutLenField(&roles, f::kOccRoles, "x");
  // After the range (5 bytes) and the symbol (5 bytes).
  CHECK(ErrorOf(OccurrenceIn(roles)) ==
        InOccurrence(ItemAt() + 10) + "field symbol_roles (3) has wire type 2, expected 0");
  std::string range;
  enc::PutKey(&range, f::kOccRange, 5);
  range.append(4, '\0');
  CHECK(ErrorOf(OccurrenceIn(range)).find("field range (1) has wire type 5, expected 2") !=
        std::string::npos);
  std::string kind = Sym("s k");
  enc::PutLenField(&kind, f::kSymKind, "x");
  CHECK(ErrorOf(SymbolIn(kind)).find("field kind (5) has wire type 2, expected 0") !=
        std::string::npos);
  std::string rel;
  enc::PutLenField(&rel, f::kRelSymbol, "s r");
  enc::PutLenField(&rel, f::kRelIsImplementation, "x");
  std::string with_rel = Sym("s k");
  enc::PutLenField(&with_rel, f::kSymRelationships, rel);
  CHECK(ErrorOf(SymbolIn(with_rel)).find("field is_implementation (3) has wire type 2") !=
        std::string::npos);
  std::string text;
  enc::PutVarintField(&text, f::kDocText, 1);
  CHECK(ErrorOf(WithDocument(DocWith("a.cc", text))).find("field text (5) has wire type 0") !=
        std::string::npos);
}

TEST_CASE("ReadScip refuses bad ranges", "[scip]") {
  auto error_of = [](const std::string& occ) { return ErrorOf(OccurrenceIn(occ)); };
  const std::string where = InOccurrence(ItemAt());
  CHECK(error_of(Occ({1, 2})) == where + "range has 2 elements, expected 3 or 4");
  CHECK(error_of(Occ({1, 2, 3, 4, 5})) == where + "range has 5 elements, expected 3 or 4");
  CHECK(error_of(Occ({})) == where + "range has 0 elements, expected 3 or 4");
  // The byte of the negative element itself, after the key, the length and "1".
  CHECK(error_of(Occ({1, -2, 3})) == InOccurrence(ItemAt() + 3) + "range has a negative value");
  CHECK(error_of(Occ({1, 4, 3})) == where + "range starts after it ends");
  CHECK(error_of(Occ({5, 0, 4, 9})) == where + "range starts after it ends");
  CHECK(error_of(Occ({5, 3, 5, 2})) == where + "range starts after it ends");
  CHECK(error_of(Occ({5, 3, 5, 3})) == "OK");  // empty, at one point
  CHECK(error_of(Occ({1, 2, 1})).find("starts after it ends") != std::string::npos);
  std::string wide;
  enc::PutKey(&wide, f::kOccRange, 0);
  PutVarint64(&wide, 1ull << 32);
  CHECK(error_of(wide).find("range has a value past int32") != std::string::npos);
  std::string enclosing = Occ({1, 2, 3});
  enc::PutPackedInt32(&enclosing, f::kOccEnclosingRange, {1, 2});
  CHECK(error_of(enclosing).find("enclosing_range has 2 elements, expected 3 or 4") !=
        std::string::npos);
  enclosing = Occ({1, 2, 3});
  enc::PutPackedInt32(&enclosing, f::kOccEnclosingRange, {9, 0, 8, 0});
  CHECK(error_of(enclosing).find("enclosing_range starts after it ends") != std::string::npos);
}

TEST_CASE("ReadScip refuses paths that are not canonical and relative", "[scip]") {
  auto error_of = [](std::string_view path) { return ErrorOf(WithDocument(DocWith(path, ""))); };
  const std::string where = "document at byte " + std::to_string(DocAt()) + ": " + At(DocAt());
  CHECK(error_of("") == where + "relative_path '' is empty");
  CHECK(error_of("/src/a.cc") == where + "relative_path '/src/a.cc' is absolute");
  CHECK(error_of("src/../a.cc").find("has a '..' segment") != std::string::npos);
  CHECK(error_of("..").find("has a '..' segment") != std::string::npos);
  CHECK(error_of("./a.cc").find("has a '.' segment") != std::string::npos);
  CHECK(error_of("src/.").find("has a '.' segment") != std::string::npos);
  CHECK(error_of("src//a.cc").find("has an empty segment") != std::string::npos);
  CHECK(error_of("src/").find("has an empty segment") != std::string::npos);
  CHECK(error_of("src\\a.cc").find("has a backslash") != std::string::npos);
  CHECK(error_of(std::string("a\0b", 3)).find("has a NUL byte") != std::string::npos);
  CHECK(error_of("a\xff.cc") == where + "relative_path is not valid UTF-8");
  CHECK(error_of("src/.hidden/..a") == "OK");
  CHECK(ErrorOf(WithDocument("")) == where + "no relative_path");
}

TEST_CASE("ReadScip refuses duplicate document paths", "[scip]") {
  std::string index = WithDocument(DocWith("b.cc", ""));
  enc::PutLenField(&index, f::kIndexDocuments, DocWith("a.cc", ""));
  enc::PutLenField(&index, f::kIndexDocuments, DocWith("b.cc", ""));
  // Each document is 6 bytes, after a key and a length.
  CHECK(ErrorOf(index) == "duplicate document path 'b.cc' (documents at byte " +
                              std::to_string(DocAt()) + " and byte " +
                              std::to_string(DocAt() + 16) + ")");
}

TEST_CASE("ReadScip refuses a symbol described twice", "[scip]") {
  std::string doc;
  enc::PutLenField(&doc, f::kDocSymbols, Sym("s a"));
  enc::PutLenField(&doc, f::kDocSymbols, Sym("s b"));
  enc::PutLenField(&doc, f::kDocSymbols, Sym("s a"));
  CHECK(ErrorOf(WithDocument(DocWith("x.cc", doc))) == "document 'x.cc': duplicate symbol 's a'");
  std::string index;
  enc::PutLenField(&index, f::kIndexExternalSymbols, Sym("s e"));
  enc::PutLenField(&index, f::kIndexExternalSymbols, Sym("s f"));
  CHECK(ErrorOf(index) == "OK");
  enc::PutLenField(&index, f::kIndexExternalSymbols, Sym("s e"));
  CHECK(ErrorOf(index) == "external_symbols: duplicate symbol 's e'");
}

TEST_CASE("ReadScip refuses empty, oversized and non-UTF-8 strings", "[scip]") {
  const std::string at = InSymbol(ItemAt());
  CHECK(ErrorOf(SymbolIn("")) == at + "symbol is empty");
  CHECK(ErrorOf(SymbolIn(Sym(""))) == at + "symbol is empty");
  const std::string longest(index::kMaxScipSymbolBytes, 's');
  CHECK(ErrorOf(SymbolIn(Sym(longest))) == "OK");
  // Lengths of 3 bytes, not 1, for the document and the symbol information.
  CHECK(ErrorOf(SymbolIn(Sym(longest + "s"))) ==
        "document 'src/a.cc': symbol information at byte " + std::to_string(ItemAt() + 4) + ": " +
            At(ItemAt() + 4) + "symbol of 16385 bytes exceeds the limit of 16384");
  CHECK(ErrorOf(OccurrenceIn(Occ({0, 0, 1}, longest + "s"))).find("exceeds the limit") !=
        std::string::npos);
  CHECK(ErrorOf(SymbolIn(Sym("s \xc0\x80"))) == at + "symbol is not valid UTF-8");
  CHECK(ErrorOf(OccurrenceIn(Occ({0, 0, 1}, "s \xed\xa0\x80"))).find("symbol is not valid UTF-8") !=
        std::string::npos);

  std::string rel;
  enc::PutVarintField(&rel, f::kRelIsReference, 1);
  std::string sym = Sym("s a");
  enc::PutLenField(&sym, f::kSymRelationships, rel);
  CHECK(ErrorOf(SymbolIn(sym)).find("relationship symbol is empty") != std::string::npos);

  auto field_error = [](uint32_t field, std::string_view value) {
    std::string sym = Sym("s a");
    enc::PutLenField(&sym, field, value);
    return ErrorOf(SymbolIn(sym));
  };
  CHECK(field_error(f::kSymDocumentation, "\xff").find("documentation is not valid UTF-8") !=
        std::string::npos);
  CHECK(field_error(f::kSymDisplayName, "\xff").find("display_name is not valid UTF-8") !=
        std::string::npos);
  CHECK(field_error(f::kSymEnclosing, "\xff").find("enclosing_symbol is not valid UTF-8") !=
        std::string::npos);
  CHECK(field_error(f::kSymEnclosing, longest + "s").find("exceeds the limit") !=
        std::string::npos);
  std::string sig;
  enc::PutLenField(&sig, f::kDocText, "\xff");
  CHECK(field_error(f::kSymSignature, sig).find("signature_documentation.text is not valid") !=
        std::string::npos);

  std::string lang;
  enc::PutLenField(&lang, f::kDocLanguage, "c\xff");
  CHECK(ErrorOf(WithDocument(DocWith("a.cc", lang))).find("language is not valid UTF-8") !=
        std::string::npos);
  std::string tool, meta, index;
  enc::PutLenField(&tool, f::kToolName, "\xff");
  enc::PutLenField(&meta, f::kMetadataToolInfo, tool);
  enc::PutLenField(&index, f::kIndexMetadata, meta);
  CHECK(ErrorOf(index) == "metadata: byte 4: tool_info.name is not valid UTF-8");
  meta.clear();
  index.clear();
  enc::PutLenField(&meta, f::kMetadataProjectRoot, "\xff");
  enc::PutLenField(&index, f::kIndexMetadata, meta);
  CHECK(ErrorOf(index) == "metadata: byte 2: project_root is not valid UTF-8");
}

TEST_CASE("A generated index reads back whole", "[scip]") {
  enc::GenOptions options;
  options.docs = 30;
  options.occ_per_doc = 50;
  options.symbols_per_doc = 8;
  const std::string bytes = enc::GenerateIndex(options);
  CHECK(bytes == enc::GenerateIndex(options));
  auto r = ReadScip(bytes);
  REQUIRE(r.ok());
  CHECK(r->tool == "scip-synth 1.0.0");
  REQUIRE(r->documents.size() == 30);
  size_t occurrences = 0, symbols = 0;
  for (const Document& d : r->documents) {
    occurrences += d.occurrences.size();
    symbols += d.symbols.size();
  }
  CHECK(occurrences == 30 * 50);
  CHECK(symbols == 30 * 8);
}

}  // namespace
}  // namespace amem::testing
