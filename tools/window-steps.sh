#!/usr/bin/env bash
# Real-window screenshots of the app under Xvfb, driven by a list of steps: keys, clicks and shots.
# usage: tools/window-steps.sh WIDTHxHEIGHT OUTDIR STEP… [-- APP ARGS…]
#   key:ctrl+2        xdotool key (one key or chord)
#   type:text         xdotool type
#   click:X,Y         left click at window pixel X,Y   (rclick:X,Y right click, dclick:X,Y double)
#   wheel:X,Y,N       N wheel steps down at X,Y (negative: up)
#   sleep:S           wait S seconds
#   shot:NAME         screenshot to OUTDIR/NAME.png
#   fill:             move the app's window to 0,0 and size it to the whole screen
# Run from the project root after `cargo build --release` (PW_BIN overrides the binary). Needs xvfb,
# imagemagick and xdotool. Every step waits 0.7 s after it so the app can draw. Keys and typing
# go to the app's window (given the keyboard first: with no window manager they went nowhere).
set -u
size=${1:?usage: window-steps.sh WxH OUTDIR STEP… [-- ARGS]}; outdir=${2:?outdir}; shift 2
steps=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do steps+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
bin=${PW_BIN:-target/release/promptwire}; [ -x "$bin" ] || { echo "no $bin: cargo build --release first"; exit 1; }
mkdir -p "$outdir"
for n in $(seq 90 140); do [ -e /tmp/.X$n-lock ] || [ -e /tmp/.X11-unix/X$n ] || break; done
Xvfb :$n -screen 0 "${size}x24" >/dev/null 2>&1 & xv=$!
for _ in $(seq 50); do [ -S /tmp/.X11-unix/X$n ] && break; sleep 0.1; done
home=$(mktemp -d); DISPLAY=:$n HOME=$home "$bin" "$@" >"$home/app.log" 2>&1 & app=$!
trap 'kill $app $xv 2>/dev/null; wait 2>/dev/null' EXIT
sleep "${PW_START_WAIT:-5}"
kill -0 $app 2>/dev/null || { echo "the app exited: $(tail -n 3 "$home/app.log")"; exit 1; }
x() { DISPLAY=:$n xdotool "$@"; }
# Without a window manager nothing gives the app the keyboard: keys and typing went nowhere.
focus() {
  local w; w=$(x search --onlyvisible --pid "$app" 2>/dev/null | head -n 1)
  [ -n "$w" ] && x windowfocus --sync "$w" 2>/dev/null
}
for step in "${steps[@]}"; do
  kind=${step%%:*}; arg=${step#*:}
  case $kind in
    key) focus; x key "$arg" ;;
    type) focus; x type --delay 30 "$arg" ;;
    click|rclick|dclick)
      IFS=, read -r px py <<<"$arg"; x mousemove "$px" "$py"; sleep 0.2
      case $kind in click) x click 1 ;; rclick) x click 3 ;; dclick) x click --repeat 2 1 ;; esac ;;
    wheel)
      IFS=, read -r px py count <<<"$arg"; x mousemove "$px" "$py"; b=5
      [ "$count" -lt 0 ] && { b=4; count=$(( -count )); }
      x click --repeat "$count" --delay 40 "$b" ;;
    sleep) sleep "$arg" ;;
    fill)
      w=$(x search --onlyvisible --pid "$app" | head -n 1)
      [ -n "$w" ] && { x windowmove "$w" 0 0; x windowsize "$w" "${size%x*}" "${size#*x}"; sleep 1; } ;;
    shot) DISPLAY=:$n import -window root "$outdir/$arg.png" && echo "wrote $outdir/$arg.png" ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
  sleep 0.7
done
