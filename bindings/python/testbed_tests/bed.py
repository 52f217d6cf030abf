"""What `hev2-testbed run` tells a program about the bed (tests/testbed/
README.md, "Web server and hev2-testbed run")."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

ENV = ("HEV2_BED_HTTP_PORT", "HEV2_BED_HTTPS_PORT", "HEV2_BED_CA_FILE", "HEV2_BED_ROWS")


@dataclass(frozen=True)
class Row:
    name: str
    host: str
    winner: str
    family: str
    ideal_ms: float
    tol_ms: float


def in_bed() -> bool:
    return all(k in os.environ for k in ENV)


def ports() -> dict[str, int]:
    return {"http": int(os.environ["HEV2_BED_HTTP_PORT"]), "https": int(os.environ["HEV2_BED_HTTPS_PORT"])}


def ca_file() -> str:
    return os.environ["HEV2_BED_CA_FILE"]


def rows() -> dict[str, Row]:
    out = {}
    for r in json.loads(os.environ["HEV2_BED_ROWS"]):
        out[r["name"]] = Row(r["name"], r["host"], r["winner"], r["family"], r["ideal_ms"], r["tol_ms"])
    return out


def url(scheme: str, row: Row) -> str:
    return f"{scheme}://{row.host}:{ports()[scheme]}/{row.name}"
