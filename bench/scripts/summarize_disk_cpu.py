#!/usr/bin/env python3
"""Rates from bench/scripts/sample_disk_cpu.sh's samples.

usage: summarize_disk_cpu.py SAMPLES [--per-second]

Splits the run into phases by what the disk did (idle, reads only, reads
with writes) and prints, for each phase of at least 3 s, the mean disk
operations a second, MB/s and the CPU split in cores (user, nice: the
collection's background threads run at nice 10, system, iowait, idle).
"""
import statistics
import sys


def rates(path):
    rows = [list(map(float, line.split())) for line in open(path) if line.strip()]
    out = []
    for a, b in zip(rows, rows[1:]):
        dt = b[0] - a[0]
        d = [(y - x) / dt for x, y in zip(a[1:], b[1:])]
        ticks = sum(d[4:9]) or 1.0
        cores = [v / ticks * 2 for v in d[4:9]]  # scaled to 2 cores below
        out.append({"t": b[0] - rows[0][0], "reads": d[0], "writes": d[1],
                    "read_mb": d[2] * 512 / 1e6, "write_mb": d[3] * 512 / 1e6,
                    "cpu": cores})
    return out


def phase_of(r):
    if r["writes"] > 500:
        return "reads+writes" if r["reads"] > 1000 else "writes"
    return "reads" if r["reads"] > 1000 else "idle"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    samples = rates(sys.argv[1])
    ncores = None
    try:
        import os
        ncores = os.cpu_count()
    except Exception:
        pass
    scale = (ncores or 2) / 2
    if "--per-second" in sys.argv:
        for r in samples:
            print(f"{r['t']:7.0f} {phase_of(r):13s} reads/s {r['reads']:8.0f} writes/s "
                  f"{r['writes']:7.0f} MB/s r {r['read_mb']:6.1f} w {r['write_mb']:6.1f}")
    phases = []
    for r in samples:
        p = phase_of(r)
        if phases and phases[-1][0] == p:
            phases[-1][1].append(r)
        else:
            phases.append((p, [r]))
    print("phase          from(s)  secs   reads/s  writes/s  rMB/s  wMB/s   cores: user  nice   sys  iowait idle")
    for p, rs in phases:
        if len(rs) < 3:
            continue
        m = lambda k: statistics.mean(r[k] for r in rs)
        cpu = [statistics.mean(r["cpu"][i] for r in rs) * scale for i in range(5)]
        print(f"{p:13s} {rs[0]['t']:7.0f} {len(rs):5d} {m('reads'):9.0f} {m('writes'):9.0f} "
              f"{m('read_mb'):6.1f} {m('write_mb'):6.1f}        {cpu[0]:5.2f} {cpu[1]:5.2f} "
              f"{cpu[2]:5.2f} {cpu[4]:6.2f} {cpu[3]:5.2f}")


if __name__ == "__main__":
    main()
