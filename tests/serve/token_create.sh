#!/usr/bin/env bash
# kiln token create: prints a kiln_ token; the registry keeps its sha256 and scope, not the token;
# bad flags and a data path that is a file exit 2 with one line on stderr.
#
#   tests/serve/token_create.sh KILN WORKDIR
set -euo pipefail
kiln=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

token=$("$kiln" token create --data "$work/data" --scope write 2>"$work/err")
[[ $token =~ ^kiln_[0-9a-f]{64}$ ]] || fail "token '$token' is not kiln_ and 64 hex digits"
grep -q "keeps only its sha256" "$work/err" || fail "no note on stderr: $(cat "$work/err")"
second=$("$kiln" token create --data "$work/data" --scope admin 2>/dev/null)
[[ $second != "$token" ]] || fail "two tokens alike"
/usr/bin/python3 - "$work/data/registry.sqlite3" "$token" "$second" <<'PY' || fail "the registry's tokens table"
import hashlib, sqlite3, sys
db, write, admin = sys.argv[1:4]
rows = dict(sqlite3.connect(db).execute("SELECT sha256, scope FROM tokens"))
assert rows == {hashlib.sha256(write.encode()).hexdigest(): "write",
                hashlib.sha256(admin.encode()).hexdigest(): "admin"}, rows
with open(db, "rb") as f:
    assert write.encode() not in f.read(), "the token itself is stored"
PY
expect_2() {  # ARGS...: exit code 2 and one line on stderr
  local code=0
  "$kiln" "$@" >/dev/null 2>"$work/err" || code=$?
  ((code == 2)) || fail "kiln $*: exit code $code, expected 2"
  (($(awk 'END { print NR }' "$work/err") == 1)) || fail "kiln $*: not one line on stderr: $(cat "$work/err")"
}
expect_2 token create --data "$work/data" --scope root
expect_2 token create --scope read
touch "$work/file"
expect_2 token create --data "$work/file" --scope read
expect_2 token
echo "token_create: passed"
