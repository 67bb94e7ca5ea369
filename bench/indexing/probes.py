"""A new top-level definition to append to an existing source file, in each language smartctx
parses: what the update benchmarks write to see how soon a save is indexed and found."""

from __future__ import annotations

# Each template appended to a file of its language defines one symbol named ``{name}``.
PROBE_BY_LANGUAGE = {
    "python": "\n\ndef {name}(value):\n    return value\n",
    "javascript": "\nfunction {name}(value) {{ return value; }}\n",
    "typescript": "\nfunction {name}(value: number): number {{ return value; }}\n",
    "tsx": "\nfunction {name}(value: number): number {{ return value; }}\n",
    "go": "\nfunc {name}() int {{ return 1 }}\n",
    "rust": "\nfn {name}() -> i32 {{ 1 }}\n",
    "java": "\nclass {name} {{ int value() {{ return 1; }} }}\n",
    "c": "\nint {name}(void) {{ return 1; }}\n",
    "cpp": "\nint {name}(void) {{ return 1; }}\n",
    "csharp": "\nclass {name} {{ int Value() {{ return 1; }} }}\n",
    "ruby": "\ndef {name}(value)\n  value\nend\n",
    "php": "\nfunction {name}($value) {{ return $value; }}\n",
    "kotlin": "\nfun {name}(value: Int): Int = value\n",
    "scala": "\nobject {name} {{ def value: Int = 1 }}\n",
    "bash": "\n{name}() {{\n  echo 1\n}}\n",
    "lua": "\nfunction {name}(value)\n  return value\nend\n",
}


def with_probe(language: str, original: bytes, name: str) -> bytes:
    """``original`` with a definition of ``name`` added at its end; in Lua, before the ``return``
    that ends a module (nothing may follow it)."""
    addition = PROBE_BY_LANGUAGE[language].format(name=name).encode()
    if language == "lua":
        body = original.rstrip()
        start = body.rfind(b"\n") + 1
        if body[start:].startswith(b"return"):
            return body[:start] + addition.lstrip(b"\n") + body[start:] + b"\n"
    return original + addition
