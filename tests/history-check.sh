#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks the commit messages made since this check was added: a subject of
# at most 72 columns, then a blank line and a body that says why (one line
# at least). Older history is left as it landed. CI runs it (make
# history-check); it needs the clone's history, so a shallow clone skips.
#   tests/history-check.sh [BASE]   default BASE: the commit that added this file
set -u
cd "$(dirname "$0")/.."
if [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
	echo "history-check: skipped (shallow clone)"
	exit 0
fi
base=${1:-$(git log --diff-filter=A --format=%H -1 -- tests/history-check.sh)}
if [ -z "$base" ]; then
	echo "history-check: skipped (this script is not committed yet)"
	exit 0
fi
bad=0
n=0
# The base itself counts too: it is the first commit under the rule.
for c in $base $(git rev-list --no-merges "$base..HEAD"); do
	n=$((n + 1))
	subject=$(git log -1 --format=%s "$c")
	body=$(git log -1 --format=%b "$c" | grep -cv '^[[:space:]]*$')
	if [ ${#subject} -gt 72 ]; then
		echo "history-check: ${c:0:12}: subject is ${#subject} columns (at most 72): $subject"
		bad=1
	fi
	if [ "$body" -eq 0 ]; then
		echo "history-check: ${c:0:12}: no body saying why: $subject"
		bad=1
	fi
done
[ $bad = 0 ] && echo "history-check: $n commits since ${base:0:12}: subjects <= 72 columns, each with a body"
exit $bad
