#!/usr/bin/env bash
# Random 4 KiB O_DIRECT reads (fio, io_uring, queue depth 8) alone and with
# one CPU-bound thread pinned to each CPU in turn, at nice 10 and at
# SCHED_IDLE: shows whether the CPU that takes the disk's completion
# interrupts must be kept free (io/interrupt_cpus.h).
# Usage: bench/scripts/irq_cpu_fio.sh FILE [SECONDS]   (FILE: a large file on the disk)
set -euo pipefail
file=$1
secs=${2:-6}
dev=$(df --output=source "$file" | tail -1 | sed 's#/dev/##')
echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, file $file on $dev"
echo "# interrupts of the disk (/proc/interrupts):"
grep -E "virtio|nvme|ahci|CPU0" /proc/interrupts | sed 's/^/#   /'
run() {
  fio --name=r --filename="$file" --rw=randread --bs=4k --direct=1 --ioengine=io_uring \
      --iodepth=8 --runtime="$secs" --time_based --readonly --output-format=terse 2>/dev/null |
    awk -F';' -v n="$1" '{printf "%-28s IOPS %7d  mean %8.1f us  p99 %s us\n", n, $8, $40, substr($30, index($30, "=") + 1)}'
}
hog() { "$@" sh -c 'while :; do :; done' >/dev/null 2>&1 & echo $!; }
run "alone"
for cpu in $(seq 0 $(($(nproc) - 1))); do
  pid=$(hog taskset -c "$cpu" nice -n 10); sleep 0.3; run "hog nice 10 on CPU $cpu"; kill "$pid"
  pid=$(hog taskset -c "$cpu" chrt -i 0); sleep 0.3; run "hog SCHED_IDLE on CPU $cpu"; kill "$pid"
done
run "alone"
