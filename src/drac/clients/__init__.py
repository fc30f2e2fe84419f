"""Model clients implementing the VisionModel and TextModel ports (Bedrock, OpenAI-compatible)."""
