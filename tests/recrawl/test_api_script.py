"""One way in: the CLI and a script both go through the ``recrawl.run`` operation, whose defaults are
RunParams's; a script with the ``if __name__ == "__main__"`` guard the docs show runs the pipeline."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from ccrawl import ops
from ccrawl.recrawl.params import RunParams
from ccrawl.testing.synthweb import SynthWeb

REPO = Path(__file__).resolve().parents[2]


def test_the_operation_takes_every_runparams_field_with_its_default() -> None:
    op = ops.get("recrawl.run")
    assert op.writes
    by_name = {p.name: p for p in op.params}
    fields = {f.name: f for f in dataclasses.fields(RunParams)}
    from ccrawl.ops.caps import Cap
    from ccrawl.ops.recrawl import FROM_CONTEXT

    # the front end's per-invocation fields come from the injected context, never a keyword
    assert set(by_name) == set(fields) - set(FROM_CONTEXT) | {"ctx"}
    assert by_name["ctx"].cap is Cap.INJECTED
    assert by_name["source"].required
    for name in ("workers", "delay", "queue_mb", "shard_size", "format", "batch"):
        assert by_name[name].default == fields[name].default, name


def test_cli_flag_defaults_are_the_library_defaults() -> None:
    from ccrawl.cli.recrawl_run import run

    defaults = {p.name: p.default for p in run.params}
    assert defaults["workers"] == RunParams.__dataclass_fields__["workers"].default
    assert defaults["queue_mb"] == RunParams.__dataclass_fields__["queue_mb"].default
    assert defaults["delay"] == f"{RunParams.__dataclass_fields__['delay'].default:g}s"


def test_a_script_with_the_spawn_guard_runs_the_pipeline_through_the_operation(
    web: SynthWeb, tmp_path: Path, write_worklist: Any
) -> None:
    wl = write_worklist(tmp_path / "wl", web.page_urls()[:8], parts=1)
    script = tmp_path / "crawl.py"
    script.write_text(textwrap.dedent(f"""
        import json

        from ccrawl import ops
        from ccrawl.recrawl import run_recrawl


        def main():
            # resolve= in the CLI's list form, and as one string (a dict works too)
            summary = run_recrawl({str(wl)!r}, column="url", out={str(tmp_path / "a")!r}, delay=0, workers=4,
                                  resolve=["*.test=127.0.0.1"], no_extract=True)
            record = next(iter(ops.get("recrawl.run")(source={str(wl)!r}, column="url",
                                                       out={str(tmp_path / "b")!r}, delay=0, workers=4,
                                                       resolve="*.test=127.0.0.1")))
            print(json.dumps({{"api": summary.fetched, "op": record["fetched"], "done": record["done"]}}))


        if __name__ == "__main__":  # the pipeline's processes are spawned: they re-import this file
            main()
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"api": 8, "op": 8, "done": True}
    assert "Traceback" not in proc.stderr


def test_a_script_without_the_guard_fails_saying_what_to_write(tmp_path: Path, write_worklist: Any) -> None:
    wl = write_worklist(tmp_path / "wl", ["http://127.0.0.1:9/x"], parts=1)
    script = tmp_path / "noguard.py"
    script.write_text(f"from ccrawl.recrawl import run_recrawl\nrun_recrawl({str(wl)!r}, column='url', delay=0, "
                      "workers=2, timeout=2, extractors=1)\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp_path)
    assert proc.returncode != 0
    assert 'if __name__ == "__main__":' in proc.stderr
    assert "leaked shared_memory" not in proc.stderr, "the rings are unlinked when the run fails"


def test_a_script_without_the_guard_is_refused_once_before_any_process_starts(
    tmp_path: Path, write_worklist: Any
) -> None:
    # It used to print four tracebacks: one per spawned process re-importing the script, then the parent's.
    wl = write_worklist(tmp_path / "wl", ["http://127.0.0.1:9/x"], parts=1)
    script = tmp_path / "noguard.py"
    script.write_text(textwrap.dedent(f"""
        from ccrawl.recrawl import run_recrawl

        def crawl():
            return run_recrawl({str(wl)!r}, column="url", out={str(tmp_path / "out")!r}, delay=0, workers=2,
                               timeout=2, extractors=1)

        crawl()
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.count("Traceback") == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last == ("ccrawl.errors.UsageError: recrawl run is called at the top level of noguard.py (line 8): the "
                    "recrawl pipeline's processes are spawned and re-import the script, so call it under "
                    '`if __name__ == "__main__":` (see docs/recrawl.md)')
    assert "died with exit code" not in proc.stderr and not (tmp_path / "out").exists()


def test_the_guard_check_reads_the_script_as_python() -> None:
    from ccrawl.recrawl.mainguard import line_is_guarded

    source = textwrap.dedent("""
        import x
        x.run()
        if __name__ == "__main__":
            x.run()
        if "__main__" != __name__:
            pass
        else:
            x.run()
    """)
    assert [line_is_guarded(source, n) for n in (3, 5, 9)] == [False, True, True]
    assert line_is_guarded("def (", 1) is None


def test_resolve_takes_a_dict_the_cli_list_or_one_string_and_names_a_malformed_entry(tmp_path: Path) -> None:
    import pytest

    from ccrawl.errors import UsageError

    def table(value: Any) -> Any:
        return RunParams(source=str(tmp_path), resolve=value).resolve

    want = {"*.test": "127.0.0.1", "a.example": "::1"}
    assert table({"*.test": "127.0.0.1", "A.example": "::1"}) == want
    assert table(["*.test=127.0.0.1", "a.example=::1"]) == want
    assert table(("*.test=127.0.0.1",)) == {"*.test": "127.0.0.1"}
    assert table("*.test=127.0.0.1") == {"*.test": "127.0.0.1"}
    assert table([]) == {} and table({}) == {}
    for bad, says in [(["*.test"], "resolve '*.test': write it as PATTERN=IP"),
                      ("*.test=localhost", "'localhost' is not an IP address"),
                      ([("*.test", "127.0.0.1")], "each entry is a string PATTERN=IP"),
                      ({"*.test": 1}, "map a host pattern to an IP"),
                      (7, "give a dict")]:
        with pytest.raises(UsageError) as caught:
            table(bad)
        assert says in str(caught.value) and "\n" not in str(caught.value), (bad, str(caught.value))
