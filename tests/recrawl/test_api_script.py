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
    assert set(by_name) == set(fields)
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
            summary = run_recrawl({str(wl)!r}, column="url", out={str(tmp_path / "a")!r}, delay=0, workers=4,
                                  resolve={{"*.test": "127.0.0.1"}}, no_extract=True)
            record = next(iter(ops.get("recrawl.run")(source={str(wl)!r}, column="url",
                                                       out={str(tmp_path / "b")!r}, delay=0, workers=4,
                                                       resolve={{"*.test": "127.0.0.1"}})))
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
