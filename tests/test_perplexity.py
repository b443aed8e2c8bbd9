"""Perplexity-based evaluation (theorembench.methods.hybrid.perplexity).

Against the fake server the log-probs are scripted per pseudo-token, so every
perplexity is computed by hand; the embedded tests run the real llama.cpp server.
"""

from __future__ import annotations

import asyncio
import math
import random

import pytest

from theorembench.methods.hybrid import perplexity as ppl
from theorembench.methods.hybrid.perplexity import (
    OptionScore,
    PerplexityError,
    PerplexityUnsupported,
    check_alignment,
    choose,
    option_perplexities,
    perplexity_score,
    question_weights,
    score_questions,
)
from theorembench.testing.fakellm import FakeLLMServer, pseudo_tokens

PREFIX = "Pick one.\n"
# pseudo-tokens of PREFIX + option: "Pick"(null) " one"(-9) "."(-2) then "\n<first option word>" ...
RULES = [
    {"match": "alpha", "logprob": -0.5},
    {"match": "beta", "logprob": -1.0},
    {"match": "gamma", "logprob": -3.0},
    {"match": "Pick|one", "logprob": -9.0},
]
OPTIONS = ["alpha beta", "gamma gamma.", "alpha alpha alpha"]
# option tokens only (the "\n" before each option rides on its first word: a boundary token, scored)
EXPECTED = [(-0.5 - 1.0) / 2, (-3.0 - 3.0 - 2.0) / 3, -0.5]
EXPECTED_N = [2, 3, 3]


@pytest.fixture(autouse=True)
def _fresh_bos_cache():
    ppl._bos_cache.clear()
    yield
    ppl._bos_cache.clear()


@pytest.fixture
def srv():
    with FakeLLMServer({"logprob_rules": RULES}) as server:
        yield server


def run(coro):
    return asyncio.run(coro)


def completion_bodies(server) -> list[dict]:
    return [r["body"] for r in server.requests if r["endpoint"] == "completions"]


# ------------------------------------------------------------------ the fake endpoint


def test_fake_completions_echo_logprobs_shape(srv):
    import httpx

    body = {"model": "m", "prompt": "Pick one.\nalpha", "echo": True, "logprobs": 1, "max_tokens": 1}
    with httpx.Client(trust_env=False, timeout=10) as client:
        data = client.post(srv.base_url + "/completions", json=body).json()
    assert data["object"] == "text_completion"
    choice = data["choices"][0]
    assert choice["text"].startswith("Pick one.\nalpha") and choice["finish_reason"] == "length"
    lp = choice["logprobs"]
    assert lp["tokens"][:4] == ["Pick", " one", ".", "\nalpha"]
    assert lp["token_logprobs"][:4] == [None, -9.0, -2.0, -0.5]
    assert lp["text_offset"][:4] == [0, 4, 8, 9]
    assert lp["top_logprobs"][0] is None and lp["top_logprobs"][3] == {"\nalpha": -0.5}
    assert data["usage"]["prompt_tokens"] == 4
    assert "".join(pseudo_tokens("a  b,\tc \n")) == "a  b,\tc \n"


# ------------------------------------------------------------------ perplexities by hand


def test_option_perplexities_exact_and_option_span_only(srv):
    scores = run(option_perplexities(srv.base_url, "m", PREFIX, OPTIONS, api_key="k"))
    assert [s.index for s in scores] == [0, 1, 2]
    for s, mean, n in zip(scores, EXPECTED, EXPECTED_N):
        assert s.n_tokens == n
        assert s.mean_logprob == pytest.approx(mean, rel=1e-12)
        assert s.perplexity == pytest.approx(math.exp(-mean), rel=1e-12)
    # had the prefix tokens (-9, -2) been counted, option 0 would have mean -12.5/4
    assert scores[0].mean_logprob != pytest.approx((-9 - 2 - 0.5 - 1.0) / 4)
    assert choose(scores) == 2
    bodies = completion_bodies(srv)
    sent = [b["prompt"] for b in bodies]
    assert sorted(sent[-3:]) == sorted(PREFIX + o for o in OPTIONS)  # no BOS text added: the fake lines up
    assert all(b["echo"] is True and b["logprobs"] >= 1 and b["max_tokens"] == 1 for b in bodies)


def test_null_first_token_is_skipped(srv):
    # no prefix: the option's first token is the prompt's first, whose logprob is null
    [score] = run(option_perplexities(srv.base_url, "m", "", ["alpha beta gamma"], bos_text=None))
    assert score.n_tokens == 2
    assert score.mean_logprob == pytest.approx((-1.0 - 3.0) / 2)
    with pytest.raises(PerplexityError, match="no scored tokens"):
        run(option_perplexities(srv.base_url, "m", "", ["alpha"], bos_text=None))


def test_vllm_style_bos_token_in_offsets(srv):
    """A BOS pseudo-token counted in text_offset but absent from the text shifts every offset."""
    srv.set_script({"logprob_rules": RULES, "bos_token": "<|begin_of_text|>"})
    scores = run(option_perplexities(srv.base_url, "m", PREFIX, OPTIONS))
    assert [s.mean_logprob for s in scores] == pytest.approx(EXPECTED, rel=1e-12)
    assert [s.n_tokens for s in scores] == EXPECTED_N


def test_boundary_token_inside_a_word_belongs_to_the_option(srv):
    # the prefix ends mid-word: the token "alpha" straddles the boundary and is the option's
    [score] = run(option_perplexities(srv.base_url, "m", "Pick one. al", ["pha beta"], bos_text=None))
    assert score.n_tokens == 2 and score.mean_logprob == pytest.approx(-0.75)


def test_explicit_bos_text_is_sent_and_offsets_still_line_up(srv):
    scores = run(option_perplexities(srv.base_url, "m", PREFIX, OPTIONS[:1], bos_text="<s>"))
    assert completion_bodies(srv)[-1]["prompt"] == "<s>" + PREFIX + OPTIONS[0]
    assert scores[0].mean_logprob == pytest.approx(EXPECTED[0])


def test_alignment_probe_on_fake_is_aligned(srv):
    check = run(check_alignment(srv.base_url, "m"))
    assert check.aligned and check.aligned_hits > 10 and check.shifted_hits == 0


# ------------------------------------------------------------------ unsupported servers


@pytest.mark.parametrize("mode", ["none", "generated"])
def test_no_prompt_logprobs_is_unsupported(srv, mode):
    srv.set_script({"logprob_rules": RULES, "logprobs_mode": mode})
    with pytest.raises(PerplexityUnsupported, match="/v1/completions"):
        run(option_perplexities(srv.base_url, "m", PREFIX, OPTIONS))
    with pytest.raises(PerplexityUnsupported):
        run(option_perplexities(srv.base_url, "m", PREFIX, OPTIONS, bos_text=None))


def test_llama_cpp_without_logits_all_names_the_flag(srv):
    message = "logprobs is not supported for models created with logits_all=False"
    srv.set_script({"default": {"faults": [{"kind": "500", "times": 50, "message": message}]}})
    with pytest.raises(PerplexityUnsupported, match="--logits_all true"):
        run(option_perplexities(srv.base_url, "m", PREFIX, OPTIONS))
    assert srv.stats()["endpoints"] == {"completions": 1}  # not retried


def test_chat_only_server_is_unsupported(srv):
    with pytest.raises(PerplexityUnsupported, match="chat-only"):
        run(option_perplexities(srv.url + "/no-such-api", "m", PREFIX, OPTIONS))


def test_transient_errors_are_retried(srv):
    srv.set_script({"logprob_rules": RULES, "default": {"faults": [{"kind": "503", "times": 2}]}})
    scores = run(option_perplexities(srv.base_url, "m", PREFIX, OPTIONS, bos_text=None))
    assert [s.mean_logprob for s in scores] == pytest.approx(EXPECTED)
    assert srv.stats()["faults"] == {"503": 2}


# ------------------------------------------------------------------ weights and score


def test_weights_hand_computed():
    w = question_weights([2, 4, 6])
    assert w == pytest.approx([100 / 6, 100 / 3, 50.0])
    assert sum(w) == pytest.approx(100.0)
    # random guessing earns the same on every question: w_q / k_q = 100 / 12
    assert [wq / k for wq, k in zip(w, [2, 4, 6])] == pytest.approx([100 / 12] * 3)
    assert question_weights([5]) == [100.0]
    assert question_weights([3, 3], total=10) == [5.0, 5.0]
    with pytest.raises(ValueError):
        question_weights([2, 0])


def test_perplexity_score():
    all_right = perplexity_score([(0, 0, 2), (3, 3, 4), (5, 5, 6)])
    assert all_right["score"] == pytest.approx(100.0) and all_right["accuracy"] == 1.0
    assert all_right["random_baseline"] == pytest.approx(25.0)  # 3 * 100/12
    mixed = perplexity_score([(0, 0, 2), (1, 0, 4), (5, 5, 6)])
    assert mixed["score"] == pytest.approx(100 / 6 + 50)
    assert mixed["accuracy"] == pytest.approx(2 / 3) and mixed["n_correct"] == 2 and mixed["n_questions"] == 3
    assert mixed["max_score"] == 100.0
    none_right = perplexity_score([(None, 0, 2), (-1, 0, 4), (1, 0, 6)])
    assert none_right["score"] == 0.0 and none_right["accuracy"] == 0.0
    assert none_right["random_baseline"] == pytest.approx(25.0)
    empty = perplexity_score([])
    assert empty["score"] == 0.0 and empty["n_questions"] == 0


def test_choose_lowest_first_on_tie():
    scores = [OptionScore(0, 3.0, -1.1, 4), OptionScore(1, 2.0, -0.7, 4), OptionScore(2, 2.0, -0.7, 5)]
    assert choose(scores) == 1
    assert choose([OptionScore(0, math.nan, math.nan, 1), OptionScore(1, 9.0, -2.2, 1)]) == 1


# ------------------------------------------------------------------ batch helper


def test_score_questions_batch(srv):
    srv.set_script({"logprob_rules": RULES, "default": {"delay_ms": 20},
                    "rules": [{"match": "BROKEN", "faults": [{"kind": "400", "times": 100}]}]})  # fmt: skip
    questions = [
        {"id": "q1", "options": OPTIONS, "correct": 2},
        {"id": "q2", "options": ["gamma", "alpha", "beta", "gamma gamma"], "correct": 0},
        {"id": "q3", "options": ["alpha", "BROKEN alpha"], "correct": 0},
    ]
    seen: list[str] = []
    out = run(score_questions(srv.base_url, "m", questions, prefix=PREFIX, concurrency=2,
                              on_result=lambda d: seen.append(d["id"])))  # fmt: skip
    d1, d2, d3 = out["details"]
    assert d1["chosen"] == 2 and d1["is_correct"] and d1["perplexities"] == pytest.approx([math.exp(-m) for m in EXPECTED])
    assert d1["n_tokens"] == EXPECTED_N and d1["error"] is None
    assert d2["chosen"] == 1 and not d2["is_correct"]  # "alpha" is least perplexing, the key says "gamma"
    assert d3["chosen"] is None and "HTTP 400" in d3["error"]
    assert sorted(seen) == ["q1", "q2", "q3"]
    s = out["summary"]
    assert s["weights"] == pytest.approx([100 * 3 / 9, 100 * 4 / 9, 100 * 2 / 9])
    assert s["score"] == pytest.approx(100 * 3 / 9) and s["n_errors"] == 1
    assert s["random_baseline"] == pytest.approx(100 * 3 / 9)
    assert srv.stats()["max_in_flight"] == 2  # bounded concurrency (9 option requests, 2 at a time)


def test_score_questions_aborts_when_unsupported(srv):
    srv.set_script({"logprobs_mode": "none"})
    with pytest.raises(PerplexityUnsupported):
        run(score_questions(srv.base_url, "m", [{"options": OPTIONS, "correct": 0}], bos_text=None))


def test_score_questions_rejects_bad_input(srv):
    with pytest.raises(ValueError):
        run(score_questions(srv.base_url, "m", [{"options": ["a", ""], "correct": 0}]))
    with pytest.raises(ValueError):
        run(score_questions(srv.base_url, "m", [{"options": ["a", "b"], "correct": 2}]))


# ------------------------------------------------------------------ the embedded model

SEED = (
    "Lemma. Let X be a topological space. If X is quasi-compact and Z is a closed subset of X, "
    "then Z is quasi-compact.\n"
    "Proof. Let Z = \\bigcup_{i \\in I} Z \\cap U_i be an open covering of Z, with U_i open in X. "
    "Then X = (X \\setminus Z) \\cup \\bigcup_{i \\in I} U_i is an open covering of X. Since X is "
    "quasi-compact, finitely many of these opens cover X, hence finitely many of the sets Z \\cap U_i "
    "cover Z. Thus Z is quasi-compact."
)


def _shuffled(text: str, seed: int = 7) -> str:
    words = text.split(" ")
    random.Random(seed).shuffle(words)
    return " ".join(words)


@pytest.fixture(scope="module")
def local_url(tmp_path_factory):
    from theorembench.llm.local import LocalServer, model_path

    try:
        model_path("smollm2")
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"embedded model missing: {exc}")
    server = LocalServer("smollm2", logits_all=True)
    import os

    old = os.environ.get("THEOREMBENCH_RUNTIME")
    os.environ["THEOREMBENCH_RUNTIME"] = str(tmp_path_factory.mktemp("ppl-runtime"))
    try:
        yield server.start()
    finally:
        server.stop()
        if old is None:
            os.environ.pop("THEOREMBENCH_RUNTIME", None)
        else:
            os.environ["THEOREMBENCH_RUNTIME"] = old


@pytest.mark.embedded
def test_embedded_needs_and_finds_its_bos(local_url):
    # llama-cpp-python lines prompt log-probs up one token late when the model adds no BOS (SmolLM2)
    shifted = run(check_alignment(local_url, "smollm2"))
    assert not shifted.aligned and shifted.shifted_hits > 3 * shifted.aligned_hits
    assert run(ppl.resolve_bos_text(local_url, "smollm2")) == "<|im_start|>"


@pytest.mark.embedded
def test_embedded_matches_in_process_logprobs(local_url):
    """The option's mean log-prob equals llama.cpp's own, computed here from the logits."""
    import llama_cpp

    from theorembench.llm.local import model_path

    prefix, option = "Lemma.\n", "Let X be a topological space. Then X is quasi-compact."
    llm = llama_cpp.Llama(str(model_path("smollm2")), logits_all=True, n_ctx=256, verbose=False)
    try:
        head = llm.tokenize(prefix.encode(), add_bos=False, special=True)
        whole = llm.tokenize((prefix + option).encode(), add_bos=False, special=True)
        assert whole[: len(head)] == head  # no token straddles the boundary here
        tokens = [llm.token_bos()] + whole
        llm.reset()
        llm.eval(tokens)
        rows = llama_cpp.Llama.logits_to_logprobs(llm._scores)
        first = 1 + len(head)
        truth = [float(rows[i - 1][tokens[i]]) for i in range(first, len(tokens))]
    finally:
        llm.close()
    [score] = run(option_perplexities(local_url, "smollm2", prefix, [option]))
    assert score.n_tokens == len(truth)
    assert score.mean_logprob == pytest.approx(sum(truth) / len(truth), abs=1e-3)


@pytest.mark.embedded
def test_embedded_seed_beats_scrambled_copy(local_url):
    scrambled = _shuffled(SEED)
    assert scrambled != SEED
    out = run(score_questions(local_url, "smollm2", [{"id": "qc", "options": [scrambled, SEED], "correct": 1}],
                              concurrency=1))  # fmt: skip
    [detail] = out["details"]
    assert detail["error"] is None
    scrambled_ppl, seed_ppl = detail["perplexities"]
    assert all(math.isfinite(p) and p > 1.0 for p in detail["perplexities"])
    assert all(n > 60 for n in detail["n_tokens"])
    assert seed_ppl < scrambled_ppl
    assert detail["chosen"] == 1 and out["summary"]["score"] == pytest.approx(100.0)
