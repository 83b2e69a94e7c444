"""Developer tools: the compiled engine's build (``engine_compiled``)."""
