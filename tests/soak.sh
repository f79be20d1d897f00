#!/usr/bin/env bash
# Soak: runs each layer preset (or, written play:NAME, a playlist through
# `sylva play`) headless for FRAMES frames at a small size, paced or
# unpaced, and samples the process's resident memory and, where
# nvidia-smi is there, the GPU memory it holds. Fails if either grows by
# more than 5% after the warm-up, or the run logs an error.
#
#   tests/soak.sh [FRAMES] [paced|unpaced] [PRESET|play:PLAYLIST ...]
#   SYLVA=target/release/sylva SIZE=64x36 PROJECT=show/ tests/soak.sh 100000 unpaced
#   tests/soak.sh 20000 unpaced play:default
#   EXTRA="--record /tmp/set.mp4" tests/soak.sh 216000 paced default   # an hour recorded
#
# Prints one line per run: frames run, seconds, RSS after the warm-up
# (WARMUP seconds) and at the end (MiB), and its growth: the median of the
# last third of the samples after the warm-up against the median of the
# first third, so a playlist whose presets hold different amounts of
# memory is compared with itself a few rounds later (not with whichever
# preset happens to be on stage at the end), and a passing spike of
# scratch memory (a forest sowing) moves neither; GPU memory the same way;
# crossfades completed and errors logged. MAX_SECONDS stops a run early.
# BENCHMARKS.md's Reliability section quotes them.
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
# GPU memory the process holds, KiB (0 without nvidia-smi).
gpu_kib() {
    command -v nvidia-smi >/dev/null 2>&1 || { echo 0; return; }
    nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
        awk -F', *' -v p="$1" '$1 == p { print $2 * 1024; found = 1 } END { if (!found) print 0 }'
}

failed=0
for preset in "${presets[@]}"; do
    case "$preset" in
        play:*) flags=(play "${preset#play:}" --headless --no-midi --no-osc --size "$size" --frames "$frames") ;;
        *) flags=(run --headless --no-midi --no-osc --preset "$preset" --size "$size" --frames "$frames") ;;
    esac
    [ "$pace" = unpaced ] && flags+=(--unpaced)
    [ -n "${PROJECT:-}" ] && flags+=(--project "$PROJECT")
    [ -n "${MAX_SECONDS:-}" ] && flags+=(--exit-after "$MAX_SECONDS")
    # Further flags for every run (a recording, senders), split on spaces.
    [ -n "${EXTRA:-}" ] && read -ra extra <<< "$EXTRA" && flags+=("${extra[@]}")
    log=/tmp/sylva-soak-${preset/:/-}-$pace-$size.log
    started=$(date +%s.%N)
    "$sylva" "${flags[@]}" >"$log" 2>&1 &
    pid=$!
    sleep "$warmup"
    samples=/tmp/sylva-soak-samples-$$
    : > "$samples"
    while kill -0 "$pid" 2>/dev/null; do
        now=$(rss_kib "$pid")
        gpu_now=$(gpu_kib "$pid")
        [ "${now:-0}" -gt 0 ] && echo "$now ${gpu_now:-0}" >> "$samples"
        sleep 1
    done
    status=0
    wait "$pid" || status=$?
    ended=$(date +%s.%N)
    ran=$(sed -n 's/.*stopped after \([0-9]*\) frames.*/\1/p' "$log" | tail -1)
    fades=$(grep -c "crossfade done" "$log" || true)
    errors=$(grep -c "ERROR" "$log" || true)
    line=$(awk -v p="$preset" -v pace="$pace" -v f="${ran:-0}" -v s="$started" -v e="$ended" \
        -v st="$status" -v x="$fades" -v er="$errors" '
        function median(values, from, to,    count, i, j, sorted, t) {
            count = 0
            for (i = from; i <= to; i++) sorted[++count] = values[i]
            for (i = 2; i <= count; i++)
                for (j = i; j > 1 && sorted[j - 1] > sorted[j]; j--) {
                    t = sorted[j]; sorted[j] = sorted[j - 1]; sorted[j - 1] = t
                }
            return count ? sorted[int((count + 1) / 2)] : 0
        }
        { rss[NR] = $1; gpu[NR] = $2 }
        END {
            n = NR; third = int(n / 3); if (third < 1) third = 1
            a = median(rss, 1, third); b = median(rss, n - third + 1, n)
            ga = median(gpu, 1, third); gb = median(gpu, n - third + 1, n)
            g = a > 0 ? (b - a) * 100 / a : 0
            gg = ga > 0 ? (gb - ga) * 100 / ga : 0
            printf "%-12s %-8s %8d frames %7.1f s  RSS median %6.1f -> %6.1f MiB (first %6.1f, last %6.1f)  growth %5.2f%%  GPU %6.1f -> %6.1f MiB  growth %5.2f%%  %d crossfades  %d errors  exit %s\n",
                p, pace, f, e - s, a / 1024, b / 1024, rss[1] / 1024, rss[n] / 1024, g, ga / 1024, gb / 1024, gg, x, er, st
            exit (st != 0 || n == 0 || g > 5 || gg > 5 || er > 0) }' "$samples") || failed=1
    rm -f "$samples"
    echo "$line"
    [ "$failed" = 0 ] || tail -5 "$log" >&2
done
exit $failed
