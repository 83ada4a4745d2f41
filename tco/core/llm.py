"""Sizes and arithmetic of a transformer LLM: weight bytes, KV-cache bytes, FLOPs.

All functions broadcast over numpy arrays.
"""

from __future__ import annotations

import numpy as np


def weight_bytes(params, bits_per_weight):
    """Bytes to hold ``params`` weights at ``bits_per_weight`` bits each [B].

    ``W = params x bits / 8``; e.g. Llama 3.1 70B (70.55e9 params) at 8 bits = 70.55 GB.
    """
    return np.asarray(params, dtype=float) * bits_per_weight / 8.0


def kv_bytes_per_token(layers, kv_heads, head_dim, bits_per_kv):
    """KV-cache bytes per token for multi-head / grouped-query attention [B/token].

    ``k = 2 (K and V) x layers x kv_heads x head_dim x bits/8``. Llama 3.1 70B at BF16:
    2 x 80 x 8 x 128 x 2 = 327,680 B (meta-llama/llama-models, sku_list.py).
    """
    return 2.0 * layers * kv_heads * head_dim * bits_per_kv / 8.0


def latent_kv_bytes_per_token(kv_elements_per_token, bits_per_kv):
    """KV-cache bytes per token when the cached elements are given directly [B/token].

    For multi-head latent attention (DeepSeek-V3) each layer caches one latent of width
    ``kv_lora_rank`` plus a RoPE key of width ``qk_rope_head_dim``, shared by all heads:
    61 x (512 + 64) = 35,136 elements (DeepSeek-V3 config.json); no factor 2.
    """
    return np.asarray(kv_elements_per_token, dtype=float) * bits_per_kv / 8.0


def dense_flops_per_token(params_active):
    """Matrix-multiply FLOPs per token through the weights [FLOP/token]: ``2 x A``.

    One multiply-accumulate (2 FLOPs) per active parameter (Kaplan et al. 2020, Sec. 2.1).
    """
    return 2.0 * np.asarray(params_active, dtype=float)


def decode_attention_flops_per_token(layers, attention_dim, context_tokens):
    """Attention FLOPs for one new token attending to ``context_tokens`` [FLOP/token].

    Per layer: ``Q K^T`` and ``A V`` are each ``attention_dim x context`` multiply-adds,
    so ``2 x 2 x attention_dim x context`` FLOPs; times ``layers``.
    """
    return 4.0 * layers * attention_dim * context_tokens


def prefill_attention_flops_per_token(layers, attention_dim, prompt_tokens):
    """Mean attention FLOPs per prompt token under a causal mask [FLOP/token].

    A prompt token at position ``i`` attends to ``i`` tokens; the mean over the prompt is
    ``P/2``, so this is :func:`decode_attention_flops_per_token` at context ``P/2``:
    ``2 x layers x attention_dim x P``.
    """
    return decode_attention_flops_per_token(layers, attention_dim, 0.5 * prompt_tokens)


def expert_params_per_routed_slot(params_total, params_active, experts_routed, experts_per_token):
    """Parameters of one routed expert, ``e`` [params].

    With ``E`` routed experts of which ``k`` are active per token, total = shared + E e and
    active = shared + k e, so ``e = (total - active) / (E - k)``; zero for dense models.
    """
    spare = np.asarray(experts_routed, dtype=float) - experts_per_token
    return np.where(spare > 0, (np.asarray(params_total, float) - params_active) / np.where(spare > 0, spare, 1.0), 0.0)


def weights_read_per_step_params(batch, params_total, params_active, experts_routed, experts_per_token):
    """Parameters read from memory in one decode step of ``batch`` tokens [params].

    Dense: all of them. Mixture of experts: shared weights plus every expert touched by
    at least one of the ``B`` tokens. We bound the touched experts by ``min(E, B k)``
    (exact at B = 1 and for B >= E/k, an upper bound between), so the read is
    ``active + e (min(E, B k) - k)``, which is linear in ``B`` up to ``B* = E/k``.
    """
    e = expert_params_per_routed_slot(params_total, params_active, experts_routed, experts_per_token)
    touched = np.minimum(experts_routed, np.asarray(batch, float) * experts_per_token)
    return params_active + e * np.maximum(touched - experts_per_token, 0.0)
