"""What a unit renders for one page language: markdown, and the figures it shows."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Figure:
    name: str  # file stem, unique on a page: "hardware-roofline-bf16"
    svg: bytes
    alt: str  # translated description for <img alt>
    caption: str = ""  # translated; plain text


@dataclass(frozen=True)
class Fragment:
    markdown: str
    figures: tuple[Figure, ...] = field(default_factory=tuple)
