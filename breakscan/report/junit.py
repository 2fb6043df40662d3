"""JUnit XML: one testcase per model and gate check, readable by common CI servers."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ..model.result import ModelRun
from .literal import printable

# Characters XML 1.0 cannot hold at all (control characters, lone surrogates, U+FFFE/FFFF).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """Text any XML reader accepts, shown as it is: a control character (bidi overrides
    included: :func:`printable`) or one XML cannot hold is written as \\xNN / \\uNNNN."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", printable(text))


def _clean(element: ET.Element) -> ET.Element:
    """Every attribute and text of the tree made XML-safe (a model's message can hold ESC)."""
    for node in element.iter():
        node.attrib = {k: xml_safe(v) for k, v in node.attrib.items()}
        if node.text:
            node.text = xml_safe(node.text)
    return element


def _break_lines(run: ModelRun) -> str:
    if run.result is None:
        return ""
    return "\n".join(f"{b.category} {b.file}:{b.line}: {b.code}\n  fix: {b.suggestion}"
                     for b in run.result.breaks)


def to_junit(runs: list[ModelRun]) -> str:
    suites = ET.Element("testsuites", name="breakscan")
    for run in runs:
        suite = ET.SubElement(suites, "testsuite", name=run.target)
        cases = failures = errors = 0
        if run.error is not None:  # partial findings still go to system-out
            case = ET.SubElement(suite, "testcase", classname=run.target, name="scan")
            if run.result is not None:
                ET.SubElement(case, "system-out").text = _break_lines(run)
            error = ET.SubElement(case, "error", message=run.error or "scan failed",
                                  type=f"exit {run.exit_code}")
            error.text = run.error or ""
            cases, errors = 1, 1
        else:
            result = run.result
            case = ET.SubElement(suite, "testcase", classname=run.target, name="scan",
                                 time=f"{result.capture_seconds:.3f}")
            out = ET.SubElement(case, "system-out")
            s = result.summary
            out.text = (f"graphs {s.graph_count}, root-cause breaks {s.graph_break_count}, "
                        f"recompiles {s.recompile_count}\n{_break_lines(run)}")
            cases = 1
            for check in (result.gate.checks if result.gate else []):
                cases += 1
                case = ET.SubElement(suite, "testcase", classname=run.target, name=check.name)
                message = f"{check.name}: {check.actual} > limit {check.limit}"
                if not check.passed and run.flaky:  # reported, not failing
                    ET.SubElement(case, "skipped", message=f"flaky: {message}")
                elif not check.passed:
                    failures += 1
                    failure = ET.SubElement(case, "failure", type="gate", message=message)
                    failure.text = check.detail
        if run.expected is not None and run.error is None:
            cases += 1
            failures += _expected_case(suite, run)
        suite.set("tests", str(cases))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
    _clean(suites)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _expected_case(suite: ET.Element, run: ModelRun) -> int:
    """The target against the zoo's expected counts: a failure when that fails the run, a
    skipped case for a flaky target's (reported, not failing); 1 for a failure."""
    check = run.expected
    case = ET.SubElement(suite, "testcase", classname=run.target, name="expected")
    if not check.fails_gate:
        return 0
    message = f"{check.status}: {'; '.join(check.changes)}"
    if run.flaky:
        ET.SubElement(case, "skipped", message=f"flaky: {message}")
        return 0
    ET.SubElement(case, "failure", type="expected", message=message)
    return 1
