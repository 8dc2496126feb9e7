#!/bin/bash
cat /proc/cmdline
t() { a=${EPOCHREALTIME/./}; "$@" >/dev/null 2>&1; b=${EPOCHREALTIME/./}; echo "$*: $(( (b - a) / 1000 )) ms"; }
for i in 1 2 3; do
  t hackbench -g 2 -f 10 -l 1500
  t hackbench -T -g 2 -f 10 -l 1500
  t hackbench -p -g 2 -f 10 -l 1500
done
cyclictest -q -m -t 1 -i 1000 -l 15000 2>&1 | tail -2
exit 0
