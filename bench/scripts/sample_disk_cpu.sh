#!/usr/bin/env bash
# Samples one block device's completed reads and writes and the CPU time
# split once a second, until killed: what bounds a benchmark running beside
# it (the disk's operations a second against fio's ceiling, or the cores).
# usage: bench/scripts/sample_disk_cpu.sh DEVICE OUT   (DEVICE as in /proc/diskstats, e.g. vda)
# Each line: unix time, reads, writes, sectors read, sectors written (512 B;
# cumulative, /proc/diskstats), then user, nice, system, idle, iowait
# (cumulative ticks, /proc/stat). bench/scripts/summarize_disk_cpu.py turns
# them into rates.
set -euo pipefail
device=$1; out=$2
grep -qw "$device" /proc/diskstats || { echo "no device $device in /proc/diskstats" >&2; exit 2; }
while true; do
  d=$(awk -v dev="$device" '$3==dev {print $4, $8, $6, $10}' /proc/diskstats)
  c=$(awk '$1=="cpu" {print $2, $3, $4, $5, $6}' /proc/stat)
  echo "$(date +%s.%N | cut -c1-14) $d $c"
  sleep 1
done > "$out"
