// Protocol edge cases on the real binary, over raw pipes: unknown method, malformed
// line, oversized line, notifications, string and number ids, exit at end of input,
// and nothing but JSON-RPC on stdout.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { AMEM, tempDir } from "./helpers.mjs";

// Writes `input` to `amem mcp`, closes stdin, returns {code, lines (parsed), stderr}.
function runRaw(storeDir, input) {
  return new Promise((resolve, reject) => {
    const child = spawn(AMEM, ["--store", storeDir, "mcp", "--tools", "all"], { stdio: ["pipe", "pipe", "pipe"] });
    let out = "", err = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => {
      const lines = out.split("\n");
      assert.equal(lines.pop(), "", "stdout ends with a newline");
      resolve({ code, lines: lines.map((l) => JSON.parse(l)), stderr: err });
    });
    child.stdin.end(input);
  });
}

const msg = (o) => JSON.stringify({ jsonrpc: "2.0", ...o }) + "\n";

test("edge cases get the right answers and the server keeps running", async (t) => {
  const store = join(tempDir(t), "store");
  const input =
    msg({ id: 1, method: "initialize", params: { protocolVersion: "2024-11-05", capabilities: {},
                                                 clientInfo: { name: "raw", version: "0" } } }) +
    msg({ method: "notifications/initialized" }) +
    msg({ id: "str-id", method: "ping" }) +
    msg({ id: 42, method: "no/such/method" }) +
    "{ this is not json\n" +
    msg({ id: 3, method: "tools/call", params: { name: "remember", arguments: {
      namespace: "n", key: "k", value: "x".repeat(9 * 1024 * 1024) } } }) +  // > 8 MiB line
    msg({ method: "tools/call", params: { name: "remember", arguments: {
      namespace: "n", key: "from-notification", value: "v" } } }) +       // no id: no answer
    msg({ id: 0, method: "tools/call", params: { name: "remember",
                                                 arguments: { namespace: "n", key: "k", value: "ok" } } }) +
    msg({ id: 4, method: "tools/call", params: { name: "recall", arguments: { namespace: "n" } } }) +
    JSON.stringify({ id: 5, method: "ping" }) + "\n" +                      // no jsonrpc
    msg({ id: -7.5, method: "ping" });
  const { code, lines, stderr } = await runRaw(store, input);
  assert.equal(code, 0, stderr);
  assert.deepEqual(lines.map((l) => l.id), [1, "str-id", 42, null, null, 0, 4, 5, -7.5]);
  assert.equal(lines[0].result.protocolVersion, "2024-11-05");
  assert.deepEqual(lines[1].result, {});
  assert.equal(lines[2].error.code, -32601);
  assert.equal(lines[3].error.code, -32700);
  assert.equal(lines[4].error.code, -32600);
  assert.match(lines[4].error.message, /longer than 8388608 bytes/);
  assert.equal(lines[5].result.isError, false);
  // The notification's tools/call was executed but not answered.
  const keys = lines[6].result.structuredContent.entries.map((e) => e.key).sort();
  assert.deepEqual(keys, ["from-notification", "k"]);
  assert.equal(lines[7].error.code, -32600);
  assert.deepEqual(lines[8].result, {});
  assert.match(stderr, /serving the store/);
});

test("unsupported protocol versions get ours; empty input exits 0", async (t) => {
  const store = join(tempDir(t), "store");
  let r = await runRaw(store, msg({ id: 1, method: "initialize",
                                    params: { protocolVersion: "2099-01-01" } }));
  assert.equal(r.lines[0].result.protocolVersion, "2025-11-25");
  r = await runRaw(store, "");
  assert.equal(r.code, 0);
  assert.deepEqual(r.lines, []);
});

test("without --store outside a git work tree the server refuses to start", async (t) => {
  const dir = tempDir(t);
  const { spawnSync } = await import("node:child_process");
  const env = { ...process.env };
  delete env.AMEM_STORE;
  const r = spawnSync(AMEM, ["mcp"], { cwd: dir, env, input: "", encoding: "utf8" });
  assert.notEqual(r.status, 0);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /not inside a git work tree.*--store/);
  // Inside a git work tree (a .git entry), the store is <top>/.amem.
  const { mkdirSync, existsSync } = await import("node:fs");
  mkdirSync(join(dir, ".git"));
  mkdirSync(join(dir, "sub", "deeper"), { recursive: true });
  const ok = spawnSync(AMEM, ["mcp"], { cwd: join(dir, "sub", "deeper"), env,
                                        input: msg({ id: 1, method: "ping" }), encoding: "utf8" });
  assert.equal(ok.status, 0, ok.stderr);
  assert.deepEqual(JSON.parse(ok.stdout).result, {});
  assert.ok(existsSync(join(dir, ".amem")));
});
