"""splitkv: split-KV ("flash-decoding") paged attention for the decode step of LLM serving.

    out, lse = splitkv.mla_decode(q, kv_cache, page_table, seq_lens)

See README.md for the contracts, `splitkv.plan_decode` for CUDA graphs, `splitkv.reference` for
the fp32 reference.
"""

import os

import torch

# Triton reads TRITON_INTERPRET when a kernel is decorated, i.e. when splitkv.kernels is
# imported. Without a GPU the interpreter is the only backend, so turn it on before that.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

from splitkv import reference
from splitkv.device import DeviceSpec, PartitionTunables
from splitkv.gqa import gqa_decode
from splitkv.merge import merge_states
from splitkv.mla import mla_decode
from splitkv.partition import num_partitions
from splitkv.plan import DecodePlan, DecodeWorkspace, plan_decode
from splitkv.prefix import SharedPrefixPlan, mla_decode_shared_prefix, plan_shared_prefix
from splitkv.prefix_gqa import gqa_decode_shared_prefix
from splitkv.torch_op import (  # registers torch.ops.splitkv
    gqa_decode_op,
    merge_states_op,
    mla_decode_op,
)

__version__ = "0.2.83"
__all__ = [
    "DecodePlan",
    "DecodeWorkspace",
    "DeviceSpec",
    "PartitionTunables",
    "SharedPrefixPlan",
    "__version__",
    "gqa_decode",
    "gqa_decode_op",
    "gqa_decode_shared_prefix",
    "merge_states",
    "merge_states_op",
    "mla_decode",
    "mla_decode_op",
    "mla_decode_shared_prefix",
    "num_partitions",
    "plan_decode",
    "plan_shared_prefix",
    "reference",
]
