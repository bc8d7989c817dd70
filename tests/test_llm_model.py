"""The model descriptions in data/models: values against the cited configs (typed here from
those files), and malformed files as one-line errors naming file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from generators.errors import UserError
from generators.readers import llm_model

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"

# inference/configs/config_671B.json of github.com/deepseek-ai/DeepSeek-V3 (commit 4c2fdb8),
# typed from the file.
DEEPSEEK_CONFIG_671B = {
    "vocab_size": 129280,
    "dim": 7168,
    "inter_dim": 18432,
    "moe_inter_dim": 2048,
    "n_layers": 61,
    "n_dense_layers": 3,
    "n_heads": 128,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "n_activated_experts": 8,
    "n_expert_groups": 8,
    "n_limited_groups": 4,
    "q_lora_rank": 1536,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
}

# config.json of meta-llama/Meta-Llama-3-8B, typed from the file.
LLAMA3_8B_CONFIG = {
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
}


@pytest.fixture(scope="module")
def deepseek():
    return llm_model.read(MODELS / "deepseek-v3.yml")


def test_every_deepseek_value_is_the_configs_value_under_the_cited_key(deepseek):
    assert len(deepseek.cited) == 17
    for name, dim in deepseek.cited.items():
        assert dim.source == "config", name
        assert DEEPSEEK_CONFIG_671B[dim.key] == dim.value, name
    # and every config field the analysis needs is cited
    assert {d.key for d in deepseek.cited.values()} == set(DEEPSEEK_CONFIG_671B)


def test_deepseek_shapes_are_the_published_ones(deepseek):
    att = deepseek.attention
    assert (deepseek.hidden_size, deepseek.num_layers, deepseek.vocab_size) == (7168, 61, 129280)
    assert (deepseek.dense_layers, deepseek.moe_layers, deepseek.intermediate_size) == (3, 58, 18432)
    assert (att.kind, att.num_heads, att.q_lora_rank, att.kv_lora_rank) == ("mla", 128, 1536, 512)
    assert (att.qk_nope_head_dim, att.qk_rope_head_dim, att.v_head_dim) == (128, 64, 128)
    assert deepseek.moe == llm_model.MoeSpec(256, 8, 1, 2048, expert_groups=8, limited_groups=4)
    source = deepseek.sources["config"]
    assert source.url.endswith("inference/configs/config_671B.json") and source.date == "2024-12-26"


def test_llama_values_are_metas_config_and_the_ffn_follows_metas_size_rule():
    llama = llm_model.read(MODELS / "llama-3-8b.yml")
    for name, dim in llama.cited.items():
        assert LLAMA3_8B_CONFIG[dim.key] == dim.value, name
    assert llama.attention == llm_model.GqaSpec(32, 8, 128)
    assert llama.moe is None and llama.dense_layers == llama.num_layers == 32
    # llama/model.py: int(2 * 4 * dim / 3), times ffn_dim_multiplier 1.3, up to a multiple of 1024
    hidden = int(1.3 * int(2 * 4 * 4096 / 3))
    assert 1024 * -(-hidden // 1024) == llama.intermediate_size == 14336


@pytest.mark.slow
def test_the_projects_own_lm_matches_the_capture_code():
    from generators.capture.model import SIZES, VOCAB

    lm = llm_model.read(MODELS / "profsite-lm-2.7b.yml")
    cfg = SIZES["2.7B"]
    assert (lm.hidden_size, lm.intermediate_size, lm.num_layers, lm.vocab_size) == (
        cfg.d_model,
        cfg.d_ff,
        cfg.n_layers,
        VOCAB,
    )
    assert lm.attention == llm_model.GqaSpec(cfg.n_heads, cfg.n_heads, cfg.d_model // cfg.n_heads)


DEEPSEEK_TEXT = (MODELS / "deepseek-v3.yml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda t: t.replace("profsite.model/1", "profsite.model/2"), "schema is 'profsite.model/2'"),
        (lambda t: t.replace("vocab_size: {value: 129280", "vocab_size: {value: 0"), "vocab_size.value: must be"),
        (
            lambda t: t.replace("{value: 128, source: config, key: n_heads}", "{value: 128, source: paper}"),
            "attention.num_heads.source: unknown source 'paper'",
        ),
        (lambda t: t.replace("kind: mla", "kind: mqa"), "Invalid value 'mqa' - at `$.attention.kind`"),
        (lambda t: t.replace("q_lora_rank: {value: 1536", "q_lora_rank: {value: 1536.5"), "Expected `int`"),
        (lambda t: t.replace("value: 3\n", "value: 62\n"), "ffn.dense_layers.value: 62 is more than num_layers"),
        (lambda t: t.replace("active_experts: {value: 8", "active_experts: {value: 300"), "more active experts"),
        (lambda t: t.replace('date: "2024-12-26"', 'date: "Dec 2024"', 1), "sources[0].date: 'Dec 2024' is not"),
        (lambda t: t.replace("      zh: 前 3 层", "      zh: ' '\n      x: 前 3 层"), "a note needs text"),
        (lambda t: t + "rope_theta: 10000\n", "Object contains unknown field `rope_theta`"),
        (lambda t: t.replace("expert_groups: {value: 8", "expert_groups: {value: 3"), "must divide routed_experts"),
        (lambda t: t.replace("      value: 4\n", "      value: 16\n"), "limited_groups.value: more than"),
        (lambda t: t.replace("expert_groups: {value: 8, source: config, key: n_expert_groups}", ""), "go together"),
    ],
)
def test_malformed_model_file_is_one_user_error_naming_file_and_field(tmp_path, edit, message):
    path = tmp_path / "m.yml"
    text = edit(DEEPSEEK_TEXT)
    assert text != DEEPSEEK_TEXT
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError) as err:
        llm_model.read(path)
    line = err.value.line()
    assert line.startswith(f"error: {path}: ") and message in line and "\n" not in line


def test_gqa_shape_errors(tmp_path):
    text = (MODELS / "llama-3-8b.yml").read_text(encoding="utf-8")
    cases = [
        (text.replace("num_kv_heads: {value: 8", "num_kv_heads: {value: 5"), "must divide attention.num_heads"),
        (text.replace("dense_layers: {value: 32", "dense_layers: {value: 30"), "a model without ffn.moe"),
    ]
    for edited, message in cases:
        path = tmp_path / "m.yml"
        path.write_text(edited, encoding="utf-8")
        with pytest.raises(UserError, match=message):
            llm_model.read(path)
