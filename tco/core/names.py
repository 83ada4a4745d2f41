"""The dotted names of the named parameters, declared once: every layer addresses a quantity by these.

A parameter's name is its section and field (``workload.prompt_tokens``), or for what belongs to a device, a
model, a link, a pool or a roadmap generation, a template filled by a builder
(``device_param("h100-sxm", "tdp_w") == "devices.h100-sxm.tdp_w"``). A fixed name is read as an attribute of
its section, ``names.workload.prompt_tokens``; a field the section does not have raises ``AttributeError`` at
the line that asks for it, and ``tests/test_names.py`` checks that the sections and builders produce exactly
the names the scenarios resolve to, and that no module writes a declared name as a string literal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator


class Section:
    """The names of one section's fixed parameters, as attributes (``economics.pue == "economics.pue"``).

    Parameters
    ----------
    prefix : str
        The section's dotted prefix (``program.nre``).
    fields : tuple of str
        Its fields, in the order the scenario lists them.
    """

    __slots__ = ("_names", "fields", "prefix")

    def __init__(self, prefix: str, fields: tuple[str, ...]):
        object.__setattr__(self, "prefix", prefix)
        object.__setattr__(self, "fields", tuple(fields))
        object.__setattr__(self, "_names", {f: f"{prefix}.{f}" for f in fields})

    def __getattr__(self, field: str) -> str:
        try:
            return self._names[field]
        except KeyError:
            raise AttributeError(f"{self.prefix} has no parameter {field!r}; its fields: {', '.join(self.fields)}") \
                from None

    def __setattr__(self, name, value):
        raise AttributeError(f"the names of {self.prefix} are fixed")

    def name(self, field: str) -> str:
        """The dotted name of ``field`` (for a field held in a variable).

        Parameters
        ----------
        field : str
            One of :attr:`fields`.

        Returns
        -------
        str
            ``<prefix>.<field>``; ``AttributeError`` for a field the section does not have.
        """
        return getattr(self, field)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names.values())


#: the parts of a chip program's NRE (``program.nre.<part>``), by process node in ``assumptions/nre.yaml``
NRE_PARTS = ("design_usd", "verification_usd", "masks_usd", "ip_usd", "software_usd")
#: the node table's figures, as parameters of the build node (``program.<field>``) and of the node the device's
#: figures were given at (``program.specs.<field>``)
NODE_FIELDS = ("logic_density_mtr_per_mm2", "sram_bitcell_um2", "relative_energy_per_op")

workload = Section("workload", ("requests_per_s", "prompt_tokens", "output_tokens", "ttft_target_s", "tpot_target_s",
                                "half_life_years", "peak_to_mean", "max_batch", "weight_bits", "kv_bits", "compute_bits",
                                "demand_growth_per_year", "prompt_tokens_scv", "prefix_hit_fraction",
                                "prefix_reuse_interval_s"))
economics = Section("economics", ("discount_rate", "horizon_years", "electricity_usd_per_kwh", "pue",
                                  "facility_usd_per_kw_month", "maintenance_fraction_per_year"))
serving = Section("serving", ("percentile", "token_budget_tokens", "memory_compute_overlap", "phase_overlap",
                              "comm_overlap", "collective_bits", "dispatch_bits", "expert_imbalance",
                              "redundant_expert_share", "micro_batch_overlap", "prefix_cache_hbm_fraction",
                              "host_dram_cache_bytes_per_device", "host_dram_cache_bandwidth_bytes_per_s",
                              "ssd_cache_bytes_per_device", "ssd_cache_bandwidth_bytes_per_s"))
program = Section("program", ("external_units", "vendor_gross_margin", "time_to_market_years",
                              "tapeout_to_deployment_years", "nre_scale", "respin_probability", "respin_slip_years",
                              "die_area_mm2", "package_memory_board_usd",
                              "wafer_price_usd", "defect_density_per_cm2", *NODE_FIELDS))
program_nre = Section("program.nre", NRE_PARTS)
program_specs = Section("program.specs", NODE_FIELDS)
roadmap = Section("roadmap", ("start_year", "cost_halving_years"))
training = Section("training", ("tokens", "global_batch_tokens", "seq_len_tokens", "micro_batch_sequences", "compute_bits",
                                "weight_grad_bytes_per_param", "gradient_bytes_per_param", "optimizer_bytes_per_param",
                                "checkpoint_bytes_per_param", "storage_write_bytes_per_s", "failure_rate_per_device_day",
                                "restart_s", "power_utilization", "moe_compute_efficiency"))
second_life = Section("second_life", ("retire_after_years",))
#: every section of fixed names
SECTIONS = (workload, economics, serving, program, program_nre, program_specs, roadmap, training, second_life)


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


#: The dotted names of the parameters that belong to something, by what they belong to: each fills its template's ``{}`` in order,
#: ``device_param(device, field)``, ``tier_param(device, tier, field)``, ``model_param(model, field)``,
#: ``link_param(link, field)``, ``pool_param(option, role, field)``, ``roadmap_param(device, field)``,
#: ``demand_year_param(year)``, ``speculation_param(option, field)`` (``device_param("h100-sxm", "tdp_w") ==
#: "devices.h100-sxm.tdp_w"``).
device_param = name_builder("devices.{}.{}")
tier_param = name_builder("devices.{}.memory.{}.{}")
model_param = name_builder("models.{}.{}")
link_param = name_builder("links.{}.{}")
pool_param = name_builder("options.{}.{}.{}")
roadmap_param = name_builder("roadmap.{}.{}")
demand_year_param = name_builder("workload.year_{}.demand_multiplier")
speculation_param = name_builder("options.{}.speculation.{}")
