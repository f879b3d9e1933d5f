"""Newer versions of a memory, for questions about the current state of a matter.

"我现在约的保洁是哪天？", "what's my current plan?": the answer is the latest statement of the
matter, not the first one. A later turn by the same speaker that says mostly
the same words as an earlier one ("已预约6月4日下午2点的保洁。" → "已预约6月14日上午9点。") is a newer
version of it: for such a question it inherits the earlier turn's relevance, and the earlier
turn, outdated, keeps only a share of its own (`state.recall.scoring`).

Input: per turn its recall tokens, time, speaker and relevance. Output: per turn its relevance
after the versions are applied. Pure; only the most relevant turns are taken as earlier
versions, so the cost stays bounded on a long history.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

F = npt.NDArray[np.float64]


def restates(earlier: frozenset[str], later: frozenset[str], min_overlap: float) -> bool:
    """The two turns share at least `min_overlap` of the larger one's words (a short turn inside a
    long one is not a restatement of it).

    >>> restates(frozenset("abcd"), frozenset("abcx"), 0.5), restates(frozenset("abcd"), frozenset("ab"), 0.6)
    (True, False)
    """
    if not earlier or not later:
        return False
    return len(earlier & later) / max(len(earlier), len(later)) >= min_overlap


def apply_versions(
    rel: F,
    tokens: Sequence[frozenset[str]],
    ts: F,
    speaker: npt.NDArray[np.int64],
    *,
    inherit: float,
    outdated: float,
    min_overlap: float,
    earliest: int = 20,
) -> F:
    """Turn relevance with newer versions applied: a newer version gets at least `inherit` of the
    version it updates (chains pass on in time order), an updated turn keeps `outdated` of its own.

    >>> rel = np.array([0.8, 0.1, 0.3])
    >>> toks = [frozenset({"booked", "june", "4"}), frozenset({"booked", "june", "14"}), frozenset({"cleaning"})]
    >>> apply_versions(rel, toks, np.array([0.0, 10.0, 5.0]), np.array([1, 1, 0]),
    ...                inherit=1.0, outdated=0.8, min_overlap=0.5).round(2).tolist()
    [0.64, 0.8, 0.3]
    """
    out = rel.astype(np.float64).copy()
    m = out.size
    if m < 2:
        return out
    candidates = np.argsort(-out, kind="stable")[:earliest]
    updated = np.zeros(m, dtype=bool)
    with np.errstate(invalid="ignore"):
        for e in sorted(candidates.tolist(), key=lambda i: float(ts[i])):
            if out[e] <= 0 or np.isnan(ts[e]):
                continue
            later = np.flatnonzero((ts > ts[e]) & (speaker == speaker[e]))
            for j in later.tolist():
                if restates(tokens[e], tokens[j], min_overlap):
                    out[j] = max(out[j], inherit * out[e])
                    updated[e] = True
    out[updated] *= outdated
    return out
