"""Reader for language-model descriptions: ``data/models/<id>.yml``, one file per architecture.

Schema ``profsite.model/1`` (validated when loaded, see :class:`ModelFile`). Every dimension
is ``{value, source, key, note}``: ``source`` is the id of an entry under ``sources:``,
``key`` the field name in that source (``dim`` in DeepSeek's config_671B.json,
``hidden_size`` in a Hugging Face config.json), ``note`` a remark keyed by language code.

.. code-block:: yaml

    schema: profsite.model/1
    name: DeepSeek-V3 / DeepSeek-R1 (671B)
    short_name: DeepSeek-V3/R1
    sources:
      - {id: config, title: "...config_671B.json", url: "https://...", date: "2024-12-26"}
    hidden_size: {value: 7168, source: config, key: dim}
    num_layers:  {value: 61, source: config, key: n_layers}
    vocab_size:  {value: 129280, source: config, key: vocab_size}
    attention:                        # kind: mla (multi-head latent) or gqa (grouped-query)
      kind: mla
      num_heads: {value: 128, source: config, key: n_heads}
      q_lora_rank: ...                # mla: q_lora_rank, kv_lora_rank, qk_nope_head_dim,
                                      #      qk_rope_head_dim, v_head_dim
                                      # gqa: num_kv_heads, optional head_dim (default hidden / heads)
    ffn:
      intermediate_size: {value: 18432, ...}   # the dense SwiGLU FFN
      dense_layers: {value: 3, ...}            # the first N layers are dense; all layers without moe
      moe:                                     # optional: routed_experts, active_experts,
        routed_experts: {value: 256, ...}      # shared_experts, expert_intermediate_size;
                                               # optional: expert_groups, limited_groups (the
                                               # groups the router may pick from per token)
    notes:
      - {en: "...", zh: "..."}

:func:`read` returns a :class:`ModelSpec` of plain integers; the sources stay with it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import msgspec

from generators.errors import UserError
from generators.readers import typed_file
from generators.readers.hardware import ISO_DATE, Source

SCHEMA = "profsite.model/1"


class Dim(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    value: int
    source: str
    key: str | None = None
    note: dict[str, str] | None = None


class Mla(msgspec.Struct, forbid_unknown_fields=True, frozen=True, tag="mla", tag_field="kind"):
    num_heads: Dim
    q_lora_rank: Dim
    kv_lora_rank: Dim
    qk_nope_head_dim: Dim
    qk_rope_head_dim: Dim
    v_head_dim: Dim


class Gqa(msgspec.Struct, forbid_unknown_fields=True, frozen=True, tag="gqa", tag_field="kind"):
    num_heads: Dim
    num_kv_heads: Dim
    head_dim: Dim | None = None


class Moe(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    routed_experts: Dim
    active_experts: Dim
    shared_experts: Dim
    expert_intermediate_size: Dim
    expert_groups: Dim | None = None  # the routed experts fall into this many groups
    limited_groups: Dim | None = None  # a token's experts come from at most this many groups


class Ffn(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    intermediate_size: Dim
    dense_layers: Dim
    moe: Moe | None = None


class ModelFile(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    schema: str
    name: str
    short_name: str
    sources: list[Source]
    hidden_size: Dim
    num_layers: Dim
    vocab_size: Dim
    attention: Mla | Gqa
    ffn: Ffn
    notes: list[dict[str, str]] = []


@dataclass(frozen=True)
class MlaSpec:
    num_heads: int
    q_lora_rank: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    kind: Literal["mla"] = "mla"


@dataclass(frozen=True)
class GqaSpec:
    num_heads: int
    num_kv_heads: int
    head_dim: int
    kind: Literal["gqa"] = "gqa"


@dataclass(frozen=True)
class MoeSpec:
    routed_experts: int
    active_experts: int
    shared_experts: int
    expert_intermediate_size: int
    expert_groups: int | None = None
    limited_groups: int | None = None


@dataclass(frozen=True)
class ModelSpec:
    """One model architecture; dimensions as plain integers."""

    id: str  # file stem: deepseek-v3
    path: str
    name: str
    short_name: str
    hidden_size: int
    num_layers: int
    vocab_size: int
    attention: MlaSpec | GqaSpec
    intermediate_size: int  # dense FFN
    dense_layers: int  # the first dense_layers layers have the dense FFN, the others MoE
    moe: MoeSpec | None
    sources: dict[str, Source]
    cited: dict[str, Dim]  # dotted field name -> the value as written, with its source

    @property
    def moe_layers(self) -> int:
        return self.num_layers - self.dense_layers


def _dims(doc: ModelFile) -> dict[str, Dim]:
    """Every dimension of the file by dotted name (``attention.num_heads``)."""
    out = {name: getattr(doc, name) for name in ("hidden_size", "num_layers", "vocab_size")}
    for prefix, part in (("attention", doc.attention), ("ffn", doc.ffn), ("ffn.moe", doc.ffn.moe)):
        for field in part.__struct_fields__ if part is not None else ():
            if isinstance(value := getattr(part, field), Dim):
                out[f"{prefix}.{field}"] = value
    return out


def _check(path: Path, doc: ModelFile) -> dict[str, Dim]:
    if doc.schema != SCHEMA:
        raise UserError(path, f"schema is {doc.schema!r}, expected {SCHEMA!r}")
    ids = [s.id for s in doc.sources]
    if len(set(ids)) != len(ids):
        raise UserError(path, "sources: the same id is used twice")
    for i, src in enumerate(doc.sources):
        if not ISO_DATE.match(src.date):
            raise UserError(path, f"sources[{i}].date: {src.date!r} is not YYYY, YYYY-MM or YYYY-MM-DD")
    dims = _dims(doc)
    for name, dim in dims.items():
        if dim.value <= 0:
            raise UserError(path, f"{name}.value: must be a positive whole number, got {dim.value}")
        if dim.source not in ids:
            raise UserError(path, f"{name}.source: unknown source {dim.source!r}; declared: {ids}")
    notes = [d.note for d in dims.values() if d.note is not None] + list(doc.notes)
    if any(not note or not all(text.strip() for text in note.values()) for note in notes):
        raise UserError(path, "a note needs text for each of its languages")
    _check_shapes(path, doc)
    return dims


def _check_shapes(path: Path, doc: ModelFile) -> None:
    layers, dense, moe = doc.num_layers.value, doc.ffn.dense_layers.value, doc.ffn.moe
    if dense > layers:
        raise UserError(path, f"ffn.dense_layers.value: {dense} is more than num_layers ({layers})")
    if moe is None and dense != layers:
        raise UserError(path, "ffn.dense_layers.value: a model without ffn.moe has only dense layers")
    if moe is not None and moe.active_experts.value > moe.routed_experts.value:
        raise UserError(path, "ffn.moe.active_experts.value: more active experts than routed experts")
    if moe is not None and (moe.expert_groups is None) != (moe.limited_groups is None):
        raise UserError(path, "ffn.moe: expert_groups and limited_groups go together")
    if moe is not None and moe.expert_groups is not None and moe.limited_groups is not None:
        if moe.routed_experts.value % moe.expert_groups.value:
            raise UserError(path, "ffn.moe.expert_groups.value: must divide routed_experts")
        if moe.limited_groups.value > moe.expert_groups.value:
            raise UserError(path, "ffn.moe.limited_groups.value: more than expert_groups")
    att = doc.attention
    if isinstance(att, Gqa) and att.num_heads.value % att.num_kv_heads.value:
        raise UserError(path, "attention.num_kv_heads.value: must divide attention.num_heads")
    if isinstance(att, Gqa) and att.head_dim is None and doc.hidden_size.value % att.num_heads.value:
        raise UserError(path, "attention.head_dim: needed when num_heads does not divide hidden_size")


def _attention(doc: ModelFile) -> MlaSpec | GqaSpec:
    att = doc.attention
    if isinstance(att, Mla):
        fields = ("num_heads", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
        return MlaSpec(**{f: getattr(att, f).value for f in fields})
    head_dim = att.head_dim.value if att.head_dim else doc.hidden_size.value // att.num_heads.value
    return GqaSpec(att.num_heads.value, att.num_kv_heads.value, head_dim)


def _value(dim: Dim | None) -> int | None:
    return None if dim is None else dim.value


def read(path: str | os.PathLike[str]) -> ModelSpec:
    """Load and validate one model file; a problem is one ``UserError`` naming the field."""
    path = Path(path)
    doc = typed_file.decode(path, ModelFile, yaml=True)
    dims = _check(path, doc)
    moe = doc.ffn.moe
    return ModelSpec(
        id=path.stem,
        path=str(path),
        name=doc.name,
        short_name=doc.short_name,
        hidden_size=doc.hidden_size.value,
        num_layers=doc.num_layers.value,
        vocab_size=doc.vocab_size.value,
        attention=_attention(doc),
        intermediate_size=doc.ffn.intermediate_size.value,
        dense_layers=doc.ffn.dense_layers.value,
        moe=None if moe is None else MoeSpec(*(_value(getattr(moe, f)) for f in Moe.__struct_fields__)),
        sources={s.id: s for s in doc.sources},
        cited=dims,
    )
