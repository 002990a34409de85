#!/usr/bin/python3
"""Writes one Qdrant search body per query vector of an .fbin file (JSON lines).
usage: fbin_to_bodies.py QUERIES.fbin OUT.jsonl [--limit 10]"""
import argparse
import json
import struct

ap = argparse.ArgumentParser()
ap.add_argument("fbin")
ap.add_argument("out")
ap.add_argument("--limit", type=int, default=10)
a = ap.parse_args()
with open(a.fbin, "rb") as f:
    n, d = struct.unpack("<ii", f.read(8))
    with open(a.out, "w") as out:
        for _ in range(n):
            v = struct.unpack(f"<{d}f", f.read(4 * d))
            out.write(json.dumps({"vector": [round(x, 6) for x in v], "limit": a.limit}) + "\n")
print(f"{n} bodies of dim {d} -> {a.out}")
