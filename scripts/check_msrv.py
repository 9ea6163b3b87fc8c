"""The MSRV check CI can run without a second toolchain (a fresh machine fetches none).

Two halves: clippy's `incompatible_msrv` lint (on in CI's `clippy -D warnings`) catches this
crate using a standard-library API newer than `rust-version`; this script catches a dependency
that needs a newer compiler. It reads `cargo metadata` (the committed Cargo.lock's resolution,
every feature on) and fails if a package the library or the binary builds on, normal or build
dependency, declares a `rust-version` above the crate's own.
"""

import json
import subprocess
import sys


def version_tuple(text):
    return tuple(int(part) for part in text.split("."))


def main():
    metadata = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--all-features", "--locked"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    packages = {p["id"]: p for p in metadata["packages"]}
    nodes = {n["id"]: n for n in metadata["resolve"]["nodes"]}
    root = metadata["resolve"]["root"]
    msrv = version_tuple(packages[root]["rust_version"])

    # Everything reachable from the root through normal and build edges (not dev-dependencies).
    seen, stack = set(), [root]
    while stack:
        node = nodes[stack.pop()]
        for dep in node["deps"]:
            kinds = {k["kind"] for k in dep["dep_kinds"]}
            if kinds & {None, "build"} and dep["pkg"] not in seen:
                seen.add(dep["pkg"])
                stack.append(dep["pkg"])

    too_new = []
    for pkg_id in sorted(seen, key=lambda i: packages[i]["name"]):
        package = packages[pkg_id]
        needed = package.get("rust_version")
        if needed and version_tuple(needed) > msrv:
            too_new.append(f"{package['name']} {package['version']} needs rustc {needed}")
    wanted = ".".join(map(str, msrv))
    if too_new:
        print(f"dependencies newer than the crate's rust-version {wanted}:", *too_new, sep="\n  ")
        sys.exit(1)
    print(f"{len(seen)} dependencies, none needs a rustc newer than {wanted}")


if __name__ == "__main__":
    main()
