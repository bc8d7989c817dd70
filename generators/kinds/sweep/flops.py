"""Analytical FLOPs and parameters of the sweep's Transformer, from its dimensions.

The model (``generators.capture.model``): token embedding, ``n_layers`` blocks of RMSNorm,
attention (one fused QKV projection, written-out attention, an output projection), RMSNorm
and a SwiGLU feed-forward (three ``d_model x d_ff`` matrices), a final RMSNorm and an
untied LM head. ``d_head = d_model / n_heads``; batch ``B``, sequence length ``S``.

Forward FLOPs, counting a multiply-add as 2 (the unit of the FLOP/s peaks), matmuls only::

    per layer and token   2 x (3 d² + d²)        QKV and output projections
                        + 2 x 3 x d x d_ff       SwiGLU: W1, W3 and W2
    per layer             2 x B x S² x d         QKᵀ: every (query, key) pair, all heads
                        + 2 x B x S² x d         PV
    once per token        2 x d x vocab          LM head (logits for every position)

    forward = B·S·L·(8d² + 6·d·d_ff) + 4·B·S²·L·d + 2·B·S·d·vocab

The written-out attention computes the whole S x S score matrix and masks it afterwards,
so the causal half is counted: these are the FLOPs the GPU executes. A training step is
3 x forward (the backward pass computes the gradient of every matmul with respect to both
of its inputs: twice the forward's FLOPs); the optimizer, norms, softmax and elementwise
work are not matmul FLOPs and are not counted, as model FLOPs utilisation counts them.

Parameters: ``vocab·d`` (embedding) + ``L·(4d² + 3·d·d_ff + 2d)`` + ``d`` (final norm) +
``d·vocab`` (LM head).
"""

from __future__ import annotations


def forward_flops(d_model: int, d_ff: int, n_layers: int, vocab: int, batch: int, seq: int) -> int:
    d, b, s, layers = d_model, batch, seq, n_layers
    return b * s * layers * (8 * d * d + 6 * d * d_ff) + 4 * b * s * s * layers * d + 2 * b * s * d * vocab


def attention_flops(d_model: int, n_layers: int, batch: int, seq: int) -> int:
    """QKᵀ and PV of the forward pass (part of :func:`forward_flops`)."""
    return 4 * batch * seq * seq * n_layers * d_model


def step_flops(pass_: str, d_model: int, d_ff: int, n_layers: int, vocab: int, batch: int, seq: int) -> int:
    forward = forward_flops(d_model, d_ff, n_layers, vocab, batch, seq)
    return 3 * forward if pass_ == "train" else forward


def params(d_model: int, d_ff: int, n_layers: int, vocab: int) -> int:
    d = d_model
    return vocab * d + n_layers * (4 * d * d + 3 * d * d_ff + 2 * d) + d + d * vocab


#: bytes of one element of a kernel's element type (``analysis.kernel_names.element_type``)
ELEMENT_BYTES = {"fp64": 8, "fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}


def softmax_flop_ratio(ops_per_element: float, d_head: int) -> float:
    """Softmax operations ÷ attention matmul FLOPs, per head: ops·S² ÷ (4·S²·d_head)."""
    return ops_per_element / (4 * d_head)
