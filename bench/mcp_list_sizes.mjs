#!/usr/bin/env node
// What each MCP server costs a model's context before it has asked anything: the
// bytes of the tools/list result (its JSON, as JSON.stringify writes it) and of the
// initialize instructions, for `amem mcp` with each profile (docs/MCP.md "Profiles")
// and for the official memory server (@modelcontextprotocol/server-memory, pinned in
// tests/mcp/package-lock.json), in one run, on fresh stores. Prints a Markdown table.
//
//   bash bench/mcp_list_sizes.sh [AMEM_BINARY]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "..", "tests", "mcp", "package.json"));
const officialPackage = require.resolve("@modelcontextprotocol/server-memory/package.json");
const official = join(dirname(officialPackage), "dist", "index.js");
const officialVersion = require(officialPackage).version;
const amem = process.argv[2];
if (!amem) throw new Error("usage: mcp_list_sizes.mjs AMEM_BINARY");

// Starts `command args`, sends initialize and tools/list, returns both results.
function listOf(command, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"], env: { ...process.env, ...env } });
    let out = "";
    const results = {};
    child.stdout.on("data", (d) => {
      out += d;
      let nl;
      while ((nl = out.indexOf("\n")) >= 0) {
        const msg = JSON.parse(out.slice(0, nl));
        out = out.slice(nl + 1);
        if (msg.error) reject(new Error(`${command}: ${msg.error.message}`));
        results[msg.id] = msg.result;
        if (msg.id === 1) {
          child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
          child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }) + "\n");
        }
        if (msg.id === 2) { child.stdin.end(); child.kill(); resolve(results); }
      }
    });
    child.on("error", reject);
    child.on("exit", (code) => { if (!results[2]) reject(new Error(`${command} exited ${code}`)); });
    child.stdin.write(JSON.stringify({
      jsonrpc: "2.0", id: 1, method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "sizes", version: "1" } },
    }) + "\n");
  });
}

const bytes = (v) => Buffer.byteLength(JSON.stringify(v), "utf8");
const dir = mkdtempSync(join(tmpdir(), "amem-list-sizes-"));
try {
  const rows = [];
  for (const profile of ["agent", "memory", "all"]) {
    const r = await listOf(amem, ["--store", join(dir, profile), "mcp", "--tools", profile], {});
    rows.push([`amem mcp --tools ${profile}${profile === "agent" ? " (default)" : ""}`,
      r[2].tools.length, bytes(r[2]), Buffer.byteLength(r[1].instructions ?? "", "utf8")]);
  }
  const o = await listOf(process.execPath, [official], { MEMORY_FILE_PATH: join(dir, "memory.jsonl") });
  rows.push([`@modelcontextprotocol/server-memory ${officialVersion}`, o[2].tools.length, bytes(o[2]),
    Buffer.byteLength(o[1].instructions ?? "", "utf8")]);
  console.log("| server | tools | tools/list bytes | ~tokens (bytes/4) | instructions bytes |");
  console.log("|---|---:|---:|---:|---:|");
  for (const [name, n, b, ins] of rows) {
    console.log(`| ${name} | ${n} | ${b.toLocaleString("en-US")} | ${Math.ceil(b / 4).toLocaleString("en-US")} | ${ins.toLocaleString("en-US")} |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
