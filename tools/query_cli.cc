#include "tools/query_cli.h"

#include "query/current.h"

namespace amem::cli {

void AddSnapshotFlags(CLI::App* cmd, SnapshotArgs* args) {
  cmd->add_option("--snapshot", args->snapshot,
                  "Query this .amem file instead of the store's current snapshot "
                  "(which is exported again when the store has changed)")
      ->type_name("FILE");
  AddReadViewFlags(cmd, &args->view);
}

Result<std::unique_ptr<snapshot::Reader>> OpenSnapshot(Context& ctx, const SnapshotArgs& args) {
  if (!args.snapshot.empty()) {
    if (args.view.view().kind != ReadView::Kind::kLatest) {
      return ctx.UsageError("--as-of/--at read the store; they cannot apply to --snapshot");
    }
    return snapshot::Reader::Open(args.snapshot);
  }
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  Result<query::SnapshotFile> file = query::EnsureSnapshot(**store, args.view.view());
  if (!file.ok()) return file.status();
  return snapshot::Reader::Open(file->path);
}

void EmitQuery(Context& ctx, const query::Json& doc) {
  if (ctx.json()) {
    ctx.Json(doc);
  } else {
    ctx.Out() += query::RenderText(doc);
  }
}

}  // namespace amem::cli
