// The real language server (`python -m smartctx serve`) over stdio, on a workspace folder, for
// client logic that asks it for packs: the same requests the extension sends through
// vscode-languageclient, here through the protocol connection under it. Used by the unit tests (on
// a fresh copy of a fixture) and by bench/token_fit.mjs (on a copy of this repository's server).
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import * as lc from "vscode-languageserver-protocol/node";
import * as ext from "../../src/lsp_ext";
import { python, repo } from "./python";

export interface LanguageServer {
  contextForTask(params: ext.ContextForTaskParams): Promise<ext.WireContextPack>;
  close(): Promise<void>;
}

// How long a first index may take on a loaded two-core machine (a fixture takes seconds, this
// repository's server about half a minute).
const READY_WAIT_MS = 180_000;

// Starts the server on a copy of tests/fixtures/<fixture>; resolves once its index is ready.
export async function startOnFixture(fixture: string): Promise<LanguageServer> {
  const work = mkdtempSync(path.join(tmpdir(), "smartctx-client-lsp-"));
  const root = path.join(work, fixture);
  cpSync(path.join(repo, "tests", "fixtures", fixture), root, { recursive: true });
  const server = await startLanguageServer(root, python());
  return {
    contextForTask: (params) => server.contextForTask(params),
    async close() {
      await server.close();
      rmSync(work, { recursive: true, force: true });
    },
  };
}

// Starts `interpreter -m smartctx serve` on the folder `root`, its index in a temporary folder;
// resolves once the index is ready.
export async function startLanguageServer(root: string, interpreter: string): Promise<LanguageServer> {
  const name = path.basename(root);
  const indexDir = mkdtempSync(path.join(tmpdir(), "smartctx-client-lsp-index-"));
  const child = spawn(interpreter, ["-m", "smartctx", "serve"], { stdio: ["pipe", "pipe", "ignore"] });
  const connection = lc.createProtocolConnection(
    new lc.StreamMessageReader(child.stdout),
    new lc.StreamMessageWriter(child.stdin),
  );
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`the index of ${root} was not ready within ${READY_WAIT_MS} ms`));
    }, READY_WAIT_MS);
    connection.onNotification(ext.indexStatusNotification, (status) => {
      if (status.state === "ready") {
        clearTimeout(timer);
        resolve();
      } else if (status.state === "failed") {
        clearTimeout(timer);
        reject(new Error(`the index of ${root} failed: ${status.message ?? ""}`));
      }
    });
  });
  connection.listen();
  const uri = pathToFileURL(root).toString();
  // By method name: the typed request requires the deprecated rootUri, which workspaceFolders replaces.
  await connection.sendRequest(lc.InitializeRequest.method, {
    processId: process.pid,
    workspaceFolders: [{ uri, name }],
    capabilities: {},
    initializationOptions: { indexDir },
  });
  await connection.sendNotification(lc.InitializedNotification.type, {});
  await ready;
  return {
    contextForTask: (params) => connection.sendRequest(ext.contextForTask, params),
    async close() {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      await connection.sendRequest(lc.ShutdownRequest.type);
      await connection.sendNotification(lc.ExitNotification.type);
      await exited;
      connection.dispose();
      rmSync(indexDir, { recursive: true, force: true });
    },
  };
}
