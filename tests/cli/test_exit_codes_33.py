"""Issue 33 items 11, 12, 13 and 17, through the real CLI: the model's failure is exit 3 naming
its line (also when torch reaches the model's code: ``hasattr``, ``eval()``, an Inductor lowering
the model replaced), a report stdout refuses is exit 2, a forward that needs gradients is told
about the scan's mode, and an error line escapes the control characters it repeats."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT, SAMPLES, TORCH_RELEASE, locate, run_cli, shown

CASES = FIXTURES / "models" / "exit_cases_33.py"


def _line(text: str) -> int:
    return locate(text, CASES)[1]


@pytest.mark.parametrize("name, args, message, at", [
    ("KeyErrorGetattr", [], "during explain, the model failed: KeyError: "
     "'_torchdynamo_orig_callable'", "raise KeyError(name)  # not an AttributeError: hasattr() "
     "lets it through"),
    ("RefusesEval", [], "during load, the model failed: RuntimeError: RefusesEval cannot change "
     "its training mode", 'raise RuntimeError("RefusesEval cannot change its training mode")'),
    ("PatchesLowering", ["--kernels"], "during kernels, the model called sys.exit(0)",
     "sys.exit(0)"),
])
def test_the_models_failure_reached_through_torch_is_exit_3_at_its_line(name, args, message, at):
    proc = run_cli(f"{CASES}:{name}", "-s", "2,4", "-q", *args, timeout=300)
    if name == "KeyErrorGetattr" and not TORCH_RELEASE.startswith("2.13."):
        # torch 2.14 no longer asks the model for `_torchdynamo_orig_callable`: it compiles
        assert proc.returncode == 0 and "graphs 1 · root-cause breaks 0" in proc.stdout
        return
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == \
        f"breakscan: error: {message} at {shown(CASES)}:{_line(at)}"  # cwd-relative


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [
    [f"{SAMPLES / 'tensor_branch.py'}:TensorIf", "-s", "8,16", "-f", "json"],
    [f"{SAMPLES / 'tensor_branch.py'}:TensorIf", "-s", "8,16"],
    ["rules"],
    ["--help"],
], ids=["scan json", "scan terminal", "rules", "help"])
def test_a_report_stdout_refuses_is_exit_2(args):
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "breakscan", *args], cwd=ROOT, stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == ("breakscan: error: cannot write the report to stdout: No space left "
                           "on device\n")


@pytest.mark.parametrize("name, shape, message", [
    ("PINN", "2,1", "element 0 of tensors does not require grad"),
    ("HookOnActivation", "2,4", "cannot register a hook on a tensor that doesn't require "
                                "gradient"),
])
def test_a_forward_that_needs_gradients_is_told_about_no_grad(name, shape, message):
    proc = run_cli(f"{CASES}:{name}", "-s", shape, "-q", timeout=300)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"breakscan: error: {name}.forward failed: RuntimeError: ")
    assert message in line
    assert line.endswith(" — breakscan calls the model in eval mode under torch.no_grad() unless "
                         "--train is given; a forward that needs gradients scans with --train")
    trained = run_cli(f"{CASES}:{name}", "-s", shape, "-q", "--train", timeout=300)
    assert trained.returncode == 0, trained.stderr


def test_run_escapes_the_control_characters_of_the_programs_error(tmp_path):
    script = tmp_path / "shouts.py"
    script.write_text('raise RuntimeError("bad \\x1b[31mred\\x00nul")\n')
    proc = run_cli("run", str(script), timeout=300)
    assert proc.returncode == 3
    last = proc.stderr.strip().splitlines()[-1]
    assert last == (f"breakscan: error: the program raised RuntimeError: bad \\x1b[31mred\\x00nul "
                    f"at {shown(script)}:1 in <module>")
