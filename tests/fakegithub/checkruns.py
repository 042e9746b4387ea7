"""Check runs: App-only, `completed` needs a conclusion, at most 50 annotations per call, appended."""

from __future__ import annotations

from typing import Any

from tests.fakegithub.handlers_base import HandlerBase, Problem, Reply, Request
from tests.fakegithub.state import CheckRun, iso

__all__ = ["CheckRunHandlers"]


class CheckRunHandlers(HandlerBase):
    def _check_output(self, run: CheckRun, data: dict[str, Any]) -> None:
        out = data.get("output")
        if out is None:
            return
        if not isinstance(out, dict) or "title" not in out or "summary" not in out:
            raise Problem(422, 'Invalid request.\n\n"title", "summary" weren\'t supplied.')
        for key in ("summary", "text"):
            if len(out.get(key) or "") > 65535:
                raise Problem(
                    422,
                    f"Invalid request.\n\nOnly 65535 characters are allowed; {len(out[key])} were supplied.",
                )
        annotations = out.get("annotations") or []
        if len(annotations) > 50:
            raise Problem(422, "Invalid request.\n\nOnly 50 annotations are allowed per request.")
        for a in annotations:
            need = ("path", "start_line", "end_line", "annotation_level", "message")
            if not isinstance(a, dict) or any(k not in a for k in need):
                raise Problem(422, f"Invalid request.\n\nAnnotations need {', '.join(need)}.")
            if a["annotation_level"] not in ("notice", "warning", "failure"):
                raise Problem(422, "Invalid request.\n\nannotation_level must be notice, warning or failure.")
            if len(a.get("title") or "") > 255:
                raise Problem(422, "Invalid request.\n\nAnnotation titles are limited to 255 characters.")
        run.output = {k: out.get(k, run.output.get(k)) for k in ("title", "summary", "text")}
        run.annotations.extend(annotations)

    def _check_status(self, run: CheckRun, data: dict[str, Any]) -> None:
        conclusion = data.get("conclusion", run.conclusion)
        status = data.get("status", run.status)
        if "conclusion" in data and data["conclusion"] is not None:
            status = "completed"
        if status == "completed" and not conclusion:
            raise Problem(422, 'Invalid request.\n\n`conclusion` is required when `status` is "completed".')
        run.status, run.conclusion = status, conclusion
        if status == "completed" and run.completed_at is None:
            run.completed_at = data.get("completed_at") or iso()

    def _require_checks_write(self, req: Request) -> None:
        tok = req.token
        inst = self.world.installations.get(tok.installation_id) if tok and tok.installation_id else None
        if inst is not None and inst.permissions.get("checks") != "write":
            raise Problem(403, "Resource not accessible by integration")

    def create_check_run(self, req: Request) -> Reply:
        full = self._repo(req)
        data = self._body(req)
        app_id = self._app_of(req)
        if app_id is None and not self.options.allow_pat_check_runs:
            raise Problem(403, "You must authenticate via a GitHub App.")
        self._require_checks_write(req)
        if not data.get("name") or not data.get("head_sha"):
            raise Problem(422, 'Invalid request.\n\n"name", "head_sha" weren\'t supplied.')
        run = CheckRun(
            self.world.next_id(),
            full,
            data["name"],
            data["head_sha"],
            "queued",
            None,
            app_id,
            data.get("started_at") or iso(),
            None,
            data.get("external_id") or "",
            data.get("details_url") or "",
        )
        self._check_status(run, data)
        self._check_output(run, data)
        self.world.check_runs[run.id] = run
        return Reply(201, self.urls.check_run(run))

    def update_check_run(self, req: Request) -> Reply:
        full = self._repo(req)
        run = self.world.check_runs.get(int(req.params["check_run_id"]))
        if run is None or run.repo != full:
            raise Problem(404, "Not Found")
        if run.app_id is not None and self._app_of(req) != run.app_id:
            raise Problem(403, "Resource not accessible by integration")
        self._require_checks_write(req)
        data = self._body(req)
        self._check_status(run, data)
        self._check_output(run, data)
        run.updates += 1
        return Reply(200, self.urls.check_run(run))

    def get_check_run(self, req: Request) -> Reply:
        full = self._repo(req)
        run = self.world.check_runs.get(int(req.params["check_run_id"]))
        if run is None or run.repo != full:
            raise Problem(404, "Not Found")
        return Reply(200, self.urls.check_run(run))

    def list_check_runs_for_ref(self, req: Request) -> Reply:
        """`GET /repos/{o}/{r}/commits/{ref}/check-runs` for a commit sha, `check_name` filtering by
        name; newest first, as GitHub lists them."""
        full = self._repo(req)
        name = req.query.get("check_name")
        runs = [
            self.urls.check_run(r)
            for r in sorted(self.world.check_runs.values(), key=lambda r: -r.id)
            if r.repo == full and r.head_sha == req.params["ref"] and (not name or r.name == name)
        ]
        return Reply(200, {"total_count": len(runs), "check_runs": runs})

    def list_annotations(self, req: Request) -> Reply:
        full = self._repo(req)
        run = self.world.check_runs.get(int(req.params["check_run_id"]))
        if run is None or run.repo != full:
            raise Problem(404, "Not Found")
        return Reply(200, list(run.annotations), paginate=True)
