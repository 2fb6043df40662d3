"""Every job a child process can run, named in one place as ``module:function`` strings.

A job's name travels in the request (``run_isolated(job, ...)``) and the child imports it from
there, so isolation itself knows no job type. This module holds the names only: it imports no
job module (the parent never loads what only the child runs, torch included).
"""

from __future__ import annotations

from typing import Final

SCAN_JOB: Final[str] = "breakscan.pipeline.scan:scan_job"
"""One target's scan, stage by stage (``breakscan scan``, ``check``, each side of ``compare``)."""

PROGRAM_JOB: Final[str] = "breakscan.pipeline.program_scan:program_job"
"""A program run unchanged while its compiled regions are recorded (``breakscan run``)."""

FIX_JOB: Final[str] = "breakscan.fixes.fix_job:scan_with_fix"
"""One planned fix applied, rescanned, its outputs compared and timed (``--fix``)."""

OUTPUTS_JOB: Final[str] = "breakscan.pipeline.outputs_job:outputs_job"
"""Both models of ``breakscan compare`` on the same inputs: their outputs, timed interleaved."""
