# reviewbot as a GitHub App: one image, two commands (docs/where-to-run.md).
#
#   docker build -t reviewbot .
#   docker run -p 8080:8080 --env-file reviewbot.env reviewbot                   # webhook server
#   docker run --env-file reviewbot.env reviewbot worker                         # rounds (one or more)
#
# Settings are environment variables (docs/github-app.md lists them all); the ones a deployment sets:
#   REVIEWBOT_WEBHOOK_SECRET    the App's webhook secret (serve)
#   REVIEWBOT_APP_ID            the App ID
#   REVIEWBOT_PRIVATE_KEY_PATH  the App's .pem key, mounted read-only (e.g. /run/secrets/reviewbot.pem)
#   REVIEWBOT_DB_URL            postgresql://USER:PASSWORD@HOST/DB  (default: SQLite in the state volume)
#   REVIEWBOT_QUEUE_URL         redis://HOST:6379/0                  (default: SQLite in the state volume)
#   REVIEWBOT_HISTORY_TOKEN     bearer token of the round-history pages (unset: no pages)
#   REVIEWBOT_STATE_DIR / REVIEWBOT_CACHE_DIR   set below to the volumes /var/lib/reviewbot, /var/cache/reviewbot
# The tests of a pull request run under bubblewrap, which needs user namespaces: Docker's default
# seccomp profile refuses them, so run the worker with a profile that allows unshare/clone of namespaces
# (e.g. --security-opt seccomp=unconfined); without bubblewrap the App does not run tests and says why.
FROM python:3.11-slim-bookworm

# git reads the pull requests; bubblewrap sandboxes their tests; g++ and make are what the bundled
# example's and most C++ projects' test commands use.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git=1:2.39.* bubblewrap=0.8.* g++=4:12.* make=4.3-* \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/reviewbot
COPY pyproject.toml README.md ./
COPY reviewbot ./reviewbot
COPY templates ./templates
COPY checklists ./checklists
COPY examples ./examples
# The project itself, from this checkout: its dependencies are bounded in pyproject.toml.
# hadolint ignore=DL3013
RUN pip install --no-cache-dir ".[postgres,redis]"

# Never root: the App runs code from pull requests (in bubblewrap, as this user).
RUN useradd --system --uid 10001 --create-home --home-dir /home/reviewbot reviewbot \
    && mkdir -p /var/lib/reviewbot /var/cache/reviewbot \
    && chown 10001:10001 /var/lib/reviewbot /var/cache/reviewbot
USER 10001:10001
ENV REVIEWBOT_STATE_DIR=/var/lib/reviewbot \
    REVIEWBOT_CACHE_DIR=/var/cache/reviewbot \
    PYTHONUNBUFFERED=1
VOLUME ["/var/lib/reviewbot", "/var/cache/reviewbot"]
EXPOSE 8080

ENTRYPOINT ["reviewbot"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080"]
