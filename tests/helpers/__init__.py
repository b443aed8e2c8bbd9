"""Helpers shared by several test modules: one small module per subject (no test module imports another).

``web``: the platform's test client (sign-in, CSRF, form posts, parsed tags) and the XSS corpus; ``browser``:
accounts and sign-in for the real-browser tests; ``lmb``: the scripted LMB build; ``eternal``: the scripted
EternalMath build; ``hybrid``: judge verdicts; ``fakellm``: a bare fake LLM server; ``improof``: the store with the
odd-sums problem; ``sandbox``: template code that tries to reach a canary, the store and the host's network.
"""
