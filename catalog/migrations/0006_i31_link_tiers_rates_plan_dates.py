"""Link tiers with the measured bus bandwidth per collective (docs/domain.md §24.6), memory
bandwidth for the roofline (§24.11), rental plans dated, and a provider's one-GPU rate beside its
8-GPU instance rate (§24.8).

* ``GpuModel.bus_bandwidth``: per tier (inside a node, between nodes per GPU) the nccl-tests
  bus bandwidth of all-reduce, all-gather, reduce-scatter and all-to-all, a small collective's
  latency and the source; ``memory_bandwidth_bytes_per_second`` from the datasheets.
* The V100's node-to-node spec is a DGX-1's 4x 100 Gb/s EDR for 8 GPUs (6.25 GB/s per GPU, not
  12.5).
* The seeded IteraGPU lots carry a date: the seed prints none, so ``as_of`` is the day the
  project read it (2026-11-29, the first commit holding its prices), as their source now says.
* An hourly rate is unique per provider, GPU and instance size, and Lambda's on-demand 1x H100
  SXM rate (3.78 USD, 2026-05-07) is added beside its 8-GPU instance rate, so a one-GPU job is
  billed as the plan that sells one GPU.

Frozen literals (a migration never imports live code); ``catalog.domain`` holds the same values
for ``catalog.services.seed_catalog``.
"""

import datetime
from decimal import Decimal

from django.db import migrations, models

GPUS = {
    "V100-32GB": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "NVLink 2 (cube mesh)",
                "all_reduce": 117500000000.0,
                "all_gather": 117500000000.0,
                "reduce_scatter": 117500000000.0,
                "all_to_all": 117500000000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": None,
                "source": "carried: stas00/ml-engineering, "
                "network/README.md: nccl-tests "
                "all_reduce on an 8x A100 node, 235 "
                "GB/s (80% of 300 GB/s one way)",
            },
            "node_to_node": {
                "name": "DGX-1: 4x 100 Gb/s EDR per 8 GPUs",
                "all_reduce": 5647000000.0,
                "all_gather": 5647000000.0,
                "reduce_scatter": 5647000000.0,
                "all_to_all": 5647000000.0,
                "latency_seconds": 0.000123,
                "peer_bytes_per_second": None,
                "source": "6.25 GB/s per GPU at the A3 Mega "
                "run's 90% of wire rate; "
                "lessizzmore/create-a3mega-ztan-fork, "
                "ztan-NCCL-test-result: "
                "all_reduce_perf on 16 H100 (two A3 "
                "Mega nodes, 8x 200 Gb/s "
                "GPUDirect-TCPXO), 8 GiB in 47,535 us, "
                "busbw 338.82 GB/s, so 338.82 x 1/15 = "
                "22.59 GB/s per GPU's NIC; 8 B in ~123 "
                "us",
            },
        },
        "memory_bandwidth_bytes_per_second": 900000000000.0,
    },
    "T4": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "PCIe 3 (peer-to-peer)",
                "all_reduce": 10000000000.0,
                "all_gather": 10000000000.0,
                "reduce_scatter": 10000000000.0,
                "all_to_all": 10000000000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": None,
                "source": "PCIe 5's figure x 15.75/63; "
                "docs.alayanew.com/en/docs/tech-blog/2026-05-06-nccl-tests "
                "(NCCL-tests in practice): 8x H100 PCIe "
                "without NVSwitch, 35-45 GB/s all_reduce "
                "busbw (40 GB/s taken, 63% of 63 GB/s)",
            },
            "node_to_node": None,
        },
        "memory_bandwidth_bytes_per_second": 320000000000.0,
    },
    "A10": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "PCIe 4 (peer-to-peer)",
                "all_reduce": 20000000000.0,
                "all_gather": 20000000000.0,
                "reduce_scatter": 20000000000.0,
                "all_to_all": 20000000000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": None,
                "source": "PCIe 5's figure x 31.5/63; "
                "docs.alayanew.com/en/docs/tech-blog/2026-05-06-nccl-tests "
                "(NCCL-tests in practice): 8x H100 PCIe "
                "without NVSwitch, 35-45 GB/s all_reduce "
                "busbw (40 GB/s taken, 63% of 63 GB/s)",
            },
            "node_to_node": None,
        },
        "memory_bandwidth_bytes_per_second": 600000000000.0,
    },
    "L4": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "PCIe 4 (peer-to-peer)",
                "all_reduce": 20000000000.0,
                "all_gather": 20000000000.0,
                "reduce_scatter": 20000000000.0,
                "all_to_all": 20000000000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": None,
                "source": "PCIe 5's figure x 31.5/63; "
                "docs.alayanew.com/en/docs/tech-blog/2026-05-06-nccl-tests "
                "(NCCL-tests in practice): 8x H100 PCIe "
                "without NVSwitch, 35-45 GB/s all_reduce "
                "busbw (40 GB/s taken, 63% of 63 GB/s)",
            },
            "node_to_node": None,
        },
        "memory_bandwidth_bytes_per_second": 300000000000.0,
    },
    "L40S": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "PCIe 4 (peer-to-peer)",
                "all_reduce": 20000000000.0,
                "all_gather": 20000000000.0,
                "reduce_scatter": 20000000000.0,
                "all_to_all": 20000000000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": None,
                "source": "PCIe 5's figure x 31.5/63; "
                "docs.alayanew.com/en/docs/tech-blog/2026-05-06-nccl-tests "
                "(NCCL-tests in practice): 8x H100 PCIe "
                "without NVSwitch, 35-45 GB/s all_reduce "
                "busbw (40 GB/s taken, 63% of 63 GB/s)",
            },
            "node_to_node": None,
        },
        "memory_bandwidth_bytes_per_second": 864000000000.0,
    },
    "A100-40GB": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "NVLink 3 (NVSwitch)",
                "all_reduce": 235000000000.0,
                "all_gather": 235000000000.0,
                "reduce_scatter": 235000000000.0,
                "all_to_all": 235000000000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": None,
                "source": "stas00/ml-engineering, "
                "network/README.md: nccl-tests "
                "all_reduce on an 8x A100 node, 235 "
                "GB/s (80% of 300 GB/s one way)",
            },
            "node_to_node": {
                "name": "200 Gb/s NIC per GPU",
                "all_reduce": 22588000000.0,
                "all_gather": 22588000000.0,
                "reduce_scatter": 22588000000.0,
                "all_to_all": 22588000000.0,
                "latency_seconds": 0.000123,
                "peer_bytes_per_second": None,
                "source": "lessizzmore/create-a3mega-ztan-fork, "
                "ztan-NCCL-test-result: "
                "all_reduce_perf on 16 H100 (two A3 "
                "Mega nodes, 8x 200 Gb/s "
                "GPUDirect-TCPXO), 8 GiB in 47,535 us, "
                "busbw 338.82 GB/s, so 338.82 x 1/15 = "
                "22.59 GB/s per GPU's NIC; 8 B in ~123 "
                "us",
            },
        },
        "memory_bandwidth_bytes_per_second": 1555000000000.0,
    },
    "A100-80GB": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "NVLink 3 (NVSwitch)",
                "all_reduce": 235000000000.0,
                "all_gather": 235000000000.0,
                "reduce_scatter": 235000000000.0,
                "all_to_all": 235000000000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": None,
                "source": "stas00/ml-engineering, "
                "network/README.md: nccl-tests "
                "all_reduce on an 8x A100 node, 235 "
                "GB/s (80% of 300 GB/s one way)",
            },
            "node_to_node": {
                "name": "200 Gb/s NIC per GPU",
                "all_reduce": 22588000000.0,
                "all_gather": 22588000000.0,
                "reduce_scatter": 22588000000.0,
                "all_to_all": 22588000000.0,
                "latency_seconds": 0.000123,
                "peer_bytes_per_second": None,
                "source": "lessizzmore/create-a3mega-ztan-fork, "
                "ztan-NCCL-test-result: "
                "all_reduce_perf on 16 H100 (two A3 "
                "Mega nodes, 8x 200 Gb/s "
                "GPUDirect-TCPXO), 8 GiB in 47,535 us, "
                "busbw 338.82 GB/s, so 338.82 x 1/15 = "
                "22.59 GB/s per GPU's NIC; 8 B in ~123 "
                "us",
            },
        },
        "memory_bandwidth_bytes_per_second": 2039000000000.0,
    },
    "H100-SXM": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "NVLink 4 (NVSwitch)",
                "all_reduce": 482260000000.0,
                "all_gather": 367610000000.0,
                "reduce_scatter": 367610000000.0,
                "all_to_all": 367610000000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": None,
                "source": "stas00/ml-engineering, "
                "network/benchmarks/results/all-reduce-8xH200.md: "
                "nccl all_reduce on 8x H200 (NVLink 4, "
                "NVSwitch), 482.26 GB/s busbw at 16 GiB "
                "with NVLS, 367.61 GB/s with SHARP off "
                "(ring, taken for the other "
                "collectives); 32 KiB in 40 us",
            },
            "node_to_node": {
                "name": "400 Gb/s NIC per GPU",
                "all_reduce": 36516774193.548386,
                "all_gather": 36516774193.548386,
                "reduce_scatter": 36516774193.548386,
                "all_to_all": 36516774193.548386,
                "latency_seconds": 0.000123,
                "peer_bytes_per_second": None,
                "source": "stas00/ml-engineering, "
                "network/README.md, 'Inter-node speed "
                "depends on intra-node speed': "
                "all_reduce on 4x P6-B200 (8x 400 Gb/s "
                "EFA per node), 377.34 GB/s busbw at 4 "
                "GiB, i.e. 377.34 x 3/31 = 36.52 GB/s "
                "per GPU (73% of 50 GB/s); latency as "
                "the A3 Mega run's",
            },
        },
        "memory_bandwidth_bytes_per_second": 3350000000000.0,
    },
    "H100-PCIe": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "PCIe 5 (peer-to-peer)",
                "all_reduce": 40000000000.0,
                "all_gather": 40000000000.0,
                "reduce_scatter": 40000000000.0,
                "all_to_all": 40000000000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": None,
                "source": "docs.alayanew.com/en/docs/tech-blog/2026-05-06-nccl-tests "
                "(NCCL-tests in practice): 8x H100 "
                "PCIe without NVSwitch, 35-45 GB/s "
                "all_reduce busbw (40 GB/s taken, 63% "
                "of 63 GB/s)",
            },
            "node_to_node": None,
        },
        "memory_bandwidth_bytes_per_second": 2000000000000.0,
    },
    "H200": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "NVLink 4 (NVSwitch)",
                "all_reduce": 482260000000.0,
                "all_gather": 367610000000.0,
                "reduce_scatter": 367610000000.0,
                "all_to_all": 367610000000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": None,
                "source": "stas00/ml-engineering, "
                "network/benchmarks/results/all-reduce-8xH200.md: "
                "nccl all_reduce on 8x H200 (NVLink 4, "
                "NVSwitch), 482.26 GB/s busbw at 16 GiB "
                "with NVLS, 367.61 GB/s with SHARP off "
                "(ring, taken for the other collectives); "
                "32 KiB in 40 us",
            },
            "node_to_node": {
                "name": "400 Gb/s NIC per GPU",
                "all_reduce": 36516774193.548386,
                "all_gather": 36516774193.548386,
                "reduce_scatter": 36516774193.548386,
                "all_to_all": 36516774193.548386,
                "latency_seconds": 0.000123,
                "peer_bytes_per_second": None,
                "source": "stas00/ml-engineering, network/README.md, "
                "'Inter-node speed depends on intra-node "
                "speed': all_reduce on 4x P6-B200 (8x 400 "
                "Gb/s EFA per node), 377.34 GB/s busbw at 4 "
                "GiB, i.e. 377.34 x 3/31 = 36.52 GB/s per "
                "GPU (73% of 50 GB/s); latency as the A3 "
                "Mega run's",
            },
        },
        "memory_bandwidth_bytes_per_second": 4800000000000.0,
    },
    "B200": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "NVLink 5 (NVSwitch)",
                "all_reduce": 740640000000.0,
                "all_gather": 740640000000.0,
                "reduce_scatter": 740640000000.0,
                "all_to_all": 740640000000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": None,
                "source": "stas00/ml-engineering, network/README.md, "
                "'Inter-node speed depends on intra-node "
                "speed': all_reduce on 8x B200 (P6-B200), "
                "740.64 GB/s busbw at 4 GiB",
            },
            "node_to_node": {
                "name": "400 Gb/s NIC per GPU",
                "all_reduce": 36516774193.548386,
                "all_gather": 36516774193.548386,
                "reduce_scatter": 36516774193.548386,
                "all_to_all": 36516774193.548386,
                "latency_seconds": 0.000123,
                "peer_bytes_per_second": None,
                "source": "stas00/ml-engineering, network/README.md, "
                "'Inter-node speed depends on intra-node "
                "speed': all_reduce on 4x P6-B200 (8x 400 "
                "Gb/s EFA per node), 377.34 GB/s busbw at 4 "
                "GiB, i.e. 377.34 x 3/31 = 36.52 GB/s per "
                "GPU (73% of 50 GB/s); latency as the A3 "
                "Mega run's",
            },
        },
        "memory_bandwidth_bytes_per_second": 8000000000000.0,
    },
    "RTX-3090": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "PCIe 4 (no peer-to-peer)",
                "all_reduce": 11420000000.0,
                "all_gather": 11420000000.0,
                "reduce_scatter": 11420000000.0,
                "all_to_all": 11420000000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": None,
                "source": "Anthony-Hoo.github.io, "
                "posts/AutoDL_Multi-GPU_Interconnection_Test.md: "
                "two RTX 2080 Ti on PCIe 3 x16 with "
                "peer-to-peer unavailable move 5.71 "
                "GB/s one way (36% of 15.75 GB/s; "
                "GeForce cards have no peer-to-peer, "
                "NCCL stages through host memory)",
            },
            "node_to_node": None,
        },
        "memory_bandwidth_bytes_per_second": 936000000000.0,
    },
    "RTX-4090": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "PCIe 4 (no peer-to-peer)",
                "all_reduce": 11420000000.0,
                "all_gather": 11420000000.0,
                "reduce_scatter": 11420000000.0,
                "all_to_all": 11420000000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": None,
                "source": "Anthony-Hoo.github.io, "
                "posts/AutoDL_Multi-GPU_Interconnection_Test.md: "
                "two RTX 2080 Ti on PCIe 3 x16 with "
                "peer-to-peer unavailable move 5.71 "
                "GB/s one way (36% of 15.75 GB/s; "
                "GeForce cards have no peer-to-peer, "
                "NCCL stages through host memory)",
            },
            "node_to_node": None,
        },
        "memory_bandwidth_bytes_per_second": 1008000000000.0,
    },
    "A10G": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "PCIe 4 (peer-to-peer)",
                "all_reduce": 20000000000.0,
                "all_gather": 20000000000.0,
                "reduce_scatter": 20000000000.0,
                "all_to_all": 20000000000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": None,
                "source": "PCIe 5's figure x 31.5/63; "
                "docs.alayanew.com/en/docs/tech-blog/2026-05-06-nccl-tests "
                "(NCCL-tests in practice): 8x H100 PCIe "
                "without NVSwitch, 35-45 GB/s all_reduce "
                "busbw (40 GB/s taken, 63% of 63 GB/s)",
            },
            "node_to_node": None,
        },
        "memory_bandwidth_bytes_per_second": 600000000000.0,
    },
    "H800": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "NVLink 4, H800 (400 GB/s)",
                "all_reduce": 163382222222.22223,
                "all_gather": 163382222222.22223,
                "reduce_scatter": 163382222222.22223,
                "all_to_all": 163382222222.22223,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": None,
                "source": "the H100/H200 ring figure (367.61 GB/s) "
                "scaled to the H800's 200 GB/s per "
                "direction",
            },
            "node_to_node": {
                "name": "400 Gb/s NIC per GPU",
                "all_reduce": 36516774193.548386,
                "all_gather": 36516774193.548386,
                "reduce_scatter": 36516774193.548386,
                "all_to_all": 36516774193.548386,
                "latency_seconds": 0.000123,
                "peer_bytes_per_second": None,
                "source": "stas00/ml-engineering, network/README.md, "
                "'Inter-node speed depends on intra-node "
                "speed': all_reduce on 4x P6-B200 (8x 400 "
                "Gb/s EFA per node), 377.34 GB/s busbw at 4 "
                "GiB, i.e. 377.34 x 3/31 = 36.52 GB/s per "
                "GPU (73% of 50 GB/s); latency as the A3 "
                "Mega run's",
            },
        },
        "memory_bandwidth_bytes_per_second": 3350000000000.0,
    },
    "MI300X": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "Infinity Fabric (MI300X mesh)",
                "all_reduce": 312912000000.0,
                "all_gather": 312912000000.0,
                "reduce_scatter": 312912000000.0,
                "all_to_all": 312912000000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": 47671000000.0,
                "source": "stas00/ml-engineering, "
                "network/README.md: all_reduce_bench.py "
                "on 8x MI300X, 4 GiB: 312.912 GB/s busbw "
                "with 8 GPUs, 47.671 GB/s with 2 (one 64 "
                "GB/s Infinity Fabric link per pair)",
            },
            "node_to_node": {
                "name": "400 Gb/s NIC per GPU",
                "all_reduce": 36516774193.548386,
                "all_gather": 36516774193.548386,
                "reduce_scatter": 36516774193.548386,
                "all_to_all": 36516774193.548386,
                "latency_seconds": 0.000123,
                "peer_bytes_per_second": None,
                "source": "stas00/ml-engineering, "
                "network/README.md, 'Inter-node speed "
                "depends on intra-node speed': all_reduce "
                "on 4x P6-B200 (8x 400 Gb/s EFA per "
                "node), 377.34 GB/s busbw at 4 GiB, i.e. "
                "377.34 x 3/31 = 36.52 GB/s per GPU (73% "
                "of 50 GB/s); latency as the A3 Mega "
                "run's",
            },
        },
        "memory_bandwidth_bytes_per_second": 5300000000000.0,
    },
    "B300": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "NVLink 5 (NVSwitch)",
                "all_reduce": 740640000000.0,
                "all_gather": 740640000000.0,
                "reduce_scatter": 740640000000.0,
                "all_to_all": 740640000000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": None,
                "source": "stas00/ml-engineering, network/README.md, "
                "'Inter-node speed depends on intra-node "
                "speed': all_reduce on 8x B200 (P6-B200), "
                "740.64 GB/s busbw at 4 GiB",
            },
            "node_to_node": {
                "name": "800 Gb/s NIC per GPU",
                "all_reduce": 73033548387.09677,
                "all_gather": 73033548387.09677,
                "reduce_scatter": 73033548387.09677,
                "all_to_all": 73033548387.09677,
                "latency_seconds": 0.000123,
                "peer_bytes_per_second": None,
                "source": "the 400 Gb/s figure at twice the rate "
                "(same 73%); stas00/ml-engineering, "
                "network/README.md, 'Inter-node speed "
                "depends on intra-node speed': all_reduce "
                "on 4x P6-B200 (8x 400 Gb/s EFA per node), "
                "377.34 GB/s busbw at 4 GiB, i.e. 377.34 x "
                "3/31 = 36.52 GB/s per GPU (73% of 50 "
                "GB/s); latency as the A3 Mega run's",
            },
        },
        "memory_bandwidth_bytes_per_second": 8000000000000.0,
    },
    "GB200": {
        "bus_bandwidth": {
            "gpus_per_node": 72,
            "card_to_card": {
                "name": "NVLink 5 (NVSwitch)",
                "all_reduce": 740640000000.0,
                "all_gather": 740640000000.0,
                "reduce_scatter": 740640000000.0,
                "all_to_all": 740640000000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": None,
                "source": "stas00/ml-engineering, network/README.md, "
                "'Inter-node speed depends on intra-node "
                "speed': all_reduce on 8x B200 (P6-B200), "
                "740.64 GB/s busbw at 4 GiB",
            },
            "node_to_node": {
                "name": "400 Gb/s NIC per GPU",
                "all_reduce": 36516774193.548386,
                "all_gather": 36516774193.548386,
                "reduce_scatter": 36516774193.548386,
                "all_to_all": 36516774193.548386,
                "latency_seconds": 0.000123,
                "peer_bytes_per_second": None,
                "source": "stas00/ml-engineering, network/README.md, "
                "'Inter-node speed depends on intra-node "
                "speed': all_reduce on 4x P6-B200 (8x 400 "
                "Gb/s EFA per node), 377.34 GB/s busbw at "
                "4 GiB, i.e. 377.34 x 3/31 = 36.52 GB/s "
                "per GPU (73% of 50 GB/s); latency as the "
                "A3 Mega run's",
            },
        },
        "memory_bandwidth_bytes_per_second": 8000000000000.0,
    },
    "RTX-5090": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "PCIe 5 (no peer-to-peer)",
                "all_reduce": 22840000000.0,
                "all_gather": 22840000000.0,
                "reduce_scatter": 22840000000.0,
                "all_to_all": 22840000000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": None,
                "source": "Anthony-Hoo.github.io, "
                "posts/AutoDL_Multi-GPU_Interconnection_Test.md: "
                "two RTX 2080 Ti on PCIe 3 x16 with "
                "peer-to-peer unavailable move 5.71 "
                "GB/s one way (36% of 15.75 GB/s; "
                "GeForce cards have no peer-to-peer, "
                "NCCL stages through host memory)",
            },
            "node_to_node": None,
        },
        "memory_bandwidth_bytes_per_second": 1792000000000.0,
    },
    "MI355X": {
        "bus_bandwidth": {
            "gpus_per_node": 8,
            "card_to_card": {
                "name": "Infinity Fabric (MI355X mesh)",
                "all_reduce": 374027625000.0,
                "all_gather": 374027625000.0,
                "reduce_scatter": 374027625000.0,
                "all_to_all": 374027625000.0,
                "latency_seconds": 4e-05,
                "peer_bytes_per_second": 56981742187.5,
                "source": "MI300X's measured figures scaled by the "
                "links' spec (76.5 vs 64 GB/s per link); "
                "stas00/ml-engineering, "
                "network/README.md: all_reduce_bench.py "
                "on 8x MI300X, 4 GiB: 312.912 GB/s busbw "
                "with 8 GPUs, 47.671 GB/s with 2 (one 64 "
                "GB/s Infinity Fabric link per pair)",
            },
            "node_to_node": {
                "name": "400 Gb/s NIC per GPU",
                "all_reduce": 36516774193.548386,
                "all_gather": 36516774193.548386,
                "reduce_scatter": 36516774193.548386,
                "all_to_all": 36516774193.548386,
                "latency_seconds": 0.000123,
                "peer_bytes_per_second": None,
                "source": "stas00/ml-engineering, "
                "network/README.md, 'Inter-node speed "
                "depends on intra-node speed': all_reduce "
                "on 4x P6-B200 (8x 400 Gb/s EFA per "
                "node), 377.34 GB/s busbw at 4 GiB, i.e. "
                "377.34 x 3/31 = 36.52 GB/s per GPU (73% "
                "of 50 GB/s); latency as the A3 Mega "
                "run's",
            },
        },
        "memory_bandwidth_bytes_per_second": 8000000000000.0,
    },
    "TPU-v4": {"bus_bandwidth": {}, "memory_bandwidth_bytes_per_second": 1200000000000.0},
    "TPU-v5e": {"bus_bandwidth": {}, "memory_bandwidth_bytes_per_second": 819000000000.0},
    "TPU-v5p": {"bus_bandwidth": {}, "memory_bandwidth_bytes_per_second": 2765000000000.0},
}

SEED_SOURCE = "IteraGPU catalogue, as the seed states it (docs/domain.md §9); the seed prints no date: as_of is the day the project read it"
SEED_READ_ON = datetime.date(2026, 11, 29)
V100_NODE_TO_NODE = 6.25e9
V100_SOURCE = "V100 SXM2 datasheet: NVLink 300 GB/s; DGX-1 4x 100 Gb/s EDR IB per 8 GPUs"
ONE_GPU_RATE = {
    "provider": "Lambda",
    "gpu": "H100-SXM",
    "rate_per_gpu_hour": Decimal("3.78"),
    "currency": "USD",
    "source": "Lambda pricing page, on-demand 1x NVIDIA H100 SXM: 3.78 USD per GPU-hour (as listed in techbytes.app's 'Serverless GPU Pricing Matrix', prices verified 2026-05-07)",
    "as_of": datetime.date(2026, 5, 7),
    "gpus_per_instance": 1,
}


def update(apps, schema_editor):
    GpuModel = apps.get_model("catalog", "GpuModel")
    RentalPlan = apps.get_model("catalog", "RentalPlan")
    HourlyRate = apps.get_model("catalog", "HourlyRate")
    for name, values in GPUS.items():
        GpuModel.objects.filter(name=name).update(**values)
    GpuModel.objects.filter(name="V100-32GB").update(
        node_to_node_bytes_per_second=V100_NODE_TO_NODE, interconnect_source=V100_SOURCE
    )
    RentalPlan.objects.filter(provider="IteraGPU", as_of__isnull=True).update(as_of=SEED_READ_ON)
    RentalPlan.objects.filter(provider="IteraGPU", illustrative=False).update(source=SEED_SOURCE)
    gpu = GpuModel.objects.filter(name=ONE_GPU_RATE["gpu"]).first()
    if gpu is not None:
        values = {
            k: v
            for k, v in ONE_GPU_RATE.items()
            if k not in ("provider", "gpu", "gpus_per_instance")
        }
        HourlyRate.objects.update_or_create(
            provider=ONE_GPU_RATE["provider"], gpu=gpu, gpus_per_instance=1, defaults=values
        )


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0005_i32_currency_iso4217"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="hourlyrate",
            name="hourly_rate_unique",
        ),
        migrations.AddField(
            model_name="gpumodel",
            name="bus_bandwidth",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="Per tier (card_to_card, node_to_node): bus bandwidth per collective in bytes/s, latency_seconds, source; and gpus_per_node.",
            ),
        ),
        migrations.AddField(
            model_name="gpumodel",
            name="memory_bandwidth_bytes_per_second",
            field=models.FloatField(
                blank=True, help_text="HBM/GDDR bandwidth from the datasheet (roofline).", null=True
            ),
        ),
        migrations.AddConstraint(
            model_name="hourlyrate",
            constraint=models.UniqueConstraint(
                fields=("provider", "gpu", "gpus_per_instance"), name="hourly_rate_unique"
            ),
        ),
        migrations.RunPython(update, migrations.RunPython.noop),
    ]
