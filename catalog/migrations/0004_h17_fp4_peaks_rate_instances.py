"""FP4 peaks on the cards that have an FP4 tensor-core format (B200, B300, GB200, RTX 5090,
MI355X), for the FP4 cost lever (docs/domain.md §24.7), re-checked against their datasheets;
the AWS H100 rate's source says the June 2025 price cut superseded it (its as_of,
2024-06-01, is unchanged: the answers already call it over a year old); and an hourly rate
carries the GPUs rented together at it (``gpus_per_instance``): the three seeded rates are
per GPU of an 8-GPU instance, as their sources say, so a one-GPU job pays for eight.

Sources, as read for this migration: NVIDIA HGX B200 and HGX B300 datasheets (FP4 per 8 GPUs:
B200 72 PF dense; B300 144 PF with sparsity, 108 PF dense), the GB200 NVL72 datasheet (FP4
1,440 PF with sparsity per 72 GPUs), the RTX Blackwell GB202 whitepaper (3,352 FP4 AI TOPS
with sparsity), AMD's MI355X datasheet (MXFP4 10.1 PF). The other figures of these rows
(FP32 to FP8, memory, board power) matched the same sources and are unchanged.

Frozen literals (a migration never imports live code); ``catalog.domain.catalog`` holds the
same values for ``catalog.services.seed_catalog``.
"""

import django.core.validators
from django.db import migrations, models

GPUS = [
    {
        "name": "B200",
        "peak_flops": {
            "fp32": 75000000000000.0,
            "tf32": 1100000000000000.0,
            "bf16": 2250000000000000.0,
            "fp16": 2250000000000000.0,
            "fp8": 4500000000000000.0,
            "fp4": 9000000000000000.0,
        },
        "source": "NVIDIA HGX B200 datasheet, per GPU: FP32 75, TF32 2.2 PF*, FP16/BF16 4.5 PF*, FP8 "
        "9 PF* with sparsity; halved for dense; FP4 18 PF*, 9 PF dense; 180 GB HBM3e per "
        "GPU (1.4 TB per 8)",
    },
    {
        "name": "B300",
        "peak_flops": {
            "fp32": 75000000000000.0,
            "tf32": 1100000000000000.0,
            "bf16": 2250000000000000.0,
            "fp16": 2250000000000000.0,
            "fp8": 4500000000000000.0,
            "fp4": 1.35e16,
        },
        "source": "NVIDIA HGX B300 datasheet, per GPU: TF32 2.2 PF*, FP16/BF16 4.5 PF*, FP8 9 PF* "
        "with sparsity; halved for dense; FP4 144 PF* / 108 PF dense per 8 (13.5 PF per "
        "GPU); 288 GB HBM3e per GPU (2.3 TB per 8); FP32 75 TFLOPS",
    },
    {
        "name": "GB200",
        "peak_flops": {
            "fp32": 80000000000000.0,
            "tf32": 1250000000000000.0,
            "bf16": 2500000000000000.0,
            "fp16": 2500000000000000.0,
            "fp8": 5000000000000000.0,
            "fp4": 1e16,
        },
        "source": "NVIDIA GB200 NVL72 datasheet, per Blackwell GPU (/72): FP32 80, TF32 2.5 PF*, "
        "FP16/BF16 5 PF*, FP8 10 PF*, FP4 20 PF* with sparsity; halved for dense; 13.4 TB "
        "HBM3e / 72",
    },
    {
        "name": "RTX-5090",
        "peak_flops": {
            "fp32": 104800000000000.0,
            "tf32": 104800000000000.0,
            "bf16": 209500000000000.0,
            "fp16": 209500000000000.0,
            "fp8": 419000000000000.0,
            "fp4": 1676000000000000.0,
        },
        "source": "NVIDIA Blackwell GB202 (RTX 5090) architecture whitepaper: FP32 104.8, BF16/FP16 "
        "tensor with FP32 accumulate 209.5, FP8 419, FP4 1,676 TFLOPS dense (3,352 AI TOPS "
        "with sparsity); 32 GB GDDR7, 575 W",
    },
    {
        "name": "MI355X",
        "peak_flops": {
            "fp32": 157300000000000.0,
            "bf16": 2516600000000000.0,
            "fp16": 2516600000000000.0,
            "fp8": 5033200000000000.0,
            "fp4": 1.00664e16,
        },
        "source": "AMD Instinct MI355X datasheet: 288 GB HBM3E; FP32 vector 157.3, FP16/BF16 "
        "2,516.6, FP8 5,033.2, MXFP4 10,066.4 TFLOPS dense (sparsity figures double "
        "these); 1,400 W",
    },
]

AWS_H100_SOURCE = "AWS EC2 on-demand, p5.48xlarge (8x H100 80GB), us-east-1: 98.32 USD per hour / 8; superseded by AWS's June 2025 cut of P5 on-demand prices (up to 45%)"

EIGHT_GPU_INSTANCES = [("Lambda", "H100-SXM"), ("AWS", "H100-SXM"), ("CoreWeave", "H200")]


def update(apps, schema_editor):
    GpuModel = apps.get_model("catalog", "GpuModel")
    HourlyRate = apps.get_model("catalog", "HourlyRate")
    for row in GPUS:
        GpuModel.objects.filter(name=row["name"]).update(
            peak_flops=row["peak_flops"], source=row["source"]
        )
    HourlyRate.objects.filter(provider="AWS", gpu__name="H100-SXM").update(source=AWS_H100_SOURCE)
    for provider, gpu in EIGHT_GPU_INSTANCES:
        HourlyRate.objects.filter(provider=provider, gpu__name=gpu).update(gpus_per_instance=8)


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0003_h17_interconnect_provenance"),
    ]

    operations = [
        migrations.AddField(
            model_name="hourlyrate",
            name="gpus_per_instance",
            field=models.PositiveIntegerField(
                default=1,
                help_text="GPUs rented together at this rate (8 for an 8-GPU instance).",
                validators=[django.core.validators.MinValueValidator(1)],
            ),
        ),
        migrations.RunPython(update, migrations.RunPython.noop),
    ]
