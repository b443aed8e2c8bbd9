"""Perplexity-based evaluation (theorembench.methods.hybrid.perplexity).

Against the fake server the log-probs are scripted per pseudo-token, so every
perplexity is computed by hand; the embedded tests run the real llama.cpp server.
Every request goes through the LLM layer (theorembench.llm.logprobs): cached, recorded, priced.
"""

from __future__ import annotations

import asyncio
import math
import random

import pytest

from theorembench.llm import LLM, ModelSpec, PriceTable, prompt_logprobs, record_calls
from theorembench.llm.pricing import Price
from theorembench.methods.hybrid import perplexity as ppl
from theorembench.methods.hybrid.perplexity import (
    OptionScore,
    PerplexityError,
    PerplexityUnsupported,
    check_alignment,
    choose,
    credit,
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
def logprob_srv():
    """The fake server scripted with the log-probs of RULES (unlike the bare `srv` of helpers/fakellm.py)."""
    with FakeLLMServer({"logprob_rules": RULES}) as server:
        yield server


@pytest.fixture
def llm(store):
    return LLM(store)


def spec_at(base_url: str, name: str = "openai-api/fake/m") -> ModelSpec:
    return ModelSpec(name, "openai-api", name.rsplit("/", 1)[-1], base_url=base_url, api_key="k")


@pytest.fixture
def m(logprob_srv):
    """The model "m" on the fake server."""
    return spec_at(logprob_srv.base_url)


def run(coro):
    return asyncio.run(coro)


def completion_bodies(server) -> list[dict]:
    return [r["body"] for r in server.requests if r["endpoint"] == "completions"]


# ------------------------------------------------------------------ the fake endpoint


def test_fake_completions_echo_logprobs_shape(logprob_srv):
    import httpx

    body = {"model": "m", "prompt": "Pick one.\nalpha", "echo": True, "logprobs": 1, "max_tokens": 1}
    with httpx.Client(trust_env=False, timeout=10) as client:
        data = client.post(logprob_srv.base_url + "/completions", json=body).json()
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


def test_option_perplexities_exact_and_option_span_only(logprob_srv, llm, m):
    scores = run(option_perplexities(llm, m, PREFIX, OPTIONS))
    assert [s.index for s in scores] == [0, 1, 2]
    for s, mean, n in zip(scores, EXPECTED, EXPECTED_N):
        assert s.n_tokens == n
        assert s.mean_logprob == pytest.approx(mean, rel=1e-12)
        assert s.perplexity == pytest.approx(math.exp(-mean), rel=1e-12)
    # had the prefix tokens (-9, -2) been counted, option 0 would have mean -12.5/4
    assert scores[0].mean_logprob != pytest.approx((-9 - 2 - 0.5 - 1.0) / 4)
    assert choose(scores) == [2]
    bodies = completion_bodies(logprob_srv)
    sent = [b["prompt"] for b in bodies]
    assert sorted(sent[-3:]) == sorted(PREFIX + o for o in OPTIONS)  # no BOS text added: the fake lines up
    assert all(b["echo"] is True and b["logprobs"] >= 1 and b["max_tokens"] == 1 for b in bodies)


def test_null_first_token_is_skipped(logprob_srv, llm, m):
    # no prefix: the option's first token is the prompt's first, whose logprob is null
    [score] = run(option_perplexities(llm, m, "", ["alpha beta gamma"], bos_text=None))
    assert score.n_tokens == 2
    assert score.mean_logprob == pytest.approx((-1.0 - 3.0) / 2)
    with pytest.raises(PerplexityError, match="no scored tokens"):
        run(option_perplexities(llm, m, "", ["alpha"], bos_text=None))


def test_vllm_style_bos_token_in_offsets(logprob_srv, llm, m):
    """A BOS pseudo-token counted in text_offset but absent from the text shifts every offset."""
    logprob_srv.set_script({"logprob_rules": RULES, "bos_token": "<|begin_of_text|>"})
    scores = run(option_perplexities(llm, m, PREFIX, OPTIONS))
    assert [s.mean_logprob for s in scores] == pytest.approx(EXPECTED, rel=1e-12)
    assert [s.n_tokens for s in scores] == EXPECTED_N


def test_boundary_token_inside_a_word_belongs_to_the_option(logprob_srv, llm, m):
    # the prefix ends mid-word: the token "alpha" straddles the boundary and is the option's
    [score] = run(option_perplexities(llm, m, "Pick one. al", ["pha beta"], bos_text=None))
    assert score.n_tokens == 2 and score.mean_logprob == pytest.approx(-0.75)


def test_explicit_bos_text_is_sent_and_offsets_still_line_up(logprob_srv, llm, m):
    scores = run(option_perplexities(llm, m, PREFIX, OPTIONS[:1], bos_text="<s>"))
    assert completion_bodies(logprob_srv)[-1]["prompt"] == "<s>" + PREFIX + OPTIONS[0]
    assert scores[0].mean_logprob == pytest.approx(EXPECTED[0])


def test_alignment_probe_on_fake_is_aligned(logprob_srv, llm, m):
    check = run(check_alignment(llm, m))
    assert check.aligned and check.aligned_hits > 10 and check.shifted_hits == 0


# ------------------------------------------------------------------ unsupported servers


@pytest.mark.parametrize("mode", ["none", "generated"])
def test_no_prompt_logprobs_is_unsupported(logprob_srv, llm, m, mode):
    logprob_srv.set_script({"logprob_rules": RULES, "logprobs_mode": mode})
    with pytest.raises(PerplexityUnsupported, match="/v1/completions"):
        run(option_perplexities(llm, m, PREFIX, OPTIONS))
    with pytest.raises(PerplexityUnsupported):
        run(option_perplexities(llm, m, PREFIX, OPTIONS, bos_text=None))


def test_llama_cpp_without_logits_all_names_the_flag(logprob_srv, llm, m):
    message = "logprobs is not supported for models created with logits_all=False"
    logprob_srv.set_script({"default": {"faults": [{"kind": "500", "times": 50, "message": message}]}})
    with pytest.raises(PerplexityUnsupported, match="--logits_all true"):
        run(option_perplexities(llm, m, PREFIX, OPTIONS))
    assert logprob_srv.stats()["endpoints"] == {"completions": 1}  # not retried


def test_chat_only_server_is_unsupported(logprob_srv, llm):
    with pytest.raises(PerplexityUnsupported, match="chat-only"):
        run(option_perplexities(llm, spec_at(logprob_srv.url + "/no-such-api"), PREFIX, OPTIONS))


def test_transient_errors_are_retried(logprob_srv, llm, m):
    logprob_srv.set_script({"logprob_rules": RULES, "default": {"faults": [{"kind": "503", "times": 2}]}})
    scores = run(option_perplexities(llm, m, PREFIX, OPTIONS, bos_text=None))
    assert [s.mean_logprob for s in scores] == pytest.approx(EXPECTED)
    assert logprob_srv.stats()["faults"] == {"503": 2}


# ------------------------------------------------------------------ through the LLM layer


def test_prompt_logprobs_are_cached_recorded_and_priced(logprob_srv, store):
    logprob_srv.set_script({"logprob_rules": RULES, "default": {"reply": "Yes"}})
    prices = PriceTable({"openai-api/fake/m": Price(input=2.0, output=10.0)}, ["test"])
    text = "Pick one.\nalpha beta"  # pseudo-tokens: Pick, " one", ".", "\nalpha", " beta"
    with record_calls() as ids:
        first = run(prompt_logprobs(LLM(store, prices=prices), spec_at(logprob_srv.base_url), text,
                                    purpose="perplexity"))  # fmt: skip
    assert not first.cached and ids == [first.call_id]
    assert first.choice["logprobs"]["token_logprobs"][:5] == [None, -9.0, -2.0, -0.5, -1.0]
    row = store.get_call(first.call_id)
    assert (row["purpose"], row["status"], row["model"]) == ("perplexity", "ok", "openai-api/fake/m")
    assert (row["prompt_tokens"], row["completion_tokens"]) == (5, 1)
    assert row["cost_usd"] == pytest.approx((5 * 2.0 + 1 * 10.0) / 1_000_000)
    # a rerun (a new client on the same store) pays nothing: no request, the same answer
    with record_calls() as ids:
        again = run(prompt_logprobs(LLM(store, prices=prices), spec_at(logprob_srv.base_url), text,
                                    purpose="perplexity"))  # fmt: skip
    assert again.cached and again.call_id == first.call_id and again.choice == first.choice
    assert ids == [first.call_id]
    assert logprob_srv.stats()["endpoints"] == {"completions": 1}
    # another server under the same model name is asked, never served the first one's answer
    with FakeLLMServer({"logprob_rules": RULES}) as other:
        third = run(prompt_logprobs(LLM(store), spec_at(other.base_url), text))
        assert not third.cached and other.stats()["endpoints"] == {"completions": 1}


def test_rerun_of_an_evaluation_makes_no_request(logprob_srv, store, m):
    questions = [{"id": "q1", "options": OPTIONS, "correct": 2}]
    with record_calls() as ids:
        first = run(score_questions(LLM(store), m, questions, prefix=PREFIX))
    assert logprob_srv.stats()["endpoints"] == {"completions": 4}  # the alignment probe and one request per option
    rows = [store.get_call(i) for i in ids]
    assert len(rows) == 4 and {r["purpose"] for r in rows} == {"perplexity"}
    assert all(r["status"] == "ok" and r["prompt_tokens"] > 0 for r in rows)
    # the prompt "Pick one.\nalpha beta" is 5 pseudo-tokens
    assert sorted(r["prompt_tokens"] for r in rows)[:3] == [5, 6, 6]
    ppl._bos_cache.clear()  # as in a new process
    again = run(score_questions(LLM(store), m, questions, prefix=PREFIX))
    assert logprob_srv.stats()["endpoints"] == {"completions": 4}  # 0 new requests
    assert again["summary"]["score"] == first["summary"]["score"] == pytest.approx(100.0)


def test_failed_and_unusable_answers_are_asked_again(logprob_srv, store, m):
    logprob_srv.set_script({"logprob_rules": RULES, "logprobs_mode": "none"})
    with record_calls() as ids, pytest.raises(PerplexityUnsupported):
        run(option_perplexities(LLM(store), m, PREFIX, OPTIONS[:1], bos_text=None))
    assert [store.get_call(i)["status"] for i in ids] == ["invalid"]  # recorded, never served
    logprob_srv.set_script({"logprob_rules": RULES})
    [score] = run(option_perplexities(LLM(store), m, PREFIX, OPTIONS[:1], bos_text=None))
    assert score.mean_logprob == pytest.approx(EXPECTED[0])
    assert logprob_srv.stats()["endpoints"] == {"completions": 2}


def test_hosted_model_without_an_address_is_unsupported_at_once(store):
    gpt = ModelSpec("openai/gpt-5", "openai", "gpt-5", api_key="k")
    with pytest.raises(PerplexityUnsupported, match="no server address"):
        run(score_questions(LLM(store), gpt, [{"options": OPTIONS, "correct": 0}]))
    assert store.usage()["calls"] == 0


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


def test_choose_returns_every_tied_option():
    scores = [OptionScore(0, 3.0, -1.1, 4), OptionScore(1, 2.0, -0.7, 4), OptionScore(2, 2.0, -0.7, 5)]
    assert choose(scores) == [1, 2]
    assert choose(scores[:2]) == [1]
    assert choose([OptionScore(0, math.nan, math.nan, 1), OptionScore(1, 9.0, -2.2, 1)]) == [1]


def test_a_tie_is_split_and_never_goes_to_the_first_option():
    # the correct option (index 0) tied with one other: half the points, as a fair coin would earn on average
    assert credit([0, 1], 0) == 0.5 and credit([0, 1, 2], 0) == pytest.approx(1 / 3)
    assert credit([1, 2], 0) == 0.0 and credit(0, 0) == 1.0 and credit(None, 0) == 0.0
    tied = perplexity_score([([0, 1], 0, 2), (2, 2, 2)])
    assert tied["score"] == pytest.approx(0.5 * 50 + 50) and tied["accuracy"] == pytest.approx(0.75)
    assert tied["n_ties"] == 1 and tied["n_correct"] == 1


def _wilson_by_hand(p, n):
    z = 1.96
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [max(0.0, centre - half), min(1.0, centre + half)]


def test_score_interval_and_n():
    # weights 100/3 and 200/3: Kish's effective n = (Σw)² / Σw² = 1 / (1/9 + 4/9) = 1.8. All right (all wrong)
    # is not a point interval: Wilson at p = 1 (0) with n = 1.8
    right = perplexity_score([(0, 0, 2), (1, 1, 4)])["estimate"]
    wrong = perplexity_score([(1, 0, 2), (0, 1, 4)])["estimate"]
    assert right["ci95"] == pytest.approx(_wilson_by_hand(1.0, 1.8), abs=2e-4) and right["ci95"][0] < 0.35
    assert wrong["ci95"] == pytest.approx(_wilson_by_hand(0.0, 1.8), abs=2e-4) and wrong["ci95"][1] > 0.65
    # one right (weight 25), one wrong (weight 75): p = 0.25, effective n = 100² / (25² + 75²) = 1.6
    mixed = perplexity_score([(0, 0, 2), (0, 1, 6)])
    assert mixed["score"] == pytest.approx(25.0) and mixed["n"] == 2
    est = mixed["estimate"]
    assert (est["value"], est["n"], est["method"]) == (0.25, 2, "wilson-mean, effective n")
    assert est["ci95"] == pytest.approx(_wilson_by_hand(0.25, 1.6), abs=2e-4)


# ------------------------------------------------------------------ batch helper


def test_score_questions_batch(logprob_srv, llm, m):
    # barrier 2: requests are answered two at a time, so two were in flight together (10 distinct prompts)
    logprob_srv.set_script({"logprob_rules": RULES, "barrier": 2,
                    "rules": [{"match": "BROKEN", "faults": [{"kind": "400", "times": 100}]}]})  # fmt: skip
    questions = [
        {"id": "q1", "options": OPTIONS, "correct": 2},
        {"id": "q2", "options": ["gamma", "alpha", "beta", "gamma gamma", "beta beta"], "correct": 0},
        {"id": "q3", "options": ["beta gamma", "BROKEN alpha"], "correct": 0},
    ]
    seen: list[str] = []
    out = run(score_questions(llm, m, questions, prefix=PREFIX, concurrency=2, bos_text=None,
                              on_result=lambda d: seen.append(d["id"])))  # fmt: skip
    d1, d2, d3 = out["details"]
    assert d1["chosen"] == 2 and d1["is_correct"] and d1["perplexities"] == pytest.approx([math.exp(-m) for m in EXPECTED])
    assert d1["n_tokens"] == EXPECTED_N and d1["error"] is None and d1["credit"] == 1.0 and d1["tied"] is None
    assert d2["chosen"] == 1 and not d2["is_correct"]  # "alpha" is least perplexing, the key says "gamma"
    assert d3["chosen"] is None and "HTTP 400" in d3["error"] and d3["weight"] == pytest.approx(20.0)
    assert sorted(seen) == ["q1", "q2", "q3"]
    s = out["summary"]
    # the failed question counts, with 0 of its points: weights over q1 (3 options), q2 (5) and q3 (2)
    assert s["weights"] == pytest.approx([30.0, 50.0, 20.0]) and s["n"] == 3
    assert s["score"] == pytest.approx(30.0) and s["n_errors"] == 1 and s["n_correct"] == 1
    assert s["random_baseline"] == pytest.approx(30.0)
    # secondary, labelled: over q1 and q2 only, weights 3/8 and 5/8 of 100
    assert s["answered_only"]["score"] == pytest.approx(37.5) and s["answered_only"]["n"] == 2
    assert logprob_srv.stats()["max_in_flight"] == 2 and logprob_srv.stats()["endpoints"] == {"completions": 10}


def test_tied_options_share_the_points(logprob_srv, llm, m):
    # "beta" and "delta" carry the same log-prob: the two options tie exactly
    logprob_srv.set_script({"logprob_rules": RULES + [{"match": "delta", "logprob": -1.0}]})
    questions = [
        {"id": "t1", "options": ["beta", "delta", "gamma"], "correct": 0},  # correct option in the tie
        {"id": "t2", "options": ["gamma", "beta", "delta"], "correct": 0},  # tie among two wrong options
    ]
    out = run(score_questions(llm, m, questions, prefix=PREFIX, bos_text=None))
    t1, t2 = out["details"]
    assert t1["tied"] == [0, 1] and t1["chosen"] is None and t1["credit"] == 0.5 and t1["is_correct"] is False
    assert t2["tied"] == [1, 2] and t2["credit"] == 0.0
    s = out["summary"]
    assert s["score"] == pytest.approx(25.0)  # weights 50 + 50; half of the first question's points
    assert s["n_ties"] == 2 and s["n_correct"] == 0 and s["accuracy"] == pytest.approx(0.25)


def test_score_questions_aborts_when_unsupported(logprob_srv, llm, m):
    logprob_srv.set_script({"logprobs_mode": "none"})
    with pytest.raises(PerplexityUnsupported):
        run(score_questions(llm, m, [{"options": OPTIONS, "correct": 0}], bos_text=None))


def test_score_questions_rejects_bad_input(logprob_srv, llm, m):
    with pytest.raises(ValueError):
        run(score_questions(llm, m, [{"options": ["a", ""], "correct": 0}]))
    with pytest.raises(ValueError):
        run(score_questions(llm, m, [{"options": ["a", "b"], "correct": 2}]))


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


def served(base_url: str) -> ModelSpec:
    """SmolLM2 on a llama-cpp-python server at ``base_url``."""
    return ModelSpec("llama-cpp-python/smollm2", "llama-cpp-python", "smollm2", base_url=base_url)


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
def test_embedded_needs_and_finds_its_bos(local_url, llm):
    # llama-cpp-python lines prompt log-probs up one token late when the model adds no BOS (SmolLM2)
    shifted = run(check_alignment(llm, served(local_url)))
    assert not shifted.aligned and shifted.shifted_hits > 3 * shifted.aligned_hits
    assert run(ppl.resolve_bos_text(llm, served(local_url))) == "<|im_start|>"


@pytest.mark.embedded
def test_embedded_matches_in_process_logprobs(local_url, llm):
    """The option's mean log-prob equals llama.cpp's own, computed here from the logits."""
    import llama_cpp

    from theorembench.llm.local import model_path

    prefix, option = "Lemma.\n", "Let X be a topological space. Then X is quasi-compact."
    model = llama_cpp.Llama(str(model_path("smollm2")), logits_all=True, n_ctx=256, verbose=False)
    try:
        head = model.tokenize(prefix.encode(), add_bos=False, special=True)
        whole = model.tokenize((prefix + option).encode(), add_bos=False, special=True)
        assert whole[: len(head)] == head  # no token straddles the boundary here
        tokens = [model.token_bos()] + whole
        model.reset()
        model.eval(tokens)
        rows = llama_cpp.Llama.logits_to_logprobs(model._scores)
        first = 1 + len(head)
        truth = [float(rows[i - 1][tokens[i]]) for i in range(first, len(tokens))]
    finally:
        model.close()
    [score] = run(option_perplexities(llm, served(local_url), prefix, [option]))
    assert score.n_tokens == len(truth)
    assert score.mean_logprob == pytest.approx(sum(truth) / len(truth), abs=1e-3)


@pytest.mark.embedded
def test_embedded_seed_beats_scrambled_copy(local_url, llm):
    scrambled = _shuffled(SEED)
    assert scrambled != SEED
    out = run(score_questions(llm, served(local_url), [{"id": "qc", "options": [scrambled, SEED], "correct": 1}],
                              concurrency=1))  # fmt: skip
    [detail] = out["details"]
    assert detail["error"] is None
    scrambled_ppl, seed_ppl = detail["perplexities"]
    assert all(math.isfinite(p) and p > 1.0 for p in detail["perplexities"])
    assert all(n > 60 for n in detail["n_tokens"])
    assert seed_ppl < scrambled_ppl
    assert detail["chosen"] == 1 and out["summary"]["score"] == pytest.approx(100.0)
