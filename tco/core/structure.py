"""The discrete shape of a scenario: which options exist and which device runs which phase.

Everything numeric lives in the parameter mapping (dotted names); this module holds
only the choices that cannot be swept: option names, pools, devices, tiers, links.
Parameter names are built here so that the core, the studies and the workbook all
address a quantity by the same string.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace

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
    #: devices sold together (a rack-scale system's GPUs, the device's ``purchase_unit_devices``): a whole-device pool
    #: holds whole units (:func:`tco.core.serving.sizing.replica_multiple`)
    purchase_unit_devices: int = 1
    #: rented capacity: the parameter of its hourly rate per device (``options.<name>.<role>.rental_usd_per_hour``);
    #: its devices are paid by the hour, not bought, powered or housed (:func:`tco.core.money.costs.pool_costs`)
    rental_param: str | None = None
    #: and the parameter of the share of its device-hours it pays for (``options.<name>.<role>.rental_paid_share``)
    rental_share_param: str | None = None

    @property
    def rented(self) -> bool:
        """Whether the pool's devices are rented by the hour."""
        return self.rental_param is not None


@dataclass(frozen=True)
class Option:
    """A fleet option: one colocated pool, or a prefill pool and a decode pool plus a KV link."""

    name: str
    pools: tuple[Pool, ...]
    link: str | None = None
    #: the pool that decodes speculates (its ``options.<name>.speculation.*`` parameters,
    #: :mod:`tco.core.serving.speculation`)
    speculation: bool = False

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
    purchase_unit_devices: int = 1  # devices sold together (Pool.purchase_unit_devices)


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
    #: where the prefix cache lives when the workload reuses prefixes (:data:`tco.core.serving.prefix_cache.TIERS`;
    #: None: no reuse)
    prefix_cache_tier: str | None = None

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

    def narrowed(self, names: Collection[str]) -> Structure:
        """This structure with the options named and the baseline alone (the baseline's results are what the other
        options read of it: the work they lose to workload shifts is charged at its cost).

        Parameters
        ----------
        names : Collection[str]
            Options' names (the baseline's alone: the baseline alone).

        Returns
        -------
        Structure
            The same structure over those options, in their order.
        """
        return replace(self, options=tuple(o for o in self.options if o.name in names or o.name == self.baseline))

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
                                                  *(g.shapes[i:i + 1] if g.shapes else ()),
                                                  purchase_unit_devices=g.purchase_unit_devices)
                                             for i, p in enumerate(base.pools)), base.link, base.speculation)
                     for g in self.generations)
