// Steps more than one scenario takes.
import { defRange } from "./fixture.mjs";

export const PACK_TASK = "how does compute_total apply the discount and tax";

/**
 * Palette → "SmartCtx: Context for Task…" → the panel, as a user asks for a pack. Returns once the
 * panel shows compute_total as a body, its code quoted under its `path:start-end` citation.
 */
export async function packInThePanel(wb) {
  const def = defRange("app/pricing.py", "def compute_total");
  const citation = `${def.file}:${def.start}-${def.end}`;
  // A panel already open would answer for this one: only a new panel shows this pack.
  await wb.runCommand("View: Close All Editors");
  await wb.page.locator(".part.editor .tab").first().waitFor({ state: "detached", timeout: 10000 });
  await wb.runCommand("SmartCtx: Context for Task…");
  await wb.inputBox("Describe the task", PACK_TASK);
  const frame = await wb.webviewFrame(citation, { timeout: 60000 });
  const body = frame
    .locator("article.body")
    .filter({ has: frame.locator("a.citation", { hasText: citation }) })
    .first();
  const head = await body.locator(".item-head").innerText({ timeout: 10000 });
  const code = await body.locator("pre.code").innerText({ timeout: 10000 });
  if (!head.includes("compute_total"))
    throw new Error(`the body under ${citation} is not compute_total: ${head}`);
  if (!code.includes("def compute_total(") || !code.includes("apply_discount(subtotal, code)"))
    throw new Error(`the body under ${citation} does not quote compute_total: ${code}`);
  return { citation, head };
}
