#!/usr/bin/env bash
# Tests of `ladder-trace open` over the loopback interface, as a reader's browser would use it (curl stands in for the
# Perfetto UI). Every wait is bounded: the server runs under `timeout`, curl under --max-time.
#
#   tools/open_test.sh LADDER_TRACE TRACE CASE
#
# CASE: fetch      the printed link returns the file byte for byte, with the CORS and no-cache headers; it then exits 0
#       other      another path and the UI's POST /status get 404 and do not end it; the file still does
#       taken      a second `open` while the first holds the port: one line that names the port, exit 1
#       huge       a file over 1 GB: one line that names trace_processor, exit 1, nothing served
#       stalled    a client that sends nothing and one that sends an endless header do not keep the file from the next
#       ssh        under ssh ($SSH_CONNECTION): the ssh -L line, no browser started, and the file served as always
set -u
command -v curl >/dev/null || { echo "curl is not installed: skipped"; exit 77; }
exe=$1 trace=$2 case=$3
port=9001
dir=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for f in "$dir"/*.out "$dir"/*.err "$dir"/headers; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done
  exit 1
}

# Starts `ladder-trace open` in the background (at most 60 s) and waits for its link, the first line on stdout.
start() {
  timeout 60 "$@" >"$dir/server.out" 2>"$dir/server.err" &
  pid=$!
  for _ in $(seq 100); do
    [ -s "$dir/server.out" ] && break
    kill -0 "$pid" 2>/dev/null || fail "ladder-trace open exited before printing a link"
    sleep 0.1
  done
  url=$(head -n 1 "$dir/server.out")
  case "$url" in
    "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:$port/"*) file_url=${url#*url=} ;;
    *) fail "first line is not the Perfetto link: $url" ;;
  esac
}

# Waits (up to 10 s) for the server to exit; fails unless it exits with status $1.
expect_exit() {
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && fail "ladder-trace open still running after the file was fetched"
  wait "$pid"
  local rc=$?
  pid=
  [ "$rc" = "$1" ] || fail "exit status $rc, expected $1"
}

fetch() {
  curl -sS --max-time 20 -D "$dir/headers" -o "$dir/body" -H 'Origin: https://ui.perfetto.dev' "$file_url" ||
    fail "curl $file_url"
  grep -q '^HTTP/1.1 200' "$dir/headers" || fail "not 200"
  grep -qi '^Access-Control-Allow-Origin: https://ui.perfetto.dev' "$dir/headers" || fail "no CORS header"
  grep -qi '^Cache-Control: no-cache' "$dir/headers" || fail "no Cache-Control: no-cache"
  cmp -s "$dir/body" "$trace" || fail "the body differs from $trace"
}

case "$case" in
  fetch)
    start "$exe" open --no-browser "$trace"
    fetch
    expect_exit 0
    tr -d '\r' <"$dir/headers"
    echo "fetched $(wc -c <"$dir/body") bytes, byte for byte the same as $trace; ladder-trace open exited 0"
    ;;
  other)
    start "$exe" open --no-browser "$trace"
    for req in "GET /other.json" "POST /status" "GET /" "OPTIONS $file_url"; do
      set -- $req
      code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' -X "$1" "${2/#\//http://127.0.0.1:$port/}")
      [ "$code" = 404 ] || fail "$req answered $code, expected 404"
      kill -0 "$pid" 2>/dev/null || fail "ladder-trace open ended after $req"
      echo "$req -> $code, still serving"
    done
    fetch
    expect_exit 0
    echo "then the file, and it exited 0"
    ;;
  taken)
    start "$exe" open --no-browser "$trace"
    timeout 20 "$exe" open --no-browser "$trace" >"$dir/second.out" 2>"$dir/second.err"
    rc=$?
    [ "$rc" = 1 ] || fail "second open exited $rc, expected 1"
    [ "$(wc -l <"$dir/second.err")" = 1 ] || fail "expected one line on stderr"
    grep -q "^error: port $port on 127.0.0.1 is taken" "$dir/second.err" || fail "no line about the port"
    [ -s "$dir/second.out" ] && fail "printed a link although it cannot serve"
    cat "$dir/second.err"
    fetch
    expect_exit 0
    ;;
  huge)
    truncate -s 1100M "$dir/huge.json"  # sparse: no disk used
    timeout 20 "$exe" open --no-browser "$dir/huge.json" >"$dir/huge.out" 2>"$dir/huge.err"
    rc=$?
    [ "$rc" = 1 ] || fail "exited $rc, expected 1"
    [ "$(wc -l <"$dir/huge.err")" = 1 ] || fail "expected one line on stderr"
    grep -q "trace_processor server http" "$dir/huge.err" || fail "does not name trace_processor"
    [ -s "$dir/huge.out" ] && fail "printed a link for a file the UI cannot load"
    sed "s|$dir/||g" "$dir/huge.err"
    ;;
  stalled)
    # One client connects and says nothing, another sends 17 KB of header with no end: neither holds up the file.
    start "$exe" open --no-browser "$trace"
    exec 3<>"/dev/tcp/127.0.0.1/$port" || fail "connect"
    exec 4<>"/dev/tcp/127.0.0.1/$port" || fail "connect"
    head -c 17000 /dev/zero | tr '\0' a >&4
    read -r -t 5 -u 4 status
    rc=$?
    [ "$rc" -gt 128 ] && fail "no answer within 5 s to a 17 KB request"
    echo "17 KB of header -> ${status:-connection closed}"
    fetch
    expect_exit 0
    echo "the file went out while a silent connection stayed open, and it exited 0"
    ;;
  ssh)
    # BROWSER names a program that leaves a mark: under ssh it must not run.
    printf '#!/bin/sh\ntouch "%s"\n' "$dir/browser-started" >"$dir/browser"
    chmod +x "$dir/browser"
    export SSH_CONNECTION="10.0.0.1 50000 10.0.0.2 22" BROWSER="$dir/browser"
    start "$exe" open "$trace"
    fetch
    expect_exit 0
    grep -q 'ssh -L 9001:localhost:9001 ' "$dir/server.err" || fail "no ssh -L line"
    [ -e "$dir/browser-started" ] && fail "started a browser over ssh"
    grep 'ssh -L' "$dir/server.err"
    ;;
  *)
    echo "unknown case $case"
    exit 2
    ;;
esac
echo "ok: open $case"
