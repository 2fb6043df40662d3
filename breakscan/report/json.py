"""JSON reporter: the documented, versioned document of docs/json-schema.md."""

from __future__ import annotations

import json

from ..model.result import ScanResult


def to_json(result: ScanResult) -> str:
    return json.dumps(result.to_dict(), indent=2, default=str) + "\n"

