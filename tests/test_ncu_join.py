"""The Nsight Compute -> trace join: name keys across the two demanglers, and the real H100 data."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from generators.analysis import attribution, ncu_join
from generators.analysis.demangled import join_key
from generators.readers import kineto, ncu_csv

# reads the decode captures' traces and ncu pages (issue 17: `make test-fast` leaves it out)
pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parents[1] / "data" / "reports" / "decode-h100-80gb-hbm3" / "v1"

# (Kineto's spelling, Nsight Compute's spelling) of the same kernel, from the real exports
SAME = [
    (
        "void at::native::(anonymous namespace)::indexSelectSmallIndex<c10::BFloat16, long, unsigned int, 2, 2, -2>"
        "(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 "
        "const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, long)",
        "void at::<unnamed>::indexSelectSmallIndex<c10::BFloat16, long, unsigned int, 2, 2, (int)-2>(cuda::TensorInfo"
        "<T1, T3>, cuda::TensorInfo<const T1, T3>, cuda::TensorInfo<const T2, T3>, int, int, T3, long)",
    ),
    (
        "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, "
        "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
        "void at::vectorized_elementwise_kernel<8, at::CUDAFunctor_add<c10::BFloat16>, std::array<char *, 3>>"
        "(int, T2, T3)",
    ),
    (
        "void at::native::vectorized_elementwise_kernel<8, at::native::rsqrt_kernel_cuda(at::TensorIteratorBase&)"
        "::{lambda()#2}::operator()() const::{lambda()#3}::operator()() const::{lambda(c10::BFloat16)#1}, "
        "std::array<char*, 2ul> >(int, at::native::rsqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::"
        "operator()() const::{lambda()#3}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
        "void at::vectorized_elementwise_kernel<8, at::rsqrt_kernel_cuda(at::TensorIteratorBase &)::[lambda() "
        "(instance 2)]::operator ()() const::[lambda() (instance 3)]::operator ()() const::[lambda(c10::BFloat16) "
        "(instance 1)], std::array<char *, 2>>(int, T2, T3)",
    ),
    (
        "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, false, float, "
        "__nv_bfloat16, __nv_bfloat16, true, false, false, false>(cublasLt::cublasSplitKParams<float>, float const*)",
        "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, 0, float, "
        "__nv_bfloat16, __nv_bfloat16, 1, 0, 0, 0>(cublasLt::cublasSplitKParams<T6>, const T4 *)",
    ),
    (
        "std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, __nv_bfloat16, float, false, true, 6,"
        " cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, float> >(cublasGemvParamsEx"
        "<int, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, float>)",
        "std::enable_if<!T7, void>::type internal::kernel<int, int, __nv_bfloat16, float, 0, 1, 6, cublasGemvParamsEx"
        "<int, cublasGemvTensorStridedBatched<const __nv_bfloat16>, float>>(T13)",
    ),
    ("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_splitK_TNT", "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_splitK_TNT"),
]
DIFFERENT = [
    ("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_splitK_TNT", "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT"),
    (SAME[1][0], SAME[1][1].replace("CUDAFunctor_add", "CUDAFunctorOnSelf_add")),
    (SAME[1][0], SAME[1][1].replace("char *, 3", "char *, 2")),
]


@pytest.mark.parametrize("kineto_name, ncu_name", SAME)
def test_the_two_spellings_share_a_key(kineto_name, ncu_name):
    assert join_key(kineto_name) == join_key(ncu_name)


@pytest.mark.parametrize("a, b", DIFFERENT)
def test_different_kernels_keep_different_keys(a, b):
    assert join_key(a) != join_key(b)


def _trace(variant: str) -> pd.DataFrame:
    timeline = kineto.read(DATA / f"trace_{variant}.json.xz")
    return timeline.kernels[attribution.in_range(timeline.kernels, timeline.ranges, "decode")]


@pytest.fixture(scope="module", params=["fused", "written"])
def joined(request):
    kernels = _trace(request.param)
    report = ncu_csv.read(DATA / f"ncu_{request.param}_raw.csv.gz")
    result = ncu_join.join(ncu_join.trace_configs(kernels), report.kernels)
    return kernels, report.kernels.merge(result, on="kernel_id")


def test_every_profiled_launch_joins_exactly(joined):
    _, table = joined
    assert (table["match"] == "exact").all(), table.loc[table["match"] != "exact", "kernel_name"].tolist()


def test_joined_launch_configurations_occur_in_the_trace(joined):
    kernels, table = joined
    dims = ncu_join.DIMS
    trace = {(str(r["name"]), *(int(r[d]) for d in dims)) for r in kernels[["name", *dims]].to_dict("records")}
    for row in table.to_dict("records"):
        assert (row["trace_name"], *(int(row[d]) for d in dims)) in trace


def _function(name: str) -> str:
    """A crude key of its own, independent of ``join_key``: the function's unqualified name (the
    text before its template or parameter list, namespaces dropped), e.g. ``reduce_kernel``."""
    head = re.split(r"[<(]", name.removeprefix("void ").removeprefix("std::enable_if"), maxsplit=1)[0]
    return head.rsplit("::", 1)[-1].rsplit(" ", 1)[-1]


def test_top_kernels_with_ncu_launches_are_matched(joined):
    """Each of the ten longest kernels that ncu profiled - a launch with the same function name
    and the same grid and block - is matched; in both captures that is all ten."""
    kernels, table = joined
    dims = list(ncu_join.DIMS)
    totals = kernels.groupby(kernels["name"].astype(str))["dur_ns"].sum().sort_values(ascending=False)
    profiled = {(_function(r["kernel_name"]), *(int(r[d]) for d in dims)) for r in table.to_dict("records")}
    matched = set(table["trace_name"])
    top = list(totals.index[:10])
    for name in top:
        configs = kernels.loc[kernels["name"].astype(str) == name, dims].drop_duplicates().astype(int)
        if any((_function(name), *c) in profiled for c in configs.itertuples(index=False)):
            assert name in matched, name
    assert all(name in matched for name in top)  # checked by hand: ncu profiled all ten in both captures


# Checked by hand: a distinguishing piece of the ncu name -> the piece the trace name must have
BY_HAND = [
    ("bz_splitK_TNT", "bz_splitK_TNT"),
    ("64x16_4x1_v_bz_TNT", "64x16_4x1_v_bz_TNT"),
    ("CUDAFunctor_add<c10::BFloat16>, std::array<char *, 3>", "CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>"),
    ("CUDAFunctorOnSelf_add", "CUDAFunctorOnSelf_add"),
    (
        "vectorized_elementwise_kernel<8, at::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, "
        "binary_internal::MulFunctor<float>>",
        "vectorized_elementwise_kernel<8, at::native::BinaryFunctor<",
    ),
    (
        "void at::elementwise_kernel<128, 4, void at::gpu_kernel_impl_nocast<at::BinaryFunctor",
        "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor",
    ),
    ("direct_copy_kernel_cuda", "direct_copy_kernel_cuda"),
    ("MeanOps", "MeanOps"),
    ("ArgMaxOps", "ArgMaxOps"),
    ("cudnn_generated_fort_native_sdpa", "cudnn_generated_fort_native_sdpa"),
]


def test_joins_checked_by_hand(joined):
    _, table = joined
    for ncu_piece, trace_piece in BY_HAND:
        rows = table[table["kernel_name"].str.contains(ncu_piece, regex=False)]
        for row in rows.to_dict("records"):
            assert trace_piece in row["trace_name"], (ncu_piece, row["trace_name"][:160])
    # bf16 add and bf16 mul never meet
    for row in table.to_dict("records"):
        assert ("MulFunctor" in row["kernel_name"]) == ("MulFunctor" in row["trace_name"])
        assert ("_add<" in row["kernel_name"]) == ("_add<" in row["trace_name"])


def test_name_only_ambiguous_and_none():
    trace = pd.DataFrame(
        {
            "name": ["k_a", "k_a", "void f<1>(int)", "void f<1ul>(long)"],
            "grid_x": [1, 2, 1, 1],
            "grid_y": 1,
            "grid_z": 1,
            "block_x": 32,
            "block_y": 1,
            "block_z": 1,
        }
    )
    ncu = pd.DataFrame(
        {
            "kernel_id": [0, 1, 2, 3],
            "kernel_name": ["k_a", "k_a", "void f<1>(T1)", "zzz"],
            "grid_x": [2, 9, 1, 1],
            "grid_y": 1,
            "grid_z": 1,
            "block_x": 32,
            "block_y": 1,
            "block_z": 1,
        }
    )
    out = ncu_join.join(ncu_join.trace_configs(trace), ncu).set_index("kernel_id")
    assert out.loc[0, "match"] == "exact" and out.loc[0, "trace_name"] == "k_a"
    assert out.loc[1, "match"] == "name" and out.loc[1, "trace_name"] == "k_a"
    assert out.loc[2, "match"] == "ambiguous" and pd.isna(out.loc[2, "trace_name"])
    assert out.loc[3, "match"] == "none"
