import eslint from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", ".tools/", "test/e2e/"] },
  eslint.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // VS Code's API declares Disposable both as a class and as what its factories return; the
      // objects it hands out are not built by that class's constructor.
      "@typescript-eslint/no-unsafe-class-instance-assignment": "off",
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true }],
      "no-restricted-imports": [
        "error",
        {
          paths: [
            {
              name: "vscode-languageclient",
              message: "Import vscode-languageclient/node; wire shapes live in src/lsp_ext.ts only.",
            },
          ],
        },
      ],
    },
  },
);
