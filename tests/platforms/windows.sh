#!/usr/bin/env bash
# The Windows build run, not only compiled: sylva.exe (x86_64-pc-windows-gnu,
# dev profile) under Wine checks the show folder and renders the default
# preset's first frames on the software adapter, which must come out
# byte-identical to the Linux build's, and captures the screen through GDI
# (painted by xsetroot) into a shader layer. Called by `make test` after the
# tests have built target/debug/sylva.
#
# What Wine 8.0 needs: bcryptprimitives.dll, which it lacks (process_prng.c,
# built with mingw, beside the exe); an X display for its Vulkan (Xvfb,
# 24-bit), in a prefix of its own whose wineserver starts under that display
# (one started without a display leaves later runs without Vulkan); and the
# Vulkan adapter (Wine's Direct3D 12 has no shader compiler): llvmpipe.
set -euo pipefail
cd "$(dirname "$0")/../.."

target=x86_64-pc-windows-gnu
work=target/platforms/windows
rm -rf "$work"
mkdir -p "$work"

CXX_x86_64_pc_windows_gnu=x86_64-w64-mingw32-g++-posix \
    cargo build --locked --target "$target" --no-default-features --features glslang
cp "target/$target/debug/sylva.exe" "$work/"
x86_64-w64-mingw32-gcc -shared -O2 -o "$work/bcryptprimitives.dll" \
    tests/platforms/process_prng.c -ladvapi32

frames=5
size=160x90
# A show whose one layer shows the screen, which GDI captures (the root
# window, painted one colour by xsetroot).
screen_show="$work/screen_show"
mkdir -p "$screen_show/presets" "$screen_show/shaders/shader"
printf '%s\n' 'layers = ["shader.through"]' '[params]' \
    '"shader.through.file" = "shader/through.wgsl"' '"shader.through.picture" = "screen"' \
    > "$screen_show/presets/screen.toml"
printf '%s\n' '// @param picture texture below "What is shown"' '@fragment' \
    'fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {' \
    '    return sample_picture(in.uv);' '}' > "$screen_show/shaders/shader/through.wgsl"
export WINEPREFIX="$PWD/$work/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
xvfb-run -a -s "-screen 0 1280x720x24" bash -c "
    set -e
    wine '$work/sylva.exe' --version
    wine '$work/sylva.exe' check
    wine '$work/sylva.exe' render --preset default --frames $frames --size $size \
        --adapter llvmpipe --out '$work/frames'
    xsetroot -solid '#3080c0'
    wine '$work/sylva.exe' render --project '$screen_show' --preset screen --frames 120 \
        --size 32x18 --adapter llvmpipe --every 119 --out '$work/screen'
    wineserver -w
"
./target/debug/sylva render --preset default --frames "$frames" --size "$size" \
    --adapter llvmpipe --out "$work/linux"

for ((i = 0; i < frames; i++)); do
    frame=$(printf 'frame_%05d.png' "$i")
    if ! cmp -s "$work/frames/$frame" "$work/linux/$frame"; then
        echo "windows: $frame under Wine differs from Linux's ($work/frames, $work/linux)"
        exit 1
    fi
done
# The screen's colour, at the picture's centre: blue over red, not black.
shot=$(ls "$work"/screen/frame_*.png | tail -n 1)
read -r red green blue < <(ffmpeg -v error -i "$shot" \
    -f rawvideo -pix_fmt rgb24 - | od -An -tu1 -j $(((9 * 32 + 16) * 3)) -N3)
if ((blue < red + 40 || blue < 60)); then
    echo "windows: the screen captured by GDI under Wine is ($red, $green, $blue), not the root's blue"
    exit 1
fi
echo "windows: sylva.exe checked the show, rendered $frames frames at $size under Wine, byte-identical to Linux's, and captured the screen through GDI ($red, $green, $blue)"
