#!/usr/bin/env python3
"""The shader-library yardstick (BENCHMARKS.md, "The world's shader
libraries"): renders every ISF (`.fs`) and Shadertoy (`.glsl`) file of a
show folder over the aurora with `sylva render` and says which render.
Each is given what a VJ would give it: every image input and channel
shows the aurora, the mouse is in the middle (pressed where the file
reads no time: it changes only by hand), and the show
hears four seconds of music (kick, hi-hat, bass and a swelling chord).

A file counts when sylva renders it without an error, its picture at 2 s
is not one flat colour (fewer than 99% of its pixels equal), and its
frames at 0 s and 2 s differ in more than 1% of their pixels, unless its
text reads no time at all. Not a CI test: a figure for BENCHMARKS.md,
measured on collections that are not shipped.

    tests/yardstick/measure.py SYLVA_BINARY SHOW_FOLDER RESULT.csv [BEFORE.csv]

With BEFORE.csv (an earlier result), a file that passed there is taken as
it was and only the others are rendered again (after a fix).

The pass/fail list, with each failure's reason, goes to RESULT.csv; the
totals to standard output. SYLVA_GLSL=naga measures the fallback.
"""

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
from PIL import Image

SIZE = os.environ.get("YARDSTICK_SIZE", "320x180")
# Words by which a shader reads the time.
TIME_WORDS = ("TIME", "TIMEDELTA", "FRAMEINDEX", "DATE", "iTime", "iFrame", "iTimeDelta",
              "iDate", "iGlobalTime", "iChannelTime")


def image_inputs(text: str) -> list:
    """The names of the image inputs an ISF file's header declares."""
    header = re.search(r"/\*(.*?)\*/", text, re.S)
    try:
        inputs = json.loads(header[1]).get("INPUTS", []) if header else []
    except (json.JSONDecodeError, AttributeError):
        return []
    return [i["NAME"] for i in inputs
            if isinstance(i, dict) and i.get("TYPE") == "image" and isinstance(i.get("NAME"), str)]


def preset(file: str, text: str) -> str:
    """A show of the aurora with `file` over it (its image inputs and
    its four channels showing the aurora, the mouse in the middle)."""
    lines = [
        'layers = ["shader.below", "shader.fx"]',
        "[params]",
        '"master.tonemap" = "clamp"',
        # The mouse in the middle: pressed for a file that reads no time
        # (it changes only by hand: a paint program), else at rest, so a
        # file that moves its camera by the mouse animates on its own, as
        # on Shadertoy's own page.
        f'"master.pointer" = [0.5, 0.5, {0.0 if reads_time(text) else 1.0}]',
        '"shader.below.file" = "shader/aurora.wgsl"',
        f'"shader.fx.file" = "{file}"',
    ]
    if file.endswith(".glsl"):
        lines += [f'"shader.fx.iChannel{i}" = "below"' for i in range(4)]
    else:
        lines += [f'"shader.fx.{name}" = "below"' for name in image_inputs(text)]
    return "\n".join(lines) + "\n"


def write_sound(path: Path) -> None:
    """Four seconds of music for the audio inputs: a kick every half
    second, a hi-hat of noise between, a sawtooth bass and a chord whose
    loudness swells, 44.1 kHz mono."""
    rate = 44_100
    t = np.arange(4 * rate) / rate
    kick = np.sin(2 * np.pi * 55 * t) * np.exp(-12 * (t % 0.5))
    hat = np.random.default_rng(1).uniform(-1, 1, t.size) * np.exp(-40 * ((t + 0.25) % 0.5))
    bass = 2 * ((110 * t) % 1) - 1
    chord = sum(np.sin(2 * np.pi * f * t) for f in (220, 277, 330, 880, 3520)) / 5
    swell = 0.5 + 0.5 * np.sin(2 * np.pi * 0.4 * t)
    sound = 0.4 * kick + 0.2 * hat + 0.15 * bass + 0.25 * chord * swell
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((sound * 32_000).astype("<i2").tobytes())


def reads_time(text: str) -> bool:
    return any(word in text for word in TIME_WORDS)


def measure(sylva: str, show: Path, file: Path) -> str:
    """'' when `file` counts, else why not."""
    name = file.relative_to(show / "shaders").as_posix()
    presets = show / "presets"
    presets.mkdir(exist_ok=True)
    (presets / "yardstick.toml").write_text(preset(name, file.read_text(errors="replace")))
    sound = show / "yardstick.wav"
    if not sound.exists():
        write_sound(sound)
    out = show / "yardstick_out"
    shutil.rmtree(out, ignore_errors=True)
    try:
        run = subprocess.run(
            [sylva, "render", "--project", str(show), "--preset", "yardstick", "--frames", "3",
             "--fps", "1", "--size", SIZE, "--out", str(out), "--audio", str(sound)],
            capture_output=True, text=True, timeout=300,
            env={**os.environ, "RUST_LOG": "error"},
        )
    except subprocess.TimeoutExpired:
        return "timed out (300 s for three frames)"
    errors = [line for line in run.stderr.splitlines() if "ERROR" in line]
    if run.returncode != 0 or errors:
        said = errors[0] if errors else run.stderr.strip().splitlines()[-1:]
        said = said if isinstance(said, str) else " ".join(said)
        return "error: " + said.split(": ", 2)[-1][:300]
    first = np.asarray(Image.open(out / "frame_00000.png").convert("RGB"))
    last = np.asarray(Image.open(out / "frame_00002.png").convert("RGB"))
    _, counts = np.unique(last.reshape(-1, 3), axis=0, return_counts=True)
    pixels = last.shape[0] * last.shape[1]
    flat = counts.max() / pixels
    if flat >= 0.99:
        return f"flat: {flat:.1%} of its pixels one colour at 2 s"
    changed = np.any(first != last, axis=2).sum() / pixels
    if changed <= 0.01 and reads_time(file.read_text(errors="replace")):
        middle = np.asarray(Image.open(out / "frame_00001.png").convert("RGB"))
        moved = np.any(first != middle, axis=2).sum() / pixels
        periodic = f" (but {moved:.0%} at 1 s: it repeats every second or two)" if moved > 0.01 else ""
        return f"still: {changed:.1%} of its pixels differ between 0 s and 2 s{periodic}"
    return ""


def main() -> None:
    sylva, show, result = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    files = sorted(p for p in (show / "shaders").rglob("*")
                   if p.suffix in (".fs", ".glsl") and p.is_file()
                   # A `.glsl` file in `isf/` is a library ISF files include.
                   and not (p.suffix == ".glsl" and (show / "shaders" / "isf") in p.parents)
                   # A multipass Shadertoy folder runs from its image pass.
                   and not (p.suffix == ".glsl" and p.parent.joinpath("image.glsl").exists()
                            and p.name != "image.glsl"))
    # A result file from before: only its failures are measured again.
    before = {}
    if len(sys.argv) > 4:
        with open(sys.argv[4], newline="") as f:
            before = {row[0]: row for row in csv.reader(f)}
    rows = []
    for file in files:
        name = file.relative_to(show / "shaders").as_posix()
        if before.get(name, ["", ""])[1] == "pass":
            rows.append(tuple(before[name]))
            continue
        why = measure(sylva, show, file)
        rows.append((file.relative_to(show / "shaders").as_posix(), "pass" if not why else "fail", why))
        print(f"{rows[-1][1]}  {rows[-1][0]}  {why}", flush=True)
    with result.open("w", newline="") as f:
        csv.writer(f).writerows([("file", "result", "reason"), *rows])
    passed = sum(r[1] == "pass" for r in rows)
    print(f"{show.name}: {passed} of {len(rows)} render ({passed / max(len(rows), 1):.1%})")


if __name__ == "__main__":
    main()
