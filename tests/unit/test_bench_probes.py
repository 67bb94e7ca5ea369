"""The update benchmarks' edits, in every language smartctx parses: a probe appended to a file
(bench/indexing/probes.py) defines exactly the symbol the benchmark then waits for, and the comment that
index_perf.py's buffer step types is a comment."""

from __future__ import annotations

import pytest

from bench.indexing import index_perf as index_perf_module
from bench.indexing import probes as probes_module
from smartctx.parsing.extract import SourceParser
from smartctx.parsing.languages import LANGUAGES

# A small file of each language, as a probe finds it: the probe goes after its last line.
FILE_BY_LANGUAGE = {
    "python": "import os\n\n\ndef main():\n    return os.sep\n",
    "javascript": "const path = require('path');\nmodule.exports = { base: path.sep };\n",
    "typescript": "export interface Point { x: number }\nexport const origin: Point = { x: 0 };\n",
    "tsx": "export function View(): JSX.Element { return <div />; }\n",
    "go": 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println(1) }\n',
    "rust": "use std::io;\n\npub fn main() { let _ = io::stdin(); }\n",
    "java": "package a;\n\npublic class Main {\n  public static void main(String[] args) {}\n}\n",
    "c": "#include <stdio.h>\n\nint main(void) { return 0; }\n",
    "cpp": "#include <vector>\n\nnamespace a {\nint size(const std::vector<int>& v) { return 0; }\n}\n",
    "csharp": "namespace A\n{\n    public class Main { }\n}\n",
    "ruby": "module A\n  def self.main\n    1\n  end\nend\n",
    "php": "<?php\nnamespace A;\n\nclass Main { }\n",
    "kotlin": "package a\n\nfun main() { println(1) }\n",
    "scala": "package a\n\nobject Main { def run(): Unit = () }\n",
    "bash": "#!/usr/bin/env bash\nset -e\necho start\n",
    "lua": "local M = {}\nfunction M.run() return 1 end\nreturn M\n",
}


@pytest.fixture(scope="module")
def probes() -> object:
    return probes_module


@pytest.fixture(scope="module")
def index_perf() -> object:
    return index_perf_module


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_probe_appended_to_a_file_defines_its_name(probes: object, language: str) -> None:
    name = "bench_probe_3_141592"
    original = FILE_BY_LANGUAGE[language].encode()
    data = probes.with_probe(language, original, name)  # type: ignore[attr-defined]
    result = SourceParser().parse(data, language)
    assert not result.has_errors
    assert [symbol.name for symbol in result.symbols].count(name) == 1
    # What the file held before is all still there.
    before = SourceParser().parse(original, language)
    assert {s.qualified_name for s in before.symbols} < {s.qualified_name for s in result.symbols}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_the_typed_comment_changes_no_definition(index_perf: object, language: str) -> None:
    original = FILE_BY_LANGUAGE[language].encode()
    lines = original.split(b"\n")
    marker = index_perf.COMMENT_BY_LANGUAGE[language]  # type: ignore[attr-defined]
    lines[-2] += marker + b"eee"
    typed = SourceParser().parse(b"\n".join(lines), language)
    before = SourceParser().parse(original, language)
    assert not typed.has_errors
    assert [s.qualified_name for s in typed.symbols] == [s.qualified_name for s in before.symbols]
