// pycodex code mode: runs one exec script in a fresh vm context and talks to pycodex over JSON lines.
//
// stdin, first line: {"source", "stored", "tools": [{"name", "description"}]}; later lines:
// {"t": "reply", "id", "ok", "value" | "error"} answering a tool call.
// stdout: {"t": "text" | "image" | "notify" | "store" | "yield" | "call" | "done", ...}.
//
// The script sees only the globals the bootstrap below defines inside its own context: no process,
// require, console, fetch or imports. The bootstrap keeps the few host functions it is handed in its
// closure and passes them strings and numbers only, so no host object (whose constructor would be the
// host's Function) is reachable from the script.
import readline from "node:readline";
import vm from "node:vm";

const out = process.stdout;
const exitProcess = (code) => process.exit(code);
let finished = false;

// Writes to a full pipe are queued, and exiting would drop them: exit once the end line is flushed.
// After the end nothing more is sent (a script goes on running after exit() until the flush).
function finish(error) {
  if (finished) return;
  finished = true;
  out.write(JSON.stringify({ t: "done", error: error ?? null }) + "\n", () => exitProcess(0));
}

const BOOTSTRAP = `(function (hostSend, hostTimer, hostClear, hostExit, toolsJson, storedJson) {
  "use strict";
  const send = (message) => hostSend(JSON.stringify(message));
  const stringify = (value) => {
    if (typeof value === "string") return value;
    try {
      const json = JSON.stringify(value);
      return json === undefined ? String(value) : json;
    } catch {
      return String(value);
    }
  };
  const pending = new Map();
  const timers = new Map();
  let nextCall = 0;
  let nextTimer = 0;
  const toolList = JSON.parse(toolsJson);
  const stored = new Map(Object.entries(JSON.parse(storedJson)));
  const tools = {};
  for (const tool of toolList) {
    tools[tool.name] = (input) => new Promise((resolve, reject) => {
      const id = ++nextCall;
      pending.set(id, { resolve, reject });
      send({ t: "call", id, tool: tool.name, input: input === undefined ? null : input });
    });
  }
  delete globalThis.console;  // V8 gives every context one; Codex's scripts have none
  const define = (name, value) => Object.defineProperty(globalThis, name, { value, writable: true, configurable: true });
  define("tools", tools);
  define("ALL_TOOLS", toolList.map(({ name, description }) => ({ name, description })));
  define("text", (value) => { send({ t: "text", text: stringify(value) }); });
  define("image", (value) => {
    const url = typeof value === "string" ? value : value?.image_url
      ?? (value?.data ? "data:" + value.mimeType + ";base64," + value.data : undefined);
    if (typeof url !== "string") throw new TypeError("image() expects a data: URL or an object with image_url");
    send({ t: "image", image_url: url });
  });
  define("store", (key, value) => {
    const json = JSON.stringify(value);
    const kept = json === undefined ? null : JSON.parse(json);
    stored.set(String(key), kept);
    send({ t: "store", key: String(key), value: kept });
  });
  define("load", (key) => {
    const value = stored.get(String(key));
    return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
  });
  define("notify", (value) => { send({ t: "notify", text: stringify(value) }); });
  define("yield_control", () => { send({ t: "yield" }); });
  define("exit", () => { hostExit(); });
  define("setTimeout", (callback, delayMs) => {
    const id = ++nextTimer;
    timers.set(id, callback);
    hostTimer(id, Number(delayMs) || 0);
    return id;
  });
  define("clearTimeout", (id) => { if (timers.delete(id)) hostClear(id); });
  return {
    deliver(id, ok, json) {
      const waiter = pending.get(id);
      if (!waiter) return;
      pending.delete(id);
      // A failed call rejects with the tool's error text, as Codex's scripts see it.
      if (ok) waiter.resolve(json === undefined ? undefined : JSON.parse(json));
      else waiter.reject(json);
    },
    fire(id) {
      const callback = timers.get(id);
      timers.delete(id);
      if (typeof callback === "function") callback();
    },
  };
})`;

function describeError(error) {
  if (error !== null && typeof error === "object" && typeof error.stack === "string") {
    if (error.name === "SyntaxError") return `${error.name}: ${error.message}`;
    // The script's own frames only: the harness's are no business of the model.
    const lines = error.stack.split("\n");
    return lines.filter((line, i) => i === 0 || line.includes("exec_main.mjs")).join("\n");
  }
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

let bridge = null;
const hostTimers = new Map();

async function run(start) {
  // A null-prototype sandbox: a host-realm object there would hand the script the host's Object and Function.
  const context = vm.createContext(Object.create(null), { codeGeneration: { strings: false, wasm: false } });
  const make = vm.runInContext(BOOTSTRAP, context);
  bridge = make(
    (line) => { if (!finished) out.write(String(line) + "\n"); },
    (id, ms) => { hostTimers.set(id, setTimeout(() => { hostTimers.delete(id); bridge.fire(id); }, ms)); },
    (id) => { clearTimeout(hostTimers.get(id)); hostTimers.delete(id); },
    () => finish(null),
    JSON.stringify(start.tools ?? []),
    JSON.stringify(start.stored ?? {}),
  );
  // Codex rejects an import with this text (a string, not an Error).
  const refuse = () => { throw "unsupported import in exec"; };
  try {
    const module = new vm.SourceTextModule(String(start.source), {
      identifier: "exec_main.mjs", context, importModuleDynamically: refuse,
    });
    await module.link(refuse);
    await module.evaluate();
  } catch (error) {
    finish(describeError(error));
    return;
  }
  finish(null);
}

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const message = JSON.parse(line);
  if (bridge === null) {
    run(message);
    return;
  }
  const value = message.ok ? (message.value === undefined ? undefined : JSON.stringify(message.value))
    : String(message.error);
  bridge.deliver(message.id, Boolean(message.ok), value);
});
// pycodex closing the pipe means the cell is over.
lines.on("close", () => exitProcess(0));
