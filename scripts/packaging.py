#!/usr/bin/env python3
"""Prints the packaging manifests of a kinject release, made from its checksum files:

    scripts/packaging.py krew --version 0.1.0 --dir DIR > kinject.yaml   # krew's Plugin
    scripts/packaging.py brew --version 0.1.0 --dir DIR > kinject.rb     # a Homebrew formula

DIR holds the `.sha256` files of a release as scripts/release writes them (sha256sum's format,
`<hex>  <file name>`), e.g. the release's folder, or the `.sha256` files downloaded from
https://github.com/kinject/kinject/releases/download/v<version>/. Each archive
`kinject-<version>-<target>.tar.gz` (`.zip` for Windows) becomes one platform: its URL in that
release, its SHA-256, and the files kinject's archive holds under its one top folder
`kinject-<version>-<target>/`. Other `.sha256` files (the SBOM, the image) are left out. The
platforms are whichever archives DIR holds; a target kinject does not know, two archives for
one platform, or a checksum file that is not what scripts/release writes is refused (exit 2),
never guessed around.

Only Python's standard library is used; the output is the same bytes for the same input.
tests/packaging.rs checks both outputs (testdata/packaging/) and krew's manifest rules.
"""
import argparse
import os
import stat
import re
import sys

REPOSITORY = "https://github.com/kinject/kinject"
LICENSE = "Apache-2.0"
SHORT = "Inject sidecar containers into manifests, offline"
DESCRIPTION = """\
kinject injects sidecar containers into Kubernetes manifests offline: it reads
YAML or JSON from files, directories or standard input, decides per workload
which sidecars apply by your rules, and writes the injected manifests (or
RFC 6902 patches). Comments, key order and quoting of your files are kept;
re-running changes nothing, and `uninject` gives the original back.
"""
CAVEATS = """\
kinject reads its configuration from `-c FILE` (or a .kinject.yaml beside
the manifests). Try:

  kubectl kinject inject -c sidecars.yaml -f deploy.yaml

Documentation: https://github.com/kinject/kinject#readme
"""

# Each target scripts/release builds, as krew's (GOOS, GOARCH) and Homebrew's (OS, CPU).
TARGETS = {
    "x86_64-unknown-linux-musl": ("linux", "amd64"),
    "x86_64-unknown-linux-gnu": ("linux", "amd64"),
    "aarch64-unknown-linux-musl": ("linux", "arm64"),
    "aarch64-unknown-linux-gnu": ("linux", "arm64"),
    "x86_64-apple-darwin": ("darwin", "amd64"),
    "aarch64-apple-darwin": ("darwin", "arm64"),
    "x86_64-pc-windows-msvc": ("windows", "amd64"),
}
VERSION = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$")
CHECKSUM_LINE = re.compile(r"^([0-9a-f]{64})  ([^\n/\\]+)\n?$")


class Refused(Exception):
    """What makes the input unusable, said to the user as it is."""


# A sha256sum line for one archive is under 200 bytes; more is not a checksum file.
CHECKSUM_MAX = 1024


def checksum_text(path, name):
    """The text of checksum file `path`: a regular file (not a link, a folder or a device, which
    could be read forever), small, and UTF-8."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            raise Refused(f"{name}: not a regular file")
        with open(path, "rb") as f:
            data = f.read(CHECKSUM_MAX + 1)
    except OSError as e:
        raise Refused(f"{name}: cannot read it: {e.strerror}")
    if len(data) > CHECKSUM_MAX:
        raise Refused(f"{name}: over {CHECKSUM_MAX} bytes, not one sha256sum line")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(f"{name}: not UTF-8 text")


def archives(directory, version):
    """The release's archives found in `directory`'s `.sha256` files, one per platform, in
    a fixed order: [(target, file name, sha256, (os, arch))]."""
    found = {}
    try:
        names = sorted(os.listdir(directory))
    except OSError as e:
        raise Refused(f"cannot read {directory}: {e.strerror}")
    prefix = f"kinject-{version}-"
    for checksum in names:
        if not checksum.endswith(".sha256"):
            continue
        archive = checksum[: -len(".sha256")]
        if not archive.startswith("kinject-") or not archive.endswith((".tar.gz", ".zip")):
            continue
        if not archive.startswith(prefix):
            raise Refused(f"{checksum}: an archive of another version than {version}")
        target = archive[len(prefix):].removesuffix(".tar.gz").removesuffix(".zip")
        if target not in TARGETS:
            raise Refused(f"{checksum}: unknown target `{target}` (known: {', '.join(TARGETS)})")
        windows = TARGETS[target][0] == "windows"
        if archive.endswith(".zip") != windows:
            raise Refused(f"{checksum}: {target} is released as a .{'zip' if windows else 'tar.gz'}")
        text = checksum_text(os.path.join(directory, checksum), checksum)
        line = CHECKSUM_LINE.match(text)
        if not line:
            raise Refused(f"{checksum}: not one line `<64 lowercase hex>  <file name>` (sha256sum's format)")
        if line.group(2) != archive:
            raise Refused(f"{checksum}: names `{line.group(2)}`, not `{archive}`")
        platform = TARGETS[target]
        if platform in found:
            raise Refused(
                f"{checksum}: {platform[0]}/{platform[1]} is also {found[platform][1]}: one archive per platform"
            )
        found[platform] = (target, archive, line.group(1), platform)
    if not found:
        raise Refused(f"{directory}: no kinject-{version}-<target>.tar.gz.sha256 (or .zip.sha256) in it")
    order = [("linux", "amd64"), ("linux", "arm64"), ("darwin", "amd64"), ("darwin", "arm64"),
             ("windows", "amd64")]
    missing = [f"{o}/{a}" for o, a in order if (o, a) not in found]
    if missing:
        # A release built for some targets only (a maintainer's local run): the manifest is
        # valid for those, and says nothing to users of the others.
        print(f"scripts/packaging.py: warning: no archive for {', '.join(missing)}: "
              "the output installs nothing there", file=sys.stderr)
    return [found[p] for p in order if p in found]


def url(version, archive):
    return f"{REPOSITORY}/releases/download/v{version}/{archive}"


def indented(text, spaces):
    return "".join(" " * spaces + line if line.strip() else line for line in text.splitlines(True))


def krew(version, found):
    """krew's Plugin manifest (krew.googlecontainertools.github.com/v1alpha2)."""
    out = [
        "apiVersion: krew.googlecontainertools.github.com/v1alpha2",
        "kind: Plugin",
        "metadata:",
        "  name: kinject",
        "spec:",
        f"  version: v{version}",
        f"  homepage: {REPOSITORY}",
        f"  shortDescription: {SHORT}",
        "  description: |",
        indented(DESCRIPTION, 4).rstrip("\n"),
        "  caveats: |",
        indented(CAVEATS, 4).rstrip("\n"),
        "  platforms:",
    ]
    for target, archive, sha256, (os_, arch) in found:
        folder = f"kinject-{version}-{target}"
        binary = "kinject.exe" if os_ == "windows" else "kinject"
        out += [
            "  - selector:",
            "      matchLabels:",
            f"        os: {os_}",
            f"        arch: {arch}",
            f"    uri: {url(version, archive)}",
            f"    sha256: {sha256}",
            f"    bin: {binary}",
            "    files:",
            f"    - from: {folder}/{binary}",
            "      to: .",
            f"    - from: {folder}/LICENSE",
            "      to: .",
        ]
    return "\n".join(out) + "\n"


def brew(version, found):
    """A Homebrew formula: one url and sha256 per OS and CPU (macOS and Linux; Homebrew has
    no Windows), the binary, the man pages and the bash, zsh and fish completions."""
    blocks = []
    for os_, brew_os in (("darwin", "on_macos"), ("linux", "on_linux")):
        arms = []
        for arch, brew_cpu in (("arm64", "on_arm"), ("amd64", "on_intel")):
            for _, archive, sha256, platform in found:
                if platform == (os_, arch):
                    arms.append(
                        f"    {brew_cpu} do\n"
                        f'      url "{url(version, archive)}"\n'
                        f'      sha256 "{sha256}"\n'
                        "    end\n"
                    )
        if arms:
            blocks.append(f"  {brew_os} do\n" + "".join(arms) + "  end\n")
    if not blocks:
        raise Refused("no macOS or Linux archive: Homebrew installs neither a Windows one")
    return (
        "# Generated by scripts/packaging.py from the release's .sha256 files; do not edit.\n"
        "class Kinject < Formula\n"
        '  desc "Inject sidecar containers into Kubernetes manifests, offline"\n'
        f'  homepage "{REPOSITORY}"\n'
        f'  version "{version}"\n'
        f'  license "{LICENSE}"\n'
        "\n" + "\n".join(blocks) + "\n"
        "  def install\n"
        '    bin.install "kinject"\n'
        '    man1.install Dir["man/*.1"]\n'
        '    bash_completion.install "completions/kinject.bash" => "kinject"\n'
        '    zsh_completion.install "completions/_kinject"\n'
        '    fish_completion.install "completions/kinject.fish"\n'
        "  end\n"
        "\n"
        "  test do\n"
        '    assert_match "kinject #{version}", shell_output("#{bin}/kinject --version")\n'
        "  end\n"
        "end\n"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=["krew", "brew"])
    parser.add_argument("--version", required=True, help="the release's version, e.g. 0.1.0")
    parser.add_argument("--dir", required=True, help="the folder holding the release's .sha256 files")
    args = parser.parse_args()
    try:
        if not VERSION.match(args.version):
            raise Refused(f"--version {args.version}: not a version like 0.1.0 (no leading v)")
        found = archives(args.dir, args.version)
        sys.stdout.write((krew if args.kind == "krew" else brew)(args.version, found))
    except Refused as e:
        print(f"scripts/packaging.py: {e}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
