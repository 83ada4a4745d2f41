"""Speculative decoding and multi-token prediction: tokens a decode step emits and what the step costs.

A draft (MTP heads, an EAGLE-style head, or a small draft model) proposes ``k`` tokens per sequence; the target model
verifies them in one forward pass of ``k + 1`` tokens per sequence and keeps the longest accepted prefix plus one token
of its own. With an i.i.d. acceptance rate ``a`` per drafted position the expected tokens a step emits are
``tau = sum_{i=0..k} a^i = (1 - a^(k+1)) / (1 - a)`` [leviathan-2023]. The step's cost (docs/model.md "Speculative
decoding"): the verification carries ``k + 1`` tokens per sequence through the weight GEMMs, the attention arithmetic,
the routed experts and the collectives, but reads the weights and each sequence's KV cache once; the draft, a model of
``f`` of the target's per-token cost (the heads' share of a forward pass, or a draft model's parameters over the
target's), runs ``k`` passes of the batch, so it adds ``k f`` weight reads, fixed latencies and KV reads and
``k f`` token passes per sequence. A memory-bound step (small batch) then emits ``tau`` tokens for little more than
one step's time. With the step's terms added, ``t = A + N`` (``A`` the arithmetic and per-token collectives, ``N`` the
reads and fixed latencies), speculating takes ``s A + r N`` (``s = k + 1 + k f``, ``r = 1 + k f``): the gain
``tau (A + N) / (s A + r N)`` falls towards ``tau / s <= 1`` as the batch grows, and is at most 1 once ``N`` is at most
``(s - tau) / (s - r)`` of the step: a step that is (all but) arithmetic is never faster per token with speculation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: the speculation methods a serving option may name (``none``: one token per step)
METHODS = ("none", "mtp", "eagle", "draft_model")


def accepted_tokens_per_step(acceptance_rate, draft_tokens):
    """Expected tokens one verification step emits per sequence, ``tau = sum_{i=0..k} a^i``.

    Parameters
    ----------
    acceptance_rate : float or ndarray [-]
        ``a``, the probability that a drafted token is accepted given the ones before it were (0-1).
    draft_tokens : float or ndarray [tokens]
        ``k``, tokens the draft proposes per step.

    Returns
    -------
    ndarray [tokens/step]
        ``(1 - a^(k+1)) / (1 - a)`` (``k + 1`` at ``a = 1``), between 1 and ``k + 1``.

    References
    ----------
    [leviathan-2023] expected tokens per iteration under i.i.d. acceptance (their eq. 1).
    """
    a = np.asarray(acceptance_rate, float)
    k = np.asarray(draft_tokens, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        geometric = (1.0 - a ** (k + 1.0)) / (1.0 - a)
    return np.where(a < 1.0, geometric, k + 1.0)


def acceptance_rate_for(tokens_per_step, draft_tokens, steps=60):
    """The i.i.d. acceptance rate per drafted position that emits ``tau`` tokens per step at ``k`` drafted tokens: the
    inverse of :func:`accepted_tokens_per_step` in ``a`` (publications report the measured "acceptance length", i.e.
    ``tau``, not ``a``).

    ``tau(a) = 1 + a + ... + a^k`` rises strictly from 1 at ``a = 0`` to ``k + 1`` at ``a = 1``, so a bisection on
    ``[0, 1]`` finds the root; ``steps`` halvings leave it within ``2^-steps``.

    Parameters
    ----------
    tokens_per_step : float or ndarray [tokens/step]
        ``tau``, between 1 and ``k + 1``.
    draft_tokens : float or ndarray [tokens]
        ``k``.
    steps : int [-]
        Halvings of the bracket.

    Returns
    -------
    ndarray [-]
        ``a`` in [0, 1] (0 at ``tau <= 1``, 1 at ``tau >= k + 1``).

    Examples
    --------
    TensorRT-LLM's MTP3 on DeepSeek-R1 accepts 2.82 tokens per step [trtllm-mtp-b200-2025]: ``1 + a + a^2 + a^3 =
    2.82`` at ``a = 0.7701`` (1 + 0.7701 + 0.5931 + 0.4568 = 2.8200).
    """
    tau = np.asarray(tokens_per_step, float)
    k = np.asarray(draft_tokens, float)
    low, high = np.zeros(np.broadcast(tau, k).shape), np.ones(np.broadcast(tau, k).shape)
    for _ in range(steps):
        middle = 0.5 * (low + high)
        above = accepted_tokens_per_step(middle, k) > tau
        high, low = np.where(above, middle, high), np.where(above, low, middle)
    return 0.5 * (low + high)


@dataclass(frozen=True, kw_only=True)
class Speculation:
    """A decode pool's speculation (arrays broadcast over draws)."""

    draft_tokens: object
    """``k``, tokens drafted per sequence and step [tokens]."""
    acceptance_rate: object
    """``a``, acceptance probability per drafted position [-]."""
    draft_cost_fraction: object
    """``f``, one draft pass's cost over one target pass, per token (weights read, arithmetic, latency) [-]."""

    @property
    def tokens_per_step(self):
        """``tau``, expected tokens emitted per sequence and step [tokens/step] (:func:`accepted_tokens_per_step`)."""
        return accepted_tokens_per_step(self.acceptance_rate, self.draft_tokens)

    @property
    def verify_tokens(self):
        """``k + 1``, tokens per sequence in the verification pass (and in the step's token budget) [tokens]."""
        return self.draft_tokens + 1.0

    @property
    def token_passes(self):
        """``k + 1 + k f``, token passes per sequence through the weight GEMMs, attention arithmetic, routed experts and
        collectives in one step (the verification's ``k + 1`` and the draft's ``k`` at ``f`` of the cost) [-]."""
        return self.draft_tokens + 1.0 + self.draft_tokens * self.draft_cost_fraction

    @property
    def weight_reads(self):
        """``1 + k f``, reads of the weights, fixed latencies and KV cache per step (the verification's one and the
        draft's ``k`` at ``f`` of the size) [-]."""
        return 1.0 + self.draft_tokens * self.draft_cost_fraction
