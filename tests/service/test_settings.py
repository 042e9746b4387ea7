"""Service settings: environment over file over defaults, validation, and secrets kept out of sight."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.errors import UsageError
from reviewbot.settings import Settings, load_settings, redact_url

SECRET = "whsec-do-not-print-7f3a"
TOKEN = "ghp_do_not_print_9b2c"


def test_environment_wins_over_the_file_which_wins_over_defaults(tmp_path: Path) -> None:
    config = tmp_path / "reviewbot.yaml"
    config.write_text(
        "app_id: 12\nprivate_key_path: ~/app.pem\nqueue_url: redis://q:6379/0\nreview_drafts: true\n"
        "job_lease_seconds: 90\n"
    )
    s = load_settings(config, environ={"REVIEWBOT_APP_ID": "34", "REVIEWBOT_DB_URL": "postgresql://db/rb"})
    assert s.app_id == 34  # environment
    assert s.queue_url == "redis://q:6379/0"  # file
    assert s.review_drafts is True and s.job_lease_seconds == 90.0
    assert s.private_key_path == Path("~/app.pem").expanduser()
    assert s.db_url == "postgresql://db/rb"
    assert s.api_url == "https://api.github.com"  # default
    assert s.uses_app


def test_the_config_file_may_come_from_reviewbot_config(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("queue_name: other\n")
    assert load_settings(environ={"REVIEWBOT_CONFIG": str(config)}).queue_name == "other"


def test_state_dir_follows_xdg_state_home(tmp_path: Path) -> None:
    s = load_settings(environ={"XDG_STATE_HOME": str(tmp_path)})
    assert s.state_dir == tmp_path / "reviewbot"
    assert s.queue_file == tmp_path / "reviewbot" / "queue.sqlite3"


def test_repr_and_str_hide_secrets_and_url_passwords() -> None:
    s = load_settings(
        environ={
            "REVIEWBOT_WEBHOOK_SECRET": SECRET,
            "GITHUB_TOKEN": TOKEN,
            "REVIEWBOT_DB_URL": "postgresql://rb:pgpass-secret@db/rb",
            "REVIEWBOT_QUEUE_URL": "redis://:redispass-secret@q:6379/0",
        }
    )
    for text in (repr(s), str(s), f"{s}"):
        assert SECRET not in text and TOKEN not in text
        assert "pgpass-secret" not in text and "redispass-secret" not in text
        assert "webhook_secret='***'" in text and "postgresql://rb:***@db/rb" in text
    assert s.require_secret() == SECRET.encode()


def test_redact_url() -> None:
    assert redact_url("postgresql://u:pw@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert redact_url("redis://:pw@h:6379/0") == "redis://:***@h:6379/0"
    assert redact_url("redis://h:6379/0") == "redis://h:6379/0"
    assert redact_url(None) is None


@pytest.mark.parametrize(
    "environ,needle",
    [
        ({"REVIEWBOT_APP_ID": "abc"}, "REVIEWBOT_APP_ID must be a whole number"),
        ({"REVIEWBOT_REVIEW_DRAFTS": "maybe"}, "REVIEWBOT_REVIEW_DRAFTS must be true or false"),
        ({"REVIEWBOT_JOB_LEASE_SECONDS": "-1"}, "must not be negative"),
        ({"REVIEWBOT_MAX_ATTEMPTS": "0"}, "max_attempts must be at least 1"),
        ({"REVIEWBOT_QUEUE_URL": "amqp://user:pw@h"}, "REVIEWBOT_QUEUE_URL must be redis://"),
    ],
)
def test_bad_values_are_refused_with_the_key_not_the_value(environ: dict[str, str], needle: str) -> None:
    with pytest.raises(UsageError) as err:
        load_settings(environ=environ)
    assert needle in str(err.value)
    assert "pw@" not in str(err.value)


def test_unknown_keys_and_broken_yaml_are_refused_without_quoting_the_file(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("webhook_secert: x\n")
    with pytest.raises(UsageError, match="unknown key.*webhook_secert.*valid keys"):
        load_settings(config, environ={})
    config.write_text(f"webhook_secret: {SECRET}\napp_id: [unclosed\n")
    with pytest.raises(UsageError) as err:
        load_settings(config, environ={})
    assert "not valid YAML at line" in str(err.value)
    assert SECRET not in str(err.value)
    with pytest.raises(UsageError, match="cannot read the config file"):
        load_settings(tmp_path / "missing.yaml", environ={})


def test_missing_secret_and_credentials_say_what_to_set() -> None:
    with pytest.raises(UsageError, match="REVIEWBOT_WEBHOOK_SECRET"):
        Settings().require_secret()
    with pytest.raises(UsageError, match="GITHUB_TOKEN"):
        Settings().require_credentials()
    with pytest.raises(UsageError, match="both REVIEWBOT_APP_ID and REVIEWBOT_PRIVATE_KEY_PATH"):
        Settings(app_id=1).require_credentials()
    Settings(github_token=TOKEN).require_credentials()
