"""jionlp's time parser is one shared, stateful instance: concurrent callers must not corrupt each other.

The flow's workers and the responder's reflection (its own thread) parse Chinese times at once.
"""

from __future__ import annotations

import threading
from datetime import datetime

from state.time.chinese import parse_chinese


def test_concurrent_parses_give_the_results_of_a_lone_parse() -> None:
    jobs = [("5月16日", datetime(2026, 6, 10, 17)), ("明天下午三点给您回电", datetime(2025, 1, 1, 9))]
    alone = [parse_chinese(text, base) for text, base in jobs]
    wrong = [0, 0]

    def work(i: int) -> None:
        text, base = jobs[i]
        for _ in range(300):
            if parse_chinese(text, base) != alone[i]:
                wrong[i] += 1

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == [0, 0]
