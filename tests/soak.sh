#!/usr/bin/env bash
# Soak: runs each layer preset headless for FRAMES frames at a small size,
# paced or unpaced, and samples the process's resident memory. Fails if
# memory after the warm-up grows by more than 5% by the end.
#
#   tests/soak.sh [FRAMES] [paced|unpaced] [PRESET ...]
#   SYLVA=target/release/sylva SIZE=64x36 PROJECT=show/ tests/soak.sh 100000 unpaced
#
# Prints one line per preset: frames run, seconds, RSS after the warm-up
# (WARMUP seconds) and at the end (MiB), growth. MAX_SECONDS stops a run early. BENCHMARKS.md's Reliability section quotes them.
set -euo pipefail
cd "$(dirname "$0")/.."

frames=${1:-100000}
pace=${2:-unpaced}
shift $(( $# > 2 ? 2 : $# ))
presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(default colony fluid skinned forest)
sylva=${SYLVA:-target/release/sylva}
size=${SIZE:-64x36}
warmup=${WARMUP:-10}

[ -x "$sylva" ] || { echo "soak: build first (cargo build --release), or set SYLVA" >&2; exit 2; }

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

failed=0
for preset in "${presets[@]}"; do
    flags=(run --headless --no-midi --no-osc --preset "$preset" --size "$size" --frames "$frames")
    [ "$pace" = unpaced ] && flags+=(--unpaced)
    [ -n "${PROJECT:-}" ] && flags+=(--project "$PROJECT")
    [ -n "${MAX_SECONDS:-}" ] && flags+=(--exit-after "$MAX_SECONDS")
    log=/tmp/sylva-soak-$preset-$pace-$size.log
    started=$(date +%s.%N)
    "$sylva" "${flags[@]}" >"$log" 2>&1 &
    pid=$!
    sleep "$warmup"
    first=$(rss_kib "$pid")
    last=$first
    peak=$first
    while kill -0 "$pid" 2>/dev/null; do
        now=$(rss_kib "$pid")
        [ "${now:-0}" -gt 0 ] && last=$now
        [ "${now:-0}" -gt "$peak" ] && peak=$now
        sleep 1
    done
    status=0
    wait "$pid" || status=$?
    ended=$(date +%s.%N)
    ran=$(sed -n 's/.*stopped after \([0-9]*\) frames.*/\1/p' "$log" | tail -1)
    line=$(awk -v p="$preset" -v pace="$pace" -v f="${ran:-0}" -v s="$started" -v e="$ended" \
        -v a="$first" -v b="$last" -v m="$peak" -v st="$status" 'BEGIN {
            g = a > 0 ? (b - a) * 100 / a : 0
            printf "%-8s %-8s %8d frames %7.1f s  RSS %6.1f -> %6.1f MiB (peak %6.1f)  growth %5.2f%%  exit %s\n",
                p, pace, f, e - s, a / 1024, b / 1024, m / 1024, g, st
            exit (st != 0 || g > 5) }') || failed=1
    echo "$line"
    [ "$failed" = 0 ] || tail -5 "$log" >&2
done
exit $failed
