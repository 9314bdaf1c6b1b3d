#!/usr/bin/env bash
# Tests of `ladder-trace open` over the loopback interface, as a reader's browser would use it (curl stands in for the
# Perfetto UI). Every wait is bounded: the server runs under `timeout`, curl under --max-time.
#
#   tools/open_test.sh LADDER_TRACE TRACE CASE
#
# CASE: fetch      the printed link returns the file byte for byte, with the CORS and no-cache headers; it then exits 0
#       other      another path and the UI's POST /status get 404, the file without the UI's Origin (curl, another
#                  site) or under another Host 403, the UI's preflight OPTIONS its CORS answer; none ends it; the file
#                  still goes out
#       decoded    a file named bs=64+fused.json, fetched as the UI asks for it (its url= decoded): served
#       gzip       a .json.gz goes out as application/gzip, byte for byte
#       slow       a client that asks for a 64 MB file and reads 64 KB of it every 5 s (each send makes progress, so no
#                  send timeout fires) is dropped at its deadline; the next client gets the file
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
reader=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null
  [ -n "$reader" ] && kill "$reader" 2>/dev/null
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

# Fetches the file as the Perfetto UI does (its Origin) from ${1:-the printed link}, and compares it with ${2:-$trace}.
fetch() {
  local from=${1:-$file_url} want=${2:-$trace}
  curl -sS --max-time 40 -D "$dir/headers" -o "$dir/body" -H 'Origin: https://ui.perfetto.dev' "$from" ||
    fail "curl $from"
  grep -q '^HTTP/1.1 200' "$dir/headers" || fail "not 200"
  grep -qi '^Access-Control-Allow-Origin: https://ui.perfetto.dev' "$dir/headers" || fail "no CORS header"
  grep -qi '^Cache-Control: no-cache' "$dir/headers" || fail "no Cache-Control: no-cache"
  cmp -s "$dir/body" "$want" || fail "the body differs from $want"
}

# The status code of one request ($1 method, $2 url, then curl's own options), which must leave the server running.
status_of() {
  local method=$1 url=$2
  shift 2
  code=$(curl -s --max-time 10 -o /dev/null -D "$dir/headers" -w '%{http_code}' -X "$method" "$@" "$url")
  kill -0 "$pid" 2>/dev/null || fail "ladder-trace open ended after $method $url $*"
  echo "$code"
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
    ui='Origin: https://ui.perfetto.dev'
    for req in "GET /other.json" "POST /status" "GET /"; do
      set -- $req
      code=$(status_of "$1" "http://127.0.0.1:$port$2" -H "$ui")
      [ "$code" = 404 ] || fail "$req answered $code, expected 404"
      echo "$req -> $code, still serving"
    done
    code=$(status_of GET "$file_url")
    [ "$code" = 403 ] || fail "GET of the file without an Origin answered $code, expected 403"
    echo "GET of the file without an Origin -> $code, still serving"
    code=$(status_of GET "$file_url" -H 'Origin: https://example.com')
    [ "$code" = 403 ] || fail "GET of the file from another Origin answered $code, expected 403"
    echo "GET of the file from https://example.com -> $code, still serving"
    code=$(status_of GET "$file_url" -H "$ui" -H 'Host: rebound.example.com:9001')
    [ "$code" = 403 ] || fail "GET under another Host answered $code, expected 403"
    echo "GET of the file with Host rebound.example.com -> $code, still serving"
    code=$(status_of OPTIONS "$file_url" -H "$ui" -H 'Access-Control-Request-Method: GET' \
      -H 'Access-Control-Request-Private-Network: true')
    [ "$code" = 204 ] || fail "the UI's OPTIONS answered $code, expected 204"
    grep -qi '^Access-Control-Allow-Private-Network: true' "$dir/headers" || fail "no private-network permission"
    echo "OPTIONS from the UI -> $code with Access-Control-Allow-Private-Network, still serving"
    fetch
    expect_exit 0
    echo "then the file, and it exited 0"
    ;;
  decoded)
    cp "$trace" "$dir/bs=64+fused.json"
    start "$exe" open --no-browser "$dir/bs=64+fused.json"
    case "$file_url" in *bs%3D64%2Bfused.json) ;; *) fail "the link does not encode the name: $file_url" ;; esac
    fetch "http://127.0.0.1:$port/bs=64+fused.json" "$dir/bs=64+fused.json"
    expect_exit 0
    echo "fetched as /bs=64+fused.json (the link says ${file_url##*/}); ladder-trace open exited 0"
    ;;
  gzip)
    gzip -c "$trace" >"$dir/trace.json.gz"
    start "$exe" open --no-browser "$dir/trace.json.gz"
    fetch "" "$dir/trace.json.gz"
    grep -qi '^Content-Type: application/gzip' "$dir/headers" || fail "not served as application/gzip"
    expect_exit 0
    echo "served as $(grep -i '^Content-Type' "$dir/headers" | tr -d '\r'), byte for byte; ladder-trace open exited 0"
    ;;
  slow)
    # 64 MB (the trace, then spaces: a trace still): more than the loopback's socket buffers hold, so the send waits on
    # the client that reads nothing.
    { cat "$trace"; head -c 67108864 /dev/zero | tr '\0' ' '; } >"$dir/big.json"
    start "$exe" open --no-browser "$dir/big.json"
    exec 3<>"/dev/tcp/127.0.0.1/$port" || fail "connect"
    printf 'GET /big.json HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nOrigin: https://ui.perfetto.dev\r\n\r\n' "$port" >&3
    (while dd bs=65536 count=1 <&3 >/dev/null 2>&1; do sleep 5; done) &
    reader=$!
    sleep 1
    fetch "" "$dir/big.json"
    expect_exit 0
    echo "a client that read nothing was dropped at its deadline; the next fetched 64 MB; ladder-trace open exited 0"
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
