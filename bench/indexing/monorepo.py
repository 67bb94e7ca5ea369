"""A monorepo of over 100,000 source files, assembled from fetched repositories side by side (issue 26,
item 5): each repository's tree at a pinned commit in a folder of its own (``owner+name/``), the
whole committed as one git repository, so that it can be published (``smartctx index --publish``)
and served as a team's checkout would be.

The repositories are fetched mirrors (``/work/.mirror/<owner>+<name>/repo``, as ``fetch`` brings
them); none is in ``../shared/bench/never_train.txt``. A fetched snapshot lacks its files of 4 MiB
and more, so a blob the mirror lacks is left out (none of them is source code a parser would take).
Nothing assembled here is ever committed to smartctx.

```sh
.venv/bin/python -m bench.indexing.monorepo /work/benchrepos/mono/tree
```
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from bench.quality.commit_tasks import DEV_WIDE_REPOS, TRAIN_REPOS, never_train

MIRRORS = Path("/work/.mirror")
# The fetched repositories, by name, at the heads fetched on 2026-12-03; with the commit training set
# and the wider dev set (commit_tasks.py) at their own pins.
FETCHED = {
    "symfony/symfony": "5feb7493c372384d78b4931bb76f73c83f49f50e",
    "apache/kafka": "1eb7644349cb07139d6a3c1ad1986979647cac99",
    "prettier/prettier": "4f84a934201322ca87750e2b9b25baf296da6560",
    "typescript-eslint/typescript-eslint": "56c9ed90d0aee0b5a71cfc39fc76b715b82e3ea8",
    "sveltejs/svelte": "15720b16a5ef33e3e1f4301c77b94ec375070e73",
    "ansible/ansible": "c9ac477e53a99e95781f333eec3329a935c1bf95",
    "netty/netty": "0bb88a3e061f77355627e7fd7fc170ffdada7578",
    "withastro/astro": "99d3d3dbbfa4fd7b128a056337f1a719437a7377",
    "apache/dubbo": "324c62550ab22ffa53bce15f219bbc1d67b8c4a3",
    "elastic/logstash": "5e5356567fd548a0390c14def8ebd70acf85d04a",
    "biomejs/biome": "18883b7dafb8f9581534508fdd5b1e34632f2724",
    "spring-projects/spring-boot": "c329ffa25dc160a90ebe5e4b006ad4cdf89d8683",
    "moby/moby": "b985e2313a8676e18072b442911fc8f64f17d440",
    "eclipse/jetty.project": "6f3a6942502d79988bc97c67bcc39503efcecc77",
    "apache/iceberg": "7f879b11366e17a676a03f15247a821751415529",
    "grpc/grpc-java": "5fda0c7c35a938b2b0be05cdbe168dcb0700d64a",
    "open-telemetry/opentelemetry-java": "35636aec8d3dc6706bb483bad92383fdd6012af0",
    "apache/rocketmq": "8fc57f1468d182eea11c01e089c0250d647dc5f3",
    "alibaba/nacos": "486e19848605bbea24902b26e741a433d912e0a8",
    "apache/seatunnel": "15431c94d9b9f34839173d67c1b638f058f58722",
    "redisson/redisson": "66863978b4a92093b97c1f8c96f182a77e81d50e",
    "apache/skywalking": "5839d2ad4237dca0bf2eed7d8cd3758ef7bef39a",
}


def parts() -> dict[str, str]:
    """Every repository of the monorepo, by name, at its commit."""
    pinned = {**FETCHED, **{repo.name: repo.head for repo in (*TRAIN_REPOS, *DEV_WIDE_REPOS)}}
    forbidden = never_train() & {name.lower() for name in pinned}
    if forbidden:
        raise SystemExit(f"never_train.txt names {sorted(forbidden)}")
    return pinned


def mirror(name: str) -> Path:
    return MIRRORS / name.replace("/", "+") / "repo"


def write_tree(git_dir: Path, commit: str, folder: Path) -> tuple[int, int]:
    """The files of ``commit`` under ``folder``; how many were written and how many the mirror lacks."""
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", commit],
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    entries = []
    for entry in listing:
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode in (b"100644", b"100755"):
            entries.append((sha.decode(), path.decode("utf-8", "surrogateescape")))
    batch = subprocess.Popen(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert batch.stdin is not None and batch.stdout is not None
    written = missing = 0
    for sha, path in entries:
        batch.stdin.write(f"{sha}\n".encode())
        batch.stdin.flush()
        header = batch.stdout.readline().split()
        if header[1] == b"missing":
            missing += 1
            continue
        data = batch.stdout.read(int(header[2]))
        batch.stdout.read(1)
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written += 1
    batch.stdin.close()
    batch.wait()
    return written, missing


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path, help="a folder that does not exist yet")
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True)
    manifest = []
    for name, commit in sorted(parts().items()):
        git_dir = mirror(name)
        written, missing = write_tree(git_dir, commit, out / name.replace("/", "+"))
        manifest.append(f"{name} {commit} {written} files ({missing} the mirror lacks)")
        print(manifest[-1])
    (out / "MONOREPO.txt").write_text("\n".join(manifest) + "\n")
    subprocess.run(["git", "init", "-q", str(out)], check=True)
    subprocess.run(["git", "-C", str(out), "add", "-A"], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(out),
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@invalid",
            "commit",
            "-qm",
            "monorepo",
        ],
        check=True,
    )
    print(f"committed {out}")


if __name__ == "__main__":
    main()
