"""The roofline kind's configuration, detector and layer analysis: a bad report.yml is one line
naming the field, the detector reads a copy of the real capture, layer shares add up per layer."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest
import yaml

from generators.analysis import llm_layers, op_roofline
from generators.catalog import Catalog
from generators.errors import UserError
from generators.kinds import CONFIG_UNION
from generators.kinds.kind import DetectContext
from generators.kinds.roofline import detect
from generators.kinds.roofline.config import Config
from generators.readers import hardware, llm_model, report_config

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
REPORT = DATA / "reports" / "microbench-h100-80gb-hbm3"


def _config(tmp_path: Path, **changes) -> Path:
    """A derived report.yml: the real one with some fields changed."""
    doc = yaml.safe_load((REPORT / "report.yml").read_text())
    doc.update(changes)
    path = tmp_path / "report.yml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    return path


def test_the_real_configuration_loads():
    config = report_config.read(REPORT / "report.yml", CONFIG_UNION, ("en", "zh"))
    assert isinstance(config, Config)
    assert config.models[0] == "deepseek-v3" and config.measured_gpu == "h100-sxm"
    assert [g.tables for g in config.gpus] == ["fp8", "fp4", "fp4"]


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"measured_gpu": "a100-sxm-80gb"}, "measured_gpu: 'a100-sxm-80gb' is not one of the gpus"),
        ({"weights": ["bf16", "fp8"]}, "gpus: b200 shows fp4 tables, which weights does not list"),
        ({"decode": {"batches": [8, 1]}}, "decode.batches: positive whole numbers in increasing order"),
        ({"prefill": {"seq_lens": []}}, "prefill.seq_lens: at least one size is needed"),
        ({"models": []}, "models: at least one model, each once"),
        ({"weights": ["bf16", "int4"]}, "Invalid enum value 'int4' - at `$.weights[1]`"),
        ({"curve_max_batch": 64}, "curve_max_batch: must be at least the largest decode batch"),
        ({"colour": "red"}, "unknown field `colour`"),
        ({"serving": {"kv_layout_options": ["dp"]}}, "serving.kv_layout_options: layouts other than kv_layout"),
        (
            {"serving": {"kv_layout_options": ["tp"], "tensor_parallel": 3}},
            "serving.tensor_parallel: 3 does not divide every deployment of h100-sxm",
        ),
    ],
)
def test_a_bad_configuration_is_one_line_naming_the_field(tmp_path, changes, message):
    path = _config(tmp_path, **changes)
    with pytest.raises(UserError) as err:
        report_config.read(path, CONFIG_UNION, ("en", "zh"))
    line = err.value.line()
    assert line.startswith(f"error: {path}: ") and message in line and "\n" not in line


def test_the_detector_reads_a_copy_of_the_capture(tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(REPORT / "v1", raw)
    cat = Catalog(DATA, ("en", "zh"))
    fields = detect.detect(DetectContext(raw, cat, None, None))
    assert fields["measured_gpu"] == "h100-sxm" and fields["models"][0] == "deepseek-v3"
    assert fields["gpus"][0] == {"hardware": "h100-sxm", "tables": "fp8"}
    assert {"hardware": "b200", "tables": "fp4"} in fields["gpus"]
    assert fields["measured_peaks"] == "peaks-h100-80gb-hbm3/v2"  # the latest peaks run
    doc = {"schema": "profsite.report/1", "kind": "roofline", "title": {"en": "t", "zh": "t"}, **fields}
    assert isinstance(msgspec.convert(doc, CONFIG_UNION), Config)
    (raw / "results.json").write_text('{"schema": "profsite.sweep/1", "ops": []}')
    with pytest.raises(UserError, match="schema is 'profsite.sweep/1'"):
        detect.detect(DetectContext(raw, cat, None, None))


def test_layer_shares_add_up_to_one_per_layer():
    model = llm_model.read(DATA / "models" / "deepseek-v3.yml")
    gpu = hardware.read(DATA / "hardware" / "b200.yml")
    ops = op_roofline.layer_shares(model, op_roofline.table(model, gpu, "decode", [1, 64], ["fp4"], 4096))
    for size in (1, 64):
        part = ops[ops["size"] == size]
        block = part[part["scope"] == "layer"]  # attention block: in every layer, shown as a MoE layer's
        for layer, scopes in (("moe_layer", ("layer", "moe_layer")), ("dense_layer", ("dense_layer",))):
            mine = part[part["layer"] == layer]
            assert set(mine["scope"]) == set(scopes)
            whole = sum(r.predicted_s for r in block.itertuples()) + sum(
                r.predicted_s for r in part[part["scope"] == layer].itertuples()
            )
            for r in mine.itertuples():
                assert r.layer_share == pytest.approx(r.predicted_s / whole)
        assert part.loc[part["layer"] == "moe_layer", "layer_share"].sum() == pytest.approx(1)
        # the once-per-step ops: their share of the whole step, count x time summed over every op
        step = sum(r.count * r.predicted_s for r in part.itertuples())
        head = part[part["op"] == "lm_head"].iloc[0]
        assert head.layer == "step" and head.layer_share == pytest.approx(head.predicted_s / step)
    assert ops.loc[ops["scope"] == "absorbed", "layer_share"].isna().all()


def test_every_weight_of_the_model_is_counted_once():
    model = llm_model.read(DATA / "models" / "deepseek-v3.yml")
    # README_WEIGHTS.md: 671B parameters in the main model; BF16 is two bytes each
    assert op_roofline.model_weight_bytes(model, "bf16") / 2 == pytest.approx(671e9, rel=0.001)
    fp4 = op_roofline.model_weight_bytes(model, "fp4")
    assert 0.5625 * 600e9 < fp4 < 0.5625 * 671e9 + 2 * 671e9 * 0.05  # most weights at 0.5625 bytes
    llama = llm_model.read(DATA / "models" / "llama-3-8b.yml")
    assert op_roofline.model_weight_bytes(llama, "bf16") == 2 * 8_030_261_248


def test_intensity_curves_rise_with_the_batch():
    model = llm_model.read(DATA / "models" / "deepseek-v3.yml")
    curves = op_roofline.intensity_curves(model, ["fp4"], [1, 16, 256, 4096])
    ops = {p.op.name for p in llm_layers.step_ops(model, "decode", 1, 1, "fp4") if p.op.kind.endswith(("gemm", "bmm"))}
    assert set(curves["op"]) == ops - {"kv_b_proj"}  # absorbed in decode: not run
    for _, line in curves.groupby("op"):
        assert list(line["intensity"]) == sorted(line["intensity"]) and line["intensity"].iloc[0] < 4
