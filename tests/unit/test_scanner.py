"""The scanner's filters, one concern per test; git parity: tests/integration/test_gitignore_parity.py."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from smartctx.core.shards import Shard
from smartctx.indexing.scanner import (
    IgnoreRules,
    ScanConfig,
    ScannedFile,
    ScanResult,
    SkipReason,
    check_path,
    classify_content,
    is_secret_path,
    scan,
)
from workspaces import write_tree

INDEXED = "indexed"
NOT_SEEN = "not seen"


def everything(_path: str) -> bool:
    return True


@pytest.fixture(autouse=True)
def isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The developer's global git ignore file must not change what these tests see."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


def write(root: Path, files: dict[str, str | bytes]) -> None:
    write_tree(root, files)


def run(
    root: Path, config: ScanConfig | None = None, is_supported: Callable[[str], bool] = everything
) -> ScanResult:
    return scan(root, config or ScanConfig(), is_supported)


def indexed(result: ScanResult) -> list[str]:
    return [scanned.path for scanned in result.files]


def outcome(result: ScanResult, rel: str) -> str:
    """INDEXED, the skip reason's value, or NOT_SEEN (inside a pruned folder, or not counted)."""
    if rel in indexed(result):
        return INDEXED
    for reason, examples in result.examples.items():
        if rel in examples:
            return reason.value
    return NOT_SEEN


# Size cap.


@pytest.mark.parametrize(
    ("size", "max_file_bytes", "expected"),
    [
        (10, 10, INDEXED),
        (11, 10, SkipReason.TOO_LARGE.value),
        (1_000_000, None, INDEXED),
        (1_000_001, None, SkipReason.TOO_LARGE.value),
    ],
)
def test_size_cap(root: Path, size: int, max_file_bytes: int | None, expected: str) -> None:
    write(root, {"f.py": "x" * size})
    config = ScanConfig() if max_file_bytes is None else ScanConfig(max_file_bytes=max_file_bytes)
    assert outcome(run(root, config), "f.py") == expected


# Secrets.


@pytest.mark.parametrize(
    ("path", "secret"),
    [
        (".env", True),
        (".env.local", True),
        (".env.example", True),
        ("config/.env.production", True),
        (".envrc", True),
        ("deploy/prod.env", True),
        ("certs/server.pem", True),
        ("server.key", True),
        ("id_rsa", True),
        ("home/.ssh/id_ed25519.pub", True),
        (".ssh/config", True),
        ("keys/store.p12", True),
        ("keys/store.pfx", True),
        ("android/release.keystore", True),
        ("credentials.json", True),
        ("gcp/credentials-prod.json", True),
        ("client_secret_123.json", True),
        (".aws/credentials", True),
        (".npmrc", True),
        (".pypirc", True),
        (".netrc", True),
        ("infra/terraform.tfstate", True),
        ("CERT.PEM", True),
        ("environment.py", False),
        ("src/env.py", False),
        ("google/auth/credentials.py", False),
        ("keyboard.py", False),
        ("docs/keys.md", False),
        ("monkey.ts", False),
        ("settings/envs.py", False),
    ],
)
def test_is_secret_path(path: str, secret: bool) -> None:
    assert is_secret_path(path) is secret


def test_scan_skips_secrets_and_secret_folders_once(root: Path) -> None:
    write(
        root, {".env": "TOKEN=1", "tls/server.pem": "", ".ssh/id_rsa": "", ".ssh/known_hosts": "", "a.py": ""}
    )
    result = run(root)
    assert indexed(result) == ["a.py"]
    assert result.skipped[SkipReason.SECRET] == 3
    assert sorted(result.examples[SkipReason.SECRET]) == [".env", ".ssh", "tls/server.pem"]


# Content classification.

PYTHON = b"def f(x):\n    return x + 1\n" * 50
# Long enough that one long line barely moves the average line length.
PYTHON_LONG = PYTHON * 10
LINE_5000 = b"a" * 5000


@pytest.mark.parametrize(
    ("data", "path", "expected"),
    [
        (PYTHON, "a.py", None),
        (b"", "empty.py", None),
        ("# caf\u00e9 \u2014 na\u00efve\n".encode() * 20, "utf8.py", None),
        ("# caf\u00e9\n".encode("latin-1") * 20, "latin1.py", None),
        (b"\x1b[31mred\x1b[0m\n" * 10, "ansi.txt", None),
        (b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 100, "a.out", SkipReason.BINARY),
        (b"text" * 10 + b"\x00", "nul.py", SkipReason.BINARY),
        (bytes(range(1, 32)) * 20, "control.bin", SkipReason.BINARY),
        (b"x = 1\n" * 1500 + b"\x00", "late-nul.py", None),
        (b"var a=1;", "vendor/jquery.min.js", SkipReason.MINIFIED),
        (b"a{b:c}", "site.MIN.CSS", SkipReason.MINIFIED),
        (b"var a=1;" * 700 + b"\n", "bundle.js", SkipReason.MINIFIED),
        ((b"x = '" + b"a" * 400 + b"'\n") * 20, "wide.py", SkipReason.MINIFIED),
        ((b"x = '" + b"a" * 200 + b"'\n") * 20, "wide-but-fine.py", None),
        (PYTHON + b"blob = '" + b"A" * 4000 + b"'\n", "embedded.py", None),
        (LINE_5000 + b"a", "one-line.js", SkipReason.MINIFIED),
        (LINE_5000 + b"a\n" + PYTHON_LONG, "long-first-line.py", SkipReason.MINIFIED),
        (PYTHON_LONG + LINE_5000 + b"a", "long-last-line.py", SkipReason.MINIFIED),
        (PYTHON_LONG + LINE_5000 + b"\n" + PYTHON_LONG, "line-at-the-limit.py", None),
        (LINE_5000 + b"\n" + PYTHON_LONG, "first-line-at-the-limit.py", None),
    ],
)
def test_classify_content(data: bytes, path: str, expected: SkipReason | None) -> None:
    assert classify_content(data, path) == expected


# Symbolic links.


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("../outside/secret.py", SkipReason.SYMLINK_OUTSIDE.value),
        ("../outside", SkipReason.SYMLINK_OUTSIDE.value),
        ("/", SkipReason.SYMLINK_OUTSIDE.value),
        ("real.py", INDEXED),
        ("pkg", NOT_SEEN),
        (".", NOT_SEEN),
        ("keys/server.pem", SkipReason.SECRET.value),
        ("node_modules/lib.js", SkipReason.IGNORED.value),
        ("generated.py", SkipReason.IGNORED.value),
        ("missing.py", SkipReason.UNREADABLE.value),
    ],
)
def test_symlink(root: Path, target: str, expected: str) -> None:
    write(root.parent, {"outside/secret.py": "TOKEN = 1\n"})
    write(
        root,
        {
            ".gitignore": "generated.py\n",
            "real.py": "x = 1\n",
            "pkg/mod.py": "",
            "keys/server.pem": "",
            "node_modules/lib.js": "",
            "generated.py": "",
        },
    )
    (root / "link").symlink_to(target)
    result = run(root)
    assert outcome(result, "link") == expected
    assert not any(path.startswith("link/") for path in indexed(result))
    if expected == INDEXED:
        link = next(scanned for scanned in result.files if scanned.path == "link")
        assert link.size == (root / target).stat().st_size


def test_symlink_loops_terminate(root: Path) -> None:
    write(root, {"a/b.py": ""})
    (root / "a" / "up").symlink_to("..")
    (root / "a" / "self").symlink_to(".")
    (root / "loop1").symlink_to("loop2")
    (root / "loop2").symlink_to("loop1")
    result = run(root)
    assert indexed(result) == ["a/b.py"]
    assert result.skipped[SkipReason.UNREADABLE] == 2


def test_symlinked_root_is_resolved(root: Path, tmp_path: Path) -> None:
    write(root, {"a.py": ""})
    alias = tmp_path / "alias"
    alias.symlink_to(root)
    (root / "self.py").symlink_to(root / "a.py")
    assert indexed(run(alias)) == ["a.py", "self.py"]


# Unreadable entries.


def test_unreadable_folder_is_counted_not_raised(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs as root too: the permission error is injected, since root can read any folder."""
    write(root, {"locked/a.py": "", "open/b.py": ""})
    real_scandir = os.scandir
    locked = str(root / "locked")

    def scandir(path: str) -> Iterator[os.DirEntry[str]]:
        if str(path).rstrip("/") == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = run(root)
    assert indexed(result) == ["open/b.py"]
    assert result.examples[SkipReason.UNREADABLE] == ("locked",)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_by_permissions(root: Path) -> None:
    write(root, {"locked/a.py": "", "secret.py": "", "open.py": ""})
    (root / "locked").chmod(0)
    (root / "secret.py").chmod(0)
    try:
        result = run(root)
    finally:
        (root / "locked").chmod(0o755)
        (root / "secret.py").chmod(0o644)
    assert indexed(result) == ["open.py"]
    assert sorted(result.examples[SkipReason.UNREADABLE]) == ["locked", "secret.py"]


def test_missing_root_is_unreadable_not_an_error(tmp_path: Path) -> None:
    result = run(tmp_path / "nope")
    assert result.files == ()
    assert result.skipped[SkipReason.UNREADABLE] == 1


# Ignore sources smartctx adds to git's.


def test_smartctxignore_layers_after_gitignore_at_every_level(root: Path) -> None:
    write(
        root,
        {
            ".gitignore": "*.gen.py\n",
            ".smartctxignore": "!keep.gen.py\nfixtures/\n",
            "a.gen.py": "",
            "keep.gen.py": "",
            "fixtures/big.py": "",
            "src/.smartctxignore": "local_*.py\n",
            "src/local_x.py": "",
            "src/main.py": "",
            "local_y.py": "",
        },
    )
    result = run(root, is_supported=lambda path: path.endswith(".py"))
    assert indexed(result) == ["keep.gen.py", "local_y.py", "src/main.py"]


def test_smartctxignore_applies_when_gitignore_is_not_respected(root: Path) -> None:
    write(root, {".gitignore": "a.py\n", ".smartctxignore": "b.py\n", "a.py": "", "b.py": ""})
    result = run(root, ScanConfig(respect_gitignore=False), lambda path: path.endswith(".py"))
    assert indexed(result) == ["a.py"]


def test_extra_ignores_are_root_patterns_a_deeper_gitignore_can_override(root: Path) -> None:
    write(
        root,
        {
            "docs/a.py": "",
            "notes.txt": "",
            "sub/notes.txt": "",
            "sub/deeper/.gitignore": "!*.txt\n",
            "sub/deeper/notes.txt": "",
            "main.py": "",
        },
    )
    config = ScanConfig(extra_ignores=("docs/", "*.txt", "/main.py", "#comment", ""))
    result = run(root, config, lambda path: not path.endswith(".gitignore"))
    assert indexed(result) == ["sub/deeper/notes.txt"]


def test_info_exclude_and_global_excludes_without_git_binary_help(root: Path, tmp_path: Path) -> None:
    """A `.git` folder is enough to find info/exclude; the global file falls back to XDG_CONFIG_HOME."""
    write(root, {".git/info/exclude": "info.py\n", "info.py": "", "global.py": "", "kept.py": ""})
    write(tmp_path / "dotfiles", {"ignore": "global.py\n"})
    (tmp_path / "xdg" / "git").mkdir(parents=True)
    # A dotfiles manager links the global file; git follows that link, so must we.
    (tmp_path / "xdg" / "git" / "ignore").symlink_to(tmp_path / "dotfiles" / "ignore")
    assert indexed(run(root)) == ["kept.py"]


def test_gitignore_applies_outside_a_repository(root: Path) -> None:
    write(root, {".gitignore": "out/\n", "out/a.py": "", "b.py": ""})
    assert indexed(run(root, is_supported=lambda path: path.endswith(".py"))) == ["b.py"]


# IgnoreRules for single paths (the watcher's questions).


@pytest.mark.parametrize(
    ("rel_path", "is_dir", "ignored"),
    [
        ("src/app.py", False, False),
        ("build", True, True),
        ("build/x/y.py", False, True),
        ("src/build", False, False),
        ("node_modules/a/b.js", False, True),
        ("deep/node_modules", True, True),
        ("env", True, True),
        ("env/lib/site.py", False, True),
        ("rust/target/x.rs", False, True),
        ("target/x.rs", False, False),
        (".git/config", False, True),
        ("../outside.py", False, True),
        ("linked/x.py", False, True),
        ("", True, False),
    ],
)
def test_is_ignored(root: Path, rel_path: str, is_dir: bool, ignored: bool) -> None:
    write(root, {".gitignore": "/build/\n", "env/pyvenv.cfg": "", "rust/Cargo.toml": "", "src/app.py": ""})
    (root / "linked").symlink_to("src")
    rules = IgnoreRules.load(root, ScanConfig())
    assert rules.is_ignored(rel_path, is_dir) is ignored


def test_rules_follow_edits_to_ignore_files(root: Path) -> None:
    write(root, {"sub/.gitignore": "a.py\n"})
    rules = IgnoreRules.load(root, ScanConfig())
    assert rules.is_ignored("sub/a.py", is_dir=False)
    (root / "sub" / ".gitignore").write_text("b.py\n# now a.py is indexed again\n")
    assert not rules.is_ignored("sub/a.py", is_dir=False)
    assert rules.is_ignored("sub/b.py", is_dir=False)
    (root / "sub" / ".gitignore").unlink()
    assert not rules.is_ignored("sub/b.py", is_dir=False)


def test_check_path_agrees_with_scan(root: Path, tmp_path: Path) -> None:
    write(tmp_path, {"outside.py": ""})
    write(
        root,
        {
            ".gitignore": "ignored.py\nbuild/\n",
            "a.py": "",
            "ignored.py": "",
            "build/x.py": "",
            "big.py": "x" * 100,
            "notes.bin": "",
            ".env": "",
            "node_modules/m.js": "",
            "pkg/b.py": "",
        },
    )
    (root / "out.py").symlink_to(tmp_path / "outside.py")
    (root / "alias.py").symlink_to("a.py")
    (root / "pkg-link").symlink_to("pkg")
    config = ScanConfig(max_file_bytes=50)

    def supported(path: str) -> bool:
        return not path.endswith(".bin")

    result = scan(root, config, supported)
    rules = IgnoreRules.load(root, config)
    by_path = {scanned.path: scanned for scanned in result.files}
    verdicts: dict[str, ScannedFile | SkipReason | None] = {
        rel: check_path(root, rel, config, supported, rules)
        for rel in (*by_path, "ignored.py", "build/x.py", "big.py", "notes.bin", ".env", "node_modules/m.js")
    }
    verdicts |= {rel: check_path(root, rel, config, supported, rules) for rel in ("out.py", "pkg-link/b.py")}
    assert verdicts == {
        **by_path,
        "ignored.py": SkipReason.IGNORED,
        "build/x.py": SkipReason.IGNORED,
        "big.py": SkipReason.TOO_LARGE,
        "notes.bin": SkipReason.UNSUPPORTED,
        ".env": SkipReason.SECRET,
        "node_modules/m.js": SkipReason.IGNORED,
        "out.py": SkipReason.SYMLINK_OUTSIDE,
        "pkg-link/b.py": None,
    }
    assert sorted(by_path) == [".gitignore", "a.py", "alias.py", "pkg/b.py"]
    assert check_path(root, "pkg", config, supported, rules) is None
    assert check_path(root, "gone.py", config, supported, rules) is None


# Deliberate differences from git (see the ignore module's docstring).


def test_workspace_inside_an_ignored_folder_is_still_scanned(root: Path) -> None:
    write(root, {".git/HEAD": "", ".gitignore": "/opened/\n", "opened/a.py": ""})
    assert indexed(run(root / "opened")) == ["a.py"]


def test_nested_repository_is_entered_with_outer_rules_still_applying(root: Path) -> None:
    write(
        root, {".gitignore": "*.log\n", "vendored/.git/HEAD": "", "vendored/x.py": "", "vendored/y.log": ""}
    )
    assert indexed(run(root, is_supported=lambda path: path.endswith((".py", ".log")))) == ["vendored/x.py"]


def test_result_is_sorted_and_counts_every_reason(root: Path) -> None:
    write(root, {"b/z.py": "", "a.py": "", "b/a.py": "", "c.txt": ""})
    result = run(root, is_supported=lambda path: path.endswith(".py"))
    assert indexed(result) == ["a.py", "b/a.py", "b/z.py"]
    assert set(result.skipped) == set(SkipReason)
    assert result.skipped[SkipReason.UNSUPPORTED] == 1


SUBTREE = {
    ".gitignore": "gen/\n",
    "src/app/main.py": "x = 1\n",
    "src/app/gen/out.py": "x = 2\n",
    "src/app/node_modules/dep/index.js": "x = 3\n",
    "src/lib/util.py": "x = 4\n",
    "src/.ssh/config.py": "x = 5\n",
    "other.py": "x = 6\n",
}


@pytest.mark.parametrize("under", ["src", "src/app", "src/app/gen", "src/.ssh", "src/app/node_modules"])
def test_a_subtree_scan_finds_what_the_full_scan_finds_below_it(root: Path, under: str) -> None:
    write(root, SUBTREE)
    full = run(root)

    part = scan(root, ScanConfig(), everything, under=under)

    below = under + "/"
    assert part.files == tuple(file for file in full.files if file.path.startswith(below))
    assert part.dirs == tuple(folder for folder in full.dirs if folder == under or folder.startswith(below))


def test_the_folders_a_scan_enters_leave_out_the_excluded_ones(root: Path) -> None:
    write(root, SUBTREE)

    assert run(root).dirs == ("", "src", "src/app", "src/lib")


def test_shards_split_the_scan_into_disjoint_parts_that_cover_it(root: Path) -> None:
    write(root, {f"pkg{folder}/mod_{number}.py": "x = 1\n" for folder in range(4) for number in range(15)})
    write(root, {".gitignore": "pkg0/mod_1.py\n"})
    whole = indexed(run(root))
    rules = IgnoreRules.load(root, ScanConfig())

    parts = [indexed(run(root, ScanConfig(shard=Shard(index, 3)))) for index in range(3)]

    assert sorted(path for part in parts for path in part) == whole
    assert all(len(part) > 5 for part in parts), "a path hash spreads the files"
    for index, part in enumerate(parts):
        config = ScanConfig(shard=Shard(index, 3))
        assert all(
            isinstance(check_path(root, path, config, everything, rules), ScannedFile) for path in part
        )
        others = set(whole) - set(part)
        assert all(check_path(root, path, config, everything, rules) is None for path in others)


@pytest.mark.parametrize(
    ("text", "shard", "problem"),
    [
        ("1/4", Shard(0, 4), None),
        (" 4 / 4 ", Shard(3, 4), None),
        ("1/1", Shard(0, 1), None),
        ("0/4", None, "a shard's number must be between 1 and 4"),
        ("5/4", None, "a shard's number must be between 1 and 4"),
        ("1/0", None, "the number of shards must be between 1 and 256"),
        ("1/300", None, "the number of shards must be between 1 and 256"),
        ("2", None, "give I/N, the I-th of N"),
        ("a/b", None, "give I/N, the I-th of N"),
    ],
)
def test_a_shard_is_written_i_of_n(text: str, shard: Shard | None, problem: str | None) -> None:
    if problem is None:
        assert Shard.parse(text) == shard
        assert str(Shard.parse(text)) == text.replace(" ", "")
    else:
        with pytest.raises(ValueError, match=problem):
            Shard.parse(text)
