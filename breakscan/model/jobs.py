"""What the parent asks of a child process and what comes back, as typed records: one request
per job, serialised here and only here.

A request crosses the process boundary as ``{"type": name, "fields": {...}}`` (JSON written by
the parent); the child rebuilds the record with :func:`request_from_json` and hands the job a
typed value, so no job reads a request by string keys. Results come back through
``model/jsondata.py`` like every other record (``OutputsCheck`` is in ``verdicts.py``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Union

from ..options import ProgramOptions, ScanOptions
from ..rules.model import Switch
from .verdicts import FixMetrics


@dataclass(frozen=True)
class ScanRequest:
    """One target's scan (``breakscan scan``, ``check``, each side of ``compare``)."""

    target: str
    options: ScanOptions

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "options": self.options.to_dict()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ScanRequest":
        return cls(str(data["target"]), ScanOptions.from_dict(data["options"]))


@dataclass(frozen=True)
class ProgramRequest:
    """A whole program run unchanged while its compiled regions are recorded (``breakscan run``)."""

    program: ProgramOptions

    def to_json(self) -> dict[str, Any]:
        return {"program": self.program.to_dict()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ProgramRequest":
        return cls(ProgramOptions.from_dict(data["program"]))


@dataclass(frozen=True)
class OutputsRequest:
    """Both models of ``breakscan compare`` loaded in one process: their outputs compared and
    both timed interleaved; answered by an ``OutputsCheck``."""

    a: str
    b: str
    options: ScanOptions

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "options": self.options.to_dict()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "OutputsRequest":
        return cls(str(data["a"]), str(data["b"]), ScanOptions.from_dict(data["options"]))


@dataclass(frozen=True)
class FixRequest:
    """One planned fix applied to the target, rescanned, its outputs compared and timed
    (``--fix``); ``fixes/plan.FixPlan.request`` writes it. ``kind`` says which of the other
    fields the child applies: a setting's ``config``, ``dynamic``, a source fix's (or a library
    patch's) ``file`` and ``new_source``, a ``switch``, or ``constants`` (class -> attributes
    made Python values)."""

    target: str
    options: ScanOptions
    kind: str
    fix_id: str
    config: tuple[tuple[str, Any], ...] = ()
    dynamic: bool | None = None
    file: str | None = None
    new_source: str | None = None
    switch: Switch | None = None
    constants: tuple[tuple[str, tuple[str, ...]], ...] = ()
    before: FixMetrics | None = None  # the original's metrics, for deciding to time
    # A source fix that changes what the model computes where it draws random numbers (its
    # rewrite says what): judged against its own eager run when the fixed model draws.
    changes: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "options": self.options.to_dict(), "kind": self.kind,
                "fix_id": self.fix_id, "config": [list(c) for c in self.config],
                "dynamic": self.dynamic, "file": self.file, "new_source": self.new_source,
                "switch": self.switch.to_json() if self.switch else None,
                "constants": {c: list(a) for c, a in self.constants},
                "before": asdict(self.before) if self.before else None,
                "changes": self.changes}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "FixRequest":
        return cls(str(data["target"]), ScanOptions.from_dict(data["options"]),
                   str(data["kind"]), str(data["fix_id"]),
                   tuple((str(k), v) for k, v in data["config"]), data["dynamic"],
                   data["file"], data["new_source"],
                   Switch.from_json(data["switch"]) if data["switch"] else None,
                   tuple((str(c), tuple(map(str, a))) for c, a in data["constants"].items()),
                   FixMetrics(**data["before"]) if data["before"] else None,
                   str(data["changes"]) if data.get("changes") is not None else None)


JobRequest = Union[ScanRequest, ProgramRequest, OutputsRequest, FixRequest]
REQUESTS: dict[str, type] = {cls.__name__: cls for cls in
                             (ScanRequest, ProgramRequest, OutputsRequest, FixRequest)}


def request_to_json(request: JobRequest) -> dict[str, Any]:
    """A request as the JSON the child reads."""
    name = type(request).__name__
    if REQUESTS.get(name) is not type(request):
        raise TypeError(f"{name} is not a job request")
    return {"type": name, "fields": request.to_json()}


def request_from_json(data: dict[str, Any]) -> JobRequest:
    """The request the parent wrote, rebuilt as its record."""
    return REQUESTS[data["type"]].from_json(data["fields"])  # type: ignore[no-any-return]
