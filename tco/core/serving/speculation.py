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
