#!/usr/bin/env bash
# Health check of the Typesense container (docker-compose.yml mounts this file into it):
#   typesense-health.sh [PORT]   exit 0 only when GET /health answers 200 with {"ok":true}
# Typesense answers 503 {"ok":false} while it cannot serve, so looking for "ok" in the answer passes on
# that too. The typesense image has bash but neither curl nor any JSON tool, so bash speaks HTTP and
# reads the JSON itself: a flat object (what /health returns: "ok" and at times "resource_error"),
# whose last "ok" member wins as in JSON.parse. Anything it cannot read is unhealthy.
set -u
port="${1:-8108}"
[[ $port =~ ^[0-9]{1,5}$ ]] || exit 2

exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
printf 'GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
# HTTP/1.0: the server closes the connection after its answer, which ends the read.
IFS= read -r -d '' -u 3 response || true
exec 3<&-

[[ $response == *$'\r\n\r\n'* ]] || exit 1
status_line=${response%%$'\r\n'*}
body=${response#*$'\r\n\r\n'}
[[ $status_line =~ ^HTTP/1\.[01]\ 200([[:space:]]|$) ]] || exit 1

ws='[[:space:]]*'
string='"((\\.|[^"\\])*)"'
value="(true|false|null|-?[0-9][0-9.eE+-]*|\"(\\\\.|[^\"\\\\])*\")"
rest=$body
[[ $rest =~ ^$ws\{$ws ]] || exit 1
rest=${rest:${#BASH_REMATCH[0]}}
ok=
if [[ $rest =~ ^\}$ws ]]; then
  rest=${rest:${#BASH_REMATCH[0]}}
else
  while :; do
    [[ $rest =~ ^$string$ws:$ws$value$ws([,}])$ws ]] || exit 1
    key=${BASH_REMATCH[1]}
    member_value=${BASH_REMATCH[3]}
    separator=${BASH_REMATCH[5]}
    rest=${rest:${#BASH_REMATCH[0]}}
    # An escaped name could spell "ok" in a way this does not decode: unreadable, so unhealthy.
    [[ $key == *\\* ]] && exit 1
    [[ $key == ok ]] && ok=$member_value
    [[ $separator == '}' ]] && break
  done
fi
# Nothing may follow the object.
[[ -z $rest && $ok == true ]]
