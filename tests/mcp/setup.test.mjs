// The README's MCP setup snippets (tests/mcp/setup_snippets.mjs): the README holds
// exactly the generated block, every snippet parses as its language, and the command
// it names, started in a subdirectory of a git work tree, serves that work tree's
// .amem store.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { AMEM, tempDir } from "./helpers.mjs";
import { BEGIN, END, SNIPPETS, block } from "./setup_snippets.mjs";

const README = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "README.md");

// {command, args} of one snippet, by parsing it.
function serverOf(lang, text) {
  if (lang === "sh") {
    const words = text.split(" ");
    assert.deepEqual(words.slice(0, 4), ["claude", "mcp", "add", "amem"]);
    const dash = words.indexOf("--");
    return { command: words[dash + 1], args: words.slice(dash + 2) };
  }
  if (lang === "json") {
    const doc = JSON.parse(text);
    const s = (doc.mcpServers ?? doc.servers).amem;
    if (doc.servers) assert.equal(s.type, "stdio");
    return s;
  }
  assert.equal(lang, "toml");
  const r = spawnSync("/usr/bin/python3", ["-c",
    "import json,sys,tomllib; print(json.dumps(tomllib.loads(sys.stdin.read())))"],
  { input: text, encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout).mcp_servers.amem;
}

test("the README holds the generated setup snippets", () => {
  const readme = readFileSync(README, "utf8");
  const start = readme.indexOf(BEGIN), end = readme.indexOf(END);
  assert.ok(start >= 0 && end > start, "README.md lacks the mcp-setup markers");
  assert.equal(readme.slice(start, end + END.length), block(),
    "README.md's setup snippets differ from tests/mcp/setup_snippets.mjs: paste its output");
});

test("every setup snippet parses and serves the git work tree's store", (t) => {
  const repo = tempDir(t);
  mkdirSync(join(repo, ".git"));  // a work tree as ResolveStoreDir sees one
  mkdirSync(join(repo, "src", "deep"), { recursive: true });
  const init = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "setup", version: "1" } } });
  const env = { ...process.env };
  delete env.AMEM_STORE;  // the store must come from the work tree
  for (const [client, , lang, text] of SNIPPETS) {
    const s = serverOf(lang, text);
    assert.equal(s.command, "amem", client);
    assert.deepEqual(s.args, ["mcp"], client);
    const r = spawnSync(AMEM, s.args, { cwd: join(repo, "src", "deep"), input: init + "\n",
      encoding: "utf8", env });
    assert.equal(r.status, 0, `${client}: ${r.stderr}`);
    assert.equal(JSON.parse(r.stdout.split("\n")[0]).result.serverInfo.name, "amem", client);
    assert.match(r.stderr, new RegExp(`serving the store at .*${repo.split("/").pop()}/\\.amem `), client);
  }
});
