#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The tree's C and C++ files as .clang-format lays them out.
#   tests/format-check.sh          fail (1), naming each file, if one would change
#   tests/format-check.sh --fix    rewrite them in place (make format)
# The layout is clang-format 14's (Debian 12, tests/deps.sh installs it);
# another major version may lay some lines out differently, so the check
# then says so and passes rather than failing on the formatter's drift.
set -u
cd "$(dirname "$0")/.."
want=14
if ! command -v clang-format >/dev/null 2>&1; then
	echo "format-check: clang-format is not installed (tests/deps.sh installs it)" >&2
	exit 2
fi
have=$(clang-format --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cc')
if [ "${1:-}" = --fix ]; then
	clang-format -i "${files[@]}"
	echo "format: ${#files[@]} files laid out by clang-format $have"
	exit 0
fi
if [ "$have" != "$want" ]; then
	echo "format-check: skipped: clang-format $have here, the tree is laid out by $want"
	exit 0
fi
bad=()
for f in "${files[@]}"; do
	clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
	echo "format-check: ${#bad[@]} files are not as .clang-format lays them out (make format):"
	printf '  %s\n' "${bad[@]}"
	exit 1
fi
echo "format-check: ${#files[@]} files as .clang-format lays them out"
