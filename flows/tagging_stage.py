"""Composition of the tagging and entropy stage (docs/design.md#tagging, #entropy): settings → resources → operators.

Builds, once, from settings: the hot-reloaded tagging lexicon and entropy table, the trained
head, and the per-segment embedder; then wires tagging → entropy → unit emotion (the head's
emotion per memory unit, and the speaker's running stress carried into it; then each unit's type,
the unit-type head deciding where the rules did not), with each session's
end merged in so all three stateful stages release and discard their per-session state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import bytewax.operators as op
from bytewax.operators import KeyedStream

from flows.settings import Settings
from operators.entropy import EntropyOpConfig, window_entropy
from operators.prefetch import PrefetchConfig, prefetch_segment_vectors, prefetch_vectors
from operators.tagging import TaggingConfig, tag_turns
from operators.unit_emotion import UnitEmotionConfig, unit_emotion
from schemas.events import InputEvent
from sinks.models.embedders import load_embedder
from sinks.models.embedding_memo import MemoEmbedder
from sinks.models.tagger_model import EmbeddingHead, default_head, load_head
from sinks.models.unit_type_model import DEFAULT_TYPE_HEAD, UnitTypeHead, load_type_head
from state.core.closing import SessionClosed, closed_of
from state.core.embedding import Embedder
from state.core.hotfile import HotFile
from state.normalise.turn import Turn
from state.tagging.lexicon import DEFAULT_LEXICON, load_lexicon
from state.tagging.tagger import IntentHead, TagConfig
from state.units.entropy import DEFAULT_ENTROPY_TABLE, EntropyConfig, load_entropy_table
from state.units.unit_type import TypeBlend


def tagging_head(settings: Settings) -> IntentHead | None:
    """The configured head: shipped default, none, or a trained head file / fine-tuned model folder."""
    spec = settings.tagging.head
    if spec == "none":
        return None
    return default_head() if spec == "default" else load_head(Path(spec))


def unit_type_head(settings: Settings, store_embedder: Embedder) -> UnitTypeHead | None:
    """The unit-type head, reading the store's (cached) vectors: no embedding call of its own.

    The shipped head is used only when the store embeds with the model it was trained on (else:
    rules only); a head file named in settings must match the store's model.
    """
    spec = settings.tagging.type_head
    if spec == "none":
        return None
    head = load_type_head(DEFAULT_TYPE_HEAD if spec == "default" else Path(spec))
    if spec == "default" and (head.embedder_name != store_embedder.name or head.dim != store_embedder.dim):
        return None
    head.bind(store_embedder)
    return head


def segment_embedder(settings: Settings, store_embedder: Embedder) -> Embedder:
    cfg = settings.entropy
    return store_embedder if cfg.embedder == "same" else load_embedder(cfg.embedder, cfg.model)


def write_filters_ii(
    settings: Settings,
    turns: KeyedStream[Turn],
    events: KeyedStream[InputEvent],
    *,
    embedder: Embedder,
    clock: Callable[[], datetime],
    prefetch: PrefetchConfig | None = None,
) -> tuple[KeyedStream[Turn], Embedder]:
    """Tagging then entropy windows; either can be switched off in settings.

    Returns the tagged, cut turns and the store embedder to use downstream: when the head reads
    the store's model, both go through one shared cache, so a unit's vector is computed once.
    With `prefetch`, the units' and anchoring's vectors are embedded a batch at a time once the
    turns are cut (before the head reads them; the embedder must be a memo).
    """
    tcfg, ecfg = settings.tagging, settings.entropy
    if not tcfg.enabled and not ecfg.enabled:
        return _prefetched(turns, prefetch, embedder), embedder
    head = tagging_head(settings) if tcfg.enabled else None
    lexicon = HotFile(tcfg.lexicon_path or DEFAULT_LEXICON, load_lexicon)
    closed = op.filter_map_value("session_closed", events, closed_of)
    items: KeyedStream[Turn | SessionClosed] = op.merge("turns_and_closings", turns, closed)
    if tcfg.enabled:
        tag_config = TaggingConfig(
            tag=TagConfig(clause_min_chars=tcfg.clause_min_chars, head_weight=tcfg.head_weight, context=tcfg.context),
            idle_ttl=timedelta(seconds=tcfg.idle_ttl_s),
        )
        if isinstance(head, EmbeddingHead) and head.embedder_name == embedder.name:
            # The heads read the turn's passage vector, the one the store asks for later:
            # one memo (usually already in front of the embedder, see flows/runtime.py) serves both.
            if not isinstance(embedder, MemoEmbedder):
                embedder = MemoEmbedder(embedder)
            head.bind(embedder)
        items = tag_turns("tagging", items, tag_config, lexicon=lexicon, head=head, clock=clock)
    type_head = unit_type_head(settings, embedder) if tcfg.enabled else None
    if type_head is not None and not isinstance(embedder, MemoEmbedder):
        embedder = MemoEmbedder(embedder)  # the unit-type head and the store read one vector per unit
        type_head.bind(embedder)
    if not ecfg.enabled:
        cut: KeyedStream[Turn] = op.filter_map_value(
            "drop_closings", items, lambda item: item if isinstance(item, Turn) else None
        )
    else:
        cut = _entropy(settings, items, embedder, clock)
    cut = _prefetched(cut, prefetch, embedder)
    if tcfg.enabled:
        # Runs without a head too: the running stress is carried into the final (here lexicon) stress.
        # The closings come in again: the entropy stage consumes them.
        emotion_config = UnitEmotionConfig(
            weight=tcfg.head_emotion_weight if head is not None else 0.0,
            idle_ttl=timedelta(seconds=tcfg.idle_ttl_s),
        )
        blend = TypeBlend(min_margin=tcfg.type_head_margin, complaint_margin=tcfg.type_head_complaint_margin)
        emotion_config = replace(emotion_config, type_blend=blend)
        with_closings: KeyedStream[Turn | SessionClosed] = op.merge("units_and_closings", cut, closed)
        cut = unit_emotion(
            "unit_emotion", with_closings, emotion_config, head=head, lexicon=lexicon, clock=clock, type_head=type_head
        )
    return cut, embedder


def _prefetched(turns: KeyedStream[Turn], config: PrefetchConfig | None, embedder: Embedder) -> KeyedStream[Turn]:
    return turns if config is None else prefetch_vectors("prefetch", turns, config, embedder=embedder)


def _entropy(
    settings: Settings, items: KeyedStream[Turn | SessionClosed], embedder: Embedder, clock: Callable[[], datetime]
) -> KeyedStream[Turn]:
    ecfg = settings.entropy
    seg_embedder = segment_embedder(settings, embedder)
    if not isinstance(seg_embedder, MemoEmbedder):
        seg_embedder = MemoEmbedder(seg_embedder)
    # a batch's segments in one model call; the entropy stage then reads them from the memo
    items = prefetch_segment_vectors("entropy_prefetch", items, embedder=seg_embedder)
    table = HotFile(ecfg.table_path or DEFAULT_ENTROPY_TABLE, load_entropy_table)
    entropy_config = EntropyOpConfig(
        entropy=EntropyConfig(lookahead=timedelta(seconds=ecfg.lookahead_s), embedder_name=seg_embedder.name),
        hold_timeout=timedelta(seconds=max(ecfg.hold_timeout_s, ecfg.lookahead_s)),
        idle_ttl=timedelta(seconds=ecfg.idle_ttl_s),
    )
    return window_entropy("entropy", items, entropy_config, table=table, embedder=seg_embedder, clock=clock)
