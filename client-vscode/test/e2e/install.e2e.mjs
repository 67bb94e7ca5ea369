// A newcomer without smartctx: the extension finds no interpreter that has it, says so with one-click
// fixes, and "Install the Server" makes a venv in the extension's storage, pip-installs
// the wheel the .vsix carries (its dependencies come from PyPI), starts the server from it, and the
// first pack shows in the panel. Then the extension's next release, carrying another wheel, replaces
// it: on its first start the private environment is reinstalled from that wheel.
// Run: client-vscode/test/e2e/run.sh --scenario client-vscode/test/e2e/install.e2e.mjs client-vscode/smartctx.vsix
import path from "node:path";
import { buildWheel, carriedWheel, nextExtensionRelease, wheelVersion } from "./servers.mjs";
import { packInThePanel } from "./steps.mjs";

export const options = {
  name: "install",
  // No interpreter setting: the extension looks for one (no Python extension here; python3 on the
  // PATH has no smartctx).
  settings: { "smartctx.server.python": "" },
  timeoutMs: 600000,
};

const INSTALL = "Install the Server";

let update;

// The next release: this checkout's server as a post-release of the carried version.
export async function prepare({ tmp, vsix }) {
  const version = `${wheelVersion(carriedWheel(vsix[0], path.join(tmp, "carried")))}.post1`;
  const wheel = buildWheel(path.join(tmp, "next-build"), { version });
  update = { version, vsix: await nextExtensionRelease(vsix[0], wheel, path.join(tmp, "next-release")) };
  return {};
}

export default async function scenario({ s, wb, step, waitFor }) {
  await step("20-missing-server-offers-fixes", async () => {
    const toast = await waitFor(
      "the notification that smartctx is missing",
      async () => {
        const text = await wb.notificationsText();
        return /smartctx is not installed/.test(text) && text;
      },
      { timeout: 60000 },
    );
    for (const want of [INSTALL, "Select Interpreter", "python3 on the PATH"]) {
      if (!toast.includes(want)) throw new Error(`the notification lacks "${want}": ${toast}`);
    }
    await wb.waitForStatusBar(/SmartCtx/);
  });

  await step("21-install-then-the-server-starts", async () => {
    await wb.page.locator(".notifications-toasts .monaco-button", { hasText: INSTALL }).first().click();
    await wb.inputBox("create the private environment with", "python3");
    // pip downloads the server's dependencies: minutes on a cold cache.
    await wb.waitForStatusBar(/SmartCtx: \d+ files/, { timeout: 540000 });
  });

  await step("21b-install-then-a-pack-in-the-panel", async () => {
    await packInThePanel(wb);
    // The screenshot shows who answered: the status bar's tooltip names the private environment.
    await wb.statusBarTooltip(/SmartCtx/, /Server: smartctx [^,]+, \S+ \(SmartCtx's private environment\)\./);
  });

  await step("22-crash-loop-stops-with-an-error", async () => {
    // A server command that dies at once: the client restarts it four times, then gives up and says so.
    s.updateSettings({ "smartctx.server.command": ["python3", "-c", "import sys; sys.exit(3)"] });
    const toast = await waitFor(
      "the crash-loop error",
      async () => {
        const text = await wb.notificationsText();
        return /stopped 5 times in 3 minutes/.test(text) && text;
      },
      { timeout: 120000 },
    );
    for (const want of ["Show Log", "Restart Server"]) {
      if (!toast.includes(want)) throw new Error(`the error lacks "${want}": ${toast}`);
    }
    const errorIcon = wb.page
      .locator(".part.statusbar .statusbar-item", { hasText: "SmartCtx" })
      .locator(".codicon-error");
    let seen = [];
    await waitFor(
      () => `the status bar item to show the error (seen: ${seen.join(" → ")})`,
      async () => {
        seen = await wb.statusBarHistory(/SmartCtx/);
        return (await errorIcon.count()) > 0;
      },
      { timeout: 10000 },
    );
  });

  await step("23-clearing-the-command-restarts-from-the-private-environment", async () => {
    s.updateSettings({ "smartctx.server.command": [] });
    await wb.waitForStatusBar(/SmartCtx: \d+ files/, { timeout: 120000 });
  });

  await step("24-extension-update-reinstalls-the-private-environment", async () => {
    await s.installExtensions([update.vsix]);
    await wb.runCommand("Developer: Reload Window");
    await wb.waitReady();
    const literal = update.version.replace(/\./g, "\\.");
    await wb.statusBarTooltip(
      /SmartCtx: \d+ files/,
      new RegExp(`Server: smartctx ${literal}, \\S+ \\(SmartCtx's private environment\\)\\.`),
      { timeout: 180000 },
    );
  });
}
