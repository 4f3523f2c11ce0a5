// The 16 query subcommands, made from the query table (tools/io/query_table.h): each
// parameter becomes a flag or a positional argument, what the command line gives
// becomes the arguments object MCP would send, and the table's run function answers.
// Each runs on --snapshot FILE, or on the store's live view (snapshot/live.h: the
// base snapshot plus a delta of the changes since it; with --as-of / --at, the
// state of that revision).
#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "query/render.h"
#include "snapshot/reader.h"
#include "tools/cli/command.h"
#include "tools/cli/query_args.h"
#include "tools/io/json_input.h"
#include "tools/io/query_table.h"

namespace amem::cli {

namespace {

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

// Adds `p` to `cmd`, storing into `slot`.
void AddParam(CLI::App* cmd, const io::Param& p, Slot* slot) {
  slot->param = &p;
  const std::string name = io::CliSpelling(p);
  const std::string help = io::ParamHelp(p, io::FrontEnd::kCli);
  CLI::Option* o = nullptr;
  switch (p.type) {
    case io::ParamType::kString:
      o = p.role == io::ParamRole::kWords ? cmd->add_option(name, slot->list, help)
                                          : cmd->add_option(name, slot->text, help);
      if (!p.choices.empty()) {
        o->check(CLI::IsMember(p.choices));
      }
      if (p.role == io::ParamRole::kFileText) PathArgument(o)->type_name("FILE");
      break;
    case io::ParamType::kInteger:
      o = cmd->add_option(name, slot->integer, help);
      break;
    case io::ParamType::kNumber:
      o = cmd->add_option(name, slot->number, help);
      break;
    case io::ParamType::kBoolean:
      o = cmd->add_flag(name, slot->flag, help);
      break;
    case io::ParamType::kStrings:
      o = cmd->add_option(name, slot->list, help);
      if (p.role != io::ParamRole::kNodes && name.rfind("--", 0) == 0) o->delimiter(',');
      if (p.role == io::ParamRole::kTypes) o->type_name("TYPE");
      if (p.role == io::ParamRole::kRelations) o->type_name("REL");
      if (p.name == "runs") o->type_name("RUN");
      break;
    case io::ParamType::kVector:
      o = cmd->add_option(name, slot->text, help)->type_name("JSON");
      break;
  }
  if (p.min && !p.max && *p.min == 0) {
    o->check(CLI::NonNegativeNumber);
  } else if (p.min || p.max) {
    if (p.type == io::ParamType::kInteger) {
      o->check(CLI::Range(p.min ? static_cast<int64_t>(*p.min) : INT64_MIN,
                          p.max ? static_cast<int64_t>(*p.max) : INT64_MAX));
    } else {
      o->check(CLI::Range(p.min.value_or(std::numeric_limits<double>::lowest()),
                          p.max.value_or(std::numeric_limits<double>::max())));
    }
  }
  if (p.required) o->required();
  slot->option = o;
}

// The arguments object of what the command line gave, named as in MCP (a
// kFileText parameter holds its file's name until RunQuery reads it).
Result<io::QueryJson> ArgsObject(const QueryArgs& a) {
  io::QueryJson args = io::QueryJson::object();
  for (const Slot& s : a.slots) {
    if (s.option->count() == 0) continue;
    const io::Param& p = *s.param;
    const bool text = (p.type == io::ParamType::kString && p.role != io::ParamRole::kWords) ||
                      p.type == io::ParamType::kVector;
    if (text && s.text.empty() && (!p.allow_empty || p.role == io::ParamRole::kFileText)) {
      continue;  // "" is not given
    }
    switch (p.type) {
      case io::ParamType::kString:
        args[p.name] = p.role == io::ParamRole::kWords ? Join(s.list, " ") : s.text;
        break;
      case io::ParamType::kInteger: args[p.name] = s.integer; break;
      case io::ParamType::kNumber: args[p.name] = s.number; break;
      case io::ParamType::kBoolean: args[p.name] = s.flag; break;
      case io::ParamType::kStrings: args[p.name] = s.list; break;
      case io::ParamType::kVector: {
        const std::string name = io::CliSpelling(p);
        AMEM_ASSIGN_OR_RETURN(v, io::VectorFromText(s.text, name));
        if (v.empty()) return Status::InvalidArgument(name + ": an empty vector");
        args[p.name] = v;
        break;
      }
    }
  }
  return args;
}

// One run of the query on the snapshot the flags name (*live: the store's view).
// Output is dropped on failure: empty text from undecodable content never shows,
// nor an answer read from a base and delta found not to fit (both ContentStatus).
Result<io::QueryAnswer> AnswerOnce(Context& ctx, const io::QueryDef& def, const QueryArgs& a,
                                   const io::QueryJson& args, snapshot::LiveView* live,
                                   bool* usage_error, bool* wrote,
                                   std::shared_ptr<const snapshot::Reader>* reader_out) {
  const bool latest = a.snap.snapshot.empty() && a.snap.view.view().kind == ReadView::Kind::kLatest;
  AMEM_ASSIGN_OR_RETURN(reader, OpenSnapshot(ctx, a.snap, live));
  Store* store = nullptr;
  if (a.snap.snapshot.empty()) {
    AMEM_ASSIGN_OR_RETURN(s, ctx.OpenStore());
    store = s;
  }
  io::QueryCall call{.reader = *reader,
                     .args = args,
                     .def = def,
                     .front_end = io::FrontEnd::kCli,
                     .store = store,
                     .latest = latest,
                     .write = a.write.options(),
                     .json_output = ctx.json()};
  Result<io::QueryAnswer> answer = def.run(call);
  *wrote = answer.ok() && answer->wrote;
  AMEM_RETURN_IF_ERROR(reader->ContentStatus());
  *usage_error = !answer.ok() && call.usage_error;
  if (reader_out) *reader_out = reader;
  return answer;
}

}  // namespace

Result<io::QueryAnswer> AnswerQuery(Context& ctx, const io::QueryDef& def, const QueryArgs& a,
                                    std::shared_ptr<const snapshot::Reader>* reader) {
  AMEM_ASSIGN_OR_RETURN(args, ArgsObject(a));
  const bool latest = a.snap.snapshot.empty() && a.snap.view.view().kind == ReadView::Kind::kLatest;
  for (const Slot& s : a.slots) {
    if (s.param->latest_only && s.flag && !latest) {
      return ctx.UsageError(io::LatestOnlyError(*s.param, io::FrontEnd::kCli).message());
    }
  }
  // Before anything is opened: a call missing its node/text/... is a usage error
  // even where there is no store yet.
  if (Status given = io::CheckGiven(def, args, io::FrontEnd::kCli); !given.ok()) {
    return ctx.UsageError(given.message());
  }
  // Files are read once the arguments fit together: `impact NODE --diff x` is a
  // usage error even when x does not exist.
  for (const Slot& s : a.slots) {
    if (s.param->role == io::ParamRole::kFileText && args.contains(s.param->name)) {
      std::string content;
      // Up to 4 bytes a character: a longer file is refused below without being
      // read whole.
      AMEM_RETURN_IF_ERROR(ReadInputFile(s.text, &content, 4 * io::MaxTextChars(*s.param) + 1));
      args[s.param->name] = std::move(content);
    }
  }
  if (Status lengths = io::CheckTextLengths(def, args, io::FrontEnd::kCli); !lengths.ok()) {
    return ctx.UsageError(lengths.message());
  }
  // A damaged cache of the store's live view, found opening it or by the query
  // (ContentStatus), is discarded and compiled again: a second, last attempt.
  snapshot::LiveView live;
  bool usage_error = false, wrote = false;
  Result<io::QueryAnswer> answer =
      AnswerOnce(ctx, def, a, args, &live, &usage_error, &wrote, reader);
  // What a write did stands: it is never run twice.
  if (!answer.ok() && !usage_error && !wrote && a.snap.snapshot.empty() &&
      DiscardBadLiveCache(ctx, answer.status(), live.reader ? &live : nullptr)) {
    live = {};
    answer = AnswerOnce(ctx, def, a, args, &live, &usage_error, &wrote, reader);
  }
  if (usage_error) return ctx.UsageError(answer.status().message());
  return answer;
}

void AddQueryParams(CLI::App* cmd, const io::QueryDef& def, QueryArgs* a,
                    const std::vector<std::string>& skip) {
  for (const io::Param& p : def.params) {
    if (p.scope == io::ParamScope::kMcpOnly) continue;
    if (std::find(skip.begin(), skip.end(), p.name) != skip.end()) continue;
    AddParam(cmd, p, &a->slots.emplace_back());
  }
  AddSnapshotFlags(cmd, &a->snap);
  if (def.writes) AddWriteFlags(cmd, &a->write, false);
}

namespace {

Status RunQuery(Context& ctx, const io::QueryDef& def, const QueryArgs& a) {
  AMEM_ASSIGN_OR_RETURN(answer, AnswerQuery(ctx, def, a));
  if (!answer.wrote) ctx.RecordQuery(answer.doc);  // the query log keeps questions only
  if (ctx.json()) {
    ctx.SetJsonOutput(answer.doc);
  } else if (!answer.text.empty()) {
    ctx.Out() += answer.text;
  } else {
    ctx.Out() += query::RenderText(answer.doc);
  }
  return Status::OK();
}

void AddQueryCommand(CLI::App& app, Context& ctx, const io::QueryDef& def) {
  auto a = std::make_shared<QueryArgs>();
  // The CLI's help also says what the MCP tool's short description leaves out.
  CLI::App* cmd = ctx.AddCommand(
      app, def.command, def.cli_help + "\n\nAs the MCP tool " + def.tool + ": " + def.description,
      def.example);
  AddQueryParams(cmd, def, a.get());
  ctx.SetAction(cmd, [&ctx, &def, a] { return RunQuery(ctx, def, *a); });
}

}  // namespace

void AddQueryCommands(CLI::App& app, Context& ctx) {
  for (const io::QueryDef& def : io::Queries()) {
    if (ctx.Wants(def.command)) AddQueryCommand(app, ctx, def);
  }
}

}  // namespace amem::cli
