"""Builds strata._strata with the repository's CMake project for pip.

pyproject.toml holds the metadata; this file only supplies the version (from
the top-level CMakeLists.txt, so there is one place for it) and a build_ext
that runs CMake instead of compiling sources itself: the extension links the
static libraries of the whole C++ tree.

STRATA_CMAKE_BUILD_DIR picks the CMake build directory (give an absolute
path: pip runs this file from bindings/python; default
<repo>/build/pip). An already configured directory is built as it is
configured (only the `_strata` target), provided it was configured for this
interpreter's ABI; a new one is configured Release for sys.executable.
"""

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def project_version():
    text = (REPO / "CMakeLists.txt").read_text()
    match = re.search(r"project\(strata\s+VERSION\s+([0-9][0-9.]*)", text)
    if not match:
        raise RuntimeError(f"no 'project(strata VERSION x.y.z' in {REPO / 'CMakeLists.txt'}")
    return match.group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = Path(os.environ.get("STRATA_CMAKE_BUILD_DIR", REPO / "build" / "pip")).resolve()
        if not (build_dir / "CMakeCache.txt").exists():
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            self._run(["cmake", "-S", str(REPO), "-B", str(build_dir), *generator,
                       "-DCMAKE_BUILD_TYPE=Release", "-DSTRATA_BUILD_PYTHON=ON",
                       f"-DSTRATA_PYTHON_EXECUTABLE={sys.executable}"])
        jobs = str(os.cpu_count() or 1)
        self._run(["cmake", "--build", str(build_dir), "--target", "_strata", "--parallel", jobs])
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = build_dir / "python" / "strata" / f"_strata{suffix}"
        if not built.exists():
            found = sorted(p.name for p in (build_dir / "python" / "strata").glob("_strata*"))
            raise RuntimeError(
                f"{built} was not built: {build_dir} holds {found or 'no extension'}; it was "
                f"configured for another interpreter or without pybind11/python3-dev (see "
                f"cmake's output), or set STRATA_CMAKE_BUILD_DIR to a new directory")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)

    @staticmethod
    def _run(command):
        print("+", " ".join(command), flush=True)
        subprocess.run(command, check=True)


setup(
    version=project_version(),
    ext_modules=[Extension("strata._strata", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)
