"""The parts of SARIF 2.1.0 that reviewbot writes (report.sarif), as typed dicts.

Only the properties reviewbot emits are declared, with the names the OASIS schema gives them (some
are no Python identifiers, hence the functional form).
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from reviewbot.model.executed_json import ExecutedTableFacts

__all__ = [
    "SarifText",
    "SarifLocation",
    "SarifRule",
    "SarifResult",
    "SarifFix",
    "SarifRun",
    "SarifLog",
]


class SarifText(TypedDict):
    text: str


class SarifHelp(TypedDict):
    text: str
    markdown: str


class SarifLevel(TypedDict):
    level: str  # error | warning | note
    enabled: bool  # false for an opt-in rule (checks.registry.OPT_IN): off unless a repository enables it


class SarifRuleProperties(TypedDict):
    severity: str
    tags: list[str]


class SarifRule(TypedDict):
    id: str
    name: str
    shortDescription: SarifText
    fullDescription: SarifText
    help: SarifHelp
    defaultConfiguration: SarifLevel
    properties: SarifRuleProperties


class SarifArtifact(TypedDict):
    uri: str


class SarifRegion(TypedDict):
    startLine: int


class SarifLocation(TypedDict):
    artifactLocation: SarifArtifact
    region: SarifRegion


class SarifPlace(TypedDict):
    physicalLocation: SarifLocation


class SarifRelated(TypedDict):
    id: int
    physicalLocation: SarifLocation
    message: SarifText


class SarifReplacement(TypedDict):
    deletedRegion: SarifRegion
    insertedContent: SarifText


class SarifChange(TypedDict):
    artifactLocation: SarifArtifact
    replacements: list[SarifReplacement]


class SarifFix(TypedDict):
    description: SarifText
    artifactChanges: list[SarifChange]


class SarifResultProperties(TypedDict):
    severity: str
    state: str  # model.round.FindingState's value


class SarifResult(TypedDict):
    ruleId: str
    level: str
    message: SarifText
    locations: list[SarifPlace]
    # `reviewbot/v1` -> the finding's fingerprint (a key no identifier can name)
    partialFingerprints: dict[str, str]
    properties: SarifResultProperties
    ruleIndex: NotRequired[int]
    relatedLocations: NotRequired[list[SarifRelated]]
    fixes: NotRequired[list[SarifFix]]


class SarifDriver(TypedDict):
    name: str
    version: str
    rules: list[SarifRule]


class SarifTool(TypedDict):
    driver: SarifDriver


class SarifRunProperties(TypedDict):
    status: str  # the round's verdict, model.review.Status's value
    summary: dict[str, int]  # open findings per severity
    executedTables: NotRequired[list[ExecutedTableFacts]]  # the truth tables run, without their test file


class SarifRun(TypedDict):
    tool: SarifTool
    results: list[SarifResult]
    properties: SarifRunProperties


SarifLog = TypedDict("SarifLog", {"version": str, "$schema": str, "runs": list[SarifRun]})
