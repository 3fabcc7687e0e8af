"""Interconnect bandwidths on GPUs, source and date on rental plans, published hourly rates
(docs/domain.md §24.6, §24.8), and the 2026 cards (B300, GB200, RTX 5090, MI355X).

The rows are frozen literals as of this migration (a migration never imports live code);
``catalog.services.seed_catalog`` keeps later changes in step.
"""

import datetime
from decimal import Decimal

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models

GPUS = [
    {
        "name": "V100-32GB",
        "memory_bytes": 34359738368,
        "peak_flops": {"fp32": 15700000000000.0, "fp16": 125000000000000.0},
        "source": "NVIDIA Tesla V100 datasheet (SXM2): FP32 15.7, Tensor (FP16, FP32 accumulate) 125 "
        "TFLOPS; no bf16/tf32",
        "tdp_watts": 300,
        "card_to_card_bytes_per_second": 150000000000.0,
        "node_to_node_bytes_per_second": 12500000000.0,
        "interconnect_source": "V100 SXM2 datasheet: NVLink 300 GB/s; DGX-1 100 Gb/s IB",
    },
    {
        "name": "T4",
        "memory_bytes": 17179869184,
        "peak_flops": {"fp32": 8100000000000.0, "fp16": 65000000000000.0},
        "source": "NVIDIA T4 datasheet: FP32 8.1, mixed FP16/FP32 65 TFLOPS; no bf16/tf32",
        "tdp_watts": 70,
        "card_to_card_bytes_per_second": 16000000000.0,
        "node_to_node_bytes_per_second": None,
        "interconnect_source": "T4 datasheet: PCIe Gen3 x16, 32 GB/s bidirectional",
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
        "card_to_card_bytes_per_second": 32000000000.0,
        "node_to_node_bytes_per_second": None,
        "interconnect_source": "A10 datasheet: PCIe Gen4 x16: 64 GB/s bidirectional, 32 GB/s each way",
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
        "card_to_card_bytes_per_second": 32000000000.0,
        "node_to_node_bytes_per_second": None,
        "interconnect_source": "L4 datasheet: PCIe Gen4 x16: 64 GB/s bidirectional, 32 GB/s each way",
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
        "source": "NVIDIA L40S datasheet: FP32 91.6, TF32 183 (366*), BF16/FP16 362.05 (733*), FP8 733 "
        "(1,466*) TFLOPS",
        "tdp_watts": 350,
        "card_to_card_bytes_per_second": 32000000000.0,
        "node_to_node_bytes_per_second": None,
        "interconnect_source": "L40S datasheet: PCIe Gen4 x16: 64 GB/s bidirectional, 32 GB/s each "
        "way",
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
        "card_to_card_bytes_per_second": 300000000000.0,
        "node_to_node_bytes_per_second": 25000000000.0,
        "interconnect_source": "A100 datasheet: NVLink 600 GB/s; DGX A100 8x 200 Gb/s",
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
        "card_to_card_bytes_per_second": 300000000000.0,
        "node_to_node_bytes_per_second": 25000000000.0,
        "interconnect_source": "A100 datasheet: NVLink 600 GB/s; DGX A100 8x 200 Gb/s",
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
        "source": "NVIDIA H100/H200 datasheet (SXM): FP32 67, TF32 989*, BF16/FP16 1,979*, FP8 3,958* "
        "TFLOPS with sparsity; halved for dense",
        "tdp_watts": 700,
        "card_to_card_bytes_per_second": 450000000000.0,
        "node_to_node_bytes_per_second": 50000000000.0,
        "interconnect_source": "H100 datasheet: NVLink 900 GB/s; DGX H100 8x 400 Gb/s",
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
        "card_to_card_bytes_per_second": 64000000000.0,
        "node_to_node_bytes_per_second": None,
        "interconnect_source": "H100 PCIe datasheet: PCIe Gen5 x16: 128 GB/s bidirectional, 64 GB/s "
        "each way (NVLink bridge pairs only)",
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
        "source": "NVIDIA H100/H200 datasheet (SXM): FP32 67, TF32 989*, BF16/FP16 1,979*, FP8 3,958* "
        "TFLOPS with sparsity; halved for dense",
        "tdp_watts": 700,
        "card_to_card_bytes_per_second": 450000000000.0,
        "node_to_node_bytes_per_second": 50000000000.0,
        "interconnect_source": "H200 datasheet: NVLink 900 GB/s; HGX H200 8x 400 Gb/s",
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
        "source": "NVIDIA HGX B200 datasheet, per GPU: FP32 75, TF32 2.2 PF*, FP16/BF16 4.5 PF*, FP8 9 "
        "PF* with sparsity; halved for dense; 180 GB HBM3e per GPU (1.4 TB per 8)",
        "tdp_watts": 1000,
        "card_to_card_bytes_per_second": 900000000000.0,
        "node_to_node_bytes_per_second": 50000000000.0,
        "interconnect_source": "HGX B200 datasheet: NVLink 5 1.8 TB/s; 8x 400 Gb/s",
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
        "source": "NVIDIA Ampere GA102 architecture whitepaper: FP32 35.6, TF32 35.6, BF16/FP16 tensor "
        "with FP32 accumulate 71 TFLOPS dense (GeForce runs FP32 accumulate at half rate)",
        "tdp_watts": 350,
        "card_to_card_bytes_per_second": 32000000000.0,
        "node_to_node_bytes_per_second": None,
        "interconnect_source": "GA102 whitepaper: PCIe Gen4 x16: 64 GB/s bidirectional, 32 GB/s each "
        "way (NVLink bridge pairs only)",
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
        "BF16/FP16 tensor with FP32 accumulate 165.2, FP8 with FP32 accumulate 330.3 TFLOPS "
        "dense",
        "tdp_watts": 450,
        "card_to_card_bytes_per_second": 32000000000.0,
        "node_to_node_bytes_per_second": None,
        "interconnect_source": "AD102 whitepaper: PCIe Gen4 x16: 64 GB/s bidirectional, 32 GB/s each "
        "way; no NVLink",
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
        "dense, 300 W; NVIDIA publishes no A10G datasheet (figures as AWS and Baseten's A10 "
        "vs A10G comparison state them)",
        "tdp_watts": 300,
        "card_to_card_bytes_per_second": 32000000000.0,
        "node_to_node_bytes_per_second": None,
        "interconnect_source": "AWS G5: PCIe Gen4 x16: 64 GB/s bidirectional, 32 GB/s each way",
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
        "TFLOPS with sparsity (the H100 SXM's tensor cores; NVLink and FP64 cut); halved for "
        "dense",
        "tdp_watts": 700,
        "card_to_card_bytes_per_second": 200000000000.0,
        "node_to_node_bytes_per_second": 50000000000.0,
        "interconnect_source": "H800 datasheet: NVLink 400 GB/s; 8x 400 Gb/s IB",
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
        "BF16/FP16 1,307.4, FP8 2,614.9 TFLOPS dense (sparsity figures double these); 750 W",
        "tdp_watts": 750,
        "card_to_card_bytes_per_second": 448000000000.0,
        "node_to_node_bytes_per_second": 50000000000.0,
        "interconnect_source": "MI300X datasheet: 7 Infinity Fabric links, 896 GB/s",
    },
    {
        "name": "B300",
        "memory_bytes": 309237645312,
        "peak_flops": {
            "fp32": 75000000000000.0,
            "tf32": 1100000000000000.0,
            "bf16": 2250000000000000.0,
            "fp16": 2250000000000000.0,
            "fp8": 4500000000000000.0,
        },
        "source": "NVIDIA HGX B300 datasheet, per GPU: TF32 2.2 PF*, FP16/BF16 4.5 PF*, FP8 9 PF* with "
        "sparsity; halved for dense; 288 GB HBM3e per GPU (2.3 TB per 8); FP32 75 TFLOPS",
        "tdp_watts": 1100,
        "card_to_card_bytes_per_second": 900000000000.0,
        "node_to_node_bytes_per_second": 100000000000.0,
        "interconnect_source": "HGX B300 datasheet: NVLink 5 1.8 TB/s; 8x 800 Gb/s",
    },
    {
        "name": "GB200",
        "memory_bytes": 199715979264,
        "peak_flops": {
            "fp32": 80000000000000.0,
            "tf32": 1250000000000000.0,
            "bf16": 2500000000000000.0,
            "fp16": 2500000000000000.0,
            "fp8": 5000000000000000.0,
        },
        "source": "NVIDIA GB200 NVL72 datasheet, per Blackwell GPU (/72): FP32 80, TF32 2.5 PF*, "
        "FP16/BF16 5 PF*, FP8 10 PF* with sparsity; halved for dense; 13.4 TB HBM3e / 72",
        "tdp_watts": 1200,
        "card_to_card_bytes_per_second": 900000000000.0,
        "node_to_node_bytes_per_second": 50000000000.0,
        "interconnect_source": "GB200 NVL72 datasheet: NVLink 5 1.8 TB/s per GPU, 72 GPUs",
    },
    {
        "name": "RTX-5090",
        "memory_bytes": 34359738368,
        "peak_flops": {
            "fp32": 104800000000000.0,
            "tf32": 104800000000000.0,
            "bf16": 209500000000000.0,
            "fp16": 209500000000000.0,
            "fp8": 419000000000000.0,
        },
        "source": "NVIDIA Blackwell GB202 (RTX 5090) architecture whitepaper: FP32 104.8, BF16/FP16 "
        "tensor with FP32 accumulate 209.5, FP8 419 TFLOPS dense; 32 GB GDDR7, 575 W",
        "tdp_watts": 575,
        "card_to_card_bytes_per_second": 64000000000.0,
        "node_to_node_bytes_per_second": None,
        "interconnect_source": "GB202 whitepaper: PCIe Gen5 x16: 128 GB/s bidirectional, 64 GB/s each "
        "way; no NVLink",
    },
    {
        "name": "MI355X",
        "memory_bytes": 309237645312,
        "peak_flops": {
            "fp32": 157300000000000.0,
            "bf16": 2516600000000000.0,
            "fp16": 2516600000000000.0,
            "fp8": 5033200000000000.0,
        },
        "source": "AMD Instinct MI355X datasheet: 288 GB HBM3E; FP32 vector 157.3, FP16/BF16 2,516.6, "
        "FP8 5,033.2 TFLOPS dense (sparsity figures double these); 1,400 W",
        "tdp_watts": 1400,
        "card_to_card_bytes_per_second": 537600000000.0,
        "node_to_node_bytes_per_second": 50000000000.0,
        "interconnect_source": "MI355X datasheet: 7 Infinity Fabric links, 1,075 GB/s",
    },
    {
        "name": "TPU-v4",
        "memory_bytes": 34359738368,
        "peak_flops": {"bf16": 275000000000000.0},
        "source": "Google Cloud TPU v4 documentation: 275 TFLOPS peak bf16 per chip, 32 GiB HBM2; "
        "Jouppi et al. (2023), 'TPU v4', ISCA: ~192 W maximum per chip",
        "tdp_watts": 192,
        "card_to_card_bytes_per_second": None,
        "node_to_node_bytes_per_second": None,
        "interconnect_source": "",
    },
    {
        "name": "TPU-v5e",
        "memory_bytes": 17179869184,
        "peak_flops": {"bf16": 197000000000000.0},
        "source": "Google Cloud TPU v5e documentation: 197 TFLOPS peak bf16 per chip, 16 GiB HBM2",
        "tdp_watts": None,
        "card_to_card_bytes_per_second": None,
        "node_to_node_bytes_per_second": None,
        "interconnect_source": "",
    },
    {
        "name": "TPU-v5p",
        "memory_bytes": 102005473280,
        "peak_flops": {"bf16": 459000000000000.0},
        "source": "Google Cloud TPU v5p documentation: 459 TFLOPS peak bf16 per chip, 95 GiB HBM2e",
        "tdp_watts": None,
        "card_to_card_bytes_per_second": None,
        "node_to_node_bytes_per_second": None,
        "interconnect_source": "",
    },
]
PLANS = [
    {
        "provider": "IteraGPU",
        "name": "RTX 4090, 3 days",
        "source": "IteraGPU catalogue, as the seed states it (docs/domain.md §9)",
        "as_of": None,
    },
    {
        "provider": "IteraGPU",
        "name": "RTX 4090, 7 days",
        "source": "IteraGPU catalogue, as the seed states it (docs/domain.md §9)",
        "as_of": None,
    },
    {
        "provider": "IteraGPU",
        "name": "RTX 4090, 30 days",
        "source": "IteraGPU catalogue, as the seed states it (docs/domain.md §9)",
        "as_of": None,
    },
    {
        "provider": "IteraGPU",
        "name": "2x B200, 3 days",
        "source": "illustrative (made up for the demo)",
        "as_of": None,
    },
]
RATES = [
    {
        "provider": "Lambda",
        "gpu": "H100-SXM",
        "rate_per_gpu_hour": "2.99",
        "currency": "USD",
        "source": "Lambda pricing page, on-demand 8x NVIDIA H100 SXM 80GB: 2.99 USD per GPU-hour",
        "as_of": "2025-01-15",
    },
    {
        "provider": "AWS",
        "gpu": "H100-SXM",
        "rate_per_gpu_hour": "12.29",
        "currency": "USD",
        "source": "AWS EC2 on-demand, p5.48xlarge (8x H100 80GB), us-east-1: 98.32 USD per hour / 8",
        "as_of": "2024-06-01",
    },
    {
        "provider": "CoreWeave",
        "gpu": "H200",
        "rate_per_gpu_hour": "6.31",
        "currency": "USD",
        "source": "CoreWeave pricing page, NVIDIA HGX H200 (8 GPUs): 50.44 USD per hour / 8",
        "as_of": "2025-01-15",
    },
]


def seed(apps, schema_editor):
    GpuModel = apps.get_model("catalog", "GpuModel")
    RentalPlan = apps.get_model("catalog", "RentalPlan")
    HourlyRate = apps.get_model("catalog", "HourlyRate")
    rows = {}
    for gpu in GPUS:
        values = {k: v for k, v in gpu.items() if k != "name"}
        rows[gpu["name"]], _ = GpuModel.objects.update_or_create(name=gpu["name"], defaults=values)
    for plan in PLANS:
        as_of = plan["as_of"]
        RentalPlan.objects.filter(provider=plan["provider"], name=plan["name"]).update(
            source=plan["source"],
            as_of=None if as_of is None else datetime.date.fromisoformat(as_of),
        )
    for rate in RATES:
        HourlyRate.objects.update_or_create(
            provider=rate["provider"],
            gpu=rows[rate["gpu"]],
            defaults={
                "rate_per_gpu_hour": Decimal(rate["rate_per_gpu_hour"]),
                "currency": rate["currency"],
                "source": rate["source"],
                "as_of": datetime.date.fromisoformat(rate["as_of"]),
            },
        )


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0002_seed_rows"),
    ]

    operations = [
        migrations.AddField(
            model_name="gpumodel",
            name="card_to_card_bytes_per_second",
            field=models.FloatField(
                blank=True, help_text="NVLink / Infinity Fabric / PCIe, one direction.", null=True
            ),
        ),
        migrations.AddField(
            model_name="gpumodel",
            name="interconnect_source",
            field=models.CharField(blank=True, max_length=300),
        ),
        migrations.AddField(
            model_name="gpumodel",
            name="node_to_node_bytes_per_second",
            field=models.FloatField(
                blank=True,
                help_text="The reference system's network per GPU, one direction.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="rentalplan",
            name="as_of",
            field=models.DateField(
                blank=True, help_text="When the price was published.", null=True
            ),
        ),
        migrations.AddField(
            model_name="rentalplan",
            name="source",
            field=models.CharField(blank=True, max_length=300),
        ),
        migrations.CreateModel(
            name="HourlyRate",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("provider", models.CharField(max_length=60)),
                (
                    "rate_per_gpu_hour",
                    models.DecimalField(
                        decimal_places=4,
                        max_digits=10,
                        validators=[django.core.validators.MinValueValidator(Decimal("0"))],
                    ),
                ),
                (
                    "currency",
                    models.CharField(
                        default="USD",
                        max_length=3,
                        validators=[
                            django.core.validators.RegexValidator(
                                "^[A-Z]{3}$", "Use a three-letter ISO 4217 code, e.g. USD."
                            )
                        ],
                    ),
                ),
                ("source", models.CharField(max_length=300)),
                ("as_of", models.DateField(blank=True, null=True)),
                ("illustrative", models.BooleanField(default=False)),
                (
                    "gpu",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="hourly_rates",
                        to="catalog.gpumodel",
                    ),
                ),
            ],
            options={
                "ordering": ["gpu__name", "rate_per_gpu_hour"],
                "constraints": [
                    models.UniqueConstraint(fields=("provider", "gpu"), name="hourly_rate_unique")
                ],
            },
        ),
        migrations.RunPython(seed, migrations.RunPython.noop),
    ]
