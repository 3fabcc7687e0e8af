"""The MLflow client script both servers are timed with: plain `mlflow` calls, configured only
by MLFLOW_TRACKING_URI (and MLFLOW_TRACKING_TOKEN for Campaign Desk). Prints one JSON line.

    python bench/mlflow/client.py --steps 500 --batches 20
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

import mlflow
from mlflow.entities import Metric


def _timed(call: Callable[[int], object], args: argparse.Namespace) -> list[float]:
    """Each of `args.steps` calls' duration, in seconds."""
    took = []
    for n in range(args.steps):
        t = time.perf_counter()
        call(n)
        took.append(time.perf_counter() - t)
    return took


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument(
        "--steps",
        type=int,
        default=500,
        help="synchronous log_metric (and log_param, set_tag) calls",
    )
    p.add_argument("--batches", type=int, default=20, help="log_batch calls of --batch-size")
    p.add_argument("--batch-size", type=int, default=1000)
    p.add_argument("--run-name", default="bench-run")
    args = p.parse_args()

    mlflow.set_experiment("bench")
    client = mlflow.MlflowClient()
    with mlflow.start_run(run_name=args.run_name) as run:
        run_id = run.info.run_id
        mlflow.log_params({"lr": 2e-4, "rank": 16})
        for step in range(5):  # warm-up: connections, caches
            mlflow.log_metric("warmup", 1.0, step=step)
        sync = _timed(lambda step: mlflow.log_metric("loss", 2.0 / (step + 1), step=step), args)
        # log_param and set_tag, as synchronous as log_metric: one call, one request.
        params = _timed(lambda n: mlflow.log_param(f"p{n}", n), args)
        tags = _timed(lambda n: mlflow.set_tag("epoch", str(n)), args)
        build, send = [], []
        for b in range(args.batches):
            t0 = time.perf_counter()
            now = int(time.time() * 1000)
            base = b * args.batch_size
            metrics = [
                Metric("batch_loss", 1.0 / (i + 1), now, base + i) for i in range(args.batch_size)
            ]
            t1 = time.perf_counter()
            client.log_batch(run_id, metrics=metrics)
            t2 = time.perf_counter()
            build.append(t1 - t0)
            send.append(t2 - t1)
    print(
        json.dumps(
            {
                "steps": args.steps,
                "sync_median_ms": statistics.median(sync) * 1000,
                "sync_mean_ms": statistics.fmean(sync) * 1000,
                "sync_p95_ms": sorted(sync)[int(len(sync) * 0.95) - 1] * 1000,
                "param_median_ms": statistics.median(params) * 1000,
                "tag_median_ms": statistics.median(tags) * 1000,
                "batches": args.batches,
                "batch_size": args.batch_size,
                "batch_median_ms": statistics.median(send) * 1000,
                "batch_build_median_ms": statistics.median(build) * 1000,
            }
        )
    )


if __name__ == "__main__":
    main()
