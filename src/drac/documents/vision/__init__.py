"""A vision model's conversion: prompts, page batches, checks, verification, escalation, reuse."""
