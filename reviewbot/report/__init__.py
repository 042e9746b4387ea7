"""Stage 5: rendering a Review (markdown en/zh, JSON, SARIF)."""
