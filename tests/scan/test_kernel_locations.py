"""Kernel findings keep their file and line whatever the file is called (issue 33 §8): a model
file whose path holds a quote, spaces, a backslash and non-ASCII letters, scanned with
``--kernels`` for real (one cold Inductor compile), its finding at the sort's line in the
result, the GitHub annotations, SARIF, the HTML page and the terminal."""

from __future__ import annotations

import io
import json
import re
from urllib.parse import quote

from markupsafe import escape
from rich.console import Console

from breakscan import scan
from breakscan.runs.gate import evaluate
from breakscan.options import GateOptions
from breakscan.report import render_file_format
from breakscan.report.html import to_html
from breakscan.report.terminal import render_runs
from breakscan.model.result import ModelRun

from conftest import SAMPLES, locate


def test_a_quote_and_odd_characters_in_the_path_keep_the_kernel_findings_lines(tmp_path):
    folder = tmp_path / 'a "b" ü'
    folder.mkdir()
    model = folder / 'my"model \\ ü.py'
    model.write_text((SAMPLES / "kernels.py").read_text())
    _, line = locate("v, _ = torch.sort(h, dim=-1)", model)
    result = scan(f"{model}:SortForMax", input_shapes=["4,64"], kernels=True)
    (finding,) = result.kernel_findings
    assert (finding.rule, finding.file, finding.line) == ("BS201", str(model), line)
    (fallback,) = [k for k in result.graphs[0].inductor.kernels if k.kind == "fallback"]
    assert fallback.lines == [f"{model}:{line}"]

    result.gate = evaluate(result, GateOptions(fail_on=("fallback",)))
    run = ModelRun(target=f"{model}:SortForMax", result=result, exit_code=1)
    github = render_file_format([run], "github", single=False)
    path = str(model).replace(":", "%3A").replace(",", "%2C")
    assert f"::error file={path},line={line},title=BS201 kernel%3A fallback::" in github

    sarif = json.loads(render_file_format([run], "sarif", single=False))
    (found,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "BS201"]
    place = found["locations"][0]["physicalLocation"]
    assert place["artifactLocation"]["uri"] == quote(str(model))
    assert place["region"]["startLine"] == line

    page = to_html([run])
    assert f"{escape(model.name)}:{line}</code> — " in page  # the findings list
    row = re.search(rf'<tr id="model-1-f\d+-L{line}"[^>]*>(.*?)</tr>', page, re.S)  # source
    assert '<a class="kchip finding" href="#model-1-kf-0"' in row[1]

    console = Console(record=True, width=110, file=io.StringIO())
    render_runs([run], console)
    text = console.export_text()
    assert f"BS201 fallback-kernel · graph 1 · {model}:{line}" in " ".join(text.split())
    assert f"{model.name}:{line}" in text  # the kernel table's "your lines", uncut
