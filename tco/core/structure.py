"""The discrete shape of a scenario: which options exist and which device runs which phase.

Everything numeric lives in the parameter mapping (dotted names); this module holds
only the choices that cannot be swept: option names, pools, devices, tiers, links.
Parameter names are built here so that the core, the studies and the workbook all
address a quantity by the same string.
"""

from __future__ import annotations

from dataclasses import dataclass

from .parallelism import Shape

ROLES = ("colocated", "prefill", "decode")


@dataclass(frozen=True)
class Pool:
    """A pool of identical devices serving one phase (or both, when ``role == colocated``)."""

    role: str
    device: str
    tiers: tuple[str, ...]
    specialized: bool
    built: bool = False
    has_min_devices: bool = False
    shapes: tuple[Shape, ...] = (Shape(1),)

    @property
    def serves_prefill(self) -> bool:
        return self.role in ("colocated", "prefill")

    @property
    def serves_decode(self) -> bool:
        return self.role in ("colocated", "decode")


@dataclass(frozen=True)
class Option:
    """A fleet option: one colocated pool, or a prefill pool and a decode pool plus a KV link."""

    name: str
    pools: tuple[Pool, ...]
    link: str | None = None

    @property
    def specialized(self) -> bool:
        return any(pool.specialized for pool in self.pools)

    @property
    def disaggregated(self) -> bool:
        return len(self.pools) == 2

    def pool(self, role: str) -> Pool:
        return next(p for p in self.pools if p.role == role)


@dataclass(frozen=True)
class Structure:
    """The discrete part of a scenario, as the core needs it."""

    model: str
    options: tuple[Option, ...]
    baseline: str
    whole_devices: bool = True
    program_device: str | None = None
    policy: str = "chunked"
    moe: bool = False

    def option(self, name: str) -> Option:
        return next(o for o in self.options if o.name == name)

    @property
    def challengers(self) -> tuple[Option, ...]:
        return tuple(o for o in self.options if o.name != self.baseline)


def device_param(device: str, field: str) -> str:
    return f"devices.{device}.{field}"


def tier_param(device: str, tier: str, field: str) -> str:
    return f"devices.{device}.memory.{tier}.{field}"


def model_param(model: str, field: str) -> str:
    return f"models.{model}.{field}"


def link_param(link: str, field: str) -> str:
    return f"links.{link}.{field}"


def pool_param(option: str, role: str, field: str) -> str:
    return f"options.{option}.{role}.{field}"
