"""The catalog's seed rows, frozen here as they were when the catalog became its own app.

A migration must not import live code (the live catalog, catalog/domain/catalog.py, goes on
changing): these literals are the rows as of this migration. Existing rows are upserted, rows
added by people are left alone; `catalog.services.seed_catalog` keeps later additions in step.
"""

from decimal import Decimal

from django.db import migrations

GPUS = [
    {
        "name": "V100-32GB",
        "memory_bytes": 34359738368,
        "peak_flops": {"fp32": 15700000000000.0, "fp16": 125000000000000.0},
        "source": "NVIDIA Tesla V100 datasheet (SXM2): FP32 15.7, Tensor (FP16, FP32 accumulate) 125 "
        "TFLOPS; no bf16/tf32",
        "tdp_watts": 300,
    },
    {
        "name": "T4",
        "memory_bytes": 17179869184,
        "peak_flops": {"fp32": 8100000000000.0, "fp16": 65000000000000.0},
        "source": "NVIDIA T4 datasheet: FP32 8.1, mixed FP16/FP32 65 TFLOPS; no bf16/tf32",
        "tdp_watts": 70,
    },
    {
        "name": "A10",
        "memory_bytes": 25769803776,
        "peak_flops": {
            "fp32": 31200000000000.0,
            "tf32": 62500000000000.0,
            "bf16": 125000000000000.0,
            "fp16": 125000000000000.0,
        },
        "source": "NVIDIA A10 datasheet: FP32 31.2, TF32 62.5 (125*), BF16/FP16 125 (250*) TFLOPS",
        "tdp_watts": 150,
    },
    {
        "name": "L4",
        "memory_bytes": 25769803776,
        "peak_flops": {
            "fp32": 30300000000000.0,
            "tf32": 60000000000000.0,
            "bf16": 121000000000000.0,
            "fp16": 121000000000000.0,
            "fp8": 242500000000000.0,
        },
        "source": "NVIDIA L4 datasheet: FP32 30.3, TF32 120*, BF16/FP16 242*, FP8 485* TFLOPS with "
        "sparsity; halved for dense",
        "tdp_watts": 72,
    },
    {
        "name": "L40S",
        "memory_bytes": 51539607552,
        "peak_flops": {
            "fp32": 91600000000000.0,
            "tf32": 183000000000000.0,
            "bf16": 362050000000000.0,
            "fp16": 362050000000000.0,
            "fp8": 733000000000000.0,
        },
        "source": "NVIDIA L40S datasheet: FP32 91.6, TF32 183 (366*), BF16/FP16 362.05 (733*), FP8 "
        "733 (1,466*) TFLOPS",
        "tdp_watts": 350,
    },
    {
        "name": "A100-40GB",
        "memory_bytes": 42949672960,
        "peak_flops": {
            "fp32": 19500000000000.0,
            "tf32": 156000000000000.0,
            "bf16": 312000000000000.0,
            "fp16": 312000000000000.0,
        },
        "source": "NVIDIA A100 Tensor Core GPU datasheet (SXM): FP32 19.5, TF32 156, BF16/FP16 312 "
        "TFLOPS dense (312/624/624 are the sparsity figures)",
        "tdp_watts": 400,
    },
    {
        "name": "A100-80GB",
        "memory_bytes": 85899345920,
        "peak_flops": {
            "fp32": 19500000000000.0,
            "tf32": 156000000000000.0,
            "bf16": 312000000000000.0,
            "fp16": 312000000000000.0,
        },
        "source": "NVIDIA A100 Tensor Core GPU datasheet (SXM): FP32 19.5, TF32 156, BF16/FP16 312 "
        "TFLOPS dense (312/624/624 are the sparsity figures)",
        "tdp_watts": 400,
    },
    {
        "name": "H100-SXM",
        "memory_bytes": 85899345920,
        "peak_flops": {
            "fp32": 67000000000000.0,
            "tf32": 494500000000000.0,
            "bf16": 989500000000000.0,
            "fp16": 989500000000000.0,
            "fp8": 1979000000000000.0,
        },
        "source": "NVIDIA H100/H200 datasheet (SXM): FP32 67, TF32 989*, BF16/FP16 1,979*, FP8 "
        "3,958* TFLOPS with sparsity; halved for dense",
        "tdp_watts": 700,
    },
    {
        "name": "H100-PCIe",
        "memory_bytes": 85899345920,
        "peak_flops": {
            "fp32": 51000000000000.0,
            "tf32": 378000000000000.0,
            "bf16": 756500000000000.0,
            "fp16": 756500000000000.0,
            "fp8": 1513000000000000.0,
        },
        "source": "NVIDIA H100 datasheet (PCIe): FP32 51, TF32 756*, BF16/FP16 1,513*, FP8 3,026* "
        "TFLOPS with sparsity; halved for dense",
        "tdp_watts": 350,
    },
    {
        "name": "H200",
        "memory_bytes": 151397597184,
        "peak_flops": {
            "fp32": 67000000000000.0,
            "tf32": 494500000000000.0,
            "bf16": 989500000000000.0,
            "fp16": 989500000000000.0,
            "fp8": 1979000000000000.0,
        },
        "source": "NVIDIA H100/H200 datasheet (SXM): FP32 67, TF32 989*, BF16/FP16 1,979*, FP8 "
        "3,958* TFLOPS with sparsity; halved for dense",
        "tdp_watts": 700,
    },
    {
        "name": "B200",
        "memory_bytes": 193273528320,
        "peak_flops": {
            "fp32": 75000000000000.0,
            "tf32": 1100000000000000.0,
            "bf16": 2250000000000000.0,
            "fp16": 2250000000000000.0,
            "fp8": 4500000000000000.0,
        },
        "source": "NVIDIA HGX B200 datasheet, per GPU: FP32 75, TF32 2.2 PF*, FP16/BF16 4.5 PF*, FP8 "
        "9 PF* with sparsity; halved for dense; 180 GB HBM3e per GPU (1.4 TB per 8)",
        "tdp_watts": 1000,
    },
    {
        "name": "RTX-3090",
        "memory_bytes": 25769803776,
        "peak_flops": {
            "fp32": 35600000000000.0,
            "tf32": 35600000000000.0,
            "bf16": 71000000000000.0,
            "fp16": 71000000000000.0,
        },
        "source": "NVIDIA Ampere GA102 architecture whitepaper: FP32 35.6, TF32 35.6, BF16/FP16 "
        "tensor with FP32 accumulate 71 TFLOPS dense (GeForce runs FP32 accumulate at half "
        "rate)",
        "tdp_watts": 350,
    },
    {
        "name": "RTX-4090",
        "memory_bytes": 25769803776,
        "peak_flops": {
            "fp32": 82600000000000.0,
            "tf32": 82600000000000.0,
            "bf16": 165200000000000.0,
            "fp16": 165200000000000.0,
            "fp8": 330300000000000.0,
        },
        "source": "NVIDIA Ada Lovelace (AD102) architecture whitepaper: FP32 82.6, TF32 82.6, "
        "BF16/FP16 tensor with FP32 accumulate 165.2, FP8 with FP32 accumulate 330.3 "
        "TFLOPS dense",
        "tdp_watts": 450,
    },
    {
        "name": "A10G",
        "memory_bytes": 25769803776,
        "peak_flops": {
            "fp32": 35000000000000.0,
            "tf32": 35000000000000.0,
            "bf16": 70000000000000.0,
            "fp16": 70000000000000.0,
        },
        "source": "AWS EC2 G5 (NVIDIA A10G, 24 GB): FP32 35, TF32 35, BF16/FP16 tensor 70 TFLOPS "
        "dense, 300 W; NVIDIA publishes no A10G datasheet (figures as AWS and Baseten's "
        "A10 vs A10G comparison state them)",
        "tdp_watts": 300,
    },
    {
        "name": "H800",
        "memory_bytes": 85899345920,
        "peak_flops": {
            "fp32": 67000000000000.0,
            "tf32": 494500000000000.0,
            "bf16": 989500000000000.0,
            "fp16": 989500000000000.0,
            "fp8": 1979000000000000.0,
        },
        "source": "NVIDIA H800 datasheet (SXM): FP32 67, TF32 989*, BF16/FP16 1,979*, FP8 3,958* "
        "TFLOPS with sparsity (the H100 SXM's tensor cores; NVLink and FP64 cut); halved "
        "for dense",
        "tdp_watts": 700,
    },
    {
        "name": "MI300X",
        "memory_bytes": 206158430208,
        "peak_flops": {
            "fp32": 163400000000000.0,
            "tf32": 653700000000000.0,
            "bf16": 1307400000000000.0,
            "fp16": 1307400000000000.0,
            "fp8": 2614900000000000.0,
        },
        "source": "AMD Instinct MI300X datasheet: 192 GB HBM3; FP32 vector 163.4, TF32 653.7, "
        "BF16/FP16 1,307.4, FP8 2,614.9 TFLOPS dense (sparsity figures double these); 750 "
        "W",
        "tdp_watts": 750,
    },
    {
        "name": "TPU-v4",
        "memory_bytes": 34359738368,
        "peak_flops": {"bf16": 275000000000000.0},
        "source": "Google Cloud TPU v4 documentation: 275 TFLOPS peak bf16 per chip, 32 GiB HBM2; "
        "Jouppi et al. (2023), 'TPU v4', ISCA: ~192 W maximum per chip",
        "tdp_watts": 192,
    },
    {
        "name": "TPU-v5e",
        "memory_bytes": 17179869184,
        "peak_flops": {"bf16": 197000000000000.0},
        "source": "Google Cloud TPU v5e documentation: 197 TFLOPS peak bf16 per chip, 16 GiB HBM2",
        "tdp_watts": None,
    },
    {
        "name": "TPU-v5p",
        "memory_bytes": 102005473280,
        "peak_flops": {"bf16": 459000000000000.0},
        "source": "Google Cloud TPU v5p documentation: 459 TFLOPS peak bf16 per chip, 95 GiB HBM2e",
        "tdp_watts": None,
    },
]

PLANS = [
    {
        "provider": "IteraGPU",
        "name": "RTX 4090, 3 days",
        "gpu": "RTX-4090",
        "gpus_per_lot": 1,
        "duration_hours": "72",
        "price": "47.14",
        "currency": "USD",
        "note": "",
        "illustrative": False,
    },
    {
        "provider": "IteraGPU",
        "name": "RTX 4090, 7 days",
        "gpu": "RTX-4090",
        "gpus_per_lot": 1,
        "duration_hours": "168",
        "price": "110.00",
        "currency": "USD",
        "note": "",
        "illustrative": False,
    },
    {
        "provider": "IteraGPU",
        "name": "RTX 4090, 30 days",
        "gpu": "RTX-4090",
        "gpus_per_lot": 1,
        "duration_hours": "720",
        "price": "390.00",
        "currency": "USD",
        "note": "",
        "illustrative": False,
    },
    {
        "provider": "IteraGPU",
        "name": "2x B200, 3 days",
        "gpu": "B200",
        "gpus_per_lot": 2,
        "duration_hours": "72",
        "price": "648.00",
        "currency": "USD",
        "note": "Illustrative catalogue figure, not from the seed: the seed only says a B200 lot "
        "includes two GPUs and is priced per lot. 648.00 USD is 2 GPUs x 72 h x 4.50 USD.",
        "illustrative": True,
    },
]


def seed(apps, schema_editor):
    GpuModel = apps.get_model("catalog", "GpuModel")
    RentalPlan = apps.get_model("catalog", "RentalPlan")
    rows = {}
    for gpu in GPUS:
        values = {k: v for k, v in gpu.items() if k != "name"}
        rows[gpu["name"]], _ = GpuModel.objects.update_or_create(name=gpu["name"], defaults=values)
    for plan in PLANS:
        values = {k: v for k, v in plan.items() if k not in ("provider", "name", "gpu")}
        values["gpu"] = rows[plan["gpu"]]
        values["duration_hours"] = Decimal(values["duration_hours"])
        values["price"] = Decimal(values["price"])
        RentalPlan.objects.update_or_create(
            provider=plan["provider"], name=plan["name"], defaults=values
        )


class Migration(migrations.Migration):
    dependencies = [("catalog", "0001_initial")]

    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
