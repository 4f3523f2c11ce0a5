// Policy memory commands: kv-put, kv-del, kv-get, kv-list, kv-history (docs/DESIGN.md §2).
#include <memory>
#include <string>

#include "tools/cli/command.h"
#include "tools/io/json_records.h"

namespace amem::cli {

namespace {

struct KvArgs {
  std::string scope, ns, key, value;
  ReadViewFlags view;
  WriteFlags write;
};

void AddKvPositionals(CLI::App* cmd, KvArgs* a, bool with_key) {
  cmd->add_option("SCOPE", a->scope, "Project or namespace, e.g. amem")->required();
  cmd->add_option("NS", a->ns,
                  "Namespace: decisions, constraints, procedures (conventional) or any")
      ->required();
  if (with_key) cmd->add_option("KEY", a->key, "Entry key, e.g. storage-engine")->required();
}

Json KvDoc(const KvArgs& a) {
  Json doc;
  doc["scope"] = a.scope;
  doc["ns"] = a.ns;
  doc["key"] = a.key;
  return doc;
}

std::string KvPath(const KvArgs& a) {
  return io::OneLine(a.scope) + "/" + io::OneLine(a.ns) + "/" + io::OneLine(a.key);
}

Status RunKvPut(Context& ctx, const KvArgs& a) {
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  KvInput kv;
  kv.scope = a.scope;
  kv.ns = a.ns;
  kv.key = a.key;
  kv.value = a.value;
  Result<uint64_t> rev = (*store)->PutKv(std::move(kv), a.write.options());
  if (!rev.ok()) return SingleWriteError(rev.status());
  EmitWrite(ctx, KvDoc(a), "put " + KvPath(a), *rev);
  return Status::OK();
}

Status RunKvDel(Context& ctx, const KvArgs& a) {
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  // Deleting a missing entry is NotFound, as for nodes and edges.
  Result<uint64_t> rev = (*store)->DeleteKv(a.scope, a.ns, a.key, a.write.options());
  if (!rev.ok()) return SingleWriteError(rev.status());
  WarnIfTombstonesAccumulated(**store);
  EmitWrite(ctx, KvDoc(a), "deleted " + KvPath(a), *rev);
  return Status::OK();
}

Status RunKvGet(Context& ctx, const KvArgs& a) {
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  Result<KvRecord> kv = (*store)->GetKv(a.scope, a.ns, a.key, a.view.view());
  if (!kv.ok()) return kv.status();
  if (ctx.json()) {
    ctx.SetJsonOutput(io::KvToJson(*kv));
  } else {
    io::AppendKvText(*kv, &ctx.Out());
  }
  return Status::OK();
}

Status RunKvList(Context& ctx, const KvArgs& a) {
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  Result<std::vector<KvRecord>> list = (*store)->ListKv(a.scope, a.ns, a.view.view());
  if (!list.ok()) return list.status();
  Json doc;
  doc["scope"] = a.scope;
  doc["ns"] = a.ns;
  EmitList(
      ctx, std::move(doc), "entries", *list, [](const KvRecord& kv) { return io::KvToJson(kv); },
      [](const KvRecord& kv, std::string* out) {
        *out += io::OneLine(kv.key) + " = " + io::OneLine(kv.value) + "  (rev " +
                std::to_string(kv.rev) + ")\n";
      });
  return Status::OK();
}

Status RunKvHistory(Context& ctx, const KvArgs& a) {
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  Result<uint64_t> last = (*store)->ResolveRevision(a.view.view());
  if (!last.ok()) return last.status();
  Result<std::vector<KvRecord>> history = (*store)->KvHistory(a.scope, a.ns, a.key);
  if (!history.ok()) return history.status();
  std::vector<KvRecord> versions;
  for (KvRecord& kv : *history) {
    if (kv.rev <= *last) versions.push_back(std::move(kv));
  }
  if (versions.empty()) return Status::NotFound("no history for " + KvPath(a));
  EmitList(
      ctx, KvDoc(a), "versions", versions,
      [](const KvRecord& kv) { return io::KvToJson(kv, /*with_deleted=*/true); },
      io::AppendKvVersionLine);
  return Status::OK();
}

}  // namespace

void AddKvCommands(CLI::App& app, Context& ctx) {
  {
    auto a = std::make_shared<KvArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "kv-put", "Set a policy entry (the previous value stays in its history).",
        "amem kv-put amem decisions storage-engine 'LMDB: one writer, mmap reads' "
        "--run run-1 --ts 1700000000");
    AddKvPositionals(cmd, a.get(), /*with_key=*/true);
    cmd->add_option("VALUE", a->value, "UTF-8 text (often JSON), at most 1 MiB")->required();
    AddWriteFlags(cmd, &a->write, /*with_scope=*/false);
    ctx.SetAction(cmd, [&ctx, a] { return RunKvPut(ctx, *a); });
  }
  {
    auto a = std::make_shared<KvArgs>();
    CLI::App* cmd = ctx.AddCommand(app, "kv-del", "Delete a policy entry (kept in its history).",
                                   "amem kv-del amem constraints no-exceptions");
    AddKvPositionals(cmd, a.get(), /*with_key=*/true);
    AddWriteFlags(cmd, &a->write, /*with_scope=*/false);
    ctx.SetAction(cmd, [&ctx, a] { return RunKvDel(ctx, *a); });
  }
  {
    auto a = std::make_shared<KvArgs>();
    CLI::App* cmd = ctx.AddCommand(app, "kv-get", "Print one policy entry.",
                                   "amem kv-get amem decisions storage-engine --as-of 2");
    AddKvPositionals(cmd, a.get(), /*with_key=*/true);
    AddReadViewFlags(cmd, &a->view);
    ctx.SetAction(cmd, [&ctx, a] { return RunKvGet(ctx, *a); });
  }
  {
    auto a = std::make_shared<KvArgs>();
    CLI::App* cmd = ctx.AddCommand(app, "kv-list",
                                   "List the live entries of a namespace in a scope, by key.",
                                   "amem kv-list amem constraints");
    AddKvPositionals(cmd, a.get(), /*with_key=*/false);
    AddReadViewFlags(cmd, &a->view);
    ctx.SetAction(cmd, [&ctx, a] { return RunKvList(ctx, *a); });
  }
  {
    auto a = std::make_shared<KvArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "kv-history", "Print every version of a policy entry, oldest first, deletes included.",
        "amem kv-history amem decisions storage-engine");
    AddKvPositionals(cmd, a.get(), /*with_key=*/true);
    AddReadViewFlags(cmd, &a->view);
    ctx.SetAction(cmd, [&ctx, a] { return RunKvHistory(ctx, *a); });
  }
}

}  // namespace amem::cli
