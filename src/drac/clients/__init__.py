"""Model clients implementing the VisionModel and TextModel ports (Bedrock, OpenAI-compatible)."""

DEFAULT_ATTEMPTS = 6
"""Tries per model call where the caller owns no retries of its own (the CLI). The Lambda
runtime passes 1: Step Functions retries there."""
