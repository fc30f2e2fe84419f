"""The pipeline's Lambda stages: one function per handler, pydantic models in and out.

Each stage takes the `Runtime` (the AWS adapters) and the event a handler receives, parsed into
its input model, and returns the handler's answer as a model: keys and counts, never document
content. The modules are imported one by one so a function loads only what its stage needs.
"""
