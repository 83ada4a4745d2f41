"""Every named parameter as a table: value, unit, range, distribution, grade, source, date, note."""

from __future__ import annotations

import pandas as pd

from tco.inputs.scenario import Scenario


def parameters(scenario: Scenario, reference: bool = False, settings: bool = False) -> pd.DataFrame:
    """Every named parameter: name, value, unit, low, high, distribution, grade, source, date, note.

    ``role`` is ``input`` for the parameters the model reads. With ``settings=True`` the
    settings of the fleet analyses follow (``fleet_dynamics.*``, read by :mod:`tco.dynamics`
    only), with ``role`` ``setting``; with ``reference=True`` the catalog figures shown beside
    them (device list/street/cost-of-goods prices, architecture facts the core does not read
    yet), with ``role`` ``reference``. Neither is drawn by a study of the cost model.

    Parameters
    ----------
    scenario : Scenario
        A loaded scenario (inference or training).
    reference : bool
        Add the reference figures.
    settings : bool
        Add the fleet-analysis settings.

    Returns
    -------
    pandas.DataFrame
        One row per parameter, its value and range in its own ``unit`` column.
    """
    groups = [("input", scenario.params.values_list())]
    if settings and hasattr(scenario, "dynamics"):  # a training scenario runs no fleet analysis
        groups.append(("setting", scenario.dynamics.values_list()))
    if reference and hasattr(scenario, "reference"):  # a training scenario has no reference figures
        groups.append(("reference", scenario.reference.values_list()))
    rows = [{"name": p.name, "value": p.value, "unit": p.unit, "low": p.low, "high": p.high,
             "distribution": p.distribution, "grade": p.grade, "source": p.source, "date": p.date, "note": p.note,
             "role": role}
            for role, params in groups for p in params]
    return pd.DataFrame(rows)
