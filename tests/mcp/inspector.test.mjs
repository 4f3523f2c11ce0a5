// The MCP Inspector's CLI mode (@modelcontextprotocol/inspector, pinned in
// package-lock.json) as a second real client: it lists the default profile's tools
// and calls two of them; a tool outside the profile fails.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { AMEM, tempDir } from "./helpers.mjs";

const INSPECTOR = join(dirname(fileURLToPath(import.meta.url)), "node_modules", ".bin", "mcp-inspector");

function inspect(store, ...args) {
  const r = spawnSync(INSPECTOR, ["--cli", AMEM, "--store", store, "mcp", ...args],
    { encoding: "utf8", timeout: 60000 });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

test("the Inspector lists the agent tools and calls remember and recall", (t) => {
  const store = join(tempDir(t), "store");
  const list = inspect(store, "--method", "tools/list");
  assert.equal(list.status, 0, list.err);
  const names = JSON.parse(list.out).tools.map((x) => x.name);
  assert.ok(names.length <= 12 && names.includes("context") && names.includes("impact"), names.join(","));
  assert.ok(!names.includes("read_graph"));
  const put = inspect(store, "--method", "tools/call", "--tool-name", "remember",
    "--tool-arg", "namespace=decisions", "--tool-arg", "key=db", "--tool-arg", "value=lmdb");
  assert.equal(put.status, 0, put.err);
  assert.equal(JSON.parse(put.out).structuredContent.revision, 1);
  const got = inspect(store, "--method", "tools/call", "--tool-name", "recall",
    "--tool-arg", "namespace=decisions", "--tool-arg", "key=db");
  assert.equal(got.status, 0, got.err);
  assert.equal(JSON.parse(got.out).structuredContent.entry.value, "lmdb");
  const outside = inspect(store, "--method", "tools/call", "--tool-name", "read_graph");
  assert.notEqual(outside.status, 0);
  assert.match(outside.out + outside.err, /not in this server's profile agent/);
});
