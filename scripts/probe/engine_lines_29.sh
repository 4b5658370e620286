#!/usr/bin/env bash
# Issue #29's "lines of engine code: at least 900 fewer": the net engine/ lines of the
# commits that served it (the seam and the clean-ups after it), each against its first
# parent, so that the features other issues added meanwhile (gaps, group, every-k, the
# store) do not count either way.
#   bash scripts/probe/engine_lines_29.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# Sessions 18-20 (first-parent commits of main; the seam landed as a run of commits):
seam="92351da 02e0e31 ac225e7 84709c3 9581562 ecada94 4237da4 bcf6338 f8bb665 1fd8c6a
      082768f 33af59b 0b74a91 d44e8a4 e3591d7 38d472e 9145926 ec89d30 d6291a9"
# Session 21: the merges whose subject names the issue.
later=$(git log --first-parent --format=%h --grep='#29)' 35c09d2..HEAD)
total=0
for h in $seam $later; do
  n=$(git diff --numstat "$h^1" "$h" -- engine | awk '{a += $1; d += $2} END {print a - d}')
  printf '%6d  %s\n' "$n" "$(git log -1 --format='%h %s' "$h")"
  total=$((total + n))
done
echo "net engine lines: $total"
