// The .vsix installed where smartctx already is: a venv made from the wheel the .vsix carries (pip
// install of the wheel, not editable), its bin/ first on the PATH. The extension starts that server
// without a question and a pack shows in the panel. Then servers of other versions, each a real
// smartctx wheel: one built from this checkout as an older version, and one built from the last
// commit before the protocol had a version number. The older one is named in the status bar and a
// notification offers Update the Server (the private environment, then used in its place) or Use It
// Anyway (remembered); the one from before the protocol number is stopped with an error, and Update
// the Server replaces it too.
// Run: client-vscode/test/e2e/run.sh --scenario client-vscode/test/e2e/path-server.e2e.mjs client-vscode/smartctx.vsix
import fs from "node:fs";
import path from "node:path";
import { NODE24 } from "./harness.mjs";
import {
  buildWheel,
  carriedWheel,
  commitBefore,
  venvSharingDependencies,
  venvWithWheel,
  wheelVersion,
} from "./servers.mjs";
import { packInThePanel } from "./steps.mjs";

// Older than any version the project will carry.
const OLDER = "0.0.1";

export const options = {
  name: "path-server",
  // No interpreter setting: the extension looks for one and finds python3 on the PATH.
  settings: { "smartctx.server.python": "" },
  timeoutMs: 600000,
};

let servers;

export async function prepare({ tmp, vsix, log }) {
  const carried = carriedWheel(vsix[0], path.join(tmp, "carried"));
  const version = wheelVersion(carried);
  if (version === OLDER)
    throw new Error(`the .vsix carries smartctx ${OLDER}, the version this test builds as older`);
  const pathServer = venvWithWheel(path.join(tmp, "path-server"), carried);
  const older = buildWheel(path.join(tmp, "older-build"), { version: OLDER });
  const beforeProtocol = buildWheel(path.join(tmp, "before-protocol-build"), {
    commit: commitBefore("PROTOCOL_VERSION =", "server/smartctx/lsp/protocol.py"),
  });
  servers = {
    version,
    older: path.join(venvSharingDependencies(path.join(tmp, "older"), older, pathServer), "python"),
    beforeProtocol: path.join(
      venvSharingDependencies(path.join(tmp, "before-protocol"), beforeProtocol, pathServer),
      "python",
    ),
  };
  log(
    `servers: carried ${version} on the PATH (${pathServer}), ${OLDER} and one from before the protocol number`,
  );
  // On the PATH as a user puts it there, in the login shell's profile: code-server takes the
  // extension host's environment from a login shell, whose /etc/profile sets PATH anew.
  const home = path.join(tmp, "home");
  fs.mkdirSync(home, { recursive: true });
  fs.writeFileSync(path.join(home, ".profile"), `export PATH="${pathServer}:$PATH"\n`);
  return { env: { HOME: home, PATH: `${pathServer}:${path.dirname(NODE24)}:${process.env.PATH}` } };
}

const READY = /SmartCtx: \d+ files/;
// Text as it reads, inside a RegExp.
const literally = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

// Restarts the server and waits until the new one is ready.
async function restarted(wb, waitFor) {
  const before = (await wb.statusBarHistory(/SmartCtx/)).length;
  await wb.runCommand("SmartCtx: Restart Server");
  await waitFor(
    "the server to restart and be ready",
    async () => {
      const history = await wb.statusBarHistory(/SmartCtx/);
      return history.length > before && READY.test(history.at(-1));
    },
    { timeout: 120000 },
  );
}

export default async function scenario({ s, wb, step, waitFor }) {
  const { version } = servers;
  const differs = new RegExp(
    `smartctx ${literally(OLDER)} in .* is older than the smartctx ${literally(version)} this extension carries`,
  );

  await step("30-path-server-starts-without-a-question", async () => {
    await wb.waitForStatusBar(READY, { timeout: 90000 });
    await wb.statusBarTooltip(
      /SmartCtx/,
      new RegExp(literally(`Server: smartctx ${version}, python3 (python3 on the PATH).`)),
    );
    const toasts = await wb.notificationsText();
    if (/SmartCtx/.test(toasts))
      throw new Error(`a SmartCtx notification for a server of the carried version: ${toasts}`);
  });

  await step("31-path-server-pack-in-the-panel", async () => {
    await packInThePanel(wb);
  });

  await step("32-older-server-named-and-a-choice-offered", async () => {
    s.updateSettings({ "smartctx.server.python": servers.older });
    const toast = await waitFor(
      "the notification about the older server",
      async () => {
        const text = await wb.notificationsText();
        return differs.test(text) && text;
      },
      { timeout: 60000 },
    );
    for (const want of ["Update the Server", "Use It Anyway"])
      if (!toast.includes(want)) throw new Error(`the notification lacks "${want}": ${toast}`);
    await wb.waitForStatusBar(READY, { timeout: 60000 });
    await wb.statusBarTooltip(/SmartCtx/, differs);
    const warning = wb.page
      .locator(".part.statusbar .statusbar-item", { hasText: "SmartCtx" })
      .locator(".codicon-warning");
    if (!(await warning.count()))
      throw new Error("the status bar item shows no warning for the older server");
  });

  await step("33-update-the-server-runs-the-private-environment-in-its-place", async () => {
    await wb.clickNotificationButton(differs, "Update the Server");
    // No private environment yet: Update the Server installs it (pip: a minute or more).
    await wb.inputBox("create the private environment with", "python3");
    await wb.statusBarTooltip(
      /SmartCtx: \d+ files/,
      new RegExp(
        literally(
          `in place of smartctx ${OLDER} in ${servers.older} (smartctx.server.python) (Update the Server)`,
        ),
      ),
      { timeout: 540000 },
    );
    await packInThePanel(wb);
    await wb.statusBarTooltip(/SmartCtx/, /\(Update the Server\)\.$/);
  });

  await step("34-use-it-anyway-is-remembered", async () => {
    // The same older venv through another of its interpreters' paths: another launch, asked anew.
    const other = path.join(path.dirname(servers.older), "python3");
    s.updateSettings({ "smartctx.server.python": other });
    await waitFor(
      "the notification about the older server at its other path",
      async () => {
        const text = await wb.notificationsText();
        return differs.test(text) && text.includes(other);
      },
      { timeout: 60000 },
    );
    await wb.clickNotificationButton(other, "Use It Anyway");
    await wb.statusBarTooltip(/SmartCtx/, /\(Use It Anyway\)\.$/);
    await restarted(wb, waitFor);
    await wb.statusBarTooltip(/SmartCtx/, /\(Use It Anyway\)\.$/);
    const toasts = await wb.notificationsText();
    if (differs.test(toasts)) throw new Error(`asked again after Use It Anyway: ${toasts}`);
  });

  await step("35-server-from-before-the-protocol-number-is-stopped", async () => {
    s.updateSettings({ "smartctx.server.python": servers.beforeProtocol });
    const toast = await waitFor(
      "the error about the protocol",
      async () => {
        const text = await wb.notificationsText();
        return (
          /speaks protocol 0; this extension needs protocol \d+ or later, so the server was stopped/.test(
            text,
          ) && text
        );
      },
      { timeout: 60000 },
    );
    if (!toast.includes("Update the Server")) throw new Error(`the error offers no update: ${toast}`);
    const errorIcon = wb.page
      .locator(".part.statusbar .statusbar-item", { hasText: "SmartCtx" })
      .locator(".codicon-error");
    await waitFor("the status bar item to show the error", async () => (await errorIcon.count()) > 0, {
      timeout: 10000,
    });
    await wb.statusBarTooltip(/SmartCtx/, /speaks protocol 0/);
  });

  await step("36-update-the-server-replaces-it-too", async () => {
    // Of the carried version by its number, but not by its protocol: the private environment (current
    // since step 33) runs in its place, no install needed.
    await wb.clickNotificationButton("speaks protocol 0", "Update the Server");
    await wb.statusBarTooltip(
      /SmartCtx: \d+ files/,
      new RegExp(
        literally(
          `in place of smartctx ${version} in ${servers.beforeProtocol} (smartctx.server.python) (Update the Server)`,
        ),
      ),
      { timeout: 120000 },
    );
  });
}
