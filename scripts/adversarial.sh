#!/usr/bin/env bash
# Run ratelab's catalogue of adversarial inputs through the real binary and count the
# outcomes: scripts/adversarial.sh [-fast] [-run REGEXP] [-jobs N] [-timeout D] [-memory BYTES] [-v]
#
# Each case runs with a time limit (default 20s) and an address-space limit (prlimit --as,
# default 3 GiB); the report gives the counts per class and per category, then every outcome
# that is not ran/refused/budget with the command that reproduces it. Exit 1 when one is a
# panic, an internal error, a timeout, memory exhausted or a clobbered output.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./internal/adversarial "$@"
