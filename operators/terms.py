"""Term whitelist and authority lexicon (docs/design.md#terms): per-sentence notes on each turn.

Input: keyed `Turn`. Output: keyed `Turn` with `terms`, `sentence_notes` (one per sentence:
terms, the short-sentence entropy shortcut, authority) and `priority_flag`. State: none. Key:
session id. The lexicon comes from the injected getter (`HotFile.get`): editing a term file or
the authority lexicon changes the next turn's result without a restart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import bytewax.operators as op
from bytewax.dataflow import operator
from bytewax.operators import KeyedStream

from state.normalise.turn import Turn
from state.terms.whitelist import TermLexicon, TermsConfig, note_sentences


def annotate_terms(turn: Turn, lexicon: TermLexicon, config: TermsConfig) -> Turn:
    """The turn with its term and authority notes filled."""
    notes = note_sentences(turn.sentences, lexicon, config)
    terms = tuple(dict.fromkeys(term for note in notes for term in note.terms))
    return replace(
        turn,
        terms=terms,
        sentence_notes=notes,
        priority_flag=any(n.priority_flag for n in notes),
        # The entropy cut reads these two, aligned with `sentences`.
        sentence_priority=tuple(n.no_merge for n in notes),
        sentence_entropy_override=tuple(n.fixed_entropy for n in notes),
    )


@operator
def whitelist_terms(
    step_id: str,
    up: KeyedStream[Turn],
    config: TermsConfig,
    *,
    lexicon: Callable[[], TermLexicon],
) -> KeyedStream[Turn]:
    return op.map_value("annotate_terms", up, lambda turn: annotate_terms(turn, lexicon(), config))
