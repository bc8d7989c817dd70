"""``python -m generators roofline``: JSON rows and tables; bad input gives exit code 2, one
``error:`` line on stderr and nothing on stdout."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from generators.cli import main


def run(capsys, *argv):
    code = main(["roofline", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_end_to_end(repo_root):
    proc = subprocess.run(
        [sys.executable, "-m", "generators", "roofline", "--model", "deepseek-v3", "--hardware", "b200"]
        + ["--batch", "1", "64", "--dtype", "fp4", "--json"],
        capture_output=True,
        text=True,
        cwd=repo_root,
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    doc = json.loads(proc.stdout)
    assert (doc["model"]["id"], doc["hardware"]["id"], doc["phase"], doc["kv_len"]) == (
        "deepseek-v3",
        "b200",
        "decode",
        4096,
    )
    rows = doc["rows"]
    assert {r["size"] for r in rows} == {1, 64} and len(rows) == 2 * 27
    for key in (
        "op",
        "dtype",
        "m",
        "n",
        "k",
        "flops",
        "bytes",
        "intensity",
        "ridge",
        "bound",
        "predicted_s",
        "measured_s",
    ):
        assert all(key in r for r in rows), key
    row = next(r for r in rows if r["op"] == "fused_qkv_a_proj" and r["size"] == 1)
    assert (row["dtype"], row["m"], row["n"], row["k"]) == ("fp4", 1, 2112, 7168)
    # W4A4 (the FP4 recipe): weights and the input row in NVFP4 (9/16 byte an element), the output in BF16
    assert row["flops"] == 2 * 7168 * 2112 and row["bytes"] == 7168 * 2112 * 9 // 16 + 7168 * 9 // 16 + 2 * 2112
    assert row["act"] == "fp4"
    # the B200's dense FP4 peak over its bandwidth: 18 PFLOPS (with sparsity) / 2 over 7.7 TB/s
    assert (row["ridge"], row["bound"], row["measured_s"]) == (pytest.approx(18e15 / 2 / 7.7e12), "memory", None)
    assert {t["layer"] for t in doc["totals"]} == {"dense_layer", "moe_layer", "step"}
    never = next(c for c in doc["crossings"] if c["op"] == "q_nope_w_kc")
    assert never["crossing_m"] is None and never["crossing_batch"] is None


def test_defaults_h100_has_no_fp4_and_prefill_sizes(capsys):
    code, out, err = run(capsys, "--model", "deepseek-v3", "--hardware", "h100-sxm", "--json")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert doc["weights"] == ["bf16", "fp8"]
    assert sorted({r["size"] for r in doc["rows"]}) == [1, 8, 32, 64, 128, 256, 512]
    code, out, err = run(capsys, "--model", "llama-3-8b", "--hardware", "gb200", "--phase", "prefill", "--json")
    doc = json.loads(out)
    assert (code, doc["weights"], doc["kv_len"]) == (0, ["bf16", "fp8", "fp4"], None)
    assert sorted({r["size"] for r in doc["rows"]}) == [128, 256, 512, 1024, 2048, 4096, 8192]
    assert "kv_b_proj" not in {r["op"] for r in doc["rows"]}  # no MLA in Llama


def test_table_output(capsys):
    code, out, err = run(capsys, "--model", "deepseek-v3", "--hardware", "gb200", "--batch", "8", "--dtype", "fp8")
    assert (code, err) == (0, "")
    assert "batch 8, fp8 weights" in out and "ridge crossings" in out and "experts_gate_up_proj" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--model", "gpt-5", "--hardware", "b200"], "unknown model 'gpt-5'; known: deepseek-v3"),
        (["--model", "deepseek-v3", "--hardware", "tpu"], "unknown hardware 'tpu'; known: a100-sxm-40gb"),
        (["--model", "../hardware/b200", "--hardware", "b200"], "'../hardware/b200' is not an id"),
        (["--model", "deepseek-v3", "--hardware", "b200", "--dtype", "int4"], "--dtype: unknown dtype 'int4'"),
        (["--model", "deepseek-v3", "--hardware", "h100-sxm", "--dtype", "fp4"], "no fp4 peak for H100 SXM"),
        (["--model", "deepseek-v3", "--hardware", "b200", "--phase", "train"], "unknown phase 'train'"),
        (["--model", "deepseek-v3", "--hardware", "b200", "--batch", "0"], "--batch: '0' is not a positive"),
        (["--model", "deepseek-v3", "--hardware", "b200", "--batch", "2.5"], "--batch: '2.5' is not a positive"),
        (["--model", "deepseek-v3", "--hardware", "b200", "--kv-len", "-1"], "--kv-len: '-1' is not a positive"),
        (["--model", "deepseek-v3", "--hardware", "b200", "--seq", "128"], "--seq does not apply to --phase decode"),
    ],
)
def test_bad_input_is_one_error_line_and_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv, "--json")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err


def test_a_broken_model_file_names_the_file(tmp_path, capsys, repo_root, monkeypatch):
    (tmp_path / "models").mkdir()
    (tmp_path / "hardware").mkdir()
    (tmp_path / "hardware" / "b200.yml").write_bytes((repo_root / "data" / "hardware" / "b200.yml").read_bytes())
    bad = tmp_path / "models" / "x.yml"
    bad.write_text((repo_root / "data" / "models" / "llama-3-8b.yml").read_text().replace("value: 4096", "value: x"))
    monkeypatch.setenv("PROFSITE_DATA_DIR", str(tmp_path))  # mkdocs.yml's data_dir
    code, out, err = run(capsys, "--model", "x", "--hardware", "b200")
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {bad}: ") and "hidden_size.value" in err and err.count("\n") == 1
