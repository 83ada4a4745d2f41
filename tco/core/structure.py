"""The discrete shape of a scenario: which options exist and which device runs which phase.

Everything numeric lives in the parameter mapping (dotted names); this module holds
only the choices that cannot be swept: option names, pools, devices, tiers, links.
Parameter names are built here so that the core, the studies and the workbook all
address a quantity by the same string.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tco.core.serving.parallelism import Shape

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
    #: a prompt's tokens stream through the pipeline stages (the device's ``pipeline_prefill``; roadmap devices:
    #: general-purpose, micro-batches)
    streamed_prefill: bool = False

    @property
    def serves_prefill(self) -> bool:
        """Whether the pool runs prefill (``colocated`` or ``prefill``)."""
        return self.role in ("colocated", "prefill")

    @property
    def serves_decode(self) -> bool:
        """Whether the pool runs decode (``colocated`` or ``decode``)."""
        return self.role in ("colocated", "decode")


@dataclass(frozen=True)
class Option:
    """A fleet option: one colocated pool, or a prefill pool and a decode pool plus a KV link."""

    name: str
    pools: tuple[Pool, ...]
    link: str | None = None

    @property
    def specialized(self) -> bool:
        """Whether any pool runs on a specialized device."""
        return any(pool.specialized for pool in self.pools)

    @property
    def disaggregated(self) -> bool:
        """Whether prefill and decode run on separate pools."""
        return len(self.pools) == 2

    def pool(self, role: str) -> Pool:
        """The pool with role ``role``.

        Parameters
        ----------
        role : str
            ``colocated``, ``prefill`` or ``decode``.

        Returns
        -------
        Pool
            That pool.
        """
        return next(p for p in self.pools if p.role == role)


@dataclass(frozen=True)
class Generation:
    """A general-purpose device on the roadmap of the baseline (``assumptions/roadmap.yaml``)."""

    device: str
    tiers: tuple[str, ...]
    shapes: tuple[tuple[Shape, ...], ...] = ()  # candidate replica shapes of each baseline pool on this device


@dataclass(frozen=True)
class Structure:
    """The discrete part of a scenario, as the core needs it.

    ``generations`` the roadmap devices the baseline may move to, under ``refresh_policy``
    (:mod:`tco.core.money.generations`); ``policy`` the replicas' prefill scheduling and ``prefill_queue`` how prompts
    reach a disaggregated prefill pool (:data:`tco.core.serving.shapes.POLICIES`, :data:`tco.core.serving.shapes.PREFILL_QUEUES`);
    ``demand_series_years`` the length of a yearly demand
    series (0: a growth rate); ``node_scaled_tiers`` the built device's SRAM tiers when its
    figures are scaled from the node they were given at to the node it is built at (None:
    no scaling, :mod:`tco.core.money.nodes`).
    """

    model: str
    options: tuple[Option, ...]
    baseline: str
    whole_devices: bool = True
    program_device: str | None = None
    policy: str = "chunked"
    prefill_queue: str = "shared"
    moe: bool = False
    generations: tuple[Generation, ...] = ()
    refresh_policy: str = "keep"
    demand_series_years: int = 0
    node_scaled_tiers: tuple[str, ...] | None = None

    def option(self, name: str) -> Option:
        """The option named ``name``.

        Parameters
        ----------
        name : str
            The option's name.

        Returns
        -------
        Option
            That option.
        """
        return next(o for o in self.options if o.name == name)

    @property
    def challengers(self) -> tuple[Option, ...]:
        """Every option but the baseline, in the scenario's order."""
        return tuple(o for o in self.options if o.name != self.baseline)

    @property
    def incumbent_devices(self) -> frozenset[str]:
        """Devices the baseline runs on: the software already runs there (no porting)."""
        return frozenset(p.device for p in self.option(self.baseline).pools)

    def adopted_devices(self, option: Option) -> tuple[str, ...]:
        """Devices a challenger ports its software to.

        Not the baseline's (the software runs there already), not the built chip (its software
        is part of the NRE).

        Parameters
        ----------
        option : Option
            The challenger.

        Returns
        -------
        tuple of str
            Device ids, each once (empty for the baseline).
        """
        if option.name == self.baseline:
            return ()
        return tuple(dict.fromkeys(p.device for p in option.pools if not p.built and p.device not in self.incumbent_devices))

    def generation_options(self) -> tuple[Option, ...]:
        """The baseline's shape on each roadmap device, every pool on that device.

        Same option name: the baseline's pool parameters apply.

        Returns
        -------
        tuple of Option
            One option per roadmap generation.
        """
        base = self.option(self.baseline)
        return tuple(Option(base.name, tuple(Pool(p.role, g.device, g.tiers, False, False, p.has_min_devices,
                                                  *(g.shapes[i:i + 1] if g.shapes else ()))
                                             for i, p in enumerate(base.pools)), base.link) for g in self.generations)


def name_builder(template: str) -> Callable[..., str]:
    """A builder of dotted parameter names: each positional part fills one ``{}`` of ``template``, in order.

    ``str.format`` ignores extra arguments, so a call with a part too many would build a wrong
    name without a word; the builder takes exactly as many parts as the template has slots.

    Parameters
    ----------
    template : str
        The name with a ``{}`` per part (``"devices.{}.{}"``).

    Returns
    -------
    Callable[..., str]
        ``build(*parts)``; raises ``TypeError`` on another number of parts or on a keyword.
    """
    slots = template.count("{}")
    # names of text parts, formatted once (an evaluation builds ~130 names, most of them again); only text parts are
    # kept, so a number never finds another type's name (1, 1.0 and True are equal keys)
    built: dict[tuple, str] = {}

    def build(*parts: object) -> str:
        name = built.get(parts)
        if name is None:
            if len(parts) != slots:
                raise TypeError(f"parameter name {template!r} takes {slots} part(s), got {len(parts)}: {parts!r}")
            name = template.format(*parts)
            if all(type(part) is str for part in parts):
                built[parts] = name
        return name

    build.__doc__ = f"The parameter name {template!r} with its {slots} part(s) filled in order."
    return build


#: The dotted names of the parameters, by what they belong to: each fills its template's ``{}`` in order,
#: ``device_param(device, field)``, ``tier_param(device, tier, field)``, ``model_param(model, field)``,
#: ``link_param(link, field)``, ``pool_param(option, role, field)``, ``roadmap_param(device, field)``,
#: ``demand_year_param(year)`` (``device_param("h100-sxm", "tdp_w") == "devices.h100-sxm.tdp_w"``).
device_param = name_builder("devices.{}.{}")
tier_param = name_builder("devices.{}.memory.{}.{}")
model_param = name_builder("models.{}.{}")
link_param = name_builder("links.{}.{}")
pool_param = name_builder("options.{}.{}.{}")
roadmap_param = name_builder("roadmap.{}.{}")
demand_year_param = name_builder("workload.year_{}.demand_multiplier")
