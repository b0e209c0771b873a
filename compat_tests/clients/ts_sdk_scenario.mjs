#!/usr/bin/env node
// One turn through the official TypeScript SDK (npm @openai/codex-sdk), as a third-party program would use it.
//
//   node ts_sdk_scenario.mjs SDK_PREFIX CODEX_BIN WORKSPACE CODEX_HOME PROMPT
//
// SDK_PREFIX is the npm --prefix the harness installed the SDK into. The SDK does not speak app-server
// JSON-RPC: for each turn it spawns `CODEX_BIN exec --experimental-json ... --cd WORKSPACE`, writes the prompt
// to stdin and reads JSONL events (thread.started, turn.started, item.*, turn.completed | turn.failed).
// Prints one JSON object on stdout's last line: {sdk, threadId, events, items (completed item types), final,
// failed, error}. The harness judges it; this script only reports.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const TURN_TIMEOUT_MS = 60_000;
const [prefix, codexBin, workspace, home, prompt] = process.argv.slice(2);
const out = { sdk: null, threadId: null, events: [], items: [], final: null, failed: null, error: null };

// The SDK writes the prompt to the child's stdin without an error listener: an executable that exits before
// reading it surfaces as an uncaught EPIPE. Report that instead of crashing without a verdict.
process.on("uncaughtException", (err) => {
  out.error = `uncaught ${err?.code ?? ""} ${String(err?.message ?? err).slice(0, 600)}`;
  console.log(JSON.stringify(out));
  process.exit(0);
});

async function main() {
  const pkgDir = path.join(prefix, "node_modules", "@openai", "codex-sdk");
  out.sdk = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8")).version;
  const { Codex } = await import(pathToFileURL(path.join(pkgDir, "dist", "index.js")).href);
  // The harness already cleaned this environment (no real keys); the executable gets it plus its home.
  const env = { ...process.env, CODEX_HOME: home };
  const codex = new Codex({ codexPathOverride: codexBin, apiKey: "compat-dummy-key", env });
  const thread = codex.startThread({
    workingDirectory: workspace,
    skipGitRepoCheck: true,
    sandboxMode: "workspace-write",
    approvalPolicy: "never",
  });
  try {
    const { events } = await thread.runStreamed(prompt, { signal: AbortSignal.timeout(TURN_TIMEOUT_MS) });
    for await (const event of events) {
      out.events.push(event.type);
      if (event.type === "item.completed") out.items.push(event.item.type);
      if (event.type === "item.completed" && event.item.type === "agent_message") out.final = event.item.text;
      if (event.type === "turn.failed") out.failed = event.error;
    }
  } catch (err) {
    out.error = `${err?.name}: ${String(err?.message ?? err).slice(0, 1200)}`;
  }
  out.threadId = thread.id;
  console.log(JSON.stringify(out));
}

main();
