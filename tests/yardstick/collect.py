#!/usr/bin/env python3
"""Lays out the yardstick's collections (BENCHMARKS.md, "The world's
shader libraries") as sylva show folders, one per collection, from local
git mirrors of their repositories at the commits named there:

    tests/yardstick/collect.py MIRRORS OUT

MIRRORS holds `OWNER+NAME/repo` (bare git mirrors); OUT gets a show folder
per collection, its files in `shaders/isf/` (ISF) or `shaders/toy/`
(Shadertoy), then `measure.py` renders them. Each collection is taken as a
VJ would drop it into a show: ISF folders whole (their imported images
beside the files); Shadertoy files as they are, but for what in the two
Kodi add-ons is not a shader (their players' own GL stages, `main_*`,
and code snippets, `-CODE SNIPPET …`). A multipass project of
stevejtrettel/shadertoys (`bufferA.glsl` … and a `config.json` wiring
channels) becomes sylva's layout: `buffer_a.glsl` …, the wiring as
`// @channelN` lines, its pictures copied into `media/` (a project that
reads the framework's own additions, uniforms declared in `config.json`
or touch, is left out: it is not Shadertoy's format); Kodi's
visualisers hear the music in the channels its `presets.json` says;
MadMapper's materials get MadMapper's libraries (`Libraries/*.glsl`)
and its noise table (`noiseLUT.png`) in `shaders/isf/`, where its user
keeps them.
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

# name: (repository, commit, folder in the repository, kind, endings)
COLLECTIONS = {
    "vidvox": ("Vidvox/ISF-Files", "3d39996", "", "isf", (".fs",)),
    "grigm": ("grigM/ISF-shaders-collection", "96a417fb", "", "isf", (".fs",)),
    "bareimage": ("bareimage/ISF", "a48a843f", "", "isf", (".fs",)),
    "kodi": ("hernandito/Kodi-Shadertoy-Visualization-Upgraded", "839cac02",
             "screensaver.shadertoy/resources/shaders", "toy", (".glsl",)),
    "xbmc": ("xbmc/visualization.shadertoy", "364132b1",
             "visualization.shadertoy/resources/shaders", "toy", (".glsl",)),
    "trettel": ("stevejtrettel/shadertoys", "5a0ed7ae", "demos", "toy", (".glsl",)),
    "madmapper": ("madmappersoftware/MadMapper-Materials", "d7ff2112", "Materials", "isf", (".fs",)),
}

PASS_NAMES = {"bufferA": "buffer_a", "bufferB": "buffer_b", "bufferC": "buffer_c",
              "bufferD": "buffer_d", "BufferA": "buffer_a", "BufferB": "buffer_b",
              "BufferC": "buffer_c", "BufferD": "buffer_d", "Image": "image",
              "Common": "common", "common": "common"}


def files(mirror: Path, commit: str, folder: str):
    """(path, bytes) of each file at `commit` under `folder`; a file the
    mirror does not hold (a large picture left out) is passed over."""
    args = ["git", "-C", str(mirror), "ls-tree", "-r", "-z", commit]
    if folder:
        args += ["--", folder]
    listing = subprocess.run(args, capture_output=True, check=True).stdout
    entries = []
    for line in listing.split(b"\0"):
        if not line:
            continue
        meta, path = line.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode != b"120000":
            entries.append((path.decode(), sha.decode()))
    batch = subprocess.Popen(["git", "-C", str(mirror), "cat-file", "--batch"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    for path, sha in entries:
        batch.stdin.write(f"{sha}\n".encode())
        batch.stdin.flush()
        header = batch.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            continue
        data = batch.stdout.read(int(header[2]))
        batch.stdout.readline()
        yield path, data
    batch.stdin.close()
    batch.wait()


def lay_out(name: str, mirrors: Path, out: Path) -> None:
    repository, commit, folder, kind, endings = COLLECTIONS[name]
    mirror = mirrors / repository.replace("/", "+") / "repo"
    show = out / name
    shutil.rmtree(show, ignore_errors=True)
    shaders = show / "shaders" / kind
    shaders.mkdir(parents=True)
    for path, data in files(mirror, commit, folder):
        relative = Path(path).relative_to(folder) if folder else Path(path)
        # The Kodi collection keeps superseded copies aside.
        if name == "kodi" and len(relative.parts) > 1:
            continue
        # Kodi's add-ons hold their own GL plumbing (`main_*.glsl`, the
        # player's vertex and display stages) and code snippets beside the
        # shaders: neither is a Shadertoy shader.
        if kind == "toy" and relative.name.startswith(("main_", "-CODE SNIPPET")):
            continue
        target = shaders / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    if name == "trettel":
        for config in sorted(shaders.rglob("config.json")):
            if own_extensions(config):
                shutil.rmtree(config.parent)
            else:
                rewire(config, show)
    if name == "xbmc":
        wire_kodi_sound(mirror, commit, shaders)
    # MadMapper's libraries, and the noise table its app ships beside them
    # (the repository holds copies among its demos), where its user keeps
    # them for every material.
    if name == "madmapper":
        for path, data in files(mirror, commit, "Libraries"):
            if path.endswith(".glsl"):
                (shaders / Path(path).name).write_bytes(data)
        for path, data in files(mirror, commit, "Materials/Demos/SDF/_NoiseToolbox"):
            if path.endswith("noiseLUT.png"):
                (shaders / "noiseLUT.png").write_bytes(data)
    # Only what is measured stays beside what it needs.
    if kind == "toy":
        for file in list(shaders.rglob("*")):
            if file.is_file() and not file.name.endswith(endings) and file.suffix not in (".png", ".jpg"):
                file.unlink()


def wire_kodi_sound(mirror: Path, commit: str, shaders: Path) -> None:
    """The channels Kodi's visualisation add-on hears the music in (its
    `presets.json`: a shader's file, then what each channel shows), as
    `// @channelN audio` lines; its pictures are not in the repository,
    so those channels show the aurora."""
    listing = subprocess.run(
        ["git", "-C", str(mirror), "show",
         f"{commit}:visualization.shadertoy/resources/presets.json"],
        capture_output=True, check=True).stdout
    for preset in json.loads(listing)["presets"]:
        file = shaders / preset[1]
        channels = [f"// @channel{i} audio" for i, source in enumerate(preset[2:6]) if source == "audio"]
        if file.exists() and channels:
            file.write_text("\n".join(channels) + "\n" + file.read_text(errors="replace"))


def own_extensions(config: Path) -> bool:
    """Whether a stevejtrettel/shadertoys project reads what its framework
    adds to Shadertoy's format (uniforms declared in `config.json`, touch
    and pinch), which no Shadertoy player gives."""
    text = config.read_text(errors="replace")
    passes = " ".join(p.read_text(errors="replace") for p in config.parent.glob("*.glsl"))
    return '"uniforms"' in text or "iTouch" in passes or "iPinch" in passes


def rewire(config: Path, show: Path) -> None:
    """A stevejtrettel/shadertoys project in sylva's multipass layout."""
    folder = config.parent
    try:
        wiring = json.loads(config.read_text())
    except json.JSONDecodeError:
        wiring = {}
    for file in list(folder.glob("*.glsl")):
        stem = file.stem
        if stem in PASS_NAMES and PASS_NAMES[stem] != stem:
            file.rename(folder / f"{PASS_NAMES[stem]}.glsl")
    for pass_name, channels in wiring.items():
        if pass_name not in PASS_NAMES or not isinstance(channels, dict):
            continue
        lines = []
        for channel, source in channels.items():
            match = re.fullmatch(r"iChannel([0-3])", channel)
            if not match:
                continue
            if isinstance(source, dict) and source.get("keyboard"):
                lines.append(f"// @channel{match[1]} keyboard")
            elif isinstance(source, str) and source in PASS_NAMES:
                lines.append(f"// @channel{match[1]} {PASS_NAMES[source]}")
            elif isinstance(source, str) and (folder / source).is_file():
                media = show / "media" / folder.name
                media.mkdir(parents=True, exist_ok=True)
                shutil.copy(folder / source, media / Path(source).name)
                lines.append(f"// @channel{match[1]} media/{folder.name}/{Path(source).name}")
        target = folder / f"{PASS_NAMES[pass_name]}.glsl"
        if target.exists() and lines:
            target.write_text("\n".join(lines) + "\n" + target.read_text())


def main() -> None:
    mirrors, out = Path(sys.argv[1]), Path(sys.argv[2])
    for name in sys.argv[3:] or COLLECTIONS:
        lay_out(name, mirrors, out)
        count = sum(1 for p in (out / name / "shaders").rglob("*")
                    if p.suffix in (".fs", ".glsl"))
        print(f"{name}: {count} files")


if __name__ == "__main__":
    main()
