"""Sizes and arithmetic of a transformer LLM: weight bytes, KV-cache bytes, FLOPs.

All functions broadcast over numpy arrays.
"""

from __future__ import annotations

import numpy as np


def weight_bytes(params, bits_per_weight):
    """Bytes to hold ``params`` weights at ``bits_per_weight`` bits each.

    ``W = params x bits / 8``; e.g. Llama 3.1 70B (70.55e9 params) at 8 bits = 70.55 GB.

    Parameters
    ----------
    params : float or ndarray [params]
        Number of weights.
    bits_per_weight : float or ndarray [bits]
        Bits per weight.

    Returns
    -------
    ndarray [B]
        Weight bytes.
    """
    return np.asarray(params, dtype=float) * bits_per_weight / 8.0


def kv_bytes_per_token(layers, kv_heads, head_dim, bits_per_kv):
    """KV-cache bytes per token for multi-head / grouped-query attention.

    ``k = 2 (K and V) x layers x kv_heads x head_dim x bits/8``. Llama 3.1 70B at BF16:
    2 x 80 x 8 x 128 x 2 = 327,680 B.

    Parameters
    ----------
    layers : float or ndarray [layers]
        Transformer layers.
    kv_heads : float or ndarray [heads]
        Key/value heads.
    head_dim : float or ndarray [elements]
        Head dimension.
    bits_per_kv : float or ndarray [bits]
        Bits per cached element.

    Returns
    -------
    ndarray [B/token]
        KV-cache bytes per token.

    References
    ----------
    [llama-models-sku-list] Llama 3.1 70B architecture arguments.
    """
    return 2.0 * layers * kv_heads * head_dim * bits_per_kv / 8.0


def latent_kv_bytes_per_token(kv_elements_per_token, bits_per_kv):
    """KV-cache bytes per token when the cached elements are given directly.

    For multi-head latent attention (DeepSeek-V3) each layer caches one latent of width
    ``kv_lora_rank`` plus a RoPE key of width ``qk_rope_head_dim``, shared by all heads:
    61 x (512 + 64) = 35,136 elements; no factor 2.

    Parameters
    ----------
    kv_elements_per_token : float or ndarray [elements/token]
        Cached elements per token, all layers.
    bits_per_kv : float or ndarray [bits]
        Bits per cached element.

    Returns
    -------
    ndarray [B/token]
        KV-cache bytes per token of the latent cache, all layers together.

    References
    ----------
    [deepseek-v3-readme] the ``config.json`` latent widths.
    """
    return np.asarray(kv_elements_per_token, dtype=float) * bits_per_kv / 8.0


def dense_flops_per_token(params_active):
    """Matrix-multiply FLOPs per token through the weights: ``2 x A``.

    One multiply-accumulate (2 FLOPs) per active parameter.

    Parameters
    ----------
    params_active : float or ndarray [params]
        Parameters active per token ``A`` (shared and routed).

    Returns
    -------
    ndarray [FLOP/token]
        Forward FLOPs per token through the weights (the backward pass costs twice that).

    References
    ----------
    [kaplan-2020] section 2.1, 2 FLOPs per parameter and token forward.
    """
    return 2.0 * np.asarray(params_active, dtype=float)


def decode_attention_flops_per_token(layers, attention_dim, context_tokens):
    """Attention FLOPs for one new token attending to ``context_tokens``.

    Per layer: ``Q K^T`` and ``A V`` are each ``attention_dim x context`` multiply-adds,
    so ``2 x 2 x attention_dim x context`` FLOPs; times ``layers``.

    Parameters
    ----------
    layers : float or ndarray [layers]
        Transformer layers.
    attention_dim : float or ndarray [elements]
        Query heads x head dimension.
    context_tokens : float or ndarray [tokens]
        Tokens attended to.

    Returns
    -------
    ndarray [FLOP/token]
        Attention FLOPs of the new token.

    References
    ----------
    [kaplan-2020] section 2.1, the attention term of the forward FLOPs.
    """
    return 4.0 * layers * attention_dim * context_tokens


def prefill_attention_flops_per_token(layers, attention_dim, prompt_tokens):
    """Mean attention FLOPs per prompt token under a causal mask.

    A prompt token at position ``i`` attends to ``i`` tokens; the mean over the prompt is
    ``P/2``, so this is :func:`decode_attention_flops_per_token` at context ``P/2``:
    ``2 x layers x attention_dim x P``.

    Parameters
    ----------
    layers, attention_dim : float or ndarray [layers, elements]
        As in :func:`decode_attention_flops_per_token`.
    prompt_tokens : float or ndarray [tokens]
        Prompt length ``P``.

    Returns
    -------
    ndarray [FLOP/token]
        Mean attention FLOPs per prompt token.
    """
    return decode_attention_flops_per_token(layers, attention_dim, 0.5 * prompt_tokens)


def expert_params_per_routed_slot(params_total, params_active, experts_routed, experts_per_token):
    """Parameters of one routed expert, ``e``.

    With ``E`` routed experts of which ``k`` are active per token, total = shared + E e and
    active = shared + k e, so ``e = (total - active) / (E - k)``; zero for dense models.

    Parameters
    ----------
    params_total : float or ndarray [params]
        Total parameters.
    params_active : float or ndarray [params]
        Parameters active per token.
    experts_routed : float or ndarray [experts]
        Routed experts per MoE layer ``E``.
    experts_per_token : float or ndarray [experts]
        Routed experts active per token ``k``.

    Returns
    -------
    ndarray [params]
        Parameters of one routed expert slot (summed over layers).
    """
    spare = np.asarray(experts_routed, dtype=float) - experts_per_token
    return np.where(spare > 0, (np.asarray(params_total, float) - params_active) / np.where(spare > 0, spare, 1.0), 0.0)
