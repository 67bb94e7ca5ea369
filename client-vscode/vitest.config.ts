import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/unit/**/*.test.ts"],
    // The drift test starts Python to read the server's protocol modules.
    testTimeout: 30_000,
  },
});
