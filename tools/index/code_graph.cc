#include "tools/index/code_graph.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/hash.h"
#include "common/json_parse.h"
#include "common/model.h"
#include "common/utf8.h"

namespace amem::index {
namespace {

// The relations of the code graph (docs/CODE.md §3). An edge of one of these whose
// source is a file or a symbol of an indexed file belongs to that file.
constexpr std::string_view kDefines = "defines";
constexpr std::string_view kContains = "contains";
constexpr std::string_view kReferences = "references";
constexpr std::string_view kCalls = "calls";
constexpr std::string_view kImplements = "implements";
constexpr std::string_view kOverrides = "overrides";
constexpr std::string_view kImports = "imports";
constexpr std::string_view kTests = "tests";
constexpr std::string_view kCodeRelations[] = {kDefines,    kContains,  kReferences, kCalls,
                                               kImplements, kOverrides, kImports,    kTests};
// Defined by the first index that needs them (docs/CODE.md §3).
constexpr std::string_view kCustomRelations[] = {kContains, kOverrides};

// Symbol content is cut to this many bytes (documentation can be long).
constexpr size_t kMaxSymbolContent = 16 << 10;

bool IsCodeRelation(std::string_view rel) {
  return std::find(std::begin(kCodeRelations), std::end(kCodeRelations), rel) !=
         std::end(kCodeRelations);
}

std::string Hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

bool ParseHex16(std::string_view s, uint64_t* out) {
  if (s.size() != 16) return false;
  uint64_t v = 0;
  for (char c : s) {
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return false;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  *out = v;
  return true;
}

// A key cut to fit: the first bytes, then "~" and the XXH3-64 of the whole.
std::string FitKey(std::string key, size_t max_bytes) {
  if (key.size() <= max_bytes) return key;
  std::string cut(Utf8Prefix(key, max_bytes - 17));
  cut += '~';
  cut += Hex16(Hash64(key));
  return cut;
}

std::string RegistryKey(std::string_view path) { return FitKey(std::string(path), kMaxNameBytes); }

// ---- SCIP symbol strings (the grammar of the published SCIP specification) ----

// What the last descriptor of a symbol says: its name and its kind word, and where
// it starts (the symbol up to there is the enclosing symbol's string).
struct Shape {
  std::string name;
  std::string kind;  // "namespace", "type", "term", "method", "meta", "macro",
                     // "parameter", "type_parameter"; "" when it does not parse
  size_t last_start = 0;  // 0: no enclosing descriptor
  // When every descriptor is a namespace: their names joined by '/'. A namespace
  // spelling its own document's path is that file's module (scip-typescript,
  // scip-python): the file itself, not a symbol of its own.
  std::string module_path;
};

bool IsLocalSymbol(std::string_view symbol) { return symbol.starts_with("local "); }

bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '+' || c == '-' || c == '$';
}

// Reads a descriptor's name at s[*i]: a simple identifier or a `backquoted` one.
bool ReadName(std::string_view s, size_t* i, std::string* name) {
  name->clear();
  if (*i < s.size() && s[*i] == '`') {
    for (size_t j = *i + 1; j < s.size(); ++j) {
      if (s[j] != '`') {
        name->push_back(s[j]);
      } else if (j + 1 < s.size() && s[j + 1] == '`') {
        name->push_back('`');
        ++j;
      } else {
        *i = j + 1;
        return true;
      }
    }
    return false;
  }
  size_t j = *i;
  while (j < s.size() && IsIdentifierChar(s[j])) ++j;
  name->assign(s.substr(*i, j - *i));
  *i = j;
  return true;
}

Shape ScipShape(std::string_view symbol) {
  Shape shape;
  if (IsLocalSymbol(symbol)) {
    shape.name = std::string(symbol);
    shape.kind = "local";
    return shape;
  }
  // Four unescaped spaces end the scheme, manager, package name and version; a
  // space inside them is written twice.
  size_t i = 0;
  for (int spaces = 0; spaces < 4; ++i) {
    if (i >= symbol.size()) return Shape{std::string(symbol), "", 0, {}};
    if (symbol[i] != ' ') continue;
    if (i + 1 < symbol.size() && symbol[i + 1] == ' ') {
      ++i;
      continue;
    }
    ++spaces;
  }
  const size_t first = i;
  std::string name, path;
  bool namespaces = true;
  while (i < symbol.size()) {
    size_t start = i;
    std::string kind;
    if (symbol[i] == '(' || symbol[i] == '[') {
      char close = symbol[i] == '(' ? ')' : ']';
      ++i;
      if (!ReadName(symbol, &i, &name) || i >= symbol.size() || symbol[i] != close) break;
      ++i;
      kind = close == ')' ? "parameter" : "type_parameter";
    } else {
      if (!ReadName(symbol, &i, &name) || i >= symbol.size()) break;
      char suffix = symbol[i++];
      if (suffix == '(') {
        while (i < symbol.size() && symbol[i] != ')') ++i;
        if (i + 1 >= symbol.size() || symbol[i + 1] != '.') break;
        i += 2;
        kind = "method";
      } else {
        kind = suffix == '/' ? "namespace" : suffix == '#' ? "type" : suffix == '.' ? "term"
             : suffix == ':' ? "meta" : suffix == '!' ? "macro" : "";
        if (kind.empty()) break;
      }
    }
    namespaces = namespaces && kind == "namespace";
    if (namespaces) path += (path.empty() ? "" : "/") + name;
    shape = Shape{name, kind, start > first ? start : 0, namespaces ? path : std::string()};
    if (i == symbol.size()) return shape;
  }
  return Shape{std::string(symbol), "", 0, {}};  // not the grammar: the whole string names it
}

bool IsCallableKind(std::string_view kind) {
  return kind.find("function") != std::string_view::npos ||
         kind.find("method") != std::string_view::npos || kind == "constructor" ||
         kind == "prototype" || kind == "subroutine" || kind == "procedure";
}

// ---- positions ----

using Pos = std::pair<uint32_t, uint32_t>;  // (line, column)
Pos Start(const SourceRange& r) { return {r.start_line, r.start_col}; }
Pos End(const SourceRange& r) { return {r.end_line, r.end_col}; }

std::string LinesMeta(const SourceRange& r) {
  return std::to_string(r.start_line + 1) + "-" + std::to_string(r.end_line + 1);
}

using EdgeKey = std::tuple<std::string, std::string, std::string>;  // src, rel, dst

uint64_t EdgeHash(const EdgeKey& e) {
  const auto& [src, rel, dst] = e;
  std::string joined;
  joined.reserve(src.size() + rel.size() + dst.size() + 2);
  joined.append(src).append(1, '\0').append(rel).append(1, '\0').append(dst);
  return Hash64(joined);
}

// What one file contributes to the graph (docs/CODE.md §4).
struct FileRecords {
  std::map<std::string, NodeInput> nodes;  // key → node (the file and its symbols)
  std::vector<EdgeKey> edges;  // sorted and unique once Records returns
};

// Everything the planner knows about symbols across the decoded documents.
struct SymbolTable {
  // symbol string → the first document (by path) that defines it (globals only)
  std::unordered_map<std::string_view, const Document*> defs;
  std::unordered_map<std::string_view, const SymbolInfo*> infos;  // every SymbolInfo
};

class Planner {
 public:
  Planner(Store& store, const CodeIndex& index, const IndexOptions& options)
      : store_(store), index_(index), scip_(index.indexer == "scip") {
    for (const Document& doc : index.documents) {
      if (!doc.decoded) continue;
      for (const SymbolInfo& info : doc.symbols) table_.infos.emplace(info.symbol, &info);
    }
    for (const SymbolInfo& info : index.external_symbols) table_.infos.emplace(info.symbol, &info);
    for (const Document& doc : index.documents) {  // sorted by path: the first wins
      if (!doc.decoded) continue;
      for (const Occurrence& occ : doc.occurrences) {
        if (!(occ.roles & kRoleDefinition) || IsLocalSymbol(occ.symbol) ||
            !IsNodeWorthy(occ, doc.path)) {
          continue;
        }
        table_.defs.emplace(occ.symbol, &doc);
      }
    }
    for (const Document& doc : index.documents) present_.insert(doc.path);
    const auto& globs = options.test_globs.empty() ? DefaultTestGlobs() : options.test_globs;
    globs_ = globs;
  }

  bool IsTestFile(std::string_view path) const {
    for (const std::string& g : globs_) {
      if (GlobMatch(g, path)) return true;
    }
    return false;
  }

  // The kind word of a symbol: the index's, else what its SCIP descriptor says.
  std::string KindOf(std::string_view symbol, const SymbolInfo* info) const {
    if (info && !info->kind.empty()) return info->kind;
    if (!scip_) return "";
    Shape shape = ScipShape(symbol);
    if (shape.kind == "method" &&
        (!shape.last_start || ScipShape(symbol.substr(0, shape.last_start)).kind == "namespace")) {
      return "function";  // a method descriptor in a namespace (or a module) is a function
    }
    return shape.kind == "term" || shape.kind == "local" ? "" : shape.kind;
  }

  bool IsCallable(std::string_view symbol) const {
    auto info = table_.infos.find(symbol);
    const SymbolInfo* si = info == table_.infos.end() ? nullptr : info->second;
    if (si && !si->kind.empty()) return IsCallableKind(si->kind);
    return scip_ && ScipShape(symbol).kind == "method";
  }

  // Whether a definition of `symbol` gets a node of its own: not a parameter or a
  // type parameter, and a document-local symbol only when it has a body.
  bool IsNodeWorthy(const Occurrence& def, std::string_view path) const {
    if (IsLocalSymbol(def.symbol)) return def.enclosing_range.has_value();
    if (!scip_) return true;
    Shape shape = ScipShape(def.symbol);
    return shape.kind != "parameter" && shape.kind != "type_parameter" &&
           shape.module_path != path;
  }

  // The key a reference to `symbol` from `doc` links to, or "" when the symbol has
  // no node in the graph (defined nowhere in the index, nor in the store).
  Result<std::string> TargetKey(const Document& doc, std::string_view symbol,
                                const std::set<std::string_view>& local_defs) {
    if (IsLocalSymbol(symbol)) {
      return local_defs.count(symbol) ? SymbolKey(doc.path, symbol) : std::string();
    }
    if (table_.defs.count(symbol)) return SymbolKey(doc.path, symbol);
    AMEM_ASSIGN_OR_RETURN(file, StoredOwner(symbol));
    return file ? SymbolKey(doc.path, symbol) : std::string();
  }

  // The file that defines a symbol: from the decoded documents, else the store's
  // node (meta.file). nullptr: unknown.
  Result<const std::string*> StoredOwner(std::string_view symbol) {
    auto it = stored_owner_.find(std::string(symbol));
    if (it != stored_owner_.end()) return it->second.empty() ? nullptr : &it->second;
    std::string owner;
    Shape shape = scip_ ? ScipShape(symbol) : Shape{};
    auto node = shape.kind == "parameter" || shape.kind == "type_parameter"
                    ? Result<NodeRecord>(Status::NotFound("a parameter"))
                    : store_.GetNode(SymbolKey("", symbol));
    if (node.ok()) {
      if (node->type == NodeType::kSymbol) owner = MetaField(node->meta, "file");
    } else if (!node.status().IsNotFound()) {
      return node.status();
    }
    auto [pos, _] = stored_owner_.emplace(std::string(symbol), std::move(owner));
    return pos->second.empty() ? nullptr : &pos->second;
  }

  static std::string MetaField(std::string_view meta, std::string_view field) {
    auto j = nlohmann::json::parse(meta, nullptr, false);
    if (!j.is_object()) return "";
    auto it = j.find(field);
    return it != j.end() && it->is_string() ? it->get<std::string>() : "";
  }

  // The records of one decoded document (docs/CODE.md §2-§3).
  Result<FileRecords> Records(const Document& doc) {
    FileRecords out;
    const std::string file_key = FileKey(doc.path);
    {
      NodeInput file;
      file.key = file_key;
      file.type = NodeType::kFile;
      file.content = doc.path;
      nlohmann::json meta = {{"indexer", index_.indexer}};
      if (!doc.language.empty()) meta["lang"] = doc.language;
      file.meta = meta.dump();
      out.nodes.emplace(file_key, std::move(file));
    }
    const bool test_file = IsTestFile(doc.path);
    std::unordered_map<std::string_view, const SymbolInfo*> doc_infos;
    for (const SymbolInfo& info : doc.symbols) doc_infos.emplace(info.symbol, &info);
    auto info_of = [&](std::string_view symbol) -> const SymbolInfo* {
      auto it = doc_infos.find(symbol);
      if (it != doc_infos.end()) return it->second;
      auto jt = table_.infos.find(symbol);
      return jt == table_.infos.end() ? nullptr : jt->second;
    };

    // Definitions: nodes, `defines`, and the ranges references are placed in.
    struct Body {
      SourceRange range;
      std::string key;
      bool callable = false;  // a function's body: what it references callable, it calls
    };
    std::vector<Body> bodies;
    std::set<std::string_view> local_defs;
    std::set<std::string_view> defined;
    for (const Occurrence& occ : doc.occurrences) {
      if (!(occ.roles & kRoleDefinition) || !IsNodeWorthy(occ, doc.path)) continue;
      std::string key = SymbolKey(doc.path, occ.symbol);
      if (IsLocalSymbol(occ.symbol)) local_defs.insert(occ.symbol);
      if (occ.enclosing_range) {
        bodies.push_back({*occ.enclosing_range, key, IsCallable(occ.symbol)});
      }
      out.edges.emplace_back(file_key, kDefines, key);
      if (!defined.insert(occ.symbol).second) continue;
      if (!IsLocalSymbol(occ.symbol) && table_.defs.at(occ.symbol) != &doc) continue;
      const SymbolInfo* info = info_of(occ.symbol);
      const SourceRange& span = occ.enclosing_range ? *occ.enclosing_range : occ.range;
      std::string name = info && !info->display_name.empty() ? info->display_name
                                                             : ScipOrTagName(occ.symbol);
      std::string kind = KindOf(occ.symbol, info);
      NodeInput node;
      node.key = key;
      node.type = NodeType::kSymbol;
      node.content = kind.empty() ? name : kind + " " + name;
      if (info && !info->signature.empty()) node.content += "\n" + info->signature;
      if (info && !info->documentation.empty()) node.content += "\n" + info->documentation;
      node.content = std::string(Utf8Prefix(node.content, kMaxSymbolContent));
      nlohmann::json meta = {{"file", doc.path},
                             {"indexer", index_.indexer},
                             {"lines", LinesMeta(span)},
                             {"name", name}};
      if (!kind.empty()) meta["kind"] = kind;
      node.meta = meta.dump();
      out.nodes.emplace(key, std::move(node));
    }

    // Nesting and relationships of the symbols defined here.
    for (std::string_view symbol : defined) {
      const std::string key = SymbolKey(doc.path, symbol);
      const SymbolInfo* info = info_of(symbol);
      std::string parent = info ? info->enclosing_symbol : std::string();
      if (parent.empty() && scip_ && !IsLocalSymbol(symbol)) {
        Shape shape = ScipShape(symbol);
        if (shape.last_start) parent = std::string(symbol.substr(0, shape.last_start));
      }
      if (!parent.empty() && (defined.count(parent) || table_.defs.count(parent))) {
        out.edges.emplace_back(SymbolKey(doc.path, parent), kContains, key);
      }
      if (!info) continue;
      for (const Relationship& rel : info->relationships) {
        if (rel.symbol == symbol) continue;
        AMEM_ASSIGN_OR_RETURN(target, TargetKey(doc, rel.symbol, local_defs));
        if (target.empty()) continue;
        if (rel.is_implementation) {
          bool methods = IsCallable(symbol) && IsCallable(rel.symbol);
          out.edges.emplace_back(key, methods ? kOverrides : kImplements, target);
        } else if (rel.is_reference) {
          out.edges.emplace_back(key, kReferences, target);
        }
      }
    }

    // References, placed in the innermost body that holds them: a sweep over the
    // references in position order with a stack of the open bodies.
    std::vector<const Occurrence*> refs;
    for (const Occurrence& occ : doc.occurrences) {
      if (!(occ.roles & kRoleDefinition)) refs.push_back(&occ);
    }
    std::stable_sort(refs.begin(), refs.end(), [](const Occurrence* a, const Occurrence* b) {
      return Start(a->range) < Start(b->range);
    });
    std::stable_sort(bodies.begin(), bodies.end(), [](const Body& a, const Body& b) {
      return Start(a.range) != Start(b.range) ? Start(a.range) < Start(b.range)
                                              : End(a.range) > End(b.range);
    });
    std::vector<const Body*> open;
    size_t next_body = 0;
    for (const Occurrence* ref : refs) {
      Pos at = Start(ref->range);
      while (next_body < bodies.size() && Start(bodies[next_body].range) <= at) {
        open.push_back(&bodies[next_body++]);
      }
      // Drop the bodies that ended before this reference; one that ends later but
      // sits under a closed one stays until it is on top.
      while (!open.empty() && !(at < End(open.back()->range))) open.pop_back();
      const std::string& source = open.empty() ? file_key : open.back()->key;
      if (IsLocalSymbol(ref->symbol)) {  // known within this file only
        if (!local_defs.count(ref->symbol)) continue;
        std::string target = SymbolKey(doc.path, ref->symbol);
        if (source != target) out.edges.emplace_back(source, kReferences, target);
        continue;
      }
      AMEM_ASSIGN_OR_RETURN(facts_ptr, FactsOf(ref->symbol));
      const Facts& facts = *facts_ptr;
      if (!facts.module.empty()) {  // a file's module: the file imports that file
        if (facts.module != doc.path) out.edges.emplace_back(file_key, kImports, FileKey(facts.module));
        continue;
      }
      if (facts.key.empty() || source == facts.key) continue;
      if (ref->roles & kRoleImport) {
        if (!facts.home.empty() && facts.home != doc.path) {
          out.edges.emplace_back(file_key, kImports, FileKey(facts.home));
        }
        continue;
      }
      bool call = !open.empty() && open.back()->callable && facts.callable;
      out.edges.emplace_back(source, call ? kCalls : kReferences, facts.key);
      // Tests reach the code under test, not other test code.
      if (test_file && !facts.home.empty() && !facts.home_is_test) {
        out.edges.emplace_back(source, kTests, facts.key);
      }
    }
    std::sort(out.edges.begin(), out.edges.end());
    out.edges.erase(std::unique(out.edges.begin(), out.edges.end()), out.edges.end());
    return out;
  }

  // What a reference to a (global) symbol needs, worked out once per symbol.
  struct Facts {
    std::string key;     // its node's key; empty: no node (defined nowhere known)
    std::string home;    // the file that defines it; empty: unknown
    std::string module;  // non-empty: the symbol is this indexed file's module
    bool callable = false;
    bool home_is_test = false;
  };
  Result<const Facts*> FactsOf(std::string_view symbol) {
    auto it = facts_.find(symbol);
    if (it != facts_.end()) return &it->second;
    Facts f;
    if (scip_) {
      std::string module = ScipShape(symbol).module_path;
      if (!module.empty() && present_.count(module)) f.module = std::move(module);
    }
    if (f.module.empty()) {
      std::set<std::string_view> no_locals;
      AMEM_ASSIGN_OR_RETURN(key, TargetKey(Document{}, symbol, no_locals));
      f.key = key;
      AMEM_ASSIGN_OR_RETURN(home, DefiningFile(symbol));
      f.home = home;
      f.callable = IsCallable(symbol);
      f.home_is_test = !f.home.empty() && IsTestFile(f.home);
    }
    // The symbol's bytes live in the index, which outlives the planner.
    auto [pos, _] = facts_.emplace(symbol, std::move(f));
    return &pos->second;
  }

  Result<std::string> DefiningFile(std::string_view symbol) {
    if (IsLocalSymbol(symbol)) return std::string();
    auto it = table_.defs.find(symbol);
    if (it != table_.defs.end()) return it->second->path;
    AMEM_ASSIGN_OR_RETURN(file, StoredOwner(symbol));
    return file ? *file : std::string();
  }

  std::string ScipOrTagName(std::string_view symbol) const {
    if (!scip_) {
      size_t hash = symbol.find('#');
      std::string_view rest = hash == std::string_view::npos ? symbol : symbol.substr(hash + 1);
      size_t colon = rest.rfind("::");
      return std::string(colon == std::string_view::npos ? rest : rest.substr(colon + 2));
    }
    return ScipShape(symbol).name;
  }

  const std::set<std::string, std::less<>>& present() const { return present_; }

 private:
  Store& store_;
  const CodeIndex& index_;
  const bool scip_;
  SymbolTable table_;
  std::set<std::string, std::less<>> present_;
  std::vector<std::string> globs_;
  std::unordered_map<std::string, std::string> stored_owner_;
  std::unordered_map<std::string_view, Facts> facts_;
};

// What the store holds of one registered file: the nodes it owns and the edges
// that belong to it (docs/CODE.md §4).
struct StoredFile {
  std::map<std::string, NodeRecord> nodes;
  std::set<EdgeKey> edges;
  std::set<std::string> shared;  // of nodes: symbols another file defines too
};

Result<StoredFile> ReadStoredFile(const Store& store, std::string_view path) {
  StoredFile out;
  const std::string file_key = FileKey(path);
  auto file = store.GetNode(file_key);
  if (!file.ok() && !file.status().IsNotFound()) return file.status();
  if (!file.ok()) return out;
  out.nodes.emplace(file_key, std::move(file.value()));
  AMEM_ASSIGN_OR_RETURN(file_edges, store.Out(file_key));
  std::vector<std::string> symbols;
  for (const EdgeRecord& e : file_edges) {
    if (!IsCodeRelation(e.rel_name)) continue;
    out.edges.emplace(e.src_key, e.rel_name, e.dst_key);
    if (e.rel_name == kDefines) symbols.push_back(e.dst_key);
  }
  for (const std::string& key : symbols) {
    auto node = store.GetNode(key);
    if (!node.ok() && !node.status().IsNotFound()) return node.status();
    if (!node.ok() || Planner::MetaField(node->meta, "file") != path) continue;
    // A symbol defined by another file too keeps its edges: they may be that file's.
    AMEM_ASSIGN_OR_RETURN(definers, store.In(key, kDefines));
    bool shared = std::any_of(definers.begin(), definers.end(),
                              [&](const EdgeRecord& e) { return e.src_key != file_key; });
    out.nodes.emplace(key, std::move(node.value()));
    if (shared) {
      out.shared.insert(key);
      continue;
    }
    AMEM_ASSIGN_OR_RETURN(edges, store.Out(key));
    for (const EdgeRecord& e : edges) {
      if (IsCodeRelation(e.rel_name)) out.edges.emplace(e.src_key, e.rel_name, e.dst_key);
    }
  }
  return out;
}

bool SameNode(const NodeInput& want, const NodeRecord& have) {
  return want.type == have.type && want.content == have.content && want.meta == have.meta &&
         have.vector.empty() && have.confidence == 1.0f;
}

// The pieces of one write, handed from the thread that plans them to the thread
// that writes them (Store::ApplyStream), so that the two overlap. Every piece is
// kept until the write ends: a write that must run again (its map grew) reads them
// from the start.
class PieceQueue : public BatchStream {
 public:
  explicit PieceQueue(uint64_t size_hint) : size_hint_(size_hint) {}

  // The planner's side. Push: false once the writer has stopped (it failed; the
  // planner stops too). Finish: no more pieces; an error aborts the write.
  bool Push(Batch&& piece) {
    std::lock_guard lock(mu_);
    if (closed_) return false;
    pieces_.push_back(std::move(piece));
    cv_.notify_all();
    return true;
  }
  void Finish(Status status) {
    std::lock_guard lock(mu_);
    finished_ = true;
    status_ = std::move(status);
    cv_.notify_all();
  }
  // The writer's side, when ApplyStream has returned.
  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
  }

  Status Rewind() override {
    std::lock_guard lock(mu_);
    next_ = 0;
    return Status::OK();
  }
  Result<bool> Next(Batch* piece) override {
    const Batch* from = nullptr;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return next_ < pieces_.size() || finished_; });
      if (next_ >= pieces_.size()) {
        if (!status_.ok()) return status_;
        return false;
      }
      from = &pieces_[next_++];  // a deque's elements stay where they are
    }
    *piece = *from;
    return true;
  }
  uint64_t SizeHint() const override { return size_hint_; }

 private:
  const uint64_t size_hint_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Batch> pieces_;
  size_t next_ = 0;
  bool finished_ = false, closed_ = false;
  Status status_;
};

struct Plan {
  IndexReport report;
  std::vector<std::string> deleted_nodes;
  bool emitted = false;  // some operations went to `emit`
};

// Operations per piece handed to the writer: big enough that a piece's fixed
// costs vanish, small enough that the writer starts early.
constexpr size_t kPieceOps = 16384;

// Plans the index's records against the store and hands them to `emit` a piece at
// a time, in the order they are planned: each re-read file's nodes and edges and
// its registry entry, then the deletes, which wait for every file's records
// (something one file loses another may have gained). Nothing is emitted when
// nothing differs.
Result<Plan> MakePlan(Store& store, const CodeIndex& index, const FileRegistry& registry,
                      const IndexOptions& options, const std::function<Status(Batch&&)>& emit) {
  Plan plan;
  IndexReport& report = plan.report;
  Planner planner(store, index, options);
  std::vector<NodeInput> node_puts;
  std::vector<EdgeInput> edge_puts;
  std::vector<EdgeKey> edge_deletes;
  std::vector<std::string> node_deletes;
  std::vector<KvInput> kv_puts;
  std::vector<std::string> kv_deletes;
  // What some file of this index still has: never deleted, even when another file
  // (renamed, or losing a symbol to this one) had it before.
  // Edges by the XXH3-64 of their triple: a full index wants a million, and a
  // delete that collides with one (about 1 in 10^13 at that size) is only kept.
  std::set<std::string> wanted_nodes;
  std::unordered_set<uint64_t> wanted_edges;

  // Moves the puts planned so far, and with `deletes` the deletes too, into a
  // piece for `emit`; the first piece defines the code graph's relations that the
  // store lacks.
  auto flush = [&](bool deletes) -> Status {
    const size_t ops = node_puts.size() + edge_puts.size() + kv_puts.size() +
                       (deletes ? edge_deletes.size() + node_deletes.size() + kv_deletes.size() : 0);
    if (ops == 0) return Status::OK();
    Batch piece;
    piece.Reserve(2 + ops);
    if (!plan.emitted) {
      for (std::string_view rel : kCustomRelations) {
        auto id = store.LookupRelation(rel);
        if (id.ok()) continue;
        if (!id.status().IsNotFound() && !id.status().IsInvalidArgument()) return id.status();
        piece.DefineRelation(std::string(rel));
      }
    }
    report.nodes_put += node_puts.size();
    report.edges_put += edge_puts.size();
    report.digests += kv_puts.size();
    for (NodeInput& n : node_puts) piece.PutNode(std::move(n));
    for (EdgeInput& e : edge_puts) piece.PutEdge(std::move(e));
    for (KvInput& kv : kv_puts) piece.PutKv(std::move(kv));
    node_puts.clear();
    edge_puts.clear();
    kv_puts.clear();
    if (deletes) {
      report.edges_deleted = edge_deletes.size();
      report.nodes_deleted = node_deletes.size();
      report.digests += kv_deletes.size();
      for (auto& [src, rel, dst] : edge_deletes) piece.DeleteEdge(src, rel, dst);
      for (const std::string& key : node_deletes) piece.DeleteNode(key);
      for (const std::string& key : kv_deletes) {
        piece.DeleteKv(std::string(kRegistryScope), std::string(kRegistryNs), key);
      }
      plan.deleted_nodes = std::move(node_deletes);
    }
    plan.emitted = true;
    return emit(std::move(piece));
  };

  // Only a store that has files of an earlier index can lose records to a delete.
  const bool track_wanted = !registry.empty();
  auto reconcile = [&](const std::string& path, FileRecords& want,
                       const StoredFile& have) -> Status {
    if (track_wanted) {
      for (const auto& [key, node] : want.nodes) wanted_nodes.insert(key);
      for (const EdgeKey& e : want.edges) wanted_edges.insert(EdgeHash(e));
    }
    std::set<std::string_view> existed;  // nodes the store has now
    for (const auto& [key, node] : have.nodes) existed.insert(key);
    for (const auto& [key, node] : want.nodes) {
      auto old = have.nodes.find(key);
      if (old != have.nodes.end()) {
        if (!SameNode(node, old->second)) node_puts.push_back(node);
        continue;
      }
      if (node.type == NodeType::kSymbol) {
        auto stored = store.GetNode(key);
        if (!stored.ok() && !stored.status().IsNotFound()) return stored.status();
        if (stored.ok()) {
          existed.insert(key);
          std::string owner = Planner::MetaField(stored->meta, "file");
          // Another file of this index that was not re-read keeps its symbol.
          if (owner != path && planner.present().count(owner) && registry.count(owner)) continue;
          if (SameNode(node, *stored)) continue;
        }
      }
      node_puts.push_back(node);
    }
    for (const EdgeKey& e : have.edges) {
      if (!std::binary_search(want.edges.begin(), want.edges.end(), e)) edge_deletes.push_back(e);
    }
    // The wanted edges' strings move into the batch: a full index has a million.
    for (EdgeKey& e : want.edges) {
      if (have.edges.count(e)) continue;
      auto& [src, rel, dst] = e;
      // An edge from a node that did not exist cannot exist; from one that did, or
      // from a symbol another file owns, it may.
      if (existed.count(src) || !want.nodes.count(src)) {
        auto stored = store.GetEdge(src, rel, dst);
        if (stored.ok()) continue;
        if (!stored.status().IsNotFound()) return stored.status();
      }
      EdgeInput edge;
      edge.src = std::move(src);
      edge.rel = std::move(rel);
      edge.dst = std::move(dst);
      edge_puts.push_back(std::move(edge));
    }
    for (const auto& [key, node] : have.nodes) {
      if (!want.nodes.count(key) && !have.shared.count(key)) node_deletes.push_back(key);
    }
    return Status::OK();
  };

  for (const Document& doc : index.documents) {
    ++report.documents;
    auto reg = registry.find(doc.path);
    bool same = reg != registry.end() && reg->second.indexer == index.indexer &&
                reg->second.digest == doc.digest && doc.digest != 0;
    if (!doc.decoded) {
      if (!same) {
        return Status::InvalidArgument("document " + doc.path +
                                       " was not read, but its digest is not the registered one");
      }
      ++report.unchanged;
      continue;
    }
    if (same && !options.full) {
      ++report.unchanged;
      continue;
    }
    AMEM_ASSIGN_OR_RETURN(want, planner.Records(doc));
    StoredFile have;
    if (reg != registry.end()) {
      auto stored = ReadStoredFile(store, doc.path);
      if (!stored.ok()) return stored.status();
      have = std::move(stored.value());
    } else {
      auto file = store.GetNode(FileKey(doc.path));
      if (file.ok()) have.nodes.emplace(FileKey(doc.path), std::move(file.value()));
      else if (!file.status().IsNotFound()) return file.status();
    }
    AMEM_RETURN_IF_ERROR(reconcile(doc.path, want, have));
    if (reg == registry.end()) ++report.added;
    else if (!same) ++report.changed;
    if (!same) {
      KvInput kv;
      kv.scope = kRegistryScope;
      kv.ns = kRegistryNs;
      kv.key = RegistryKey(doc.path);
      kv.value = nlohmann::json{{"digest", Hex16(doc.digest)},
                                {"indexer", index.indexer},
                                {"path", doc.path}}
                     .dump();
      kv_puts.push_back(std::move(kv));
    }
    if (node_puts.size() + edge_puts.size() >= kPieceOps) AMEM_RETURN_IF_ERROR(flush(false));
  }
  // Files of this indexer that the index no longer has.
  for (const auto& [path, reg] : registry) {
    if (reg.indexer != index.indexer || planner.present().count(path)) continue;
    ++report.removed;
    AMEM_ASSIGN_OR_RETURN(have, ReadStoredFile(store, path));
    FileRecords none;
    AMEM_RETURN_IF_ERROR(reconcile(path, none, have));
    kv_deletes.push_back(RegistryKey(path));
  }

  std::erase_if(edge_deletes, [&](const EdgeKey& e) { return wanted_edges.count(EdgeHash(e)) > 0; });
  std::erase_if(node_deletes, [&](const std::string& k) { return wanted_nodes.count(k) > 0; });
  AMEM_RETURN_IF_ERROR(flush(true));
  return plan;
}

bool IsCodeType(NodeType type) {
  return type == NodeType::kFile || type == NodeType::kSymbol || type == NodeType::kModule;
}

// The memories still linked to the code nodes this index deleted.
Result<std::vector<Orphan>> FindOrphans(const Store& store, const std::vector<std::string>& gone) {
  std::vector<Orphan> out;
  auto add = [&](const std::string& other, const std::string& code, const std::string& rel,
                 bool from_memory) -> Status {
    auto node = store.GetNode(other);
    if (!node.ok()) return node.status().IsNotFound() ? Status::OK() : node.status();
    if (!IsCodeType(node->type)) out.push_back(Orphan{other, code, rel, from_memory});
    return Status::OK();
  };
  for (const std::string& key : gone) {
    AMEM_ASSIGN_OR_RETURN(in, store.In(key));
    for (const EdgeRecord& e : in) AMEM_RETURN_IF_ERROR(add(e.src_key, key, e.rel_name, true));
    AMEM_ASSIGN_OR_RETURN(outs, store.Out(key));
    for (const EdgeRecord& e : outs) AMEM_RETURN_IF_ERROR(add(e.dst_key, key, e.rel_name, false));
  }
  std::sort(out.begin(), out.end(), [](const Orphan& a, const Orphan& b) {
    return std::tie(a.memory, a.code, a.rel, a.from_memory) <
           std::tie(b.memory, b.code, b.rel, b.from_memory);
  });
  return out;
}

}  // namespace

std::string FileKey(std::string_view path) {
  return FitKey("file:" + std::string(path), kMaxKeyBytes);
}

std::string SymbolKey(std::string_view path, std::string_view symbol) {
  std::string key = "symbol:";
  if (IsLocalSymbol(symbol)) {
    key += path;
    key += '#';
  }
  key += symbol;
  return FitKey(std::move(key), kMaxKeyBytes);
}

const std::vector<std::string>& DefaultTestGlobs() {
  static const std::vector<std::string> globs = {
      "test/**",     "tests/**",     "**/test/**",   "**/tests/**",  "**/__tests__/**",
      "**/*_test.*", "**/*_tests.*", "**/test_*.*", "**/*.test.*", "**/*.spec.*"};
  return globs;
}

namespace {
bool SegmentMatch(std::string_view glob, std::string_view seg) {
  // Iterative '*' matching with one backtrack point.
  size_t g = 0, s = 0, star = std::string_view::npos, mark = 0;
  while (s < seg.size()) {
    if (g < glob.size() && (glob[g] == '?' || glob[g] == seg[s])) {
      ++g;
      ++s;
    } else if (g < glob.size() && glob[g] == '*') {
      star = g++;
      mark = s;
    } else if (star != std::string_view::npos) {
      g = star + 1;
      s = ++mark;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

std::vector<std::string_view> Segments(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '/') {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

bool MatchSegments(const std::vector<std::string_view>& g, size_t gi,
                   const std::vector<std::string_view>& p, size_t pi) {
  if (gi == g.size()) return pi == p.size();
  if (g[gi] == "**") {
    for (size_t k = pi; k <= p.size(); ++k) {
      if (MatchSegments(g, gi + 1, p, k)) return true;
    }
    return false;
  }
  return pi < p.size() && SegmentMatch(g[gi], p[pi]) && MatchSegments(g, gi + 1, p, pi + 1);
}
}  // namespace

bool GlobMatch(std::string_view glob, std::string_view path) {
  return MatchSegments(Segments(glob), 0, Segments(path), 0);
}

Result<FileRegistry> ReadRegistry(const Store& store, uint64_t* revision) {
  // The revision before and after the read: equal, the list is that revision's.
  std::vector<KvRecord> entries;
  for (;;) {
    AMEM_ASSIGN_OR_RETURN(before, store.revision());
    AMEM_ASSIGN_OR_RETURN(list, store.ListKv(kRegistryScope, kRegistryNs));
    AMEM_ASSIGN_OR_RETURN(after, store.revision());
    if (before != after) continue;
    if (revision != nullptr) *revision = after;
    entries = std::move(list);
    break;
  }
  FileRegistry out;
  for (const KvRecord& kv : entries) {
    auto j = nlohmann::json::parse(kv.value, nullptr, false);
    RegisteredFile file;
    std::string path;
    bool ok = j.is_object() && j.contains("digest") && j["digest"].is_string() &&
              j.contains("indexer") && j["indexer"].is_string() && j.contains("path") &&
              j["path"].is_string() && ParseHex16(j["digest"].get<std::string>(), &file.digest);
    if (ok) {
      file.indexer = j["indexer"].get<std::string>();
      path = j["path"].get<std::string>();
    }
    if (!ok || RegistryKey(path) != kv.key) {
      return Status::Corruption("code index registry entry " + std::string(kRegistryScope) + "/" +
                                std::string(kRegistryNs) + "/" + kv.key +
                                " is not {\"digest\",\"indexer\",\"path\"} of its key");
    }
    out.emplace(std::move(path), std::move(file));
  }
  return out;
}

Result<IndexReport> IndexCode(Store& store, const CodeIndex& index, const FileRegistry& registry,
                              uint64_t registry_revision, const IndexOptions& options) {
  // About what the store grows by: 320 bytes per occurrence read (a full index of
  // 1M occurrences grew a store by 319 MB).
  uint64_t occurrences = 0;
  for (const Document& doc : index.documents) occurrences += doc.occurrences.size();
  uint64_t rev = registry_revision;
  for (int attempt = 0;; ++attempt) {
    if (attempt > 0) {  // another writer committed: plan again if the registry held
      AMEM_ASSIGN_OR_RETURN(current, ReadRegistry(store, &rev));
      if (current.size() != registry.size() ||
          !std::equal(current.begin(), current.end(), registry.begin(),
                      [](const auto& a, const auto& b) {
                        return a.first == b.first && a.second.digest == b.second.digest &&
                               a.second.indexer == b.second.indexer;
                      })) {
        return Status::Aborted(
            "the code index registry changed while the index was read; run again");
      }
    }
    // The write starts with the first piece planned, on a thread of its own, and
    // takes the pieces as the plan makes them: one revision, all or nothing.
    WriteOptions write = options.write;
    write.expected_revision = rev;
    PieceQueue queue(options.TEST_size_hint.value_or(320 * occurrences));
    Result<uint64_t> applied = uint64_t{0};
    std::optional<std::thread> writer;
    auto emit = [&](Batch&& piece) -> Status {
      if (!writer) {
        writer.emplace([&] {
          applied = store.ApplyStream(&queue, write);
          queue.Close();
        });
      }
      return queue.Push(std::move(piece)) ? Status::OK() : Status::Aborted("the write stopped");
    };
    auto plan = MakePlan(store, index, registry, options, emit);
    queue.Finish(plan.ok() ? Status::OK() : plan.status());
    if (writer) writer->join();
    if (writer && !applied.ok()) {  // the write's own error explains a stopped plan
      if (applied.status().IsAborted() && attempt < 5) continue;
      return applied.status();
    }
    if (!plan.ok()) return plan.status();
    if (!plan->emitted) {
      AMEM_ASSIGN_OR_RETURN(now, store.revision());
      plan->report.revision = now;
      return plan->report;
    }
    plan->report.revision = *applied;
    plan->report.written = true;
    AMEM_ASSIGN_OR_RETURN(orphans, FindOrphans(store, plan->deleted_nodes));
    plan->report.orphans = std::move(orphans);
    return plan->report;
  }
}

}  // namespace amem::index
