#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make install / make uninstall (issue 16): tests/install-check.sh, with the
# installed CLI's `splitfs run` managing a directory on the test image.
. "$(dirname "$0")/../lib.sh"
"$(dirname "$0")/../install-check.sh" "$WORK" || die "the install check failed (its first FAIL line says why)"
