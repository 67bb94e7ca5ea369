// src/lsp_ext.ts mirrors the server's protocol: server/smartctx/wire/shapes.py, wire/options.py and
// lsp/protocol.py. This test reads both sides — the Python modules through Python
// (protocol_dump.py), lsp_ext.ts through the TypeScript compiler — and fails on any
// difference in method names, codes, option names or the fields and types of a wire shape.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { python } from "./python";

interface Field {
  type: string;
  optional: boolean;
}
interface Protocol {
  interfaces: Record<string, Record<string, Field>>;
  aliases: Record<string, string>;
  constants: Record<string, string | number>;
  optionNames: string[];
}

function pythonSide(): Protocol {
  const out = execFileSync(python(), [path.join(__dirname, "protocol_dump.py")], { encoding: "utf8" });
  return JSON.parse(out) as Protocol;
}

function normalise(type: string): string {
  return type.replace(/\s+/g, " ").trim();
}

function literalValue(node: ts.Expression): string | number | undefined {
  if (ts.isStringLiteral(node)) return node.text;
  if (ts.isNumericLiteral(node)) return Number(node.text);
  if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.MinusToken) {
    const operand = literalValue(node.operand);
    return typeof operand === "number" ? -operand : undefined;
  }
  if (ts.isAsExpression(node)) return literalValue(node.expression);
  return undefined;
}

function typescriptSide(): Protocol {
  const file = path.join(__dirname, "../../src/lsp_ext.ts");
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
  const declared = new Map<string, { fields: Record<string, Field>; bases: string[] }>();
  const protocol: Protocol = { interfaces: {}, aliases: {}, constants: {}, optionNames: [] };
  for (const statement of source.statements) {
    if (ts.isInterfaceDeclaration(statement)) {
      const fields: Record<string, Field> = {};
      for (const member of statement.members) {
        if (ts.isPropertySignature(member) && member.type) {
          fields[member.name.getText(source)] = {
            type: normalise(member.type.getText(source)),
            optional: member.questionToken !== undefined,
          };
        }
      }
      const bases = (statement.heritageClauses ?? []).flatMap((clause) =>
        clause.types.map((base) => base.expression.getText(source)),
      );
      declared.set(statement.name.text, { fields, bases });
    } else if (ts.isTypeAliasDeclaration(statement) && ts.isUnionTypeNode(statement.type)) {
      protocol.aliases[statement.name.text] = normalise(statement.type.getText(source));
    } else if (ts.isVariableStatement(statement)) {
      for (const variable of statement.declarationList.declarations) {
        const name = variable.name.getText(source);
        const init = variable.initializer;
        if (!init) continue;
        if (name === "OPTION_NAMES") {
          const array = ts.isAsExpression(init) ? init.expression : init;
          if (ts.isArrayLiteralExpression(array)) {
            protocol.optionNames = array.elements.map((element) => String(literalValue(element)));
          }
          continue;
        }
        const value = literalValue(init);
        if (/^[A-Z_]+$/.test(name) && value !== undefined) protocol.constants[name] = value;
      }
    }
  }
  const flatten = (name: string): Record<string, Field> => {
    const found = declared.get(name);
    if (!found) throw new Error(`lsp_ext.ts extends ${name}, which it does not declare`);
    return Object.assign({}, ...found.bases.map(flatten), found.fields) as Record<string, Field>;
  };
  for (const name of declared.keys()) protocol.interfaces[name] = flatten(name);
  return protocol;
}

describe("lsp_ext.ts mirrors the server's protocol", () => {
  const server = pythonSide();
  const client = typescriptSide();

  it("declares the same wire shapes", () => {
    expect(Object.keys(client.interfaces).sort()).toEqual(Object.keys(server.interfaces).sort());
  });

  it.each(Object.keys(server.interfaces))("%s has the same fields and types", (name) => {
    expect(client.interfaces[name]).toEqual(server.interfaces[name]);
  });

  it("has the same method names, commands, error codes and limits", () => {
    expect(client.constants).toEqual(server.constants);
  });

  it("has the same literal types", () => {
    expect(client.aliases).toEqual(server.aliases);
  });

  it("knows the same contextForTask options, in order", () => {
    expect(client.optionNames).toEqual(server.optionNames);
  });
});
