#include "tools/index/ctags.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "common/hash.h"
#include "common/json_parse.h"

namespace amem::index {

namespace {

// One validated tag line. The ctags reader's helpers carry a Ctags prefix: the
// library is compiled in unity batches, where anonymous namespaces are shared.
struct CtagsTag {
  std::string path;  // normalised
  std::string name;
  std::string kind;
  std::string scope;  // with "." written "::"
  std::string scope_kind;
  std::string signature;  // whitespace collapsed
  std::string language;
  uint32_t line = 0;  // 1-based
  uint32_t end = 0;   // 1-based, >= line
  size_t input_line = 0;
  std::string key;  // without "symbol:"
};

struct CtagsFile {
  std::vector<CtagsTag> tags;
  Hasher64 lines_digest;  // the file's ctags lines, when there is no root
};

Status CtagsLineError(size_t input_line, std::string_view why) {
  return Status::InvalidArgument("ctags JSON line " + std::to_string(input_line) + ": " +
                                 std::string(why));
}

bool CtagsHasControl(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
}

// Reads the string member `field`: absent is "" (or an error when required).
Status CtagsString(const nlohmann::json& obj, const char* field, bool required,
                   size_t input_line, std::string* out) {
  auto it = obj.find(field);
  if (it == obj.end()) {
    if (required) return CtagsLineError(input_line, std::string("missing \"") + field + "\"");
    out->clear();
    return Status::OK();
  }
  if (!it->is_string()) {
    return CtagsLineError(input_line, std::string("\"") + field + "\" is not a string");
  }
  *out = it->get<std::string>();
  return Status::OK();
}

Status CtagsLineNumber(const nlohmann::json& obj, const char* field, bool required,
                       size_t input_line, uint32_t* out) {
  auto it = obj.find(field);
  if (it == obj.end()) {
    if (required) return CtagsLineError(input_line, std::string("missing \"") + field + "\"");
    *out = 0;
    return Status::OK();
  }
  // A float, a negative number and one beyond 64 bits are all rejected here.
  if (!it->is_number_unsigned() || it->get<uint64_t>() < 1 ||
      it->get<uint64_t>() > kCtagsMaxLine) {
    return CtagsLineError(input_line, std::string("\"") + field + "\" is not a line number (1.." +
                                          std::to_string(kCtagsMaxLine) + ")");
  }
  *out = static_cast<uint32_t>(it->get<uint64_t>());
  return Status::OK();
}

std::string CtagsCollapseSpace(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::string CtagsScope(std::string_view scope) {
  std::string out;
  for (size_t i = 0; i < scope.size(); ++i) {
    if (scope[i] == '.') {
      out += "::";
    } else {
      out += scope[i];
    }
  }
  return out;
}

// ctags prints paths as its command line gave them: "./src/a.cc", "src//a.cc",
// or absolute. Paths are made relative to the root, '/'-separated, without "."
// segments; ".." and absolute paths are resolved lexically (symbolic links are not
// followed) and must stay under the root.
Status CtagsNormalizePath(std::string_view raw, const std::string& root, size_t input_line,
                          std::string* out) {
  if (raw.empty()) return CtagsLineError(input_line, "empty \"path\"");
  const std::string quoted = "path \"" + std::string(raw) + "\"";
  bool needs_root = raw.front() == '/';
  std::vector<std::string_view> segments;
  size_t start = 0;
  while (start <= raw.size()) {
    size_t slash = raw.find('/', start);
    if (slash == std::string_view::npos) slash = raw.size();
    std::string_view seg = raw.substr(start, slash - start);
    if (seg == "..") needs_root = true;
    if (!seg.empty() && seg != ".") segments.push_back(seg);
    start = slash + 1;
  }
  if (needs_root) {
    if (root.empty()) {
      return CtagsLineError(input_line, quoted + " is absolute or has \"..\" and no root is given");
    }
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path base = fs::absolute(fs::path(root), ec).lexically_normal();
    if (ec) return Status::IOError("root \"" + root + "\": " + ec.message());
    const fs::path rel = (base / fs::path(raw)).lexically_normal().lexically_relative(base);
    const std::string rel_text = rel.generic_string();
    if (rel.empty() || rel_text == "." || rel_text == ".." || rel_text.rfind("../", 0) == 0) {
      return CtagsLineError(input_line, quoted + " is not under the root \"" + root + "\"");
    }
    *out = rel_text;
    return Status::OK();
  }
  if (segments.empty()) return CtagsLineError(input_line, quoted + " names no file");
  out->clear();
  for (std::string_view seg : segments) {
    if (!out->empty()) *out += '/';
    *out += seg;
  }
  return Status::OK();
}

// The tag's key (docs/CODE.md §1) made unique in its file. `seen_names` holds the
// qualified names already keyed in the file, `used_keys` the keys.
std::string CtagsKey(const CtagsTag& tag, const std::string& qualified,
                     std::set<std::string>* seen_names, std::set<std::string>* used_keys) {
  std::string key = tag.path + "#" + qualified;
  if (!seen_names->insert(qualified).second && !tag.signature.empty()) {
    if (tag.signature.front() == '(') {
      key += tag.signature;
    } else {
      key += "(" + tag.signature + ")";
    }
  }
  std::string unique = key;
  for (uint64_t n = 2; !used_keys->insert(unique).second; ++n) {
    unique = key + "#" + std::to_string(n);
  }
  return unique;
}

std::string CtagsQualified(const CtagsTag& tag) {
  return tag.scope.empty() ? tag.name : tag.scope + "::" + tag.name;
}

// Keys the tags of one file (sorted in file order) and fills the document's
// symbols and definition occurrences.
void CtagsKeyFile(std::vector<CtagsTag>* tags, Document* doc) {
  std::set<std::string> seen_names;
  std::set<std::string> used_keys;
  std::map<std::string, std::vector<size_t>> by_qualified;
  for (size_t i = 0; i < tags->size(); ++i) {
    CtagsTag& tag = (*tags)[i];
    const std::string qualified = CtagsQualified(tag);
    tag.key = CtagsKey(tag, qualified, &seen_names, &used_keys);
    by_qualified[qualified].push_back(i);
  }
  for (const CtagsTag& tag : *tags) {
    SymbolInfo info;
    info.symbol = tag.key;
    info.display_name = tag.name;
    info.kind = tag.kind;
    info.signature = tag.signature;
    if (!tag.scope.empty()) {
      // The scope's tag: of the scope's kind when one is, the innermost one whose
      // lines hold this tag (a namespace opened twice), else the first.
      auto it = by_qualified.find(tag.scope);
      if (it != by_qualified.end()) {
        std::vector<size_t> candidates;
        for (size_t c : it->second) {
          if ((*tags)[c].kind == tag.scope_kind) candidates.push_back(c);
        }
        if (candidates.empty()) candidates = it->second;
        size_t best = candidates.front();
        bool holds = false;
        for (size_t c : candidates) {
          const CtagsTag& s = (*tags)[c];
          if (s.line <= tag.line && tag.line <= s.end && (!holds || s.line >= (*tags)[best].line)) {
            best = c;
            holds = true;
          }
        }
        info.enclosing_symbol = (*tags)[best].key;
      }
    }
    doc->symbols.push_back(std::move(info));
    Occurrence occ;
    occ.range = SourceRange{tag.line - 1, 0, tag.end - 1, 0};
    occ.symbol = tag.key;
    occ.roles = kRoleDefinition;
    occ.enclosing_range = occ.range;
    doc->occurrences.push_back(std::move(occ));
  }
}

// How comments and strings look in a language, for the reference scan.
enum class CtagsSyntax { kNone, kCLike, kHash };

CtagsSyntax CtagsSyntaxOf(std::string_view language) {
  static const std::set<std::string_view> c_like = {
      "C",    "C++",        "CUDA",   "C#",         "D",        "Go",    "Java",
      "JSON", "JavaScript", "Kotlin", "ObjectiveC", "Protobuf", "Rust",  "Scala",
      "Swift", "TypeScript", "Vala"};
  static const std::set<std::string_view> hash = {"Python", "Ruby", "Sh",   "Perl", "Make",
                                                   "CMake",  "R",    "Tcl", "Zsh",  "YAML"};
  if (c_like.count(language)) return CtagsSyntax::kCLike;
  if (hash.count(language)) return CtagsSyntax::kHash;
  return CtagsSyntax::kNone;
}

bool CtagsWordByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c >= 0x80;
}

struct CtagsWord {
  uint32_t line;  // 0-based
  uint32_t col;   // byte column
  std::string_view text;
};

// Calls `emit` for every identifier ([A-Za-z_][A-Za-z0-9_]*, not part of a longer
// word with non-ASCII bytes) outside what the syntax marks as comments and string
// literals: // and /* */ comments and "..." and '...' literals closed on their line
// (C-like; no '...' in Rust, where ' starts lifetimes), # comments, "...", '...'
// and Python's triple-quoted strings (hash). Template literals, raw strings and
// here-documents are scanned as code.
template <typename Emit>
void CtagsScanWords(std::string_view text, CtagsSyntax syntax, bool single_quotes,
                    Emit&& emit) {
  uint32_t line = 0;
  size_t line_start = 0;
  size_t i = 0;
  const size_t n = text.size();
  auto newline = [&](size_t pos) {
    ++line;
    line_start = pos + 1;
  };
  // Skips to just past `close`, counting lines; to the end when it is missing.
  auto skip_past = [&](std::string_view close) {
    size_t at = text.find(close, i);
    const size_t stop = at == std::string_view::npos ? n : at + close.size();
    for (; i < stop; ++i) {
      if (text[i] == '\n') newline(i);
    }
  };
  while (i < n) {
    const char c = text[i];
    if (c == '\n') {
      newline(i);
      ++i;
      continue;
    }
    if (syntax == CtagsSyntax::kCLike && c == '/' && i + 1 < n && text[i + 1] == '/') {
      i = std::min(text.find('\n', i), n);
      continue;
    }
    if (syntax == CtagsSyntax::kCLike && c == '/' && i + 1 < n && text[i + 1] == '*') {
      i += 2;
      skip_past("*/");
      continue;
    }
    if (syntax == CtagsSyntax::kHash && c == '#') {
      i = std::min(text.find('\n', i), n);
      continue;
    }
    if (syntax == CtagsSyntax::kHash && (c == '"' || c == '\'') && i + 2 < n &&
        text[i + 1] == c && text[i + 2] == c) {
      const std::string close(3, c);
      i += 3;
      skip_past(close);
      continue;
    }
    const bool after_word = i > line_start && CtagsWordByte(static_cast<unsigned char>(text[i - 1]));
    if (syntax != CtagsSyntax::kNone && (c == '"' || (c == '\'' && single_quotes && !after_word))) {
      // A literal closed on its line; an unclosed quote is skipped alone.
      size_t j = i + 1;
      while (j < n && text[j] != '\n' && text[j] != c) j += text[j] == '\\' && j + 1 < n ? 2 : 1;
      i = j < n && text[j] == c ? j + 1 : i + 1;
      continue;
    }
    if (CtagsWordByte(static_cast<unsigned char>(c))) {
      size_t j = i;
      bool ascii = true;
      while (j < n && CtagsWordByte(static_cast<unsigned char>(text[j]))) {
        if (static_cast<unsigned char>(text[j]) >= 0x80) ascii = false;
        ++j;
      }
      if (ascii && !(c >= '0' && c <= '9')) {
        emit(CtagsWord{line, static_cast<uint32_t>(i - line_start), text.substr(i, j - i)});
      }
      i = j;
      continue;
    }
    ++i;
  }
}

std::string_view CtagsDirOf(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
}

// A tag in a function or method: a local, which no other file can name.
bool CtagsLocal(const CtagsTag& tag) {
  return tag.scope_kind == "function" || tag.scope_kind == "method";
}

// Languages whose code names each other's tags: C with C++ (headers are shared),
// JavaScript with TypeScript. Every other language only names its own: `#include`
// in C++ is not a key of a JSON file, nor a heading of a Markdown one.
std::string_view CtagsFamily(std::string_view language) {
  if (language == "C" || language == "C++" || language == "CUDA" || language == "ObjectiveC") {
    return "C";
  }
  if (language == "JavaScript" || language == "TypeScript") return "JavaScript";
  return language;
}

// A tag a reference may name: its document and its place in that document.
struct CtagsTarget {
  size_t doc;
  size_t tag;
};

// Adds the reference occurrences of document `d` (docs/CODE.md "ctags").
void CtagsAddReferences(std::string_view content, size_t d,
                        const std::vector<std::vector<CtagsTag>>& tags,
                        const std::map<std::string_view, std::vector<CtagsTarget>>& by_name,
                        CodeIndex* index) {
  Document& doc = index->documents[d];
  const std::string_view dir = CtagsDirOf(doc.path);
  const CtagsSyntax syntax = CtagsSyntaxOf(doc.language);
  const std::string_view family = CtagsFamily(doc.language);
  std::vector<const CtagsTarget*> chosen;
  CtagsScanWords(content, syntax, doc.language != "Rust", [&](const CtagsWord& word) {
    auto it = by_name.find(word.text);
    if (it == by_name.end() || it->second.size() > kCtagsMaxNameDefinitions) return;
    const std::vector<CtagsTarget>& targets = it->second;
    // The name where a tag of that name is defined is that definition, not a use.
    for (const CtagsTarget& t : targets) {
      if (t.doc == d && tags[d][t.tag].line == word.line + 1) return;
    }
    // The nearest tier: the same file, else the same directory, else everywhere;
    // a function's locals are seen from their own file only.
    chosen.clear();
    for (const CtagsTarget& t : targets) {
      if (t.doc == d) chosen.push_back(&t);
    }
    for (int tier = 1; tier <= 2 && chosen.empty(); ++tier) {
      for (const CtagsTarget& t : targets) {
        if (CtagsLocal(tags[t.doc][t.tag]) ||
            CtagsFamily(index->documents[t.doc].language) != family) {
          continue;
        }
        if (tier == 2 || CtagsDirOf(index->documents[t.doc].path) == dir) chosen.push_back(&t);
      }
    }
    const uint32_t end_col = word.col + static_cast<uint32_t>(word.text.size());
    for (const CtagsTarget* t : chosen) {
      Occurrence occ;
      occ.range = SourceRange{word.line, word.col, word.line, end_col};
      occ.symbol = tags[t->doc][t->tag].key;
      doc.occurrences.push_back(std::move(occ));
    }
  });
}

// Kinds never named by a reference: a namespace or package is reopened in every
// file that uses it, so its name says nothing about which file a use depends on.
bool CtagsReferable(const CtagsTag& tag) {
  return tag.kind != "namespace" && tag.kind != "package";
}

// Only regular files are read: a tagged path that is a FIFO or a device would
// block or never end.
Result<std::string> CtagsReadFile(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) return Status::IOError(path + ": no such file");
  if (!std::filesystem::is_regular_file(st)) return Status::IOError(path + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(path + ": cannot open");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

uint32_t CtagsLineCount(std::string_view content) {
  const size_t newlines = static_cast<size_t>(std::count(content.begin(), content.end(), '\n'));
  const size_t lines = newlines + (!content.empty() && content.back() != '\n' ? 1 : 0);
  return static_cast<uint32_t>(std::min<size_t>(lines, kCtagsMaxLine));
}

}  // namespace

Result<CodeIndex> ReadCtags(std::string_view jsonl, const CtagsOptions& options) {
  std::map<std::string, CtagsFile> files;  // by normalised path: sorted
  std::map<std::string, size_t> exact;     // every field of a tag -> its JSON line
  std::string program_name, program_version;
  size_t input_line = 0;
  size_t pos = 0;
  while (pos < jsonl.size()) {
    size_t eol = jsonl.find('\n', pos);
    if (eol == std::string_view::npos) eol = jsonl.size();
    std::string_view text = jsonl.substr(pos, eol - pos);
    pos = eol + 1;
    ++input_line;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.find_first_not_of(" \t") == std::string_view::npos) continue;
    auto parsed = ParseJsonLimited(text, "ctags JSON line " + std::to_string(input_line));
    if (!parsed.ok()) return parsed.status();
    const nlohmann::json& obj = *parsed;
    if (!obj.is_object()) return CtagsLineError(input_line, "not a JSON object");
    std::string type;
    AMEM_RETURN_IF_ERROR(CtagsString(obj, "_type", true, input_line, &type));
    if (type == "ptag") {
      // Pseudo-tags only describe the tags file; the program's name and version
      // become the index's tool.
      std::string name, value;
      if (CtagsString(obj, "name", false, input_line, &name).ok() &&
          CtagsString(obj, "path", false, input_line, &value).ok()) {
        if (name == "TAG_PROGRAM_NAME") program_name = value;
        if (name == "TAG_PROGRAM_VERSION") program_version = value;
      }
      continue;
    }
    if (type != "tag") return CtagsLineError(input_line, "unknown _type \"" + type + "\"");
    CtagsTag tag;
    tag.input_line = input_line;
    std::string raw_path, raw_scope, raw_signature;
    AMEM_RETURN_IF_ERROR(CtagsString(obj, "name", true, input_line, &tag.name));
    AMEM_RETURN_IF_ERROR(CtagsString(obj, "path", true, input_line, &raw_path));
    AMEM_RETURN_IF_ERROR(CtagsLineNumber(obj, "line", true, input_line, &tag.line));
    AMEM_RETURN_IF_ERROR(CtagsLineNumber(obj, "end", false, input_line, &tag.end));
    AMEM_RETURN_IF_ERROR(CtagsString(obj, "kind", false, input_line, &tag.kind));
    AMEM_RETURN_IF_ERROR(CtagsString(obj, "scope", false, input_line, &raw_scope));
    AMEM_RETURN_IF_ERROR(CtagsString(obj, "scopeKind", false, input_line, &tag.scope_kind));
    AMEM_RETURN_IF_ERROR(CtagsString(obj, "signature", false, input_line, &raw_signature));
    AMEM_RETURN_IF_ERROR(CtagsString(obj, "language", false, input_line, &tag.language));
    if (tag.name.empty()) return CtagsLineError(input_line, "empty \"name\"");
    for (const auto& [field, value] :
         {std::pair<const char*, const std::string*>{"name", &tag.name}, {"path", &raw_path},
          {"kind", &tag.kind}, {"scope", &raw_scope}, {"scopeKind", &tag.scope_kind},
          {"language", &tag.language}}) {
      if (CtagsHasControl(*value)) {
        return CtagsLineError(input_line,
                              std::string("\"") + field + "\" holds a control character");
      }
    }
    if (tag.end == 0) tag.end = tag.line;
    if (tag.end < tag.line) {
      return CtagsLineError(input_line, "\"line\" " + std::to_string(tag.line) +
                                            " is past \"end\" " + std::to_string(tag.end));
    }
    AMEM_RETURN_IF_ERROR(CtagsNormalizePath(raw_path, options.root, input_line, &tag.path));
    tag.scope = CtagsScope(raw_scope);
    tag.signature = CtagsCollapseSpace(raw_signature);
    std::string fields;
    for (const std::string* f : {&tag.path, &tag.name, &tag.kind, &raw_scope, &tag.scope_kind,
                                 &raw_signature, &tag.language}) {
      fields += *f;
      fields += '\0';
    }
    fields += std::to_string(tag.line) + ":" + std::to_string(tag.end);
    if (auto [it, added] = exact.emplace(std::move(fields), input_line); !added) {
      return CtagsLineError(input_line, "duplicate of the tag on line " + std::to_string(it->second));
    }
    CtagsFile& file = files[tag.path];
    file.lines_digest.Update(text);
    file.lines_digest.Update("\n");
    file.tags.push_back(std::move(tag));
  }

  CodeIndex index;
  index.indexer = "ctags";
  index.tool = program_name.empty() ? "universal-ctags"
                                    : program_name + (program_version.empty() ? "" : " " + program_version);
  std::vector<std::vector<CtagsTag>> tags;
  std::vector<std::string> contents;
  for (auto& [path, file] : files) {
    // File order: by line; tags on one line keep ctags' order.
    std::stable_sort(file.tags.begin(), file.tags.end(),
                     [](const CtagsTag& a, const CtagsTag& b) { return a.line < b.line; });
    Document doc;
    doc.path = path;
    doc.language = file.tags.front().language;
    if (options.root.empty()) {
      doc.digest = file.lines_digest.Digest();
    } else {
      const std::string full = (std::filesystem::path(options.root) / path).string();
      auto content = CtagsReadFile(full);
      if (!content.ok()) return content.status();
      const uint32_t line_count = CtagsLineCount(*content);
      for (const CtagsTag& tag : file.tags) {
        if (tag.end > line_count) {
          return CtagsLineError(tag.input_line,
                                "tag \"" + tag.name + "\" ends at line " + std::to_string(tag.end) +
                                    ", past the end of " + path + " (" +
                                    std::to_string(line_count) + " lines)");
        }
      }
      doc.digest = Hash64(*content);
      contents.push_back(std::move(*content));
    }
    CtagsKeyFile(&file.tags, &doc);
    tags.push_back(std::move(file.tags));
    index.documents.push_back(std::move(doc));
  }

  if (!options.root.empty()) {
    std::map<std::string_view, std::vector<CtagsTarget>> by_name;
    for (size_t d = 0; d < tags.size(); ++d) {
      for (size_t t = 0; t < tags[d].size(); ++t) {
        if (CtagsReferable(tags[d][t])) by_name[tags[d][t].name].push_back(CtagsTarget{d, t});
      }
    }
    for (size_t d = 0; d < tags.size(); ++d) {
      CtagsAddReferences(contents[d], d, tags, by_name, &index);
    }
  }
  for (Document& doc : index.documents) {
    std::stable_sort(doc.occurrences.begin(), doc.occurrences.end(),
                     [](const Occurrence& a, const Occurrence& b) {
                       return std::tie(a.range.start_line, a.range.start_col, a.roles, a.symbol) <
                              std::tie(b.range.start_line, b.range.start_col, b.roles, b.symbol);
                     });
  }
  return index;
}

std::vector<std::string> CtagsCommand() {
  return {"ctags",
          "--output-format=json",
          "--fields={name}{input}{line}{end}{kind}{scope}{scopeKind}{signature}{language}",
          "--sort=no",
          "--links=no",
          "--exclude=node_modules",
          "-R",
          "-o",
          "-",
          "."};
}

}  // namespace amem::index
