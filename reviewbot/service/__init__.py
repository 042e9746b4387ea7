"""Long-lived state and services around the review: the rounds store (and, later, jobs and deliveries)."""
