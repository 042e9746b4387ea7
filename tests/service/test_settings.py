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
        assert "webhook_secret=SecretStr('**********')" in text and "postgresql://rb:***@db/rb" in text
    assert s.require_secret() == SECRET.encode() and s.token() == TOKEN
    assert s.secret_values() == (SECRET, TOKEN)


def test_redact_url() -> None:
    assert redact_url("postgresql://u:pw@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert redact_url("redis://:pw@h:6379/0") == "redis://:***@h:6379/0"
    assert redact_url("redis://h:6379/0") == "redis://h:6379/0"
    assert redact_url(None) is None


@pytest.mark.parametrize(
    "environ,needle",
    [
        ({"REVIEWBOT_APP_ID": "abc"}, "REVIEWBOT_APP_ID must be a whole number (the App's numeric id)"),
        ({"REVIEWBOT_REVIEW_DRAFTS": "maybe"}, "REVIEWBOT_REVIEW_DRAFTS must be true or false"),
        ({"REVIEWBOT_JOB_LEASE_SECONDS": "-1"}, "must not be negative"),
        ({"REVIEWBOT_MAX_ATTEMPTS": "0"}, "REVIEWBOT_MAX_ATTEMPTS must be at least 1"),
        ({"REVIEWBOT_API_URL": "ftp://u:pw@h"}, "REVIEWBOT_API_URL must start with http:// or https://"),
        ({"REVIEWBOT_QUEUE_URL": "amqp://user:pw@h"}, "REVIEWBOT_QUEUE_URL must be redis://"),
        ({"REVIEWBOT_TESTS_ENV": "CC,pw@h"}, "REVIEWBOT_TESTS_ENV must be JSON"),
        ({"REVIEWBOT_BUDGET": "files=pw@h"}, "REVIEWBOT_BUDGET must be JSON"),
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


def test_a_bad_value_in_the_file_is_named_by_file_and_key(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("max_attempts: 0\n")
    with pytest.raises(UsageError, match=r"max_attempts \(in .*c.yaml\) must be at least 1"):
        load_settings(config, environ={})
    # The environment wins, so a good value there hides nothing: the file's value is never used.
    assert load_settings(config, environ={"REVIEWBOT_MAX_ATTEMPTS": "2"}).max_attempts == 2


def test_the_config_file_may_be_toml(tmp_path: Path) -> None:
    config = tmp_path / "reviewbot.toml"
    config.write_text('app_id = 7\nprivate_key_path = "~/k.pem"\nrequest_interval = 0\n')
    s = load_settings(environ={"REVIEWBOT_CONFIG": str(config), "HOME": str(tmp_path)})
    assert (s.app_id, s.private_key_path, s.request_interval, s.config) == (
        7,
        tmp_path / "k.pem",
        0.0,
        config,
    )
    config.write_text(f'webhook_secret = "{SECRET}"\napp_id = [\n')
    with pytest.raises(UsageError, match="not valid TOML") as err:
        load_settings(config, environ={})
    assert SECRET not in str(err.value)


def test_the_file_cannot_name_itself_and_unknown_env_vars_are_ignored(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("config: other.yaml\n")
    with pytest.raises(UsageError, match="unknown key.*config"):
        load_settings(config, environ={})
    # REVIEWBOT_* variables that are not settings (the sandbox's, the parser's) are no error.
    assert load_settings(environ={"REVIEWBOT_PARSE_WORKERS": "1"}).queue_name == "reviewbot"


def test_direct_construction_reads_no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("REVIEWBOT_APP_ID", "9")
    assert Settings().github_token is None and Settings().app_id is None
    assert load_settings().token() == TOKEN and load_settings().app_id == 9
    changed = Settings(github_token=TOKEN).with_(max_attempts=2)
    assert changed.token() == TOKEN and changed.max_attempts == 2
    with pytest.raises(ValueError):
        Settings().with_(max_attempts=0)


def test_the_database_and_the_paths_to_hide_follow_the_state_directory(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "REVIEWBOT_STATE_DIR": "~/st", "REVIEWBOT_QUEUE_URL": "sqlite:////q/q.db"}
    s = load_settings(environ=env)
    assert s.database_url == f"sqlite:///{tmp_path / 'st' / 'reviewbot.sqlite3'}"
    assert s.private_paths() == [tmp_path / ".cache" / "reviewbot", tmp_path / "st", Path("/q/q.db")]


def test_a_setting_comes_whole_from_the_first_source_that_has_it(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("budget: {files: 0, mutants: 3}\nqueue_name:\n")
    # The environment's budget replaces the file's, keys and all: the file's bad `files` is never read.
    s = load_settings(config, environ={"REVIEWBOT_BUDGET": '{"mutants": 8}'})
    assert (s.budget.files, s.budget.mutants) == (1000, 8)
    assert s.queue_name == "reviewbot"  # a key without a value is no setting
    with pytest.raises(UsageError, match=r"budget \(in .*c.yaml\) budget files must be positive"):
        load_settings(config, environ={})
