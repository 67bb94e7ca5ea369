// The fixture workspace: a small multi-language repository (Python, TypeScript, Go) whose functions call
// each other, committed once with git. `makeFixture(dir)` writes it and returns where each symbol is, so
// tests can assert citations without hard-coding line numbers.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

export const FILES = {
  "app/__init__.py": "",
  // A repository may hold a package named like the server: starting the server must never import it
  // (it would run the repository's code). If it is imported, it leaves this marker and exits.
  "smartctx/__init__.py": `"""Not the smartctx server."""
import pathlib
import sys

pathlib.Path(__file__).resolve().parent.parent.joinpath("IMPORTED-THE-WORKSPACE-SMARTCTX").write_text("yes")
sys.exit(7)
`,
  "app/pricing.py": `"""Prices and discounts for orders."""

TAX_RATE = 0.2


def apply_discount(amount: float, code: str | None) -> float:
    """Take the discount of a promo code off an amount."""
    if code == "HALF":
        return amount / 2
    return amount


def compute_total(items: list[tuple[str, float, int]], code: str | None = None) -> float:
    """The total of an order: line prices times quantities, discounted, plus tax."""
    subtotal = sum(price * qty for _, price, qty in items)
    discounted = apply_discount(subtotal, code)
    return round(discounted * (1 + TAX_RATE), 2)
`,
  "app/service.py": `"""Placing orders."""
from app.pricing import compute_total
from app.storage import save_order


class OrderService:
    """Validates and stores orders."""

    def __init__(self) -> None:
        self.placed: list[dict] = []

    def place_order(self, customer: str, items: list[tuple[str, float, int]], code: str | None = None) -> dict:
        """Validate an order, compute its total and save it."""
        if not items:
            raise ValueError("an order needs at least one item")
        order = {"customer": customer, "items": items, "total": compute_total(items, code)}
        save_order(order)
        self.placed.append(order)
        return order
`,
  "app/storage.py": `"""Where orders go."""
import json

ORDERS_FILE = "orders.jsonl"


def save_order(order: dict) -> None:
    """Append an order to the orders file."""
    with open(ORDERS_FILE, "a", encoding="utf-8") as f:
        f.write(json.dumps(order) + "\\n")
`,
  "app/refunds.py": `"""Refunds of placed orders."""


def refund_order(order: dict, share: float) -> float:
    """Refund a share of an order's total, rounded to cents.

    Parameters
    ----------
    order : dict
        A placed order, as \`OrderService.place_order\` returns it.
    share : float
        The part of the total to give back, from 0 to 1.

    Examples
    --------
    >>> refund_order({"total": 10.0}, 0.5)
    5.0
    """
    if not 0 <= share <= 1:
        raise ValueError("a refund's share is between 0 and 1")
    return round(order["total"] * share, 2)
`,
  "app/main.py": `"""Command line entry point."""
from app.service import OrderService


def main() -> None:
    """Place a sample order and print its total."""
    service = OrderService()
    order = service.place_order("ada", [("book", 12.5, 2), ("pen", 1.5, 4)], code="HALF")
    print(f"total: {order['total']}")


if __name__ == "__main__":
    main()
`,
  "web/orders.ts": `// Browser client for the orders API.
export interface Order {
  customer: string;
  total: number;
}

export function formatOrder(order: Order): string {
  return \`\${order.customer}: \${order.total.toFixed(2)}\`;
}

export async function fetchOrders(baseUrl: string): Promise<string[]> {
  const response = await fetch(\`\${baseUrl}/orders\`);
  const orders = (await response.json()) as Order[];
  return orders.map(formatOrder);
}
`,
  "tools/report.go": `// Package report summarises orders for the nightly report.
package report

import "fmt"

// Order is one placed order.
type Order struct {
	Customer string
	Total    float64
}

// Summarize adds up the totals of orders.
func Summarize(orders []Order) float64 {
	sum := 0.0
	for _, o := range orders {
		sum += o.Total
	}
	return sum
}

// BuildReport renders the nightly report line.
func BuildReport(orders []Order) string {
	return fmt.Sprintf("%d orders, %.2f total", len(orders), Summarize(orders))
}
`,
  "README.md":
    "# Orders\n\nA tiny shop: `app/` places orders (Python), `web/` shows them (TypeScript), `tools/` reports (Go).\n",
};

/** Line range (1-based, inclusive) of the definition starting with `needle` in `file`, to its block's end. */
export function defRange(file, needle) {
  const lines = FILES[file].split("\n");
  const start = lines.findIndex((l) => l.includes(needle));
  if (start < 0) throw new Error(`${needle} not in ${file}`);
  const indent = lines[start].match(/^\s*/)[0].length;
  let end = start;
  for (let i = start + 1; i < lines.length; i++) {
    const l = lines[i];
    if (l.trim() === "") continue;
    const ind = l.match(/^\s*/)[0].length;
    if (ind <= indent && !/^[)}\]]/.test(l.trim())) break;
    end = i;
  }
  return {
    file,
    start: start + 1,
    end: end + 1,
    line: start + 1,
    column: lines[start].indexOf(needle.split(/[ (]/).pop()) + 1,
  };
}

/** Position (1-based) of the first occurrence of `word` on a line containing `lineNeedle` in `file`. */
export function wordPosition(file, lineNeedle, word) {
  const lines = FILES[file].split("\n");
  const i = lines.findIndex((l) => l.includes(lineNeedle));
  if (i < 0 || !lines[i].includes(word))
    throw new Error(`${word} not on a line with ${lineNeedle} in ${file}`);
  return { file, line: i + 1, column: lines[i].indexOf(word) + 1 };
}

export function makeFixture(dir) {
  fs.mkdirSync(dir, { recursive: true });
  for (const [rel, text] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  const git = (...args) =>
    execFileSync(
      "git",
      [
        "-c",
        "user.name=e2e",
        "-c",
        "user.email=e2e@example.invalid",
        "-c",
        "init.defaultBranch=main",
        ...args,
      ],
      {
        cwd: dir,
        stdio: "pipe",
        env: {
          ...process.env,
          GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z",
          GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z",
        },
      },
    );
  git("init", "-q");
  git("add", "-A");
  git("commit", "-q", "-m", "Orders: a tiny multi-language shop");
  return { dir, head: git("rev-parse", "HEAD").toString().trim() };
}
