"""Stage 3-4: findings, severities, fingerprints, the review pipeline, rounds and KPI."""
