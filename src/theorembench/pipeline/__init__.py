"""The pipeline machinery: the step runner every method uses, and the paper pipeline (fetch, unpack, extract)."""
