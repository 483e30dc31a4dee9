#!/usr/bin/env bash
# The order `make execute` starts its pages in: slowest first by the previous build's timings at
# the same profile (longest-first keeps the lanes busy to the end: the slowest page no longer
# starts last), pages without a timing first, then the rest in book order.
#
#   bash scripts/page_order.sh PROFILE TIMINGS PAGE [PAGE ...]
set -euo pipefail
profile=$1 timings=$2
shift 2
{
  if [ -f "$timings" ]; then
    # columns: page, profile, seconds, start, end, threads
    awk -F '\t' -v p="$profile" '$2 == p { print $3 "\t" $1 }' "$timings" | sort -t "$(printf '\t')" -k1,1nr | cut -f2 \
      | grep -Fx -f <(printf '%s\n' "$@") > "$timings.order" || true
    printf '%s\n' "$@" | grep -Fvx -f "$timings.order" || true
    cat "$timings.order"
    rm -f "$timings.order"
  else
    printf '%s\n' "$@"
  fi
} | awk '!seen[$0]++'
