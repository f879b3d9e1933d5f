"""Later updates of a matter, for questions about how it stands.

"where are we on the printer thing?", "数据迁移现在到哪一步了？": the answer is what the agent said
about the matter last (the part on order, the 312 rows that failed the test import), not the
report that opened it nor the first step. A later agent turn that shares at least a few content
words with one of the most relevant turns ("HD-5582", "field mapping", "发票原件") is an update of
it: for such a question it takes the turn's relevance, and the turn it updates keeps only the
asking share of its own (`state.recall.scoring`). Updates chain in time order, so the last of a
run of progress reports answers.

Unlike a newer version (`state.recall.versions`: the same speaker restating most of the same
words), an update says something new about the matter: it shares a few words (an identifier,
the thing's name), not most of them.

Input: per turn its content tokens, time, whether the agent said it, and its relevance. Output:
per turn its relevance with the updates applied. Pure; only the few most relevant turns are
taken as the matters to follow, so the cost stays bounded on a long history.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

F = npt.NDArray[np.float64]
B = npt.NDArray[np.bool_]


def apply_updates(
    rel: F,
    tokens: Sequence[frozenset[str]],
    ts: F,
    agent: B,
    *,
    min_shared: int,
    keep: float,
    followed: int = 5,
    min_share_of_best: float = 0.5,
) -> F:
    """Turn relevance with later updates applied: an agent turn said after one of the `followed`
    most relevant turns (at least `min_share_of_best` of the best) and sharing at least `min_shared`
    of its content tokens takes that turn's relevance if larger; the updated turn keeps `keep` of
    its own. Chains pass on in time order.

    >>> rel = np.array([0.9, 0.2, 0.1, 0.4])
    >>> toks = [frozenset({"printer", "hd-5582"}), frozenset({"hd-5582", "printer", "escalate"}),
    ...         frozenset({"hd-5582", "printer", "part"}), frozenset({"lunch"})]
    >>> apply_updates(rel, toks, np.array([0.0, 1.0, 2.0, 3.0]), np.array([False, True, True, True]),
    ...               min_shared=2, keep=0.8).round(2).tolist()
    [0.72, 0.2, 0.9, 0.4]
    """
    out = rel.astype(np.float64).copy()
    m = out.size
    if m < 2 or out.max(initial=0.0) <= 0:
        return out
    bar = min_share_of_best * float(out.max())
    work = [int(i) for i in np.argsort(-out, kind="stable")[:followed] if out[i] >= bar and not np.isnan(ts[i])]
    work.sort(key=lambda i: float(ts[i]))
    seen = set(work)
    updated = np.zeros(m, dtype=bool)
    with np.errstate(invalid="ignore"):
        later_agent = [np.flatnonzero((ts > ts[i]) & agent) for i in range(m)]
    for e in work:  # grows while it is read: an update is followed in turn (chains)
        best = -1
        for j in later_agent[e].tolist():
            if len(tokens[e] & tokens[j]) >= min_shared and (best < 0 or ts[j] > ts[best]):
                best = j  # the latest agent turn about the matter
        if best < 0 or out[best] >= out[e]:
            continue
        out[best] = out[e]
        updated[e] = True
        if best not in seen:
            seen.add(best)
            work.append(best)
    out[updated] *= keep
    return out
