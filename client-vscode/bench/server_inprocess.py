"""The baseline of bench/extension_perf.mjs: the server's own work for the same requests, in process.

Runs the language server's own ``Workspace`` (the class ``smartctx serve`` answers requests with:
live index, query, hover lookup) on the same workspace copy with a fresh index, then times, for the
plan's tasks and hover positions, exactly what the server does for one request minus LSP, JSON-RPC
and the editor: ``Workspace.context`` (+ ``pack_to_wire`` and ``json.dumps``, the answer's encoding)
and ``Workspace.symbol_at`` + ``hover_markdown``. No focus is sent, as in the in-host run (no text
editor is open when the panel is timed).

    .venv/bin/python client-vscode/bench/server_inprocess.py PLAN.json OUT.json [PACKS.json]

PACKS.json (optional) receives the wire packs of the plan's tasks, for render_time.mjs.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from smartctx.core.context import ContextOptions
from smartctx.lsp.convert import context_requests
from smartctx.lsp.hover import hover_markdown

try:  # since every front end shares it: smartctx.wire
    from smartctx.wire.convert import pack_to_wire
except ImportError:  # before: smartctx.output
    from smartctx.output.pack_json import pack_to_wire  # type: ignore[no-redef]
try:  # since the MCP server shares it: smartctx.live
    from smartctx.live.tasks import BackgroundTasks
    from smartctx.live.workspace import Workspace
except ImportError:  # before: smartctx.lsp
    from smartctx.lsp.tasks import BackgroundTasks  # type: ignore[no-redef]
    from smartctx.lsp.workspace import Workspace  # type: ignore[no-redef]


def main() -> None:
    plan = json.loads(Path(sys.argv[1]).read_text())
    out = Path(sys.argv[2])
    root = Path(plan["workspace"]).resolve()
    with tempfile.TemporaryDirectory(prefix="smartctx-bench-index-", ignore_cleanup_errors=True) as index_dir:
        workspace = Workspace(Path(index_dir), lambda uri, counts: None, BackgroundTasks())
        folder = workspace.add(root.as_uri(), str(root), root.name)
        assert folder is not None
        began = time.perf_counter()
        folder.index.start()
        time.sleep(0.5)
        while folder.index.status().indexing:
            time.sleep(0.05)
        index_s = time.perf_counter() - began
        time.sleep(plan.get("settleMs", 3000) / 1000)

        wire_packs: list[dict] = []

        def pack(task: str) -> dict[str, float]:
            requests = context_requests({"task": task}, [folder.root], ContextOptions())
            t0 = time.perf_counter()
            result = workspace.context([folder], requests, lambda: False)
            t1 = time.perf_counter()
            wire = pack_to_wire(result)
            encoded = json.dumps(wire)
            t2 = time.perf_counter()
            wire_packs.append({"task": task, "pack": wire})
            return {
                "contextMs": (t1 - t0) * 1000,
                "encodeMs": (t2 - t1) * 1000,
                "timingsSumMs": sum(result.timings_ms.values()),
                "bodies": len(result.bodies),
                "summaries": len(result.summaries),
                "tokens": result.tokens_used,
                "wireBytes": len(encoded.encode("utf-8")),
            }

        def hover(h: dict) -> dict[str, float]:
            t0 = time.perf_counter()
            symbol = workspace.symbol_at(folder, h["file"], h["line"] + 1, h["word"])
            text = "" if symbol is None else hover_markdown(symbol, folder.root)
            return {"ms": (time.perf_counter() - t0) * 1000, "chars": len(text)}

        for task in plan["warmupTasks"]:
            pack(task)
        wire_packs.clear()
        packs = [{"task": task, **pack(task)} for task in plan["tasks"]]
        if len(sys.argv) > 3:
            Path(sys.argv[3]).write_text(json.dumps(wire_packs))
        for h in plan["warmupHovers"]:
            hover(h)
        hovers = [{"file": h["file"], "word": h["word"], **hover(h)} for h in plan["hovers"]]
        chat = [{"prompt": p, **pack(p)} for p in plan["chat"]]
        workspace.close()
        time.sleep(0.5)
    out.write_text(
        json.dumps({"indexSeconds": index_s, "packs": packs, "hovers": hovers, "chat": chat}, indent=2)
    )


if __name__ == "__main__":
    main()
