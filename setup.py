"""Build hook: compile the engine and the bots' hot paths with mypyc, or install pure.

Everything about the package is in ``pyproject.toml``; this file only adds the compiled
extension modules. The ``.py`` files stay the one source: mypyc turns the modules listed in
:data:`COMPILED` into C extensions installed beside them, and :mod:`nertz._form` decides at import
which form loads. Where compilation is impossible (no C compiler, no Python headers, a module
mypyc refuses) the install still succeeds, pure, after one warning line. ``NERTZ_COMPILE=0``
skips compilation on purpose (``make dev``: an editable install whose edits show at once).

After a successful build the manifest ``nertz/_compiled.json`` records each compiled source's
SHA-256; a compiled module whose source no longer matches is never loaded (see ``nertz._form``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
# The module list lives in the package (nertz/_form.py) so the import-time check and the build
# name the same modules; it is read as a file, without importing the package.
_form_globals: dict[str, Any] = {"__name__": "nertz._form"}
exec((ROOT / "nertz" / "_form.py").read_text(), _form_globals)
COMPILED: tuple[str, ...] = _form_globals["COMPILED"]
MANIFEST: str = _form_globals["MANIFEST"]


def _warn(why: str) -> None:
    print(f"warning: nertz installs pure Python (slower): {why}", file=sys.stderr)


def _source(module: str) -> Path:
    return ROOT / (module.replace(".", "/") + ".py")


_BUILDS = frozenset({"build", "build_ext", "bdist_wheel", "editable_wheel", "develop", "install"})
"""The setup commands that build extensions: pip also runs this file for metadata alone, where
compiling (and warning) would only repeat the work."""


def _extensions() -> list[Any]:
    if os.environ.get("NERTZ_COMPILE", "1") == "0" or not _BUILDS.intersection(sys.argv[1:]):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        _warn("mypyc is not installed")
        return []
    try:
        return list(
            mypycify(
                # Imports of modules outside the build that need absent extras (the ai
                # extra's numpy, reached through the bots' registry) are followed silently:
                # a plain install has no numpy, and the compiled modules never use it.
                [str(_source(m).relative_to(ROOT)) for m in COMPILED]
                + ["--follow-imports=silent"],
                opt_level="3",
                group_name="nertz",
            )
        )
    except BaseException as exc:  # mypyc reports refusals with SystemExit
        _warn(f"mypyc could not compile the engine ({type(exc).__name__}: {exc})")
        return []


class OptionalBuildExt(build_ext):
    """Builds the extensions if it can; on any compiler failure warns once and builds none, so
    the install goes on pure. Writes the source manifest only when every extension built."""

    def run(self) -> None:
        if not self.extensions:
            return
        try:
            super().run()
        except Exception as exc:
            self._discard_outputs()
            _warn(f"the C build failed ({type(exc).__name__}: {str(exc).splitlines()[0]})")
            return
        self._write_manifest()

    def _package_dir(self) -> Path:
        if self.inplace:
            return ROOT / "nertz"
        return Path(self.build_lib) / "nertz"

    def _discard_outputs(self) -> None:
        for ext in self.extensions:
            path = Path(self.get_ext_fullpath(ext.name))
            path.unlink(missing_ok=True)
        (self._package_dir() / MANIFEST).unlink(missing_ok=True)

    def _write_manifest(self) -> None:
        import sysconfig

        hashes = {m: hashlib.sha256(_source(m).read_bytes()).hexdigest() for m in COMPILED}
        manifest = {
            "python": sysconfig.get_config_var("EXT_SUFFIX"),
            "sources": hashes,
        }
        target = self._package_dir() / MANIFEST
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")

    def get_outputs(self) -> list[str]:
        outputs: list[str] = list(super().get_outputs())
        if self.extensions:
            outputs.append(str(self._package_dir() / MANIFEST))
        return outputs


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
