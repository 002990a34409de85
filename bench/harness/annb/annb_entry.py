#!/usr/bin/python3
"""Run one of ann-benchmarks' own entry scripts with local datasets registered.

usage (from the root of a copy of the harness):
  python3 annb_entry.py run.py|plot.py|data_export.py [ARGS...]

ann-benchmarks only accepts --dataset names from its DATASETS table and
would try to download anything else. Our HDF5 files (bench/harness/annb/
make_hdf5.py, or a tiny one written by tests/harness/test_annb.py) sit in
data/<name>.hdf5; names not in the table (glove-100-angular-wink340k,
strata-test-*) are added to it here, pointing at a creator that refuses to
fabricate data, before the harness script runs unchanged via runpy. Names the
harness already knows (fashion-mnist-784-euclidean) are left alone: with
data/<name>.hdf5 present the harness opens it without downloading.
This is the harness's documented extension point (a DATASETS entry), made
at run time so the harness copy keeps its files as published.
"""
import glob
import os
import runpy
import sys


def register_local_datasets(data_dir="data"):
    from ann_benchmarks import datasets

    def missing(name):
        def create(out_fn):
            raise FileNotFoundError(f"{out_fn}: local dataset {name} is not there; "
                                    "build it with bench/harness/annb/make_hdf5.py")
        return create

    added = []
    for fn in sorted(glob.glob(os.path.join(data_dir, "*.hdf5"))):
        name = os.path.basename(fn)[: -len(".hdf5")]
        if name not in datasets.DATASETS:
            datasets.DATASETS[name] = missing(name)
            added.append(name)
    return added


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("run.py", "plot.py", "data_export.py"):
        sys.exit(__doc__)
    script = sys.argv[1]
    sys.path.insert(0, os.getcwd())
    register_local_datasets()
    sys.argv = [script] + sys.argv[2:]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
