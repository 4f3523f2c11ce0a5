// `amem replay-queries QUERIES.jsonl --snapshot A.amem [--against B.amem]`: asks
// every recorded query again (tools/io/query_log.h) and reports which answers changed
// (docs/LOG.md "Answer regressions").
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "snapshot/reader.h"
#include "tools/cli/command.h"
#include "tools/mcp/common.h"
#include "tools/mcp/schema.h"
#include "tools/mcp/memory_tools.h"
#include "tools/cli/query_args.h"
#include "tools/cli/replay_queries.h"
#include "tools/io/query_log.h"
#include "tools/io/json_records.h"

namespace amem::cli {

namespace {

struct ReplayQueriesArgs {
  std::string file, snapshot, against;
};

// The arguments of a recorded CLI query without what chose the snapshot it read.
std::vector<std::string> WithoutSnapshotFlags(const io::OrderedJson& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i].get<std::string>();
    bool skip = false;
    for (const char* flag : {"--snapshot", "--as-of", "--at"}) {
      if (a == flag) {
        ++i;  // and its value
        skip = true;
      } else if (a.rfind(std::string(flag) + "=", 0) == 0) {
        skip = true;
      }
    }
    if (!skip) out.push_back(a);
  }
  return out;
}

// A query's answer on one snapshot, or the error it gave.
struct Outcome {
  bool ok = false;
  io::OrderedJson answer;  // ComparableAnswer form
  std::string error;
};

Outcome AskOnce(const io::QueryRecord& q, const std::string& path,
                const snapshot::Reader& reader) {
  Outcome o;
  if (q.source == "cli") {
    std::vector<std::string> argv{q.query};
    for (std::string& a : WithoutSnapshotFlags(q.args)) argv.push_back(std::move(a));
    argv.push_back("--snapshot");
    argv.push_back(path);
    Result<Json> answer = RunQueryCommand(argv);
    if (!answer.ok()) {
      o.error = answer.status().ToString();
      return o;
    }
    o.ok = true;
    o.answer = io::ComparableAnswer(*answer);
    return o;
  }
  mcp::ToolContext ctx;
  ctx.reader = &reader;
  mcp::ToolRegistry registry = mcp::BuildRegistry(&ctx);
  const mcp::Tool* tool = registry.Find(q.query);
  if (tool == nullptr || !tool->read_only || q.query == "export_snapshot") {
    o.error = "\"" + q.query + "\" is not a query tool";
    return o;
  }
  // The answer bound the call was made with (max_bytes, tools/mcp/tool.h).
  mcp::Json args = q.args;
  Result<size_t> bound = args.is_object() ? mcp::TakeAnswerBytes(&args) : mcp::kDefaultAnswerBytes;
  if (!bound.ok()) {
    o.error = "arguments: " + bound.status().ToString();
    return o;
  }
  mcp::ScopedAnswerBytes scoped(*bound);
  if (Status s = mcp::ValidateAgainstSchema(tool->input_schema, args); !s.ok()) {
    o.error = "arguments: " + s.ToString();
    return o;
  }
  mcp::ToolResult r = tool->handler(args);
  if (r.is_error) {
    o.error = r.text;
    return o;
  }
  o.ok = true;
  o.answer = io::ComparableAnswer(r.structured);
  return o;
}

// AskOnce; an exception (a recorded line no command would accept) is its error.
Outcome Ask(const io::QueryRecord& q, const std::string& path, const snapshot::Reader& reader) {
  try {
    return AskOnce(q, path, reader);
  } catch (const std::exception& e) {
    Outcome o;
    o.error = std::string("unexpected exception: ") + e.what();
    return o;
  }
}

// How a row is recognised in two answers: its key, its edge, else its JSON.
std::string RowId(const io::OrderedJson& row) {
  if (row.is_object()) {
    auto key = row.find("key");
    if (key != row.end() && key->is_string()) return key->get<std::string>();
    if (row.contains("src") && row.contains("rel") && row.contains("dst")) {
      return row["src"].dump() + " -" + row["rel"].dump() + "-> " + row["dst"].dump();
    }
    io::OrderedJson rest = row;
    rest.erase("score");
    return rest.dump();
  }
  return row.dump();
}

// Rows added, removed, moved and rescored between the arrays `a` and `b` of
// field `field`; rows in both that differ otherwise are "changed".
void DiffRows(const std::string& field, const io::OrderedJson& a, const io::OrderedJson& b,
              io::OrderedJson* report) {
  std::map<std::string, size_t> in_a, in_b;
  for (size_t i = 0; i < a.size(); ++i) in_a.emplace(RowId(a[i]), i);
  for (size_t i = 0; i < b.size(); ++i) in_b.emplace(RowId(b[i]), i);
  for (size_t i = 0; i < b.size(); ++i) {
    std::string id = RowId(b[i]);
    if (!in_a.count(id)) {
      (*report)["added"].push_back({{"field", field}, {"row", id}, {"at", i}});
    }
  }
  for (size_t i = 0; i < a.size(); ++i) {
    std::string id = RowId(a[i]);
    auto it = in_b.find(id);
    if (it == in_b.end()) {
      (*report)["removed"].push_back({{"field", field}, {"row", id}, {"was", i}});
      continue;
    }
    const io::OrderedJson& other = b[it->second];
    if (it->second != i) {
      (*report)["moved"].push_back({{"field", field}, {"row", id}, {"from", i},
                                    {"to", it->second}});
    }
    io::OrderedJson x = a[i], y = other;
    if (x.is_object() && y.is_object() && x.contains("score") && y.contains("score") &&
        x["score"] != y["score"]) {
      (*report)["score_changes"].push_back(
          {{"field", field}, {"row", id}, {"from", x["score"]}, {"to", y["score"]}});
      x.erase("score");
      y.erase("score");
    }
    if (x != y) (*report)["changed_rows"].push_back({{"field", field}, {"row", id}});
  }
}

// Compares two outcomes of one query; fills `report` and returns whether same.
bool Compare(const Outcome& a, const Outcome& b, io::OrderedJson* report) {
  if (!a.ok || !b.ok) {
    if (!a.ok && !b.ok && a.error == b.error) return true;
    (*report)["error"] = !a.ok ? a.error : b.error;
    return false;
  }
  if (a.answer == b.answer) return true;
  std::vector<std::string> fields;
  for (const auto& [name, value] : a.answer.items()) fields.push_back(name);
  for (const auto& [name, value] : b.answer.items()) {
    if (!a.answer.contains(name)) fields.push_back(name);
  }
  for (const std::string& f : fields) {
    const io::OrderedJson x = a.answer.value(f, io::OrderedJson()), y = b.answer.value(f, io::OrderedJson());
    if (x == y) continue;
    if (x.is_array() && y.is_array()) {
      DiffRows(f, x, y, report);
    } else {
      (*report)["changed_fields"].push_back({{"field", f}, {"from", x}, {"to", y}});
    }
  }
  return false;
}

std::string ArgsText(const io::OrderedJson& report) {
  const io::OrderedJson& args = report["args"];
  if (report["source"] == "mcp") return args.dump();
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : " ") + a.get<std::string>();
  return s;
}

// A value for people: numbers with 6 significant digits, long JSON cut.
std::string Short(const io::OrderedJson& v) {
  if (v.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.6g", v.get<double>());
    return buf;
  }
  std::string text = v.dump();
  return text.size() <= 60 ? text : text.substr(0, 57) + "...";
}

void AppendReportText(const io::OrderedJson& r, std::string* out) {
  *out += "line " + r["line"].dump() + "  " + r["source"].get<std::string>() + " " +
          r["query"].get<std::string>() + " " + r["args_text"].get<std::string>() + ": " +
          r["status"].get<std::string>() + "\n";
  if (r.contains("error")) *out += "  error: " + r["error"].get<std::string>() + "\n";
  if (r.contains("digest")) {
    *out += "  digest " + r["digest"]["recorded"].get<std::string>() + " recorded, " +
            r["digest"]["now"].get<std::string>() + " now\n";
  }
  auto rows = [&](const char* name, auto line) {
    if (!r.contains(name)) return;
    for (const auto& x : r[name]) {
      *out += "  " + x["field"].get<std::string>() + ": " + line(x) + "\n";
    }
  };
  rows("added", [](const io::OrderedJson& x) {
    return "+ " + x["row"].get<std::string>() + " (at " + x["at"].dump() + ")";
  });
  rows("removed", [](const io::OrderedJson& x) {
    return "- " + x["row"].get<std::string>() + " (was at " + x["was"].dump() + ")";
  });
  rows("moved", [](const io::OrderedJson& x) {
    return "~ " + x["row"].get<std::string>() + " moved " + x["from"].dump() + " -> " +
           x["to"].dump();
  });
  rows("score_changes", [](const io::OrderedJson& x) {
    return "score " + x["row"].get<std::string>() + " " + Short(x["from"]) + " -> " +
           Short(x["to"]);
  });
  rows("changed_rows", [](const io::OrderedJson& x) {
    return "* " + x["row"].get<std::string>() + " changed";
  });
  if (r.contains("changed_fields")) {
    for (const auto& f : r["changed_fields"]) {
      *out += "  " + f["field"].get<std::string>() + ": " + Short(f["from"]) + " -> " +
              Short(f["to"]) + "\n";
    }
  }
}

}  // namespace

Result<Json> ReplayQueries(const std::string& file, const std::string& snapshot_file,
                           const std::string& against_file) {
  std::string text;
  AMEM_RETURN_IF_ERROR(ReadInputLines(file, &text));
  std::vector<std::pair<size_t, io::QueryRecord>> queries;
  size_t line_number = 0;
  for (std::string_view rest = text; !rest.empty();) {
    const size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    Result<io::QueryRecord> q = io::ParseQueryRecord(line);
    if (!q.ok()) return q.status().WithContext("line " + std::to_string(line_number));
    queries.emplace_back(line_number, std::move(q).value());
  }
  AMEM_ASSIGN_OR_RETURN(reader_a, snapshot::Reader::Open(snapshot_file, kCheckedRead));
  std::unique_ptr<snapshot::Reader> reader_b;
  if (!against_file.empty()) {
    AMEM_ASSIGN_OR_RETURN(b, snapshot::Reader::Open(against_file, kCheckedRead));
    reader_b = std::move(b);
  }

  io::OrderedJson reports = io::OrderedJson::array();
  size_t same = 0, changed = 0;
  for (const auto& [line, q] : queries) {
    io::OrderedJson r;
    r["line"] = line;
    r["source"] = q.source;
    r["query"] = q.query;
    r["args"] = q.args;
    const Outcome on_a = Ask(q, snapshot_file, *reader_a);
    bool is_same = false;
    if (reader_b != nullptr) {
      is_same = Compare(on_a, Ask(q, against_file, *reader_b), &r);
    } else if (!on_a.ok) {
      r["error"] = on_a.error;
    } else {
      const std::string now = io::AnswerDigest(on_a.answer);
      is_same = now == q.digest;
      if (!is_same) r["digest"] = {{"recorded", q.digest}, {"now", now}};
    }
    r["status"] = is_same ? "same" : "changed";
    ++(is_same ? same : changed);
    reports.push_back(std::move(r));
  }
  Json doc;
  doc["snapshot"] = snapshot_file;
  doc["against"] = against_file.empty() ? Json() : Json(against_file);
  doc["queries"] = std::move(reports);
  doc["total"] = queries.size();
  doc["same"] = same;
  doc["changed"] = changed;
  return doc;
}

namespace {

Status RunReplayQueries(Context& ctx, const ReplayQueriesArgs& a) {
  AMEM_ASSIGN_OR_RETURN(doc, ReplayQueries(a.file, a.snapshot, a.against));
  if (doc["changed"].get<size_t>() > 0) ctx.set_answer_false();
  if (ctx.json()) {
    ctx.SetJsonOutput(doc);
    return Status::OK();
  }
  for (io::OrderedJson& r : doc["queries"]) {
    r["args_text"] = ArgsText(r);
    AppendReportText(r, &ctx.Out());
  }
  ctx.Out() += std::to_string(doc["total"].get<size_t>()) + " queries: " +
               std::to_string(doc["same"].get<size_t>()) + " same, " +
               std::to_string(doc["changed"].get<size_t>()) + " changed (" +
               (a.against.empty() ? "against the recorded digests" : "against " + a.against) +
               ")\n";
  return Status::OK();
}

}  // namespace

void AddReplayQueriesCommands(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<ReplayQueriesArgs>();
  CLI::App* cmd = ctx.AddCommand(
      app, "replay-queries",
      "Ask recorded queries (--query-log) again and report which answers changed; exits 1 "
      "if any did.",
      "amem replay-queries queries.jsonl --snapshot run-1.amem --against run-2.amem");
  PathArgument(
      cmd->add_option("QUERIES", a->file, "Query log (--query-log / $AMEM_QUERY_LOG), or -"))
      ->required();
  PathArgument(cmd->add_option("--snapshot", a->snapshot, "Ask the queries on this .amem file"))
      ->type_name("FILE")
      ->required();
  PathArgument(cmd->add_option("--against", a->against,
                               "Compare with the answers on this .amem file (rows added, "
                               "removed, moved, rescored) instead of the recorded digests"))
      ->type_name("FILE");
  ctx.SetAction(cmd, [&ctx, a] { return RunReplayQueries(ctx, *a); });
}

}  // namespace amem::cli
