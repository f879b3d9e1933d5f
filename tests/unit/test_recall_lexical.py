from hypothesis import given
from hypothesis import strategies as st

from state.recall.lexical import bm25_scores, token_set, tokenize


def test_english_is_stemmed_and_stopwords_go() -> None:
    assert tokenize("She painted the sunrises", frozenset({"the", "she"})) == ("paint", "sunris")


def test_chinese_gets_unigrams_and_bigrams_and_mixed_text_keeps_both() -> None:
    toks = tokenize("订单SF123已发货", frozenset({"已"}))
    assert "sf123" in toks
    assert {"订单", "发货", "订", "单"} <= set(toks)
    assert "已" not in toks


def test_possessive_is_the_name() -> None:
    assert tokenize("Caroline's") == tokenize("Caroline")


def test_bm25_prefers_rarer_terms_and_repeated_matches() -> None:
    docs = [tokenize(t) for t in ("paint paint sunrise", "paint", "run home", "home")]
    scores = bm25_scores(tokenize("paint sunrise"), docs)
    assert scores[0] > scores[1] > 0
    assert scores[2] == scores[3] == 0


def test_bm25_empty_inputs() -> None:
    assert bm25_scores(["a"], []).shape == (0,)
    assert (bm25_scores([], [["a"], ["b"]]) == 0).all()


def test_token_set_unions() -> None:
    assert token_set(["paint", "run"]) == {"paint", "run"}


@given(st.lists(st.text(max_size=40), min_size=1, max_size=20), st.text(max_size=30))
def test_bm25_is_never_negative_and_zero_without_overlap(texts: list[str], query: str) -> None:
    docs = [tokenize(t) for t in texts]
    q = tokenize(query)
    scores = bm25_scores(q, docs)
    assert scores.shape == (len(docs),)
    assert (scores >= 0).all()
    for doc, s in zip(docs, scores, strict=True):
        if not set(doc) & set(q):
            assert s == 0
