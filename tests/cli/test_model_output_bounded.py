"""Issue 42: a model that prints megabytes is shown as the bounded end of what it printed
(``-v``: terminal and HTML), and a result keeps at most its last MiB."""

from __future__ import annotations

from conftest import FIXTURES, run_cli

MODEL = FIXTURES / "models" / "prints_megabytes.py"


def test_verbose_shows_the_end_of_megabytes_of_model_output(tmp_path):
    proc = run_cli(f"{MODEL}:Chatty", "--input-shape", "8,16", "-v", "--html",
                   str(tmp_path / "r.html"), timeout=240)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    start = out.index("model output during the scan:")
    shown = out[start:].split("\n")
    assert any(line.startswith("[the first ") and "line(s) left out; the last 200 follow]" in line
               for line in shown)
    assert "LAST LINE OF THE MODEL" in out
    assert "step 0000000 " not in out  # the first lines are left out
    html = (tmp_path / "r.html").read_text()
    assert "LAST LINE OF THE MODEL" in html and len(html) < 2_000_000


def test_a_result_keeps_the_last_mib_of_model_output(tmp_path):
    import json

    proc = run_cli(f"{MODEL}:Chatty", "--input-shape", "8,16", "-f", "json", timeout=240)
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)["model_output"]
    assert printed.startswith("[breakscan kept the last 1,048,576 of ")
    assert printed.rstrip().endswith("LAST LINE OF THE MODEL")
    assert len(printed) < 1_100_000
