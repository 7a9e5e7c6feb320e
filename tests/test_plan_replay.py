"""One plan serves many steps: new lengths and page tables each call, the same workspace and
output buffers, no reallocation (what a CUDA graph replay relies on)."""

import pytest
import torch

import splitkv
from splitkv.testing import check_against_reference, random_mla_case


def test_plan_replays_with_new_lengths_and_tables(dtype, device):
    batch, heads, qlen, page_size, columns = 3, 6, 2, 16, 12
    plan = splitkv.plan_decode(
        batch,
        columns * page_size,
        heads,
        qlen=qlen,
        page_size=page_size,
        dtype=dtype,
        device=device,
        num_splits=4,
    )
    workspace_ptrs = (plan.workspace.partial_o.data_ptr(), plan.workspace.partial_lse.data_ptr())
    out = torch.empty(batch, qlen, heads, 512, dtype=dtype, device=device)
    lse = torch.empty(batch, qlen, heads, device=device)
    gen = torch.Generator().manual_seed(3)
    for step in range(4):
        lengths = torch.randint(qlen, columns * page_size + 1, (batch,), generator=gen).tolist()
        if step == 2:
            lengths[1] = 0  # a finished request stays in the batch
        case = random_mla_case(
            lengths,
            heads,
            qlen=qlen,
            page_size=page_size,
            dtype=dtype,
            device=device,
            table_columns=columns,
            seed=step,
        )
        out.fill_(float("nan"))
        got_out, got_lse = splitkv.mla_decode(
            *case.args, plan=plan, out=out, lse=lse, validate=True
        )
        assert got_out is out and got_lse is lse
        check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))
    assert workspace_ptrs == (
        plan.workspace.partial_o.data_ptr(),
        plan.workspace.partial_lse.data_ptr(),
    )


def test_plan_serves_a_smaller_batch(dtype, device):
    plan = splitkv.plan_decode(5, 256, 4, page_size=16, dtype=dtype, device=device, num_splits=3)
    case = random_mla_case([100, 3], 4, page_size=16, dtype=dtype, device=device)
    out, lse = splitkv.mla_decode(*case.args, plan=plan)
    check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))


def test_merge_alone_reproduces_the_output(dtype, device):
    # The benchmarks time stage 2 on its own: it must redo exactly the call's merge.
    from splitkv.mla import merge_workspace

    case = random_mla_case([150, 40], 4, page_size=16, dtype=dtype, device=device)
    plan = splitkv.plan_decode(2, 160, 4, page_size=16, dtype=dtype, device=device, num_splits=4)
    out, lse = splitkv.mla_decode(*case.args, plan=plan)
    again, again_lse = torch.full_like(out, float("nan")), torch.full_like(lse, float("nan"))
    merge_workspace(
        plan, case.seq_lens, again, again_lse, max_seq_len=case.page_table.shape[1] * 16
    )
    assert torch.equal(again, out) and torch.equal(again_lse, lse)


@pytest.mark.parametrize("program_loop", [False, True])
def test_balanced_plan_replays_with_new_lengths(program_loop, dtype, device):
    # The balanced schedule's program ranges (`piece_ranges`) are rewritten by every stage 1:
    # a request that had pieces last step and none now, or more pieces now, must merge only
    # what this step wrote.
    heads, page_size, columns = 4, 16, 10
    steps = ([150, 3, 77, 160], [0, 160, 5, 1], [40, 0, 0, 159], [1, 1, 1, 1])
    plan = splitkv.plan_decode(4, columns * page_size, heads, qlen=1, page_size=page_size,
                               dtype=dtype, device=device, schedule="balanced", num_programs=5,
                               block_n=16, program_loop=program_loop)  # fmt: skip
    out = torch.empty(4, 1, heads, 512, dtype=dtype, device=device)
    lse = torch.empty(4, 1, heads, device=device)
    for step, lengths in enumerate(steps):
        case = random_mla_case(lengths, heads, page_size=page_size, dtype=dtype, device=device,
                               table_columns=columns, seed=10 + step)  # fmt: skip
        out.fill_(float("nan"))
        splitkv.mla_decode(*case.args, plan=plan, out=out, lse=lse, validate=True)
        check_against_reference(out, lse, *splitkv.reference.mla_decode(*case.args))
