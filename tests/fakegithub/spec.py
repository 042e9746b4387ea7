"""The official OpenAPI subset (../shared/github/openapi-subset.json) as validators.

Used by the contract test to check the fake's responses, and optionally by the fake itself
(`FakeGitHub(request_validator=Spec(...).request_errors)`) to refuse request bodies the real
API would not accept.
"""

from __future__ import annotations

import json
import re
from functools import cached_property
from pathlib import Path
from typing import Any

from openapi_schema_validator import OAS30Validator, oas30_format_checker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

from reviewbot import PROJECT_ROOT

__all__ = ["Spec", "spec_path"]

_BASE = "urn:github-openapi-subset"


def spec_path() -> Path:
    """`<repo root>/../shared/github/openapi-subset.json` (absent outside the shared workspace)."""
    return PROJECT_ROOT.parent / "shared" / "github" / "openapi-subset.json"


def _pointer(*parts: str) -> str:
    return "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


def _drop_unmapped_discriminators(node: Any) -> None:
    """Remove `discriminator`s that have no mapping over inline `oneOf` branches.

    Upstream `checks/create` discriminates on `status` with inline branches; a validator then
    looks for `#/components/schemas/<value>`, which does not exist. The `oneOf` alone already
    says what the discriminator means (completed needs a conclusion), so it stays.
    """
    if isinstance(node, dict):
        disc = node.get("discriminator")
        if (
            isinstance(disc, dict)
            and "mapping" not in disc
            and all("$ref" not in b for b in node.get("oneOf", []))
        ):
            del node["discriminator"]
        for value in node.values():
            _drop_unmapped_discriminators(value)
    elif isinstance(node, list):
        for value in node:
            _drop_unmapped_discriminators(value)


class Spec:
    def __init__(self, path: Path) -> None:
        self.doc: dict[str, Any] = json.loads(path.read_text())
        _drop_unmapped_discriminators(self.doc)
        resource = Resource.from_contents(self.doc, default_specification=DRAFT4)
        self.registry: Registry[Any] = Registry().with_resource(_BASE, resource)

    @cached_property
    def operations(self) -> dict[str, tuple[str, str, dict[str, Any]]]:
        """operationId -> (method, path template, operation object)."""
        ops = {}
        for path, item in self.doc["paths"].items():
            for method, op in item.items():
                if isinstance(op, dict) and "operationId" in op:
                    ops[op["operationId"]] = (method.upper(), path, op)
        return ops

    def _resolve(self, obj: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in obj:
            node: Any = self.doc
            for part in obj["$ref"].lstrip("#/").split("/"):
                node = node[part.replace("~1", "/").replace("~0", "~")]
            obj = node
        return obj

    def _validator(self, pointer: str) -> OAS30Validator:
        return OAS30Validator(
            {"$ref": f"{_BASE}#/{pointer}"}, registry=self.registry, format_checker=oas30_format_checker
        )

    def response_errors(
        self, operation: str, status: int, body: Any, media: str = "application/json"
    ) -> list[str]:
        """Why `body` is not a valid `status` answer of `operation` (empty = valid)."""
        method, path, op = self.operations[operation]
        responses = op["responses"]
        if str(status) not in responses:
            return [f"status {status} is not documented for {operation} (documented: {sorted(responses)})"]
        response = self._resolve(responses[str(status)])
        content = response.get("content")
        if not content:
            return [] if body in (None, "", b"") else [f"{operation} {status} documents no body"]
        if media not in content:
            return [f"{operation} {status} documents no {media} body"]
        where = self._where(responses[str(status)], ("paths", path, method.lower(), "responses", str(status)))
        pointer = _pointer(*where, "content", media, "schema")
        return [self._describe(e) for e in self._validator(pointer).iter_errors(body)]

    def request_errors(self, operation: str, body: Any) -> list[str]:
        """Why `body` is not a valid JSON request body for `operation` (empty = valid or unknown)."""
        if operation not in self.operations:
            return []
        method, path, op = self.operations[operation]
        if "requestBody" not in op or "application/json" not in op["requestBody"].get("content", {}):
            return []
        pointer = _pointer(
            "paths", path, method.lower(), "requestBody", "content", "application/json", "schema"
        )
        return [self._describe(e) for e in self._validator(pointer).iter_errors(body)]

    @staticmethod
    def _where(node: dict[str, Any], default: tuple[str, ...]) -> tuple[str, ...]:
        ref = node.get("$ref")
        if ref:
            return tuple(p.replace("~1", "/").replace("~0", "~") for p in ref.lstrip("#/").split("/"))
        return default

    @staticmethod
    def _describe(error: Any) -> str:
        where = "/".join(str(p) for p in error.absolute_path) or "<root>"
        message = re.sub(r"\s+", " ", error.message)[:300]
        return f"{where}: {message}"
