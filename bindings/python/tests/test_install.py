"""`pip install ./bindings/python` into a fresh virtual environment, offline.

The package's setup.py drives the repository's CMake build; the test points it
at the build directory scripts/run_tests.sh has just built
(STRATA_CMAKE_BUILD_DIR), so only the install itself is timed here. The
installed package is then imported from outside the repository with no
PYTHONPATH, and must be the one pip put into the environment.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def _env_without_pythonpath():
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return env


@pytest.mark.skipif("STRATA_CMAKE_BUILD_DIR" not in os.environ,
                    reason="STRATA_CMAKE_BUILD_DIR (a configured CMake build dir) not set; "
                           "scripts/run_tests.sh sets it")
def test_pip_install_into_a_venv(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    python = venv / "bin" / "python"
    env = _env_without_pythonpath()
    # pip runs setup.py in bindings/python: a relative build dir must not
    # change meaning there (it would configure and build a second tree).
    env["STRATA_CMAKE_BUILD_DIR"] = str(Path(os.environ["STRATA_CMAKE_BUILD_DIR"]).resolve())
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-index", "--no-build-isolation",
         "--disable-pip-version-check", str(REPO / "bindings" / "python")],
        env=env, cwd=tmp_path, capture_output=True, text=True)
    assert install.returncode == 0, install.stdout[-4000:] + install.stderr[-4000:]

    script = textwrap.dedent("""
        import json, sys
        import numpy as np
        import strata
        rng = np.random.default_rng(1)
        data = rng.standard_normal((200, 16), dtype=np.float32)
        with strata.Collection(sys.argv[1], dim=16) as col:
            col.add(data)
            ids, dists = col.search(data[:3], k=1)
        print(json.dumps({"file": strata.__file__, "version": strata.__version__,
                          "ids": ids[:, 0].tolist()}))
    """)
    run = subprocess.run([str(python), "-c", script, str(tmp_path / "col")],
                         env=env, cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-4000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert Path(out["file"]).resolve().is_relative_to(venv.resolve()), out["file"]
    assert out["ids"] == [0, 1, 2]
    import strata
    assert out["version"] == strata.__version__

    # The installed files: the extension, the Python files, the stubs.
    files = subprocess.run([str(python), "-m", "pip", "show", "-f", "strata"], env=env,
                           capture_output=True, text=True, check=True).stdout
    for name in ("strata/__init__.py", "strata/_strata.pyi", "strata/py.typed", "strata/_strata"):
        assert name in files, files
