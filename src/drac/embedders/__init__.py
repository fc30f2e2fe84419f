"""Embedder port implementations: Bedrock Titan V2, OpenAI-compatible endpoints, a local
sentence-transformers folder, and the factory that picks one from settings."""
