"""The trainable dual-head tagger: embedding heads, the transformers fine-tuning path, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from schemas.errors import ConfigurationError
from sinks.models.tagger_model import DEFAULT_HEAD, EmbeddingHead, TransformerHead, load_head
from sinks.models.tagger_train import fit_dual_head, read_examples, train_embedding_head, train_transformer
from state.tagging.lexicon import CLASSES

EXAMPLES = Path(__file__).resolve().parents[2] / "sinks" / "models" / "resources" / "tagger_examples.jsonl"


def test_the_shipped_examples_are_labelled_for_every_class() -> None:
    examples = read_examples(EXAMPLES)
    assert {CLASSES[e.intent] for e in examples} == set(CLASSES)
    assert all(not np.isnan(e.emotion[0]) for e in examples)


def test_embedding_head_trains_and_predicts(tmp_path: Path) -> None:
    examples = read_examples(EXAMPLES)
    weights = train_embedding_head(examples, embedder_kind="static", epochs=60, hidden=16)
    path = tmp_path / "head.json"
    path.write_text(json.dumps(weights), encoding="utf-8")
    head = load_head(path)
    assert isinstance(head, EmbeddingHead)
    intent, emotion = head.predict(["Could you send me the invoice?", "我好害怕，不知道该怎么办。"], [None, None])
    assert intent.shape == (2, len(CLASSES))
    assert emotion.shape == (2, 4)
    assert np.allclose(intent.sum(axis=1), 1.0)
    assert ((emotion >= 0) & (emotion <= 1)).all()
    assert emotion[1, 0] > emotion[0, 0]  # it learned which one is stressed
    assert head.predict([], [])[0].shape == (0, len(CLASSES))


def test_training_is_deterministic() -> None:
    x = np.random.default_rng(0).normal(size=(20, 8)).astype(np.float32)
    intent = np.array([i % len(CLASSES) for i in range(20)])
    emotion = np.full((20, 4), np.nan, dtype=np.float32)
    emotion[:10] = 0.5
    a = fit_dual_head(x, intent, emotion, hidden=4, epochs=5, seed=3)
    b = fit_dual_head(x, intent, emotion, hidden=4, epochs=5, seed=3)
    assert a == b


def test_masked_labels_may_be_missing_entirely() -> None:
    x = np.eye(6, dtype=np.float32)
    weights = fit_dual_head(x, np.full(6, -1), np.full((6, 4), 0.2, dtype=np.float32), hidden=4, epochs=3)
    assert len(weights["w_intent"]) == 4


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"text": "x", "intent": "boss"}', "unknown intent"),
        ('{"text": "x", "stress": 3}', "0–1"),
        ('{"intent": "request"}', "text"),
        ("not json", "Expecting value"),
    ],
)
def test_bad_training_lines_name_the_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text('{"text": "fine", "intent": "neutral"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=f"data.jsonl:2: .*{message}"):
        read_examples(path)


def test_empty_or_missing_training_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="no examples"):
        read_examples(empty)
    with pytest.raises(ConfigurationError, match="cannot read"):
        read_examples(tmp_path / "missing.jsonl")


def test_head_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read"):
        load_head(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="not JSON"):
        load_head(broken)
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"embedder": "static"}), encoding="utf-8")
    with pytest.raises(ConfigurationError, match="not a valid weights file"):
        load_head(partial)
    with pytest.raises(ConfigurationError, match=r"recallflow_tagger\.json"):
        load_head(tmp_path)


def test_head_must_match_its_embedder_and_classes() -> None:
    weights = fit_dual_head(
        np.eye(8, dtype=np.float32), np.arange(8) % 6, np.full((8, 4), 0.5, dtype=np.float32), hidden=4, epochs=2
    )
    with pytest.raises(ConfigurationError, match="8-dim"):
        EmbeddingHead({**weights, "embedder": "static"})
    with pytest.raises(ConfigurationError, match="intent classes"):
        EmbeddingHead({**weights, "embedder": "static", "classes": ["a"]})


def test_shipped_default_head_if_any_loads() -> None:
    from sinks.models.tagger_model import default_head

    head = default_head()
    assert (head is None) == (not DEFAULT_HEAD.exists())


def _tiny_encoder(folder: Path, texts: list[str]) -> Path:
    """A small randomly initialised BERT with a character vocabulary: the fine-tuning path runs for real."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    chars = sorted({c for t in texts for c in t.lower() if not c.isspace()})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(vocab), encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), tokenize_chinese_chars=True)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    BertModel(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def test_transformer_fine_tuning_path_runs_on_a_tiny_random_encoder(tmp_path: Path) -> None:
    examples = read_examples(EXAMPLES)[:24]
    encoder = _tiny_encoder(tmp_path / "encoder", [e.text for e in examples])
    out = train_transformer(examples, encoder, tmp_path / "tuned", epochs=1, batch_size=8, max_length=32, lr=1e-3)
    head = load_head(out)
    assert isinstance(head, TransformerHead)
    intent, emotion = head.predict(["请帮我查一下订单", "What time is it?"], [None, None])
    assert intent.shape == (2, len(CLASSES))
    assert np.allclose(intent.sum(axis=1), 1.0)
    assert emotion.shape == (2, 4)
    assert head.predict([], [])[1].shape == (0, 4)


def test_transformer_path_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot load encoder"):
        train_transformer(read_examples(EXAMPLES)[:2], tmp_path / "nope", tmp_path / "out")
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "recallflow_tagger.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="cannot load fine-tuned tagger"):
        load_head(fake)


def test_train_tagger_command(tmp_path: Path) -> None:
    from flows.cli import app

    out = tmp_path / "head.json"
    result = CliRunner().invoke(app, ["train-tagger", str(EXAMPLES), "--out", str(out), "--epochs", "5"])
    assert result.exit_code == 0, result.output
    assert isinstance(load_head(out), EmbeddingHead)
    assert json.loads(out.read_text(encoding="utf-8"))["trained_on"] == EXAMPLES.name


def test_a_head_binds_only_to_its_own_model(static_embedder) -> None:
    from sinks.models.embedding_memo import MemoEmbedder

    head = default_head_or_skip()
    with pytest.raises(ConfigurationError, match="trained on"):
        head.bind(static_embedder)
    from sinks.models.embedders import load_embedder

    shared = MemoEmbedder(load_embedder(head.embedder_kind))
    head.bind(shared)
    head.predict(["你好"], [None])
    assert shared.stats() == (0, 1)
    assert shared.passage(["你好"]).shape == (1, shared.dim)
    assert shared.stats() == (1, 1)


def default_head_or_skip() -> EmbeddingHead:
    from sinks.models.tagger_model import default_head

    head = default_head()
    assert head is not None, "the repository ships sinks/models/resources/tagger_head.json"
    return head
