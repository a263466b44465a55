#!/bin/sh
# Runs one fuzz target for SECONDS at the lowest priority and appends its figures to RUNS.md:
#   fuzz/run.sh TARGET SECONDS [extra libFuzzer flags...]
# The target must be built first (`cargo +nightly fuzz build -s none`, see README.md); the
# corpus is fuzz/corpus/TARGET (`fuzz/seed.sh` creates it). CPU time is user+sys of the fuzzer
# process as /usr/bin/time measures it; executions and exec/s are libFuzzer's final stats.
set -eu
target=$1
seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
bin=${CARGO_TARGET_DIR:-$here/target}/x86_64-unknown-linux-gnu/release/$target
case $target in
    sse_stream) max_len=32768 dict=sse.dict ;;
    compile_prompt) max_len=65536 dict=json.dict ;;
    import_body) max_len=65536 dict=json.dict ;;
    har_import | rollout_import | prefix_pair) max_len=131072 dict=json.dict ;;
    *) echo "run.sh: unknown target $target" >&2; exit 1 ;;
esac
logs=$here/logs
mkdir -p "$logs" "$here/corpus/$target" "$here/artifacts/$target"
stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
log=$logs/$target-$(date -u +%Y%m%dT%H%M%S).log
status=0
nice -n 19 /usr/bin/time -v "$bin" "$here/corpus/$target" \
    -dict="$here/dict/$dict" -max_len=$max_len -rss_limit_mb=2048 -timeout=30 \
    -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$here/artifacts/$target/" "$@" >"$log" 2>&1 || status=$?
stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -1; }
user=$(sed -n 's/.*User time (seconds): //p' "$log")
sys=$(sed -n 's/.*System time (seconds): //p' "$log")
cpu=$(echo "$user + $sys" | bc)
execs=$(stat number_of_executed_units)
rate=$(stat average_exec_per_sec)
corpus=$(ls "$here/corpus/$target" | wc -l)
crashes=$(ls "$here/artifacts/$target" | wc -l)
echo "| $target | $stamp | $cpu | ${execs:-?} | ${rate:-?} | $corpus | $crashes (exit $status) |" >>"$here/RUNS.md"
tail -1 "$here/RUNS.md"
