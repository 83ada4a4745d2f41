"""Goodput of a long training run: checkpoints, failures and restarts.

A synchronous training job stops whenever one of its ``D`` devices (or their hosts,
links, switches) fails, restarts from its last checkpoint and redoes the work since.
With failures arriving at rate ``lambda`` per device and day, the job's mean time
between interruptions is ``M = 1 / (lambda D)`` (Meta, "The Llama 3 Herd of Models",
arXiv 2407.21783, 2024: 419 unexpected interruptions in 54 days on 16,384 H100 GPUs).
Checkpoints every ``tau`` seconds that block the job for ``delta`` seconds each; a failure
costs the restart time ``R`` plus, on average, half an interval of lost work. Taking
time as the job sees it (Young, "A first order approximation to the optimum checkpoint
interval", CACM 17(9), 1974; Daly, FGCS 22(3), 2006)::

    goodput = (1 - (R + tau / 2) / M) / (1 + delta / tau),   tau* = sqrt(2 delta M)

is the share of wall-clock time that advances training (Meta's "effective training
time"). It falls to zero when a restart plus half an interval outlasts ``M``: the run
never finishes.
"""

from __future__ import annotations

import numpy as np

SECONDS_PER_DAY = 86400.0


def mean_time_between_interruptions_s(failure_rate_per_device_day, devices):
    """Mean time between job interruptions: ``86400 / (lambda D)``.

    Llama 3: 419 / (54 d x 16,384) = 4.74e-4 per device-day, so a 16,384-GPU job is
    interrupted every 86400 / (4.74e-4 x 16384) = 11,130 s (3.1 h).

    Parameters
    ----------
    failure_rate_per_device_day : float or ndarray [1/device-day]
        Job interruptions per device and day ``lambda``.
    devices : float or ndarray [devices]
        Devices in the job ``D``.

    Returns
    -------
    ndarray [s]
        Mean time between interruptions ``M``.

    References
    ----------
    [llama3-herd] 419 unexpected interruptions in 54 days on 16,384 H100 GPUs.
    """
    return SECONDS_PER_DAY / (np.asarray(failure_rate_per_device_day, float) * devices)


def checkpoint_write_s(params_total, checkpoint_bytes_per_param, storage_write_bytes_per_s):
    """Time a checkpoint blocks the job: model and optimizer state over the storage write rate.

    Llama 3 405B at 14 B/param (BF16 weights, FP32 master and two Adam moments) over
    Tectonic's 2 TB/s sustained write: 405e9 x 14 / 2e12 = 2.8 s.

    Parameters
    ----------
    params_total : float or ndarray [params]
        Total parameters.
    checkpoint_bytes_per_param : float or ndarray [B/param]
        Checkpoint bytes per parameter.
    storage_write_bytes_per_s : float or ndarray [B/s]
        Sustained write rate of the cluster's storage.

    Returns
    -------
    ndarray [s]
        Checkpoint write time ``delta``.

    References
    ----------
    [llama3-herd] checkpoint state and storage write rate.
    """
    return np.asarray(params_total, float) * checkpoint_bytes_per_param / storage_write_bytes_per_s


def optimal_checkpoint_interval_s(checkpoint_s, mtbi_s):
    """Young's first-order optimum checkpoint interval: ``sqrt(2 delta M)``.

    Parameters
    ----------
    checkpoint_s : float or ndarray [s]
        Checkpoint write time ``delta``.
    mtbi_s : float or ndarray [s]
        Mean time between interruptions ``M``.

    Returns
    -------
    ndarray [s]
        Checkpoint interval ``tau*``.

    References
    ----------
    [young-cacm1974] the first-order optimum interval.
    """
    return np.sqrt(2.0 * np.asarray(checkpoint_s, float) * mtbi_s)


def goodput_fraction(mtbi_s, restart_s, checkpoint_s, interval_s=None):
    """Share of wall-clock time that advances training (module docstring).

    ``(1 - (R + tau / 2) / M) / (1 + delta / tau)``, at least 0. Llama 3 405B (M = 11,130 s,
    delta = 2.8 s, R = 600 s): tau = 250 s, goodput = (1 - 725 / 11130) / (1 + 2.8 / 250) = 0.924
    (published: "higher than 90 %").

    Parameters
    ----------
    mtbi_s : float or ndarray [s]
        Mean time between interruptions ``M``.
    restart_s : float or ndarray [s]
        Time to restart after an interruption ``R``.
    checkpoint_s : float or ndarray [s]
        Checkpoint write time ``delta``.
    interval_s : float or ndarray or None [s]
        Checkpoint interval ``tau``; None: Young's optimum.

    Returns
    -------
    ndarray [-]
        Goodput, 0-1.

    References
    ----------
    [young-cacm1974] the first-order model of lost work.
    [daly-fgcs2006] the higher-order estimate it approximates.
    [llama3-herd] effective training time above 90 %.
    """
    tau = optimal_checkpoint_interval_s(checkpoint_s, mtbi_s) if interval_s is None else np.asarray(interval_s, float)
    lost = (restart_s + 0.5 * tau) / mtbi_s
    return np.maximum(1.0 - lost, 0.0) / (1.0 + checkpoint_s / tau)
