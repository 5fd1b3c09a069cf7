"""The two forms of the engine: which one loads, when a build may not, and that both agree.

``make test`` runs the whole suite on the compiled form and this module, the golden replays, the
property tests and the SPEC audit once more with ``NERTZ_PURE=1``; ``NERTZ_EXPECT_FORM`` (set by
``make test``) makes a silent fall-back to the other form a failure. The differential test plays
thousands of seeded random rounds through both forms, in two processes, and compares a digest of
every event, refusal, legal-move list and state (``tests/differential_play.py``).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import nertz
from nertz import _form

HERE = Path(__file__).resolve().parent
DIFFERENTIAL_ROUNDS = 1000
"""Rounds each form plays (both at once): 2,000 took over two minutes of a CI run that must stay
well under 30; each round is of one of the presets and option sets, so every ruleset still
plays some 55 rounds."""


def _env(**changes: str | None) -> dict[str, str]:
    env = dict(os.environ)
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def _form_of(**changes: str | None) -> str:
    out = subprocess.run(
        [sys.executable, "-c", "import nertz; print(nertz.FORM)"],
        env=_env(**changes), capture_output=True, text=True, check=True,
    )
    return out.stdout.strip()


def test_the_expected_form_is_loaded() -> None:
    expected = os.environ.get("NERTZ_EXPECT_FORM")
    if not expected:
        pytest.skip("NERTZ_EXPECT_FORM is not set (make test sets it)")
    assert nertz.FORM.split()[0] == expected, nertz.FORM


def test_version_names_the_form() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "nertz.cli", "--version"], capture_output=True, text=True,
        check=True,
    )
    assert out.stdout.strip() == f"nertz {nertz.__version__} (engine: {nertz.FORM})"


def test_nertz_pure_forces_the_pure_modules() -> None:
    code = "import nertz, nertz.engine as e; print(nertz.FORM, e.__file__.endswith('.py'))"
    out = subprocess.run(
        [sys.executable, "-c", code], env=_env(NERTZ_PURE="1"), capture_output=True,
        text=True, check=True,
    )
    assert out.stdout.split() == ["pure", "(NERTZ_PURE=1)", "True"]


def _fake_build(tmp_path: Path) -> Path:
    """A copy of the package's compiled sources with empty "extensions" and a manifest that
    matches them: loading one of those files would fail, so only the pure form can import."""
    package = Path(nertz.__file__).parent
    copy = tmp_path / "nertz"
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    sources = {}
    for name in ("__init__.py", "_form.py"):
        copy.mkdir(exist_ok=True)
        (copy / name).write_bytes((package / name).read_bytes())
    for module in _form.COMPILED:
        rel = Path(*module.split(".")[1:])
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        text = (package / rel).with_suffix(".py").read_bytes()
        (copy / rel).with_suffix(".py").write_bytes(text)
        (copy / rel).with_suffix(suffix).write_bytes(b"")
        sources[module] = hashlib.sha256(text).hexdigest()
    (copy / "sim" / "__init__.py").write_bytes((package / "sim" / "__init__.py").read_bytes())
    (copy / _form.MANIFEST).write_text(json.dumps({"python": suffix, "sources": sources}))
    return copy


def test_a_stale_build_is_refused_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(_form.PURE_ENV, raising=False)
    copy = _fake_build(tmp_path)
    assert _form._why_not_compiled(copy) is None
    (copy / "engine.py").write_text((copy / "engine.py").read_text() + "# edited\n")
    assert _form._why_not_compiled(copy) == "stale: engine.py changed since it was compiled"
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import nertz, nertz.engine as e;"
        "print(nertz.FORM); print(e.__file__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], env=_env(NERTZ_PURE=None),
        capture_output=True, text=True, check=True,
    )
    form, loaded = out.stdout.splitlines()
    assert form == "pure (stale: engine.py changed since it was compiled)"
    assert loaded == str(copy / "engine.py")
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("warning: nertz loads its pure")


def test_a_missing_extension_means_pure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(_form.PURE_ENV, raising=False)
    copy = _fake_build(tmp_path)
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (copy / "sim" / "table.py").with_suffix(suffix).unlink()
    assert _form._why_not_compiled(copy) == f"the compiled sim/table{suffix} is missing"


def test_no_manifest_means_pure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_form.PURE_ENV, raising=False)
    assert _form._why_not_compiled(HERE) == "not compiled"


@pytest.mark.skipif(
    os.environ.get("NERTZ_PURE", "") not in ("", "0"), reason="run once, in the compiled pass"
)
@pytest.mark.skipif(
    _form_of(NERTZ_PURE=None) != "compiled", reason="the compiled engine is not installed"
)
def test_compiled_and_pure_play_alike() -> None:
    script = [sys.executable, str(HERE / "differential_play.py"), str(DIFFERENTIAL_ROUNDS)]
    runs = {
        form: subprocess.Popen(script, env=_env(NERTZ_PURE=pure), stdout=subprocess.PIPE,
                               text=True)
        for form, pure in (("compiled", None), ("pure", "1"))
    }
    out = {form: proc.communicate()[0].splitlines() for form, proc in runs.items()}
    assert all(proc.returncode == 0 for proc in runs.values())
    assert out["compiled"][0] == "compiled"
    assert out["pure"][0] == "pure (NERTZ_PURE=1)"
    assert len(out["compiled"]) == DIFFERENTIAL_ROUNDS + 1
    differ = [a.split()[0] for a, b in zip(out["compiled"][1:], out["pure"][1:], strict=True)
              if a != b]
    assert not differ, f"rounds played differently by the two forms: {differ[:20]}"
