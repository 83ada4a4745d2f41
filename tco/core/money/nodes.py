"""Node-aware chips: a built chip's figures scaled from the node they were given at to the node it is built at.

DESIGN.md section 9. The built device's catalog figures describe it at one process node
(``program.specs_node``); the program may build it at another (``program.node``). At the
same die area and the same power budget (the device's TDP):

- compute scales with what the node lets fit and feed: the smaller of the logic density
  ratio (area-limited: more multipliers per mm^2) and the energy-per-operation ratio
  (power-limited: more operations per joule), ``c = min(D_n / D_0, E_0 / E_n)``;
- on-die SRAM capacity scales with the bit-cell area, ``s = A_0 / A_n``, and its bandwidth
  with the number of SRAM macros, the same ``s``;
- HBM, links, power and prices are unchanged; the unit cost moves through the node's wafer
  price and defect density when the die is given (:func:`tco.core.money.nre.good_die_cost_usd`).

The node table (``assumptions/nre.yaml``) gives ``D`` (MTr/mm^2), ``A`` (um^2 per bit) and
``E`` (energy per operation relative to 5 nm).
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping

import numpy as np

from tco.core import names as named
from tco.core.names import device_param, tier_param
from tco.core.structure import Structure

PEAK_FIELDS = ("peak_flops_16bit", "peak_flops_8bit", "peak_flops_4bit")


def compute_scale(values: Mapping[str, object]):
    """``min(D_n / D_0, E_0 / E_n)``: compute at the build node over compute at the specs node.

    Parameters
    ----------
    values : Mapping[str, object]
        Named parameter values; reads ``program.logic_density_mtr_per_mm2`` [MTr/mm^2] and
        ``program.relative_energy_per_op`` [-] of the build node and their ``program.specs.*``
        twins of the specs node.

    Returns
    -------
    ndarray [-]
        Compute scale factor (area- or power-limited, whichever binds).
    """
    def get(name):
        return np.asarray(values[name], float)

    density = get(named.program.logic_density_mtr_per_mm2) / get(named.program_specs.logic_density_mtr_per_mm2)
    energy = get(named.program_specs.relative_energy_per_op) / get(named.program.relative_energy_per_op)
    return np.minimum(density, energy)


def sram_scale(values: Mapping[str, object]):
    """``A_0 / A_n``: SRAM bytes (and bandwidth) at the build node over those at the specs node.

    Parameters
    ----------
    values : Mapping[str, object]
        Named parameter values; reads ``program.sram_bitcell_um2`` and
        ``program.specs.sram_bitcell_um2`` [um^2].

    Returns
    -------
    ndarray [-]
        SRAM scale factor.
    """
    given, built = (np.asarray(values[s.sram_bitcell_um2], float) for s in (named.program_specs, named.program))
    return given / built


def node_scaled_values(structure: Structure, values: Mapping[str, object]) -> Mapping[str, object]:
    """``values`` with the built device's peak FLOP/s and SRAM tiers at the build node.

    The scenario's own parameter names keep their catalog meaning (figures at the specs
    node); the core reads the scaled copies. Unchanged when no scaling applies.

    Parameters
    ----------
    structure : Structure
        The scenario's structure (its built device and node-scaled tiers).
    values : Mapping[str, object]
        Named parameter values.

    Returns
    -------
    Mapping[str, object]
        A view with the peaks [FLOP/s] scaled by :func:`compute_scale` and the SRAM tiers'
        capacity [B] and bandwidth [B/s] by :func:`sram_scale` (``values`` itself when no
        scaling applies).
    """
    if structure.node_scaled_tiers is None:
        return values
    device = structure.program_device
    scaled = ChainMap({}, values)  # the scaled figures over the others: a value is read where it is used
    compute, sram = compute_scale(values), sram_scale(values)
    for name in PEAK_FIELDS:
        key = device_param(device, name)
        scaled[key] = np.asarray(values[key], float) * compute
    for tier in structure.node_scaled_tiers:
        for name in ("capacity_bytes", "bandwidth_bytes_per_s"):
            key = tier_param(device, tier, name)
            scaled[key] = np.asarray(values[key], float) * sram
    return scaled
