"""Running a dataflow: recovery partitions (Bytewax snapshots) and execution over workers and processes."""

from __future__ import annotations

import gc
from datetime import timedelta
from pathlib import Path

from bytewax.dataflow import Dataflow
from bytewax.recovery import RecoveryConfig, init_db_dir
from bytewax.run import cli_main

from flows.settings import Settings
from schemas.errors import ConfigurationError


def recovery_partitions(directory: Path) -> list[Path]:
    return sorted(directory.glob("part-*.sqlite3"))


def init_recovery(directory: Path, partitions: int, *, process_id: int | None = None, processes: int = 1) -> list[Path]:
    """Create `partitions` empty recovery partitions (`python -m bytewax.recovery DIR N`).

    In a cluster without a shared volume, each process keeps the partitions it owns
    (index % processes == process_id) in its own directory; together they hold all N, which
    is what Bytewax needs to resume. Refuses a directory that already holds partitions:
    re-initialising would throw away the snapshots.
    """
    if partitions < 1 or processes < 1:
        raise ConfigurationError(f"recovery needs partitions >= 1 and processes >= 1, got {partitions} and {processes}")
    if process_id is not None and not 0 <= process_id < processes:
        raise ConfigurationError(f"process id {process_id} is outside 0..{processes - 1}")
    if recovery_partitions(directory):
        raise ConfigurationError(f"{directory} already holds recovery partitions; remove them to start from scratch")
    directory.mkdir(parents=True, exist_ok=True)
    init_db_dir(directory, partitions)  # type: ignore[no-untyped-call]
    if process_id is not None:
        for part in recovery_partitions(directory):
            if int(part.stem.split("-", 1)[1]) % processes != process_id:
                part.unlink()
    return recovery_partitions(directory)


def recovery_for(settings: Settings, *, auto_init: bool) -> RecoveryConfig | None:
    """The RecoveryConfig of these settings (None when recovery is off).

    A single process initialises an empty directory itself (`auto_init`); a process of a
    cluster does not, because its partitions must be laid out once for the whole cluster.
    """
    cfg = settings.recovery
    if not cfg.enabled:
        return None
    if not recovery_partitions(cfg.dir):
        if not auto_init:
            raise ConfigurationError(
                f"recovery is on but {cfg.dir} holds no partitions; "
                "run `recallflow recovery init` on each process first"
            )
        init_recovery(cfg.dir, cfg.partitions)
    backup = timedelta(seconds=cfg.backup_interval_s) if cfg.backup_interval_s else None
    return RecoveryConfig(cfg.dir, backup)  # type: ignore[no-untyped-call]


def execute(
    flow: Dataflow,
    settings: Settings,
    *,
    workers: int = 1,
    process_id: int | None = None,
    addresses: list[str] | None = None,
) -> None:
    """Run a dataflow: `workers` threads per process; a cluster when `addresses` are given (`-i/-a`)."""
    if (process_id is None) != (not addresses):
        raise ConfigurationError("a cluster run needs both a process id (-i) and every process address (-a)")
    if process_id is not None and addresses is not None and not 0 <= process_id < len(addresses):
        raise ConfigurationError(f"process id {process_id} is outside the {len(addresses)} addresses given")
    recovery = recovery_for(settings, auto_init=process_id is None)
    # Everything alive now (models, lexicons, dictionaries, the dataflow) lives as long as the
    # run: kept out of the cyclic collector, its full passes stop walking hundreds of thousands of
    # objects that never die (~250 ms a pass; in fast mode ~15 % of the flow's own CPU time).
    # Handed back afterwards, so a process that runs many flows (tests) collects them as before.
    gc.freeze()
    try:
        cli_main(  # type: ignore[no-untyped-call]
            flow,
            workers_per_process=workers,
            process_id=process_id,
            addresses=addresses,
            epoch_interval=timedelta(seconds=settings.recovery.snapshot_interval_s),
            recovery_config=recovery,
        )
    finally:
        gc.unfreeze()
