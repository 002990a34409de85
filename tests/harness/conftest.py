"""Shared fixtures of the benchmark-harness tests (tests/harness).

The project's test command runs them as

    PYTHONPATH=$build/python STRATA_REPO=$repo /usr/bin/python3 -m pytest tests/harness

STRATA_REPO names the repository (default: two levels above this file); the
harness snapshots are looked up beside it, in $STRATA_REPO/../shared/peers/.
"""

import importlib.util
import os

import pytest


def _repo():
    return os.path.abspath(os.environ.get("STRATA_REPO") or
                           os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="session")
def strata_repo():
    return _repo()


@pytest.fixture(scope="session")
def strata_pythonpath():
    """The directory holding the strata package the tests should use."""
    spec = importlib.util.find_spec("strata")
    if spec is None or not spec.origin:
        pytest.fail("cannot import strata: run with PYTHONPATH=$build/python")
    return os.path.dirname(os.path.dirname(os.path.abspath(spec.origin)))


def missing_modules(names):
    """The modules of `names` that this interpreter cannot import."""
    return [n for n in names if importlib.util.find_spec(n) is None]
