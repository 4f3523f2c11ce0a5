// The unified diff reader (tools/index/diff.h). A diff is read as hostile text:
// every count in a hunk header is checked against the lines that follow, and
// every error names the line, so a truncated or hand-edited patch is refused
// instead of being mapped onto the wrong lines.
#include "tools/index/diff.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

namespace amem::index {

namespace {

constexpr std::string_view kDevNull = "/dev/null";

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

Status LineError(size_t line, const std::string& what) {
  return Status::InvalidArgument("line " + std::to_string(line) + ": " + what);
}

// Git's C-style quoting (quote_c_style): `s` starts with '"'. Sets *out to the
// unquoted bytes and *used to the length of the quoted token; false when the
// quotes are not closed or an escape is not one git writes.
bool Unquote(std::string_view s, std::string* out, size_t* used) {
  out->clear();
  for (size_t i = 1; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') {
      *used = i + 1;
      return true;
    }
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (++i == s.size()) return false;
    switch (s[i]) {
      case 'a': out->push_back('\a'); break;
      case 'b': out->push_back('\b'); break;
      case 't': out->push_back('\t'); break;
      case 'n': out->push_back('\n'); break;
      case 'v': out->push_back('\v'); break;
      case 'f': out->push_back('\f'); break;
      case 'r': out->push_back('\r'); break;
      case '"': out->push_back('"'); break;
      case '\\': out->push_back('\\'); break;
      default: {
        // Three octal digits, the first 0-3: one byte.
        if (i + 2 >= s.size() || s[i] < '0' || s[i] > '3') return false;
        int v = 0;
        for (size_t k = i; k < i + 3; ++k) {
          if (s[k] < '0' || s[k] > '7') return false;
          v = v * 8 + (s[k] - '0');
        }
        out->push_back(static_cast<char>(v));
        i += 2;
      }
    }
  }
  return false;
}

// The path of a ---/+++ line (after "--- "): quoted, or up to a tab (GNU diff
// writes a timestamp after it; git a lone tab when the path has a space).
Result<std::string> HeaderPath(std::string_view s, size_t line) {
  std::string path;
  if (!s.empty() && s[0] == '"') {
    size_t used = 0;
    if (!Unquote(s, &path, &used)) return LineError(line, "bad quoted path");
  } else {
    path = std::string(s.substr(0, s.find('\t')));
  }
  if (path.empty()) return LineError(line, "empty path");
  return path;
}

// A path as a key wants it: without the diff's a/ or b/ prefix and "./".
std::string CleanPath(std::string path, bool prefixed, std::string_view prefix) {
  if (path == kDevNull) return path;
  if (prefixed && StartsWith(path, prefix)) path.erase(0, prefix.size());
  while (StartsWith(path, "./")) path.erase(0, 2);
  return path;
}

// "-a,b" or "+c,d" numbers; the count defaults to 1.
struct Range {
  uint32_t start = 0;
  uint32_t count = 1;
};

// Reads a decimal u32 at s[*pos]; false when there is none or it is too large.
bool ReadNumber(std::string_view s, size_t* pos, uint32_t* v, bool* too_large) {
  size_t begin = *pos;
  uint64_t value = 0;
  while (*pos < s.size() && s[*pos] >= '0' && s[*pos] <= '9') {
    value = value * 10 + static_cast<uint64_t>(s[*pos] - '0');
    if (value > std::numeric_limits<uint32_t>::max()) {
      *too_large = true;
      return false;
    }
    ++*pos;
  }
  *v = static_cast<uint32_t>(value);
  return *pos > begin;
}

Status ParseHunkHeader(std::string_view s, size_t line, Range* old_r, Range* new_r) {
  auto bad = [&](const std::string& why) {
    return LineError(line, "malformed hunk header (" + why + "): " +
                               std::string(s.substr(0, 80)));
  };
  size_t pos = 3;  // after "@@ "
  for (auto [sign, r] : {std::pair{'-', old_r}, std::pair{'+', new_r}}) {
    if (pos >= s.size() || s[pos] != sign) return bad(std::string("expected '") + sign + "'");
    ++pos;
    bool too_large = false;
    if (!ReadNumber(s, &pos, &r->start, &too_large)) {
      return too_large ? bad("a line number beyond 4294967295") : bad("expected a number");
    }
    r->count = 1;
    if (pos < s.size() && s[pos] == ',') {
      ++pos;
      if (!ReadNumber(s, &pos, &r->count, &too_large)) {
        return too_large ? bad("a line count beyond 4294967295") : bad("expected a count");
      }
    }
    if (r->start == 0 && r->count > 0) return bad("line 0 with a non-zero count");
    if (uint64_t{r->start} + r->count > uint64_t{std::numeric_limits<uint32_t>::max()} + 1) {
      return bad("the lines run past line 4294967295");
    }
    if (pos >= s.size() || s[pos] != ' ') return bad("expected a space");
    ++pos;
  }
  if (s.substr(pos, 2) != "@@") return bad("expected '@@'");
  return Status::OK();
}

// One file's part of the diff while it is read.
struct Section {
  size_t line = 0;
  bool git = false;       // started by `diff --git`
  bool prefixed = false;  // paths carry a/ and b/
  bool headers = false;   // ---/+++ seen: hunks may follow
  bool added = false, deleted = false, renamed = false, copied = false;
  std::string old_path, new_path;  // as far as known; kDevNull for a missing side
  uint32_t next_old = 0;           // the first old line the next hunk may start at
  FileChange change;
};

// The hunk being read.
struct Hunk {
  size_t line = 0;
  uint32_t old_left = 0, new_left = 0;
  uint32_t old_no = 0;  // the old line the next ' ' or '-' line is
  // The run of changed lines being read: its removed lines, or the line its
  // additions follow.
  std::optional<uint32_t> removed_first, removed_last;
  bool added = false;
  uint32_t added_after = 0;
};

class Parser {
 public:
  explicit Parser(std::string_view text) {
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      std::string_view l = text.substr(start, end - start);
      if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
      lines_.push_back(l);
      start = end + 1;
    }
  }

  Result<std::vector<FileChange>> Run() {
    bool blank = true;
    for (size_t i = 0; i < lines_.size(); ++i) {
      const std::string_view l = lines_[i];
      const size_t n = i + 1;
      if (l.find_first_not_of(" \t") != std::string_view::npos) blank = false;
      if (hunk_) {
        AMEM_RETURN_IF_ERROR(HunkLine(l, n));
        continue;
      }
      if (closed_hunk_ != 0) {
        // Right after a hunk, a line that reads as one of its lines means the
        // header counted too few ("-- " ends a format-patch mail, "--- " starts a file).
        const bool more = (l.starts_with('+') && !l.starts_with("+++ ")) || l.starts_with(' ') ||
                          (l.starts_with('-') && !l.starts_with("-- ") && l != "--" &&
                           !l.starts_with("--- "));
        if (more) {
          return LineError(n, "more lines than the hunk at line " + std::to_string(closed_hunk_) +
                                  " counts");
        }
        if (!l.starts_with('\\')) closed_hunk_ = 0;
      }
      if (StartsWith(l, "diff --git ")) {
        AMEM_RETURN_IF_ERROR(Finish());
        AMEM_RETURN_IF_ERROR(StartGit(l.substr(11), n));
      } else if (StartsWith(l, "--- ") && i + 1 < lines_.size() &&
                 StartsWith(lines_[i + 1], "+++ ")) {
        AMEM_RETURN_IF_ERROR(Headers(l.substr(4), lines_[i + 1].substr(4), n));
        ++i;
      } else if (StartsWith(l, "@@@")) {
        return LineError(n, "a combined (merge) diff is not supported; diff against one parent");
      } else if (StartsWith(l, "@@ ")) {
        if (!section_ || !section_->headers) {
          return LineError(n, "hunk header before its file's --- and +++ lines");
        }
        AMEM_RETURN_IF_ERROR(StartHunk(l, n));
      } else if (section_ && section_->git && !section_->headers) {
        AMEM_RETURN_IF_ERROR(GitHeaderLine(l, n));
      } else if (StartsWith(l, "Binary files ")) {
        AMEM_RETURN_IF_ERROR(PlainBinary(l, n));
      }
      // Anything else (a commit message, `index`, `diff -u`, `Only in`) says
      // nothing about lines.
    }
    if (hunk_) {
      return LineError(hunk_->line, "hunk cut short at the end of the diff: " + Missing());
    }
    AMEM_RETURN_IF_ERROR(Finish());
    if (out_.empty() && !blank && !sections_seen_) {
      return Status::InvalidArgument(
          "not a unified diff: no file section (diff --git, or --- and +++ lines)");
    }
    return std::move(out_);
  }

 private:
  Status StartGit(std::string_view rest, size_t n) {
    section_.emplace();
    sections_seen_ = true;
    section_->line = n;
    section_->git = true;
    std::string a, b;
    if (!rest.empty() && rest[0] == '"') {
      size_t used = 0;
      if (!Unquote(rest, &a, &used) || used >= rest.size() || rest[used] != ' ') {
        return LineError(n, "bad quoted path in diff --git");
      }
      std::string_view second = rest.substr(used + 1);
      if (!second.empty() && second[0] == '"') {
        if (!Unquote(second, &b, &used)) return LineError(n, "bad quoted path in diff --git");
      } else {
        b = std::string(second);
      }
    } else if (!rest.empty() && rest.back() == '"') {
      size_t q = rest.rfind(" \"");
      size_t used = 0;
      if (q == std::string_view::npos || !Unquote(rest.substr(q + 1), &b, &used)) {
        return LineError(n, "bad quoted path in diff --git");
      }
      a = std::string(rest.substr(0, q));
    } else {
      // Unquoted paths may hold spaces: the split is the one whose two sides name
      // the same path (a rename or copy says its paths on lines of its own).
      for (size_t sp = rest.find(' '); sp != std::string_view::npos;
           sp = rest.find(' ', sp + 1)) {
        std::string_view x = rest.substr(0, sp), y = rest.substr(sp + 1);
        bool pre = StartsWith(x, "a/") && StartsWith(y, "b/");
        if (pre ? x.substr(2) == y.substr(2) : x == y) {
          a = std::string(x);
          b = std::string(y);
          break;
        }
      }
    }
    if (!a.empty() && !b.empty()) {
      section_->prefixed = StartsWith(a, "a/") && StartsWith(b, "b/");
      section_->old_path = CleanPath(a, section_->prefixed, "a/");
      section_->new_path = CleanPath(b, section_->prefixed, "b/");
    } else {
      // Two different unquoted paths with spaces: the rename or copy lines will
      // name them; the ---/+++ lines still need to know about prefixes.
      section_->prefixed = StartsWith(rest, "a/") && rest.find(" b/") != std::string_view::npos;
    }
    return Status::OK();
  }

  Status GitHeaderLine(std::string_view l, size_t n) {
    auto path = [&](std::string_view s) -> Result<std::string> {
      std::string p;
      if (!s.empty() && s[0] == '"') {
        size_t used = 0;
        if (!Unquote(s, &p, &used)) return LineError(n, "bad quoted path");
      } else {
        p = std::string(s);
      }
      if (p.empty()) return LineError(n, "empty path");
      return CleanPath(std::move(p), false, "");
    };
    Section& s = *section_;
    if (StartsWith(l, "new file mode ")) {
      s.added = true;
    } else if (StartsWith(l, "deleted file mode ")) {
      s.deleted = true;
    } else if (StartsWith(l, "rename from ")) {
      AMEM_ASSIGN_OR_RETURN(p, path(l.substr(12)));
      s.old_path = std::move(p);
      s.renamed = true;
    } else if (StartsWith(l, "rename to ")) {
      AMEM_ASSIGN_OR_RETURN(p, path(l.substr(10)));
      s.new_path = std::move(p);
      s.renamed = true;
    } else if (StartsWith(l, "copy from ")) {
      AMEM_ASSIGN_OR_RETURN(p, path(l.substr(10)));
      s.old_path = std::move(p);
      s.copied = true;
    } else if (StartsWith(l, "copy to ")) {
      AMEM_ASSIGN_OR_RETURN(p, path(l.substr(8)));
      s.new_path = std::move(p);
      s.copied = true;
    } else if (StartsWith(l, "Binary files ") || l == "GIT binary patch") {
      s.change.binary = true;
    }
    return Status::OK();
  }

  // "Binary files X and Y differ" of a plain recursive diff.
  Status PlainBinary(std::string_view l, size_t n) {
    std::string_view rest = l.substr(13);
    size_t and_pos = rest.find(" and ");
    if (and_pos == std::string_view::npos || !rest.ends_with(" differ")) return Status::OK();
    AMEM_RETURN_IF_ERROR(Finish());
    section_.emplace();
    sections_seen_ = true;
    section_->line = n;
    std::string a(rest.substr(0, and_pos));
    std::string b(rest.substr(and_pos + 5, rest.size() - 7 - and_pos - 5));
    SetPlainPaths(std::move(a), std::move(b));
    section_->change.binary = true;
    return Status::OK();
  }

  void SetPlainPaths(std::string a, std::string b) {
    Section& s = *section_;
    s.prefixed = (a == kDevNull || StartsWith(a, "a/")) && (b == kDevNull || StartsWith(b, "b/")) &&
                 !(a == kDevNull && b == kDevNull);
    s.old_path = CleanPath(std::move(a), s.prefixed, "a/");
    s.new_path = CleanPath(std::move(b), s.prefixed, "b/");
  }

  Status Headers(std::string_view minus, std::string_view plus, size_t n) {
    AMEM_ASSIGN_OR_RETURN(a, HeaderPath(minus, n));
    AMEM_ASSIGN_OR_RETURN(b, HeaderPath(plus, n + 1));
    if (a == kDevNull && b == kDevNull) return LineError(n, "both sides are /dev/null");
    if (section_ && section_->git && !section_->headers) {
      Section& s = *section_;
      // The diff --git line decided whether paths carry prefixes.
      if (a != kDevNull) s.old_path = CleanPath(std::move(a), s.prefixed, "a/");
      else s.added = true;
      if (b != kDevNull) s.new_path = CleanPath(std::move(b), s.prefixed, "b/");
      else s.deleted = true;
    } else {
      AMEM_RETURN_IF_ERROR(Finish());
      section_.emplace();
      sections_seen_ = true;
      section_->line = n;
      SetPlainPaths(std::move(a), std::move(b));
    }
    section_->headers = true;
    return Status::OK();
  }

  Status StartHunk(std::string_view l, size_t n) {
    Range o, nw;
    AMEM_RETURN_IF_ERROR(ParseHunkHeader(l, n, &o, &nw));
    // A hunk with no old lines inserts after line start; its old side begins after it.
    const uint32_t first = o.count == 0 ? o.start + 1 : o.start;
    if (first < section_->next_old) {
      return LineError(n, "hunk overlaps or precedes the previous hunk of this file");
    }
    section_->next_old = first + o.count;
    hunk_.emplace();
    hunk_->line = n;
    hunk_->old_left = o.count;
    hunk_->new_left = nw.count;
    hunk_->old_no = first;
    if (o.count == 0 && nw.count == 0) return LineError(n, "hunk with no lines");
    return Status::OK();
  }

  std::string Missing() const {
    return std::to_string(hunk_->old_left) + " old and " + std::to_string(hunk_->new_left) +
           " new lines missing (header at line " + std::to_string(hunk_->line) + ")";
  }

  Status HunkLine(std::string_view l, size_t n) {
    Hunk& h = *hunk_;
    // Some mailers strip the space of an empty context line.
    const char c = l.empty() ? ' ' : l[0];
    switch (c) {
      case ' ':
        if (h.old_left == 0 || h.new_left == 0) {
          return LineError(n, "context line beyond the counts of the hunk at line " +
                                  std::to_string(h.line));
        }
        --h.old_left;
        --h.new_left;
        FlushRun();
        ++h.old_no;
        break;
      case '-':
        if (h.old_left == 0) {
          return LineError(n, "removed line beyond the old count of the hunk at line " +
                                  std::to_string(h.line));
        }
        --h.old_left;
        if (!h.removed_first) h.removed_first = h.old_no;
        h.removed_last = h.old_no;
        ++h.old_no;
        break;
      case '+':
        if (h.new_left == 0) {
          return LineError(n, "added line beyond the new count of the hunk at line " +
                                  std::to_string(h.line));
        }
        --h.new_left;
        if (!h.added) h.added_after = h.old_no - 1;
        h.added = true;
        break;
      case '\\':  // "\ No newline at end of file"
        break;
      default:
        return LineError(n, "hunk ends early: " + Missing());
    }
    if (h.old_left == 0 && h.new_left == 0) {
      FlushRun();
      closed_hunk_ = h.line;
      hunk_.reset();
    }
    return Status::OK();
  }

  void FlushRun() {
    Hunk& h = *hunk_;
    std::vector<LineSpan>& spans = section_->change.old_lines;
    if (h.removed_first) {
      spans.push_back({*h.removed_first, *h.removed_last});
    } else if (h.added) {
      spans.push_back({h.added_after, h.added_after});
    }
    h.removed_first.reset();
    h.removed_last.reset();
    h.added = false;
  }

  Status Finish() {
    if (!section_) return Status::OK();
    Section s = std::move(*section_);
    section_.reset();
    FileChange& c = s.change;
    if (s.old_path == kDevNull) s.added = true;
    if (s.new_path == kDevNull) s.deleted = true;
    if (s.added && s.deleted) return LineError(s.line, "a file both added and deleted");
    if (s.deleted) {
      c.kind = ChangeKind::kDeleted;
      c.old_path = s.old_path;
    } else if (s.added || s.copied) {
      c.kind = ChangeKind::kAdded;
      c.new_path = s.new_path;
      c.old_lines.clear();  // lines of the new file, or of the unchanged source
    } else {
      c.old_path = s.old_path;
      c.new_path = s.new_path;
      c.kind = s.renamed || c.old_path != c.new_path ? ChangeKind::kRenamed
                                                     : ChangeKind::kModified;
    }
    if ((c.kind != ChangeKind::kAdded && c.old_path.empty()) ||
        (c.kind != ChangeKind::kDeleted && c.new_path.empty())) {
      return LineError(s.line, "cannot tell the paths of this file (quote paths with spaces, "
                               "or give --- and +++ lines)");
    }
    out_.push_back(std::move(c));
    return Status::OK();
  }

  std::vector<std::string_view> lines_;
  std::optional<Section> section_;
  std::optional<Hunk> hunk_;
  bool sections_seen_ = false;
  size_t closed_hunk_ = 0;  // the header line of the hunk that ended on the line before
  std::vector<FileChange> out_;
};

}  // namespace

Result<std::vector<FileChange>> ParseUnifiedDiff(std::string_view text) {
  return Parser(text).Run();
}

}  // namespace amem::index
